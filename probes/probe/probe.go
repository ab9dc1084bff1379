// Package probe runs the one piece of evidence a snapshot lacks: a
// bounded DISCO ping run to every relayed peer (`tailpath status --probe`,
// P in the dashboard), so that a relayed path whose two ends look fine
// reads disco-unanswered (pongs only through DERP), or goes direct, in one
// command.
//
// Each peer's run starts with one TSMP ping, which goes through WireGuard:
// magicsock's endpoint.send then pings every candidate endpoint and sends
// CallMeMaybe through DERP at once (sendDiscoPingsLocked), so the peer
// starts its side of NAT traversal now rather than at the next 3 s
// heartbeat; a DISCO ping alone (endpoint.discoPing) sends no CallMeMaybe.
// Then DISCO pings follow until one comes back directly, at most
// Options.Pings of them.
//
// Pinging changes what it measures: tailscaled calls a peer Active for
// about 45 s after anything was sent to it (magicsock's
// sessionActiveTimeout), and a path may go direct because of the probe.
// That is why it is opt-in.
package probe

import (
	"context"
	"sync"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/localapi"
)

// Limits (issue 17): at most this many pings per peer, peers at once, and
// time in all.
const (
	MaxPings    = 10
	MaxParallel = 8
	MaxBudget   = 15 * time.Second
)

// Options bound a probe; zero values take the limits above.
type Options struct {
	// Pings is the most DISCO pings per peer (≤ MaxPings).
	Pings int
	// Parallel is how many peers are probed at once (≤ MaxParallel).
	Parallel int
	// Budget bounds the whole probe (≤ MaxBudget).
	Budget time.Duration
	// PerPeer bounds one peer's run; 0 shares the budget among the rounds
	// of Parallel peers, at most 8 s.
	PerPeer time.Duration
}

func (o Options) withDefaults() Options {
	if o.Pings <= 0 || o.Pings > MaxPings {
		o.Pings = MaxPings
	}
	if o.Parallel <= 0 || o.Parallel > MaxParallel {
		o.Parallel = MaxParallel
	}
	if o.Budget <= 0 || o.Budget > MaxBudget {
		o.Budget = MaxBudget
	}
	return o
}

// maxPerPeer bounds one run: long enough for CallMeMaybe to cross DERP and
// the peer's pings to come back several times over.
const maxPerPeer = 8 * time.Second

// Targets are the peers a probe pings: those relayed through DERP or a
// peer relay, whose node key has not expired (magicsock sends an expired
// peer nothing).
func Targets(snap *probes.Snapshot) []probes.Peer {
	var out []probes.Peer
	for _, p := range snap.Peers {
		if (p.Path.Kind == probes.PathDERP || p.Path.Kind == probes.PathPeerRelay) && !p.Expired {
			out = append(out, p)
		}
	}
	return out
}

// Run probes peers through c, Parallel at a time, within Budget, and
// returns each peer's run by ID (a peer whose run never sent a ping is
// absent). progress, if not nil, is called (from Run's goroutines, one at
// a time) at the start, as each run ends and at the end. ctx cancels it.
func Run(ctx context.Context, c localapi.LocalClient, peers []probes.Peer, opts Options, progress func(probes.ProbeProgress)) map[safetext.Text]*probes.PingRun {
	opts = opts.withDefaults()
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.Budget)
	defer cancel()
	per := opts.PerPeer
	if per <= 0 {
		rounds := (len(peers) + opts.Parallel - 1) / opts.Parallel
		per = min(maxPerPeer, opts.Budget/time.Duration(max(rounds, 1))-100*time.Millisecond)
	}
	var mu sync.Mutex
	runs := make(map[safetext.Text]*probes.PingRun, len(peers))
	pp := probes.ProbeProgress{Total: len(peers)}
	report := func(f func(*probes.ProbeProgress)) {
		mu.Lock()
		defer mu.Unlock()
		f(&pp)
		pp.Elapsed = time.Since(start)
		if progress != nil {
			progress(pp)
		}
	}
	report(func(*probes.ProbeProgress) {})
	work := make(chan probes.Peer)
	var wg sync.WaitGroup
	for range min(opts.Parallel, len(peers)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				r := runOne(ctx, c, p, opts.Pings, per)
				report(func(pp *probes.ProbeProgress) {
					pp.Done++
					pp.Peer, pp.Run = p.Name, r
					if r != nil && r.Direct {
						pp.Direct++
					}
					if r != nil {
						runs[p.ID] = r
					}
				})
			}
		}()
	}
feed:
	for _, p := range peers {
		select {
		case work <- p:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	report(func(pp *probes.ProbeProgress) {
		pp.Finished, pp.Peer, pp.Run = true, "", nil
	})
	return runs
}

// runOne is one peer's run: a TSMP ping to start NAT traversal at once,
// then DISCO pings spread over per until a direct pong. nil when no ping
// was sent (the budget was spent).
func runOne(ctx context.Context, c localapi.LocalClient, p probes.Peer, pings int, per time.Duration) *probes.PingRun {
	if per <= 0 || ctx.Err() != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, per)
	defer cancel()
	run := &probes.PingRun{Probe: true}
	// The TSMP ping runs beside the DISCO pings: its answer takes a
	// WireGuard handshake, which should not hold them up.
	tsmp := make(chan bool, 1)
	go func() {
		err := localapi.PingWith(ctx, c, p, probes.PingTSMP, localapi.PingOptions{TryTimeout: per}, nil)
		tsmp <- err == nil
	}()
	// Let magicsock's send path go first: a DISCO ping marks every
	// endpoint pinged, and sendDiscoPingsLocked then skips them, and with
	// them CallMeMaybe.
	select {
	case <-time.After(kickDelay):
	case <-ctx.Done():
	}
	// The DISCO run ends a little before the peer's share, so its last
	// ping's timeout is its own, not the share's cancellation.
	span := max(per-kickDelay-50*time.Millisecond, minGap)
	gap := max(span/time.Duration(pings+1), minGap)
	tryTimeout := min(2*time.Second, span)
	_ = localapi.PingWith(ctx, c, p, probes.PingDISCO, localapi.PingOptions{Tries: pings, Time: span, Gap: gap, TryTimeout: tryTimeout},
		func(r probes.PingResult) {
			// A ping that timed out was sent; a daemon's error (an
			// expired key, no such peer) is no try.
			switch string(r.Err) {
			case "", "timeout", "cancelled", probes.ErrNoDirect.Error():
				run.Tries = max(run.Tries, r.Try)
			}
			if r.Err == "" && r.Latency > 0 {
				run.Pongs++
				run.Via, run.Latency = r.Via, r.Latency
				run.Direct = run.Direct || r.Path == probes.PathDirect
			}
		})
	select {
	case ok := <-tsmp:
		run.TSMPReply = &ok
	default:
		// Still waiting for its handshake: unknown, not a failure.
	}
	run.At = time.Now()
	if run.Tries == 0 {
		return nil
	}
	return run
}

// kickDelay is how long the DISCO pings wait after the TSMP ping, and
// minGap the least pause between two of them.
const (
	kickDelay = 150 * time.Millisecond
	minGap    = 100 * time.Millisecond
)
