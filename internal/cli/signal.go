package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
)

// NotifyContext is signal.NotifyContext(parent, sigs...) with the handlers
// installed on a goroutine of its own. Each signal.Notify of a new signal
// hands it to the runtime's signal thread and waits for that thread to
// answer: 0.7-1 ms for three signals on a 2-core machine, which a one-shot
// `status` waited for before it asked tailscaled anything (docs/perf.md,
// issue 31). Until they are installed, a fraction of a millisecond, a
// signal does what it does before main runs: SIGINT, SIGTERM and SIGHUP
// end the process.
//
// As with signal.NotifyContext, the first signal cancels the context and
// later ones are caught (not acted on) until stop is called; stop cancels
// the context and restores the signals' default behaviour.
func NotifyContext(parent context.Context, sigs ...os.Signal) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	stopped := make(chan struct{})
	go func() {
		signal.Notify(ch, sigs...)
		defer signal.Stop(ch)
		select {
		case <-ch:
			cancel()
			<-stopped
		case <-stopped:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() { close(stopped) })
		cancel()
	}
}
