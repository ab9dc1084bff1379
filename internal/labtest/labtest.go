// Package labtest starts the lab tailnet (probes/lab) for tests that need
// real Tailscale nodes. A test binary using it must call lab.MaybeRunNode
// first thing in TestMain: the lab's DERP-only node re-executes it.
package labtest

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes/lab"
)

// Start starts the lab for t and closes it at cleanup. It skips under
// -short and on Windows (the lab's LocalAPI socket is a Unix socket). The
// lab's logs go to a file in t's temp dir, named on failure.
func Start(t testing.TB) *lab.Lab {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: starts the lab tailnet (control, DERP, five tsnet nodes); run without -short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("skipping: the lab's LocalAPI socket and tailscaled's --socket are Unix sockets")
	}
	logFile := filepath.Join(t.TempDir(), "lab.log")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	l, err := lab.Start(ctx, lab.Options{
		LogFile:  logFile,
		Progress: func(s string) { t.Logf("lab %5.2fs: %s", time.Since(start).Seconds(), s) },
	})
	if err != nil {
		t.Fatalf("lab.Start: %v (logs: %s)", err, logFile)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("lab Close: %v", err)
		}
		if t.Failed() {
			t.Logf("lab logs: %s", logFile)
		}
	})
	return l
}
