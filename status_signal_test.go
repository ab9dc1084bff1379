//go:build !windows

package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/cli"
)

// TestStatusSignalAfterDelay runs `tailpath status` as a process of its
// own against a LocalAPI socket that accepts and never answers, and sends
// it SIGINT once its handlers are due (cli.SignalsAfter: a one-shot status
// installs them after cli.OneShotSignalDelay, so the few-millisecond runs
// never pay for them): the status must end as an interrupted command does
// (the gather cancelled, said on stderr, exit status 1), not be killed by
// the signal.
func TestStatusSignalAfterDelay(t *testing.T) {
	dir, err := os.MkdirTemp("", "tpsig")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "tailscaled.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	cmd := exec.Command(os.Args[0], "status", "--socket", sock, "--timeout", "5m")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(time.Minute):
		t.Fatal("tailpath status never connected to the socket")
	}
	// The delay began in main, before the connection: past it (with room
	// for a busy machine to run the goroutine that installs them), the
	// handlers are in place.
	time.Sleep(cli.OneShotSignalDelay + 2*time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		t.Fatal("tailpath status did not end within a minute of SIGINT")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("exit: %v, want status 1; stderr:\n%s", err, stderr.String())
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("killed by %v: the handlers were not installed; stderr:\n%s", ws.Signal(), stderr.String())
	}
	if ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "context canceled") {
		t.Fatalf("exit status %d, stderr:\n%s\nwant 1 and the cancelled gather said", ee.ExitCode(), stderr.String())
	}
}
