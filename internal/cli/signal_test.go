//go:build !windows

package cli

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// TestNotifyContextCancels: a signal caught by NotifyContext's handler
// cancels its context. SIGWINCH is ignored by default, so the ones sent
// before the handler is installed do nothing.
func TestNotifyContextCancels(t *testing.T) {
	ctx, stop := NotifyContext(context.Background(), syscall.SIGWINCH)
	defer stop()
	deadline := time.After(10 * time.Second)
	for {
		syscall.Kill(syscall.Getpid(), syscall.SIGWINCH)
		select {
		case <-ctx.Done():
			if ctx.Err() != context.Canceled {
				t.Fatalf("ctx ended with %v", ctx.Err())
			}
			return
		case <-time.After(time.Millisecond):
		case <-deadline:
			t.Fatal("SIGWINCH never cancelled the context")
		}
	}
}

// TestNotifyContextStop: stop cancels the context without a signal.
func TestNotifyContextStop(t *testing.T) {
	ctx, stop := NotifyContext(context.Background(), syscall.SIGWINCH)
	stop()
	stop() // twice is fine
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not cancel the context")
	}
}
