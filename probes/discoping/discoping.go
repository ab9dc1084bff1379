// Package discoping runs the one piece of evidence a snapshot lacks: a
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
package discoping

import (
	"context"
	"sync"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// Limits (issue 17): at most this many pings per peer and peers at once.
// The probe's time is DefaultBudget, more when many peers need it
// (Options.BudgetFor), never more than MaxBudget.
const (
	MaxPings      = 10
	MaxParallel   = 8
	DefaultBudget = 15 * time.Second
	MaxBudget     = 60 * time.Second
)

// Options bound a probe; zero values take the limits above.
type Options struct {
	// Pings is the most DISCO pings per peer (≤ MaxPings).
	Pings int
	// Parallel is how many peers are probed at once (≤ MaxParallel).
	Parallel int
	// Budget bounds the whole probe (≤ MaxBudget); 0 is BudgetFor the
	// peers.
	Budget time.Duration
	// PerPeer is one peer's share: the time its run may take, its last
	// ping's wait included; 0 shares the budget among the rounds of
	// Parallel peers, between minShare and maxPerPeer.
	PerPeer time.Duration
	// TryTimeout is how long one DISCO ping waits for its pong; 0 is a
	// quarter of the share, from 0.5 to 2 s.
	TryTimeout time.Duration
}

func (o Options) withDefaults(peers int) Options {
	if o.Pings <= 0 || o.Pings > MaxPings {
		o.Pings = MaxPings
	}
	if o.Parallel <= 0 || o.Parallel > MaxParallel {
		o.Parallel = MaxParallel
	}
	if o.Budget <= 0 || o.Budget > MaxBudget {
		o.Budget = o.BudgetFor(peers)
	}
	return o
}

// BudgetFor is the probe's time for peers: DefaultBudget, or enough for
// every round of Parallel peers to get minShare and the last one's ping
// its wait (budgetSlack, which also absorbs a busy machine's delays),
// at most MaxBudget. A peer whose run the budget ends is said so
// (PingRun.Unfinished), never counted as silent. A Budget set in o is
// returned as it is (within MaxBudget).
func (o Options) BudgetFor(peers int) time.Duration {
	if o.Budget > 0 {
		return min(o.Budget, MaxBudget)
	}
	parallel := o.Parallel
	if parallel <= 0 || parallel > MaxParallel {
		parallel = MaxParallel
	}
	rounds := (peers + parallel - 1) / parallel
	return min(MaxBudget, max(DefaultBudget, time.Duration(rounds)*minShare+budgetSlack))
}

// maxPerPeer bounds one run: long enough for CallMeMaybe to cross DERP and
// the peer's pings to come back several times over. minShare is the least
// share a run gets: the TSMP ping's head start and a few DISCO pings.
// budgetSlack is the budget's time beyond the shares.
const (
	maxPerPeer  = 8 * time.Second
	minShare    = time.Second
	budgetSlack = 2 * time.Second
)

// A DISCO ping waits for its pong a quarter of its run's share, within
// these: long enough for a pong through a far DERP region on a busy
// machine, short enough to leave most of the share for more pings.
const (
	minTryTimeout = 500 * time.Millisecond
	maxTryTimeout = 2 * time.Second
)

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
// returns every peer's run by ID. A run the budget ended says so
// (PingRun.Unfinished): a ping it cut off is counted in CutOff, not in
// Tries, so it is never read as unanswered, and a peer it never reached
// has a run with no ping (Unfinished returns their names). progress, if
// not nil, is called (from Run's goroutines, one at a time) at the start,
// as each peer's run ends (the unreached ones too, at the end) and at the
// end. ctx cancels it, as the budget does.
func Run(ctx context.Context, c tailscaled.LocalClient, peers []probes.Peer, opts Options, progress func(probes.ProbeProgress)) map[safetext.Text]*probes.PingRun {
	opts = opts.withDefaults(len(peers))
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.Budget)
	defer cancel()
	per := opts.PerPeer
	if per <= 0 {
		rounds := (len(peers) + opts.Parallel - 1) / opts.Parallel
		per = min(maxPerPeer, max(minShare, (opts.Budget-budgetSlack)/time.Duration(max(rounds, 1))))
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
	ended := func(p probes.Peer, r *probes.PingRun) {
		report(func(pp *probes.ProbeProgress) {
			pp.Done++
			pp.Peer, pp.Run = p.Name, r
			if r.Direct {
				pp.Direct++
			}
			runs[p.ID] = r
		})
	}
	report(func(*probes.ProbeProgress) {})
	work := make(chan probes.Peer)
	var wg sync.WaitGroup
	for range min(opts.Parallel, len(peers)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				ended(p, runOne(ctx, c, p, opts, per))
			}
		}()
	}
	next := 0
feed:
	for ; next < len(peers); next++ {
		select {
		case work <- peers[next]:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	for _, p := range peers[next:] {
		ended(p, &probes.PingRun{At: time.Now(), Probe: true, Unfinished: true})
	}
	report(func(pp *probes.ProbeProgress) {
		pp.Finished, pp.Peer, pp.Run = true, "", nil
	})
	return runs
}

// Unfinished is the names of the peers whose runs the budget ended, in
// peers' order.
func Unfinished(peers []probes.Peer, runs map[safetext.Text]*probes.PingRun) []safetext.Text {
	var out []safetext.Text
	for _, p := range peers {
		if r := runs[p.ID]; r == nil || r.Unfinished {
			out = append(out, p.Name)
		}
	}
	return out
}

// runOne is one peer's run within its share per: a TSMP ping to start NAT
// traversal at once, then DISCO pings until a direct pong. Its first DISCO
// ping is sent however late the share is, and each ping waits for its
// answer or its own timeout (PingOptions.Finish): only the budget (ctx)
// cuts one off, and then it is counted in CutOff, not in Tries.
func runOne(ctx context.Context, c tailscaled.LocalClient, p probes.Peer, o Options, per time.Duration) *probes.PingRun {
	run := &probes.PingRun{Probe: true}
	defer func() {
		run.At = time.Now()
		run.Unfinished = ctx.Err() != nil
	}()
	if ctx.Err() != nil {
		return run
	}
	tryTimeout := o.TryTimeout
	if tryTimeout <= 0 {
		tryTimeout = min(maxTryTimeout, max(minTryTimeout, per/4))
	}
	// The TSMP ping runs beside the DISCO pings: its answer takes a
	// WireGuard handshake, which should not hold them up.
	tsmpCtx, cancel := context.WithTimeout(ctx, per)
	defer cancel()
	tsmp := make(chan *bool, 1)
	go func() {
		err := tailscaled.PingWith(tsmpCtx, c, p, probes.PingTSMP, tailscaled.PingOptions{TryTimeout: per}, nil)
		if err != nil && ctx.Err() != nil {
			tsmp <- nil // cut off by the budget: not known
			return
		}
		ok := err == nil
		tsmp <- &ok
	}()
	// Let magicsock's send path go first: a DISCO ping marks every
	// endpoint pinged, and sendDiscoPingsLocked then skips them, and with
	// them CallMeMaybe.
	select {
	case <-time.After(kickDelay):
	case <-ctx.Done():
		return run
	}
	// New pings start within span; the last one started may then wait
	// its whole tryTimeout, so the run ends within its share.
	span := max(per-kickDelay-tryTimeout, minGap)
	gap := max(span/time.Duration(o.Pings+1), minGap)
	answered := 0 // the last try answered or timed out on its own
	_ = tailscaled.PingWith(ctx, c, p, probes.PingDISCO, tailscaled.PingOptions{Tries: o.Pings, Time: span, Gap: gap, TryTimeout: tryTimeout, Finish: true},
		func(r probes.PingResult) {
			// A ping that timed out on its own was tried and not
			// answered; one the budget cut off ("cancelled" for a try
			// not yet reported) was neither; a daemon's error (an
			// expired key, no such peer) is no try.
			switch {
			case r.Err == "" || (r.Err == "timeout" && !r.Done):
				answered = r.Try
			case r.Err == "cancelled" && r.Try > answered:
				run.CutOff++
			}
			run.Tries = answered
			if r.Err == "" && r.Latency > 0 {
				run.Pongs++
				run.Via, run.Latency = r.Via, r.Latency
				run.Direct = run.Direct || r.Path == probes.PathDirect
			}
		})
	select {
	case ok := <-tsmp:
		run.TSMPReply = ok
	default:
		// Still waiting for its handshake: unknown, not a failure.
	}
	return run
}

// kickDelay is how long the DISCO pings wait after the TSMP ping, and
// minGap the least pause between two of them.
const (
	kickDelay = 150 * time.Millisecond
	minGap    = 100 * time.Millisecond
)
