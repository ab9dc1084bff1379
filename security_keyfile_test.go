//go:build unix

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/cli"
)

// TestAPIKeyFileFIFO: --api-key-file naming a FIFO (or /dev/null) fails
// at once, saying what it is, instead of blocking for ever (ignoring
// Ctrl-C) or telling root to chmod /dev/null.
func TestAPIKeyFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, says string }{
		{fifo, "not a regular file (a FIFO)"},
		{"/dev/null", "not a regular file (a character device)"},
	} {
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- dispatch(context.Background(), []string{"status", "--api-key-file", tt.path, "--socket", filepath.Join(t.TempDir(), "none.sock")}, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		}()
		select {
		case code := <-done:
			if code == 0 || !strings.Contains(errb.String(), tt.says) || strings.Contains(errb.String(), "chmod") {
				t.Errorf("%s: exit %d, stderr %q; want a failure saying %q and no chmod advice", tt.path, code, errb.String(), tt.says)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: tailpath status blocked on the key file", tt.path)
		}
	}
}
