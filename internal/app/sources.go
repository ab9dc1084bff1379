package app

import (
	"context"
	"sync"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/discoping"
	"github.com/tailpath/tailpath/probes/hostnet"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// Sources are where the evidence comes from: tailscaled, a board and the
// host's tuning, each when set. The dashboard and serve run the same
// Sources (Run), each with its own Sink, tailscaled's snapshots and the
// board's state meeting in one join.Joiner on the way: the dashboard's
// sink sends to its Bubble Tea program (internal/dashboard), serve's keeps
// the newest values for its scrapes. The demo's are DemoSources.
type Sources struct {
	// Client is tailscaled's LocalAPI (the lab's observer in the demo);
	// nil runs no tailscaled source (the flood test).
	Client tailscaled.LocalClient
	// Socket names Client's socket in the source's errors; "" is the
	// platform default.
	Socket string
	// Interval is how often Status is polled; 0 means the source's
	// default (2 s).
	Interval time.Duration
	// All keeps the peers `tailscale status` hides (shared-in nodes,
	// Mullvad exit nodes; tailscaled.GatherOptions.All).
	All bool
	// ControlAPI, when set, reads the peers' own side of each path from
	// the Tailscale control API, once a minute and when asked.
	ControlAPI *controlapi.ControlAPI
	// Device is the board (--port, or a replayed capture).
	Device *devlink.Source
	// DeviceRetry, when positive, opens the board again this often after
	// it could not be opened at all (serve: a daemon may start before the
	// board is plugged in); 0 stops at the first such failure, which the
	// Device pane shows. Once open, devlink.Link reopens it by itself.
	DeviceRetry time.Duration
	// Tuning is the host whose tuning is read every TuningEvery (0 means
	// TuningInterval).
	Tuning      *tune.Control
	TuningEvery time.Duration
}

// TailscaledOptions are the tailscaled source's options for s: its poll,
// the peers tailscale status hides when All, fresh DERP latencies every
// 10 minutes (a few STUN packets, as `tailscale netcheck` sends, so
// far-home-derp is judged on current numbers rather than NetInfo's, which
// may be hours old), P's bounded DISCO runs (Prober), and the control
// API's peer side when ControlAPI is set (a Refresher of its own: each
// call makes a new one).
func (s Sources) TailscaledOptions() tailscaled.SourceOptions {
	o := tailscaled.SourceOptions{
		Interval: s.Interval,
		Socket:   s.Socket,
		// A board's peer is judged against control's endpoints on any
		// path: with a board, every node (tailscaled.GatherOptions.AllNodes).
		Gather:      tailscaled.GatherOptions{All: s.All, Host: hostnet.Reader(HostFactsMaxAge), AllNodes: s.Device != nil},
		MeasureDERP: tailscaled.MeasureDERPLatency,
		Prober:      Prober,
	}
	if s.ControlAPI != nil {
		o.PeerSide = controlapi.NewRefresher(s.ControlAPI, 0)
	}
	return o
}

// Sink is where Sources.Run delivers: every source's reports go through
// its one method, each source's in a type of its own (below), so a new
// source adds its type and a case to each sink's one switch. Deliver is
// called from the sources' goroutines, possibly at once: a sink is safe
// for concurrent use.
type Sink interface {
	Deliver(Event)
}

// Event is one report from a source: JoinedEvent, TailscaledEvent,
// BoardEvent or TuningEvent.
type Event interface{ sourceEvent() }

// JoinedEvent is a joined snapshot: tailscaled's newest gather, joined
// with the board's evidence and the path changes observed (join.Joiner);
// again whenever the board's evidence changed it.
type JoinedEvent struct{ Snapshot *join.Snapshot }

// TailscaledEvent is anything else tailscaled's source reports: its status
// (up, down and why), ping results and probe progress.
type TailscaledEvent struct{ Event probes.Event }

// BoardEvent is the board's newest state, or why it could not be opened,
// with the evidence converted from that state once (join.EvidenceFrom),
// the same value the Joiner was handed.
type BoardEvent struct {
	Event    devlink.Event
	Evidence probes.DeviceEvidence
}

// TuningEvent is one reading of the host's tuning.
type TuningEvent struct{ Reading tune.Reading }

func (JoinedEvent) sourceEvent()     {}
func (TailscaledEvent) sourceEvent() {}
func (BoardEvent) sourceEvent()      {}
func (TuningEvent) sourceEvent()     {}

// Run runs ts, tailscaled's source (made from TailscaledOptions by the
// caller, who keeps it to ping and probe through; nil runs none), and s's
// board and tuning when set, until ctx ends (or, for a replayed board, its
// capture does), relaying to sink, and returns when all have stopped.
func (s Sources) Run(ctx context.Context, ts *tailscaled.Source, joiner *join.Joiner, sink Sink) {
	var wg sync.WaitGroup
	if ts != nil {
		events := ts.Run(ctx)
		wg.Go(func() {
			for ev := range events {
				if snap, ok := ev.(*probes.Snapshot); ok {
					sink.Deliver(JoinedEvent{joiner.SetSnapshot(snap)})
					continue
				}
				sink.Deliver(TailscaledEvent{ev})
			}
		})
	}
	if s.Device != nil {
		wg.Go(func() { s.runBoard(ctx, joiner, sink) })
	}
	if s.Tuning != nil {
		every := s.TuningEvery
		if every <= 0 {
			every = TuningInterval
		}
		wg.Go(func() { s.Tuning.Watch(ctx, every, func(r tune.Reading) { sink.Deliver(TuningEvent{r}) }) })
	}
	wg.Wait()
}

// runBoard relays the board's states, re-linking the snapshot when its
// evidence changed, until ctx ends or a replay reaches its end; when the
// port cannot be opened at all and DeviceRetry is set, it tries again.
func (s Sources) runBoard(ctx context.Context, joiner *join.Joiner, sink Sink) {
	for {
		var openErr error
		for ev := range s.Device.Run(ctx) {
			if ev.Err != nil {
				openErr = ev.Err
			}
			evidence := join.EvidenceFrom(&ev.State)
			sink.Deliver(BoardEvent{ev, evidence})
			if ls, changed := joiner.SetEvidence(evidence); changed {
				sink.Deliver(JoinedEvent{ls})
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

// Prober is the dashboard's P: probes/discoping.Run within its limits (10
// pings per peer, 8 peers at once, 15 s in all).
func Prober(ctx context.Context, c tailscaled.LocalClient, peers []probes.Peer, progress func(probes.ProbeProgress)) map[safetext.Text]*probes.PingRun {
	return discoping.Run(ctx, c, peers, discoping.Options{}, progress)
}

// HostFactsMaxAge is how often, at most, a long-running source reads this
// host's interfaces and nftables ruleset again (probes/hostnet).
const HostFactsMaxAge = 15 * time.Second

// TuningInterval is how often the dashboard re-reads the host's tuning and
// tailnet TCP connections.
const TuningInterval = 5 * time.Second
