package app

import (
	"context"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/link"
	"github.com/tailpath/tailpath/probes/localapi"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui/tuning"
)

// Sources are the sources the dashboard and serve both run: tailscaled,
// a board and the host's tuning, each when set. Run relays what they
// report to one Sink, tailscaled's snapshots and the board's state meeting
// in one link.Linker on the way: the dashboard's sink sends to its Bubble
// Tea program (TeaSink), serve's keeps the newest values for its scrapes.
// The two are the same program with two sinks.
type Sources struct {
	// Probes is tailscaled's source; nil runs none (the flood test).
	Probes *localapi.Source
	// Device is the board (--port, or a replayed capture).
	Device *devlink.Source
	// DeviceRetry, when positive, opens the board again this often after
	// it could not be opened at all (serve: a daemon may start before the
	// board is plugged in); 0 stops at the first such failure, which the
	// Device pane shows. Once open, devlink.Link reopens it by itself.
	DeviceRetry time.Duration
	// Tuning is the host whose tuning is read every TuningEvery.
	Tuning      *tune.Control
	TuningEvery time.Duration
}

// Sink is where Sources.Run delivers. Its methods are called from the
// sources' goroutines, possibly at once: a sink is safe for concurrent use.
type Sink interface {
	// Snapshot is a linked snapshot: tailscaled's newest, with the board's
	// evidence and the path changes observed; again whenever the board's
	// evidence changed it.
	Snapshot(*link.Snapshot)
	// Event is anything else tailscaled's source reports: its status (up,
	// down and why), ping results and probe progress.
	Event(probes.Event)
	// Board is the board's newest state, or why it could not be opened.
	Board(devlink.Event)
	// Tuning is one reading of the host's tuning.
	Tuning(tune.Reading)
}

// Run runs every source that is set until ctx ends (or, for a replayed
// board, its capture does), relaying to sink, and returns when all have
// stopped.
func (s Sources) Run(ctx context.Context, linker *link.Linker, sink Sink) {
	var wg sync.WaitGroup
	if s.Probes != nil {
		events := s.Probes.Run(ctx)
		wg.Go(func() {
			for ev := range events {
				if snap, ok := ev.(*probes.Snapshot); ok {
					sink.Snapshot(linker.SetSnapshot(snap))
					continue
				}
				sink.Event(ev)
			}
		})
	}
	if s.Device != nil {
		wg.Go(func() { s.runBoard(ctx, linker, sink) })
	}
	if s.Tuning != nil {
		every := s.TuningEvery
		if every <= 0 {
			every = TuningInterval
		}
		wg.Go(func() { s.Tuning.Watch(ctx, every, sink.Tuning) })
	}
	wg.Wait()
}

// runBoard relays the board's states, re-linking the snapshot when its
// evidence changed, until ctx ends or a replay reaches its end; when the
// port cannot be opened at all and DeviceRetry is set, it tries again.
func (s Sources) runBoard(ctx context.Context, linker *link.Linker, sink Sink) {
	for {
		var openErr error
		for ev := range s.Device.Run(ctx) {
			if ev.Err != nil {
				openErr = ev.Err
			}
			sink.Board(ev)
			if ls, changed := linker.SetDevice(&ev.State); changed {
				sink.Snapshot(ls)
			}
		}
		if openErr == nil || s.DeviceRetry <= 0 || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.DeviceRetry):
		}
	}
}

// TeaSink is the dashboard's sink: every value becomes a message to the
// program (send is tea.Program.Send), which the root model broadcasts to
// its panes.
type TeaSink func(tea.Msg)

func (send TeaSink) Snapshot(ls *link.Snapshot) { send(ls) }
func (send TeaSink) Event(ev probes.Event)      { send(ev) }
func (send TeaSink) Board(ev devlink.Event)     { send(ev) }
func (send TeaSink) Tuning(r tune.Reading)      { send(tuning.ReportMsg(r)) }
