package cli

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"
)

// NotifyContext is signal.NotifyContext(parent, sigs...) with the handlers
// installed on a goroutine of its own, after the delay given (0: at once).
//
// Installing them costs the process threads: the first signal.Notify
// starts the runtime's signal goroutine, locked to a thread of its own
// (which makes the runtime start its template thread too), and the
// goroutine that waits for signals hands its processor to yet another
// thread. Each of those starts beside whatever the command does first; a
// one-shot status paid 1-2 ms of its ~30 for them, a second thread
// creation landing while it asked tailscaled anything (docs/perf.md,
// issue 31). On their own goroutine they no longer hold up main (0.7-1 ms
// waiting for the signal thread's answer, an earlier round); after a delay
// longer than a one-shot command lives, they cost it nothing.
//
// Until they are installed, a signal does what it does before main runs:
// SIGINT, SIGTERM and SIGHUP end the process. As with
// signal.NotifyContext, the first signal after that cancels the context
// and later ones are caught (not acted on) until stop is called; stop
// cancels the context and restores the signals' default behaviour, and
// before the delay has passed, installs nothing.
func NotifyContext(parent context.Context, after time.Duration, sigs ...os.Signal) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	stopped := make(chan struct{})
	install := func() {
		select {
		case <-stopped:
			return
		default:
		}
		signal.Notify(ch, sigs...)
		defer signal.Stop(ch)
		select {
		case <-ch:
			cancel()
			<-stopped
		case <-stopped:
		}
	}
	// With a delay, no goroutine until it has passed (the timer's
	// function runs on one of its own): a one-shot command never starts
	// one.
	var t *time.Timer
	if after > 0 {
		t = time.AfterFunc(after, install)
	} else {
		go install()
	}
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			if t != nil {
				t.Stop()
			}
			close(stopped)
		})
		cancel()
	}
}

// OneShotSignalDelay is how long a one-shot command runs with the
// signals' default behaviour before its handlers are installed
// (SignalsAfter): longer than a status of a few peers takes (about 30 ms,
// start-up included, docs/perf.md), short enough that a status still
// waiting on tailscaled, probing peers or listening for a board is
// interrupted as every command is.
const OneShotSignalDelay = 100 * time.Millisecond

// SignalsAfter is the delay before the handlers NotifyContext installs for
// the command args: OneShotSignalDelay for status and version, which print
// once and hold nothing a signal's default ending would leave behind (no
// terminal mode, no setting half applied, no listener, no file); 0 for the
// dashboard, demo, tail, tune and serve, whose handlers restore the
// terminal, revert or shut down cleanly from the first moment, and for a
// status that saves a snapshot (--save writes a temporary file and renames
// it: a process killed in between would leave the temporary file, which a
// handled signal cannot).
func SignalsAfter(args []string) time.Duration {
	if len(args) == 0 {
		return 0
	}
	switch args[0] {
	case "status":
		for _, a := range args[1:] {
			if a == "--" {
				break
			}
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if strings.HasPrefix(a, "-") && name == "save" {
				return 0
			}
		}
		return OneShotSignalDelay
	case "version", "--version", "-version":
		return OneShotSignalDelay
	}
	return 0
}
