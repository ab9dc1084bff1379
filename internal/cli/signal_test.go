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
	ctx, stop := NotifyContext(context.Background(), 0, syscall.SIGWINCH)
	defer stop()
	waitCancelledBySignal(t, ctx)
}

// TestNotifyContextAfter: with a delay, the handler is installed only once
// it has passed: a signal sent before does what it does by default
// (SIGWINCH: nothing), and one sent after cancels the context.
func TestNotifyContextAfter(t *testing.T) {
	const after = 300 * time.Millisecond
	start := time.Now()
	ctx, stop := NotifyContext(context.Background(), after, syscall.SIGWINCH)
	defer stop()
	for time.Since(start) < after*2/3 {
		syscall.Kill(syscall.Getpid(), syscall.SIGWINCH)
		time.Sleep(5 * time.Millisecond)
	}
	// The handler cannot be installed before its timer fires, however
	// busy the machine: no signal so far was caught.
	if ctx.Err() != nil && time.Since(start) < after {
		t.Fatalf("cancelled %v after the call, before the %v delay", time.Since(start), after)
	}
	waitCancelledBySignal(t, ctx)
	if d := time.Since(start); d < after {
		t.Fatalf("a signal cancelled the context %v after the call, before the %v delay", d, after)
	}
}

// waitCancelledBySignal sends SIGWINCH until ctx is cancelled.
func waitCancelledBySignal(t *testing.T, ctx context.Context) {
	t.Helper()
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

// TestNotifyContextStop: stop cancels the context without a signal, before
// the handler's delay has passed or after it is installed.
func TestNotifyContextStop(t *testing.T) {
	for _, after := range []time.Duration{0, time.Hour} {
		ctx, stop := NotifyContext(context.Background(), after, syscall.SIGWINCH)
		stop()
		stop() // twice is fine
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("after %v: stop did not cancel the context", after)
		}
	}
}
