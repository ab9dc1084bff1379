package tailscaled

import (
	"context"
	"strings"
	"sync"
	"time"

	"tailscale.com/ipn"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
)

// BusMask is what the Source asks of the IPN bus (v1.102, ipn/backend.go):
// the current state first, then peer deltas: NotifyPeerPatches sends
// narrow per-peer patches (Online, LastSeen, home DERP, Endpoints) and
// implies NotifyPeerChanges (peers added, replaced or removed), so a
// changed peer's WhoIs is refreshed at once instead of after WhoIsMaxAge.
// NotifyNoNetMap keeps Windows daemons from also sending the whole netmap
// on every change. NotifyRateLimit is left out: tailscaled refuses it
// beside the peer-change bits (ipn.ValidateNotifyWatchOpt; the LocalAPI
// answers 400), and the Source spaces its Gathers itself (minTriggerGap).
// Daemons older than the peer-change bits ignore them and send only state
// changes; their peers' facts then refresh every WhoIsMaxAge.
// NotifyPeerWireGuardState brings each peer's WireGuard session state
// (wireguard-go's: handshake, established, expired), all of them in the
// first message and then every change (ipn/backend.go), which
// no-handshake reads instead of guessing from Active and LastHandshake.
const BusMask = ipn.NotifyInitialState | ipn.NotifyPeerPatches | ipn.NotifyNoNetMap | ipn.NotifyPeerWireGuardState

// minTriggerGap is the least time between two bus-triggered Gathers.
const minTriggerGap = 500 * time.Millisecond

// SourceOptions tune a Source. Zero values take the defaults.
type SourceOptions struct {
	// Interval between Status polls; default 2 s. Path fields (CurAddr,
	// PeerRelay, Active) only come from polling.
	Interval time.Duration
	// MinBackoff and MaxBackoff bound the reconnect delay, which doubles
	// after each failure; defaults 250 ms and 5 s.
	MinBackoff, MaxBackoff time.Duration
	// Timeout bounds one Gather; default 10 s.
	Timeout time.Duration
	// Socket is shown in error messages ("" = the platform default).
	Socket string
	// Gather is passed to every GatherWith (its Latency is the Source's
	// own). A zero Gather.FillNodes takes SourceFillNodes (negative:
	// none), so the peers whose verdicts read no node get theirs over the
	// first polls rather than all in the first gather.
	Gather GatherOptions
	// MeasureDERP, when set, measures fresh DERP latencies
	// (MeasureDERPLatency) once the source is up and then every
	// LatencyRefresh; snapshots carry the last result while it is younger
	// than DERPLatencyMaxAge, so far-home-derp is judged on fresh numbers.
	// nil measures nothing (NetInfo's latencies only).
	MeasureDERP func(context.Context, *tailcfg.DERPMap) (*probes.DERPLatencyReport, error)
	// PeerSide, when set, reads the peers' own facts from the control API
	// in the background (once a minute, at once on Refresh); every
	// snapshot merges its latest answer, and a new answer causes a
	// snapshot. The local verdicts never wait for it.
	PeerSide *controlapi.Refresher
	// Early: the first gather after each (re)connect sends, before its
	// snapshot, the one Status alone makes (GatherOptions.Early:
	// every peer and its path, Snapshot.Pending, nothing judged), as
	// soon as Status arrives. The dashboard sets it to draw its first
	// frame without waiting for the netmap, the DERP map and the host's
	// facts; serve does not (its store would hold a snapshot without
	// verdicts between two scrapes' worth of nothing).
	Early bool
	// Prober, when set, runs Probe's bounded DISCO runs (probes/discoping.Run:
	// at most 10 pings per peer, 8 peers at once, 15 s in all), calling
	// progress as it goes; nil disables Probe.
	Prober Prober
}

// Prober runs a bounded DISCO ping run for each of peers and returns the
// runs by peer ID (probes/discoping.Run is one).
type Prober func(ctx context.Context, c LocalClient, peers []probes.Peer, progress func(probes.ProbeProgress)) map[safetext.Text]*probes.PingRun

func (o SourceOptions) withDefaults() SourceOptions {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Gather.FillNodes == 0 {
		o.Gather.FillNodes = SourceFillNodes
	}
	return o
}

// SourceFillNodes is how many nodes a Source's gather asks beyond those
// the verdicts need (GatherOptions.FillNodes): a 1,000-peer tailnet
// against a daemon without the netmap (v1.104) has every peer's node in
// 20 polls (40 s), at 25 WhoIs a second at most, and then a few per poll
// as they pass FillMaxAge.
const SourceFillNodes = 50

// Source polls a tailscaled and streams Events. Create with NewSource,
// start once with Run.
type Source struct {
	c    LocalClient
	opts SourceOptions

	mu      sync.Mutex
	runCtx  context.Context   // set by Run
	out     chan probes.Event // set by Run
	wg      sync.WaitGroup    // Run's loop, bus watcher and pings
	latency map[safetext.Text]pingLatency
	// pingRuns are the last finished DISCO runs by peer ID.
	pingRuns map[safetext.Text]*probes.PingRun
	closed   bool // Run's ctx ended; no new goroutines may start
	// staleAll and staleIDs are cached WhoIs answers the IPN bus made stale.
	staleAll bool
	staleIDs map[tailcfg.NodeID]bool
	// busErr is why the IPN bus watch failed last ("" while it works or
	// before it was tried); it becomes a Snapshot warning.
	busErr string
	// wgState is every peer's WireGuard session state from the bus, by
	// stable node id; wgKnown once the daemon showed it reports them.
	wgState map[string]WireGuardState
	wgKnown bool
	// apiTrigger is poked when the control API answers or a probe ends:
	// gather again soon.
	apiTrigger chan struct{}
	// probing is true while a Probe runs.
	probing bool
	// derpLatency is the last MeasureDERP result; nil before one succeeds.
	derpLatency *probes.DERPLatencyReport
	// measuring is true while a MeasureDERP runs; lastMeasure when the
	// last one started.
	measuring   bool
	lastMeasure time.Time
}

// NewSource returns a Source reading c. Nothing runs until Run.
func NewSource(c LocalClient, opts SourceOptions) *Source {
	return &Source{c: c, opts: opts.withDefaults(), latency: map[safetext.Text]pingLatency{}, pingRuns: map[safetext.Text]*probes.PingRun{},
		apiTrigger: make(chan struct{}, 1)}
}

// Run starts the source and returns its events. It emits
// SourceStatus{Up:true} on (re)connecting (with SourceOptions.Early, then
// the Pending snapshot Status alone makes), then a *Snapshot every Interval
// and soon after IPN bus changes (state, netmap, home DERP, endpoints). When
// a Gather fails it emits SourceStatus{Up:false, Err, NextRetry} with an
// actionable message (ConnectError) and retries with exponential back-off
// up to MaxBackoff; the IPN bus watcher is restarted after reconnecting.
// Results of Source.Ping come on the same channel.
//
// Sends block until received or ctx ends, so a slow reader slows polling
// rather than growing memory. The channel is closed after ctx is cancelled
// and every goroutine the source started has returned. Call Run once: a
// second call returns a closed channel.
func (s *Source) Run(ctx context.Context) <-chan probes.Event {
	out := make(chan probes.Event, 16)
	s.mu.Lock()
	if s.out != nil {
		s.mu.Unlock()
		closed := make(chan probes.Event)
		close(closed)
		return closed // a second Run gets nothing
	}
	s.runCtx, s.out = ctx, out
	s.wg.Add(1)
	s.mu.Unlock()
	if r := s.opts.PeerSide; r != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			r.Run(ctx, func() {
				select {
				case s.apiTrigger <- struct{}{}:
				default:
				}
			})
		}()
	}
	go s.loop(ctx)
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.wg.Wait()
		close(out)
	}()
	return out
}

// send delivers ev unless ctx ends first; it reports whether it was sent.
func (s *Source) send(ctx context.Context, ev probes.Event) bool {
	select {
	case s.out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Source) loop(ctx context.Context) {
	defer s.wg.Done()
	var (
		prev       *probes.Snapshot
		up         bool
		backoff    = s.opts.MinBackoff
		trigger    = make(chan struct{}, 1)
		busDone    chan struct{} // non-nil while a watcher runs
		busNext    time.Time     // earliest next watcher start
		lastGather time.Time
	)
	timer := time.NewTimer(0)
	defer timer.Stop()
	var busStop context.CancelFunc // stops the running watcher
	defer func() {
		if busStop != nil {
			busStop()
		}
	}()

	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.apiTrigger:
			timer.Stop()
			if wait := minTriggerGap - time.Since(lastGather); wait > 0 {
				timer.Reset(wait)
				continue
			}
		case <-trigger:
			timer.Stop()
			if wait := minTriggerGap - time.Since(lastGather); wait > 0 {
				timer.Reset(wait)
				continue
			}
		}
		lastGather = time.Now()
		if all, ids := s.takeStale(); prev != nil && (all || len(ids) > 0) {
			// The netmap changed: ask WhoIs again for what changed.
			pm := memoOf(prev)
			m := *pm
			m.nodes = make(map[string]cachedNode, len(pm.nodes))
			for k, cn := range pm.nodes {
				if !all && !ids[cn.node.ID] && (k != "" || !ids[selfNodeID]) {
					m.nodes[k] = cn
				}
			}
			p := *prev
			p.SetMemo(&m)
			prev = &p
		}
		gctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
		gopts := s.opts.Gather
		gopts.Latency = s.freshLatency(time.Now())
		gopts.WireGuard = s.wgStates()
		gopts.NoBusStates = true // its own watch keeps them
		if r := s.opts.PeerSide; r != nil {
			facts, st := r.Latest()
			gopts.PeerFacts, gopts.APIStatus = facts, &st
		}
		if s.opts.Early && prev == nil {
			gopts.Early = func(early *probes.Snapshot) {
				if !up {
					up = true
					s.send(ctx, probes.SourceStatus{Up: true})
				}
				s.send(ctx, early)
			}
		}
		snap, err := GatherWith(gctx, s.c, prev, gopts)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			up = false
			prev = nil
			if busDone != nil {
				busStop()
				<-busDone
				busDone, busStop = nil, nil
			}
			next := time.Now().Add(backoff)
			if !s.send(ctx, probes.SourceStatus{Up: false, Err: safetext.Of(ConnectError(err, s.opts.Socket)), NextRetry: next}) {
				return
			}
			timer.Reset(backoff)
			backoff = min(backoff*2, s.opts.MaxBackoff)
			continue
		}
		backoff = s.opts.MinBackoff
		if !up {
			up = true
			if !s.send(ctx, probes.SourceStatus{Up: true}) {
				return
			}
		}
		s.applyLatency(snap)
		if !s.send(ctx, snap) {
			return
		}
		prev = snap
		if busDone != nil {
			select {
			case <-busDone:
				busStop()
				busDone, busStop = nil, nil
			default:
			}
		}
		s.maybeMeasure(ctx, trigger, usesExitNode(snap))
		if busDone == nil && !time.Now().Before(busNext) {
			busStop, busDone = s.startBus(ctx, trigger)
			busNext = time.Now().Add(busRetry)
		}
		timer.Reset(s.opts.Interval)
	}
}

// startBus starts watchBus under its own cancel func, counted in s.wg.
func (s *Source) startBus(ctx context.Context, trigger chan<- struct{}) (context.CancelFunc, chan struct{}) {
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.watchBus(bctx, trigger, done)
	}()
	return cancel, done
}

// busRetry is the least time between two IPN bus watch attempts.
const busRetry = 5 * time.Second

// watchBus watches the IPN bus and pokes trigger on every change worth a
// fresh Gather; it returns (closing done) when the bus ends or fails. A
// refused or broken watch is recorded in busErr, which the next snapshots
// carry as a warning until a watch works again.
func (s *Source) watchBus(ctx context.Context, trigger chan<- struct{}, done chan<- struct{}) {
	defer close(done)
	w, err := s.c.WatchIPNBus(ctx, BusMask)
	if err != nil {
		if ctx.Err() == nil {
			msg := errText(err)
			if strings.HasPrefix(msg, "400 ") {
				msg = "tailscaled refused the watch request (" + msg + ")"
			}
			s.setBusErr(msg)
		}
		return
	}
	defer w.Close()
	first := true
	for {
		n, err := w.Next()
		if err != nil {
			if ctx.Err() == nil {
				s.setBusErr(errText(err))
			}
			return
		}
		if n.ErrMessage != nil {
			// tailscaled says why it ends the watch (a refused mask, or
			// "IPN bus consumer fell behind; closing watch").
			s.setBusErr(cleanString(*n.ErrMessage))
			return
		}
		if first {
			first = false
			s.setBusErr("")
			s.resetWG(&n)
		}
		if s.noteChange(&n) {
			select {
			case trigger <- struct{}{}:
			default:
			}
		}
	}
}

// selfNodeID stands for our own node in the stale set.
const selfNodeID tailcfg.NodeID = -1

// noteChange records which cached WhoIs answers n makes stale and reports
// whether n is worth a fresh Gather.
func (s *Source) noteChange(n *ipn.Notify) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.staleIDs == nil {
		s.staleIDs = map[tailcfg.NodeID]bool{}
	}
	changed := n.Health != nil // Status.Health changed: gather, WhoIs answers stay
	for id, ps := range n.PeerState {
		if s.wgState == nil {
			s.wgState = map[string]WireGuardState{}
		}
		s.wgState[string(id)] = WireGuardState{State: ps.PeerWireGuardState.String(), Since: ps.PeerWireGuardStateAt}
		s.wgKnown, changed = true, true
	}
	if n.State != nil || len(n.PeersRemoved) > 0 {
		s.staleAll, changed = true, true
	}
	if n.SelfChange != nil {
		s.staleIDs[selfNodeID], changed = true, true
	}
	for _, pn := range n.PeersChanged {
		if pn != nil {
			s.staleIDs[pn.ID], changed = true, true
		}
	}
	for _, pc := range n.PeerChangedPatch {
		if pc != nil {
			s.staleIDs[pc.NodeID], changed = true, true
		}
	}
	return changed
}

// resetWG starts the WireGuard states afresh from a watch's first message
// (which lists every current state): known when the daemon reports them.
func (s *Source) resetWG(n *ipn.Notify) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wgState = nil
	s.wgKnown = wgStatesKnown(n.Version, len(n.PeerState))
}

// wgStates is a copy of the WireGuard states for a Gather; nil while
// unknown (no watch, an older daemon).
func (s *Source) wgStates() map[string]WireGuardState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.wgKnown {
		return nil
	}
	out := make(map[string]WireGuardState, len(s.wgState))
	for k, v := range s.wgState {
		out[k] = v
	}
	return out
}

// takeStale returns and clears what noteChange recorded.
func (s *Source) takeStale() (all bool, ids map[tailcfg.NodeID]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, ids = s.staleAll, s.staleIDs
	s.staleAll, s.staleIDs = false, nil
	return all, ids
}

// freshLatency is the last DERP latency measurement if it is younger than
// DERPLatencyMaxAge at now, else nil.
func (s *Source) freshLatency(now time.Time) *probes.DERPLatencyReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.derpLatency == nil || now.Sub(s.derpLatency.At) > probes.DERPLatencyMaxAge {
		return nil
	}
	return s.derpLatency
}

// maybeMeasure starts a DERP latency measurement in the background when
// MeasureDERP is set, none runs, and the last started LatencyRefresh ago
// or more; a result pokes trigger so the next snapshot uses it. A failed
// measurement (UDP blocked, no DERP map) is not retried before
// LatencyRefresh: NetInfo's latencies serve meanwhile.
//
// Not while an exit node carries this host's traffic: tailpath's STUN
// packets would go through the tunnel (an unprivileged process cannot bind
// its sockets to the physical interface as tailscaled does), and the
// latencies would be the exit node's.
func (s *Source) maybeMeasure(ctx context.Context, trigger chan<- struct{}, exitNode bool) {
	if s.opts.MeasureDERP == nil || exitNode {
		return
	}
	s.mu.Lock()
	if s.measuring || s.closed || (!s.lastMeasure.IsZero() && time.Since(s.lastMeasure) < LatencyRefresh) {
		s.mu.Unlock()
		return
	}
	s.measuring, s.lastMeasure = true, time.Now()
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		var rep *probes.DERPLatencyReport
		mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if dm, err := s.c.CurrentDERPMap(mctx); err == nil {
			rep, _ = s.opts.MeasureDERP(mctx, dm)
		}
		s.mu.Lock()
		s.measuring = false
		if rep != nil {
			s.derpLatency = rep
		}
		s.mu.Unlock()
		if rep != nil {
			select {
			case trigger <- struct{}{}:
			default:
			}
		}
	}()
}

// usesExitNode reports whether snap shows an exit node in use.
func usesExitNode(snap *probes.Snapshot) bool {
	for i := range snap.Peers {
		if snap.Peers[i].ExitNode {
			return true
		}
	}
	return false
}

// setBusErr records why the IPN bus watch failed ("" once it works).
func (s *Source) setBusErr(e string) {
	s.mu.Lock()
	s.busErr = e
	s.mu.Unlock()
}

// pingLatency is a peer's last ping round trip and the path it was
// measured on: the pong's (DISCO) or, when the pong does not say (TSMP),
// the path of the first snapshot after it. seen: a snapshot has shown
// the peer on that path since; once it has, a snapshot on another path
// drops the round trip.
type pingLatency struct {
	d    time.Duration
	kind probes.PathKind
	seen bool
}

// applyLatency copies the latest ping latency and DISCO run per peer into
// snap (evidence the joiner's probes.Judge reads), and adds the IPN bus
// warning while the watch fails. A latency measured on a path the peer
// has since left is dropped (pingLatency).
func (s *Source) applyLatency(snap *probes.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busErr != "" {
		snap.Warnings = append(snap.Warnings, safetext.New("IPN bus: "+s.busErr+"; paths still refresh every "+s.opts.Interval.String()+", peer endpoints and home DERP within "+WhoIsMaxAge.String()))
	}
	for i := range snap.Peers {
		p := &snap.Peers[i]
		if l, ok := s.latency[p.ID]; ok {
			switch {
			case l.kind == "":
				l.kind, l.seen = p.Path.Kind, true
			case p.Path.Kind == l.kind:
				l.seen = true
			case l.seen:
				// The path changed since the ping: its round trip was
				// another path's (a direct ping's 3 ms beside a relayed
				// path). Not shown, as if never measured.
				delete(s.latency, p.ID)
				p.Latency = 0
			}
			if _, kept := s.latency[p.ID]; kept {
				s.latency[p.ID] = l
				p.Latency = l.d
			}
		}
		if r, ok := s.pingRuns[p.ID]; ok {
			p.PingRun = r
		}
	}
}

// RefreshPeerSide asks the control API for the peers' facts now (the
// dashboard's r key); it does nothing without SourceOptions.PeerSide.
func (s *Source) RefreshPeerSide() {
	if r := s.opts.PeerSide; r != nil {
		r.Refresh()
	}
}

// Probe runs SourceOptions.Prober over peers in the background (one probe
// at a time; a second call while one runs does nothing) and sends its
// ProbeProgress on Run's channel. The runs become the peers' PingRun (and
// their last pong's round trip the peers' Latency) in later snapshots
// (evidence for disco-unanswered), and a snapshot follows
// at once. It does nothing without a Prober, before Run or after Run's
// ctx ends. Pinging makes the peers Active for about 45 s: the probe
// changes what it measures.
func (s *Source) Probe(peers []probes.Peer) {
	s.mu.Lock()
	ctx := s.runCtx
	if s.opts.Prober == nil || ctx == nil || s.closed || ctx.Err() != nil || s.probing || len(peers) == 0 {
		s.mu.Unlock()
		return
	}
	s.probing = true
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		runs := s.opts.Prober(ctx, s.c, peers, func(pp probes.ProbeProgress) { s.send(ctx, pp) })
		s.mu.Lock()
		s.probing = false
		for id, r := range runs {
			if r != nil && r.Tries > 0 {
				s.pingRuns[id] = r
			}
			if r != nil && r.Latency > 0 {
				kind := probes.PathKind("") // the next snapshot's: a run's pongs may change paths
				if r.Direct {
					kind = probes.PathDirect
				}
				s.latency[id] = pingLatency{d: r.Latency, kind: kind}
			}
		}
		s.mu.Unlock()
		select {
		case s.apiTrigger <- struct{}{}:
		default:
		}
	}()
}

// Ping runs Ping(ctx, c, peer, kind, 0, 0, …) in the background for a
// running Source and sends each PingResult on Run's channel; the latest
// latency is kept on the peer in later snapshots. It does nothing before
// Run or after Run's ctx ends.
func (s *Source) Ping(peer probes.Peer, kind probes.PingKind) {
	s.mu.Lock()
	ctx := s.runCtx
	if ctx == nil || s.closed || ctx.Err() != nil {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		run := probes.PingRun{}
		_ = Ping(ctx, s.c, peer, kind, 0, 0, func(r probes.PingResult) {
			run.Tries = max(run.Tries, r.Try)
			s.mu.Lock()
			if r.Err == "" && r.Latency > 0 {
				s.latency[peer.ID] = pingLatency{d: r.Latency, kind: r.Path}
				run.Pongs++
				run.Via, run.Latency = r.Via, r.Latency
				run.Direct = run.Direct || r.Path == probes.PathDirect
			}
			ranOut := r.Err == "" || r.Err == safetext.Of(probes.ErrNoDirect) || r.Err == "timeout"
			if r.Done && kind == probes.PingDISCO && ranOut && run.Tries > 0 {
				run.At = time.Now()
				rr := run
				s.pingRuns[peer.ID] = &rr
			}
			s.mu.Unlock()
			s.send(ctx, r)
		})
	}()
}
