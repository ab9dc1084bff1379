package app

import (
	"context"
	"sync"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/link"
	"github.com/tailpath/tailpath/probes/localapi"
	"github.com/tailpath/tailpath/probes/probe"
	"github.com/tailpath/tailpath/sysctl/tune"
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

// Prober is the dashboard's P: probes/probe.Run within its limits (10
// pings per peer, 8 peers at once, 15 s in all).
func Prober(ctx context.Context, c localapi.LocalClient, peers []probes.Peer, progress func(probes.ProbeProgress)) map[safetext.Text]*probes.PingRun {
	return probe.Run(ctx, c, peers, probe.Options{}, progress)
}

// HostFactsMaxAge is how often, at most, a long-running source reads this
// host's interfaces and nftables ruleset again (probes/hostnet).
const HostFactsMaxAge = 15 * time.Second

// TuningInterval is how often the dashboard re-reads the host's tuning and
// tailnet TCP connections.
const TuningInterval = 5 * time.Second
