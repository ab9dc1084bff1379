package tailscaled

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
)

// whoisParallel bounds concurrent WhoIs calls during one Gather.
const whoisParallel = 8

// WhoIsMaxAge is how long Gather reuses a WhoIs answer carried in prev
// instead of asking again, so polling every 2 s costs one Status call and
// not one WhoIs per peer. Source drops the cache when the IPN bus reports a
// change (endpoints, home DERP, online state).
const WhoIsMaxAge = 30 * time.Second

// cachedNode is one node as Gather read it (nodeLite: from the netmap or
// WhoIs) and when.
type cachedNode struct {
	node *nodeLite
	at   time.Time
}

// memo is what a gather keeps in its snapshot for the next gather on it
// (Snapshot.Memo); not serialised.
type memo struct {
	// nodes caches WhoIs answers by peer ID ("" for self) so the next
	// Gather can reuse them for up to WhoIsMaxAge.
	nodes map[string]cachedNode
	// netmapRefused: the daemon refused the IPN bus's initial netmap
	// (errNetmapRefused), so later gathers on prev ask WhoIs only.
	netmapRefused bool
	// netinfoLatency is NetInfo's DERPLatency as received (before a
	// netcheck replaced it in Self.NAT), to date the next snapshot's.
	netinfoLatency map[int]time.Duration
	netinfoAt      time.Time
	// traffic is which metrics endpoint to ask (traffic.go).
	traffic trafficMemo
}

// memoOf is the memo the gather that built s kept; an empty one when s is
// nil or was not built by a gather (a snapshot read from a file).
func memoOf(s *probes.Snapshot) *memo {
	if s != nil {
		if m, ok := s.Memo().(*memo); ok && m != nil {
			return m
		}
	}
	return &memo{}
}

// Gather takes one Snapshot from the local tailscaled:
//
//   - Status(): self, peers, path fields (Active, CurAddr, PeerRelay, Relay),
//     byte counters, handshakes.
//   - Each peer's node: Endpoints, HomeDERP, Online (tri-state) and the
//     peer's shared NetInfo. A cold gather (no answers carried in prev)
//     reads every node in one request, the IPN bus's initial netmap, beside
//     Status and the DERP map (netmapReadTimeout bounds it); what it lacks,
//     and every later refresh, is WhoIs(first Tailscale IP) per peer. A
//     denied or failing WhoIs adds one Warning and leaves EndpointsKnown
//     false. Answers carried in prev that are younger than WhoIsMaxAge are
//     reused, not asked again.
//   - WhoIs(our own first Tailscale IP): our NetInfo and Endpoints. The
//     daemon keeps its netcheck NetInfo in its Hostinfo and sends it to
//     control; neither Status nor PeerStatus carries it, so the source is the
//     self node of the netmap, which WhoIs returns for our own address (the
//     same object as the IPN bus's NetMap.SelfNode; it reflects the last
//     NetInfo control acknowledged, seconds behind the daemon at most).
//   - CurrentDERPMap(): region codes and names (Warning if unavailable).
//
// Rates are bytes/s from prev's counters (by peer ID); prev may be nil. Peer
// Latency and PingRun are carried over from prev. Every outside string is
// sanitised with safetext.Clean. It judges nothing: the joiner
// (probes/join) runs probes.Judge over the whole gather.
// Peers are sorted by Name, then ID.
//
// Errors: a failing Status() is returned through ConnectError, so it wraps
// ErrNotRunning, ErrPermission or ErrBadReply where those apply. ctx bounds
// the whole gather.
func Gather(ctx context.Context, c LocalClient, prev *probes.Snapshot) (*probes.Snapshot, error) {
	return GatherWith(ctx, c, prev, GatherOptions{})
}

// GatherOptions change what Gather collects; the zero value shows the
// peers `tailscale status` shows.
type GatherOptions struct {
	// All keeps the peers `tailscale status` leaves out
	// (cmd/tailscale/cli/status.go): shared-in nodes (ShareeNode) and
	// Mullvad location exit nodes not in use, which can number hundreds.
	// Without it they are counted in Snapshot.Hidden, never asked WhoIs
	// and never diagnosed.
	All bool
	// Latency, when not nil, is a fresh DERP latency measurement
	// (MeasureDERPLatency); probes.Judge then judges far-home-derp on it
	// instead of NetInfo's latencies (Self.DERPLatencyFrom "netcheck").
	Latency *probes.DERPLatencyReport
	// PeerFacts, when not nil, are the control API's facts of the
	// tailnet's devices (Refresher.Latest); each peer's are matched by
	// stable node id or Tailscale address and merged into Peer.PeerSide,
	// and APIStatus goes to Snapshot.ControlAPI with the match counts.
	PeerFacts *probes.APIFacts
	APIStatus *probes.APIStatus
	// WhoIsOnly makes a cold Gather ask WhoIs per peer instead of reading
	// every node at once from the IPN bus's initial netmap (for
	// comparing the two; WhoIs is also the fallback when the bus fails).
	WhoIsOnly bool
	// AllNodes asks WhoIs of every peer whose node Gather does not hold
	// (from the netmap, or cached in prev). Without it only the peers
	// whose verdicts read their node are asked (needsNode: a relayed
	// peer, one Status does not call online); a direct or idle peer
	// without one shows no endpoints, NetInfo or peer side, and the
	// same verdict. A snapshot (every node is evidence) and a board's
	// gather set it.
	AllNodes bool
	// FillNodes, when positive, asks up to this many more peers' nodes
	// per gather beyond those the verdicts need: peers with none first,
	// then the oldest answers. A long-running source fills every peer's
	// node in over its first polls and keeps them fresh, without asking
	// every peer in its first gather (its first frame) or at once when
	// they age.
	FillNodes int
	// Now, when not zero, is the snapshot's time instead of the clock when
	// Status returns: a saved snapshot (probes/snapshot) is gathered again
	// at the time it was taken, so its evidence dates the same.
	Now time.Time
	// NoCache asks WhoIs afresh for every peer instead of reusing answers
	// cached in prev, so a recording client sees every answer used.
	NoCache bool
	// WireGuard, when not nil, is every peer's WireGuard session state by
	// stable node id, as the IPN bus reported it (Source keeps it from its
	// watch); a peer not in it has none. nil lets a cold Gather read the
	// states from the bus's first message itself (NotifyPeerWireGuardState),
	// else they stay unknown.
	WireGuard map[string]WireGuardState
	// NoBusStates: do not read WireGuard states from the bus when the
	// gather is not cold and WireGuard is nil (the Source watches them
	// itself); a warm Gather otherwise reads them in one bus request.
	NoBusStates bool
	// Early, when set, is handed a snapshot of what Status alone shows
	// (every peer and its path, no verdict's facts: Snapshot.Pending) as
	// soon as Status arrives, before the gather waits for the DERP map,
	// the nodes and the host's facts; the gather then goes on and returns
	// the whole snapshot as ever. The dashboard draws its first frame
	// from it (SourceOptions.Early). Called once, on the gather's
	// goroutine.
	Early func(*probes.Snapshot)
	// Host, when set, reads this host's facts (probes/hostnet: interfaces,
	// the nftables ruleset for tailscaled's port): called on the gather's
	// goroutine while Status is in flight, it makes the reads that need
	// no Self; the function it returns finishes them once Self is known,
	// and its result becomes Self.Host. nil reads nothing.
	Host HostReader
}

// HostReader reads this host's facts in two steps (hostnet.Start): the
// call reads what needs no Self (on the gather's goroutine, in its
// thread's network namespace), the function it returns finishes the
// facts for Self.
type HostReader func(ctx context.Context) func(self probes.Self) *probes.HostFacts

// WireGuardState is one peer's WireGuard session state as the IPN bus
// reports it (ipn.PeerState): WGNone, WGHandshake, WGEstablished or
// WGExpired, and since when.
type WireGuardState struct {
	State string
	Since time.Time
}

// GatherWith is Gather with options.
func GatherWith(ctx context.Context, c LocalClient, prev *probes.Snapshot, opts GatherOptions) (*probes.Snapshot, error) {
	return gatherAt(ctx, c, prev, opts.Now, opts)
}

// gatherAt is GatherWith with a fixed clock for tests; a zero now means
// time.Now() when Status returns.
func gatherAt(ctx context.Context, c LocalClient, prev *probes.Snapshot, now time.Time, opts GatherOptions) (*probes.Snapshot, error) {
	// The requests that do not depend on Status run beside it: the DERP
	// map, and on a cold gather every node from the IPN bus.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dmCh := make(chan derpMapResult, 1)
	askDERPMap := func() {
		go func() {
			dm, err := readDERPMap(ctx, c)
			dmCh <- derpMapResult{dm, err}
		}()
	}
	var nodesCh chan busFirst
	cold := len(memoOf(prev).nodes) == 0
	// refused: the daemon refused the netmap watch, now or on this
	// connection before (a v1.104 daemon); carried to the next snapshot.
	var refused atomic.Bool
	refused.Store(memoOf(prev).netmapRefused)
	readNetmap := !opts.WhoIsOnly && cold && !refused.Load()
	// The DERP map comes with the netmap when the bus sends one: v1.102's
	// initial Notify.NetMap.DERPMap is the map /localapi/v0/derpmap
	// answers, both the node backend's netMap.DERPMap (ipn/ipnlocal
	// node_backend.go: DERPMap, and netMapWithPeers' shallow copy). One
	// request fewer for a one-shot status; asked beside Status otherwise,
	// and as soon as the bus sends no netmap.
	_, raw := c.(rawLocalAPI)
	derpFromBus := readNetmap && raw
	if !derpFromBus {
		askDERPMap()
	}
	if readNetmap {
		nodesCh = make(chan busFirst, 1)
		go func() {
			// Its own bound, so a stalled watch leaves WhoIs time to
			// answer instead.
			nctx, cancel := context.WithTimeout(ctx, netmapReadTimeout)
			defer cancel()
			first, err := readNetmapNodes(nctx, c)
			if derpFromBus {
				if first.derpMap != nil {
					dmCh <- derpMapResult{first.derpMap, nil}
				} else {
					askDERPMap()
				}
			}
			if errors.Is(err, errNetmapRefused) {
				refused.Store(true)
				// The states alone, which every daemon since v1.102
				// sends when asked without the netmap bit.
				if opts.WireGuard == nil && !opts.NoBusStates {
					first, _ = readWGStates(nctx, c)
				}
			}
			nodesCh <- first
		}()
	} else if !opts.WhoIsOnly && opts.WireGuard == nil && !opts.NoBusStates {
		// Nodes are cached (or WhoIs reads them); the WireGuard states
		// are read afresh.
		nodesCh = make(chan busFirst, 1)
		go func() {
			nctx, cancel := context.WithTimeout(ctx, netmapReadTimeout)
			defer cancel()
			first, _ := readWGStates(nctx, c)
			nodesCh <- first
		}()
	}
	// Status on a goroutine of its own, while this one reads the host's
	// facts that need no Self: they are read on the calling goroutine, in
	// its thread's network namespace (hostnet.Start).
	type statusResult struct {
		st  *status
		err error
	}
	stCh := make(chan statusResult, 1)
	// The traffic counters by path (traffic.go): asked by the same
	// goroutine once Status is read, on the connection it leaves idle,
	// while the gather waits for the bus and the DERP map. A connection
	// of their own beside Status cost a dial and the daemon an accept for
	// a reply of a few hundred bytes, and a goroutine of their own grew a
	// second stack for what this one's has room for.
	trCh := make(chan trafficResult, 1)
	go func(now time.Time) { // now as given: zero dates them by their reply
		st, err := readStatus(ctx, c)
		stCh <- statusResult{st, err}
		if err != nil || st == nil {
			trCh <- trafficResult{}
			return
		}
		t, m := readTraffic(ctx, c, memoOf(prev).traffic, now)
		trCh <- trafficResult{t, m}
	}(now)
	var hostDone func(probes.Self) *probes.HostFacts
	if opts.Host != nil {
		hostDone = opts.Host(ctx)
	}
	sr := <-stCh
	st, err := sr.st, sr.err
	if err != nil {
		return nil, ConnectError(err, socketOf(c))
	}
	if st == nil {
		return nil, ConnectError(&jsonSyntaxError{errors.New("empty status reply")}, socketOf(c))
	}
	if now.IsZero() {
		now = time.Now()
	}
	if opts.Early != nil {
		opts.Early(earlySnapshot(st, now, opts))
	}
	snap, err := gatherFrom(ctx, c, st, prev, now, opts, dmCh, nodesCh, hostDone)
	if snap != nil {
		// gatherFrom has received from nodesCh, after the Store.
		memoOf(snap).netmapRefused = refused.Load()
		noteTraffic(snap, prev, <-trCh)
	}
	return snap, err
}

// netmapReadTimeout bounds a cold Gather's read of every node from the IPN
// bus; past it, WhoIs per peer serves.
const netmapReadTimeout = 3 * time.Second

// derpMapResult is CurrentDERPMap's answer.
type derpMapResult struct {
	dm  *tailcfg.DERPMap
	err error
}

// mullvadSuffix ends the MagicDNS names of Mullvad location exit nodes
// (cmd/tailscale/cli/status.go's mullvadTCD).
const mullvadSuffix = "mullvad.ts.net."

// HiddenByCLI reports whether `tailscale status` leaves ps out of its peer
// list: a shared-in node, or a Mullvad location exit node not in use.
func HiddenByCLI(ps *ipnstate.PeerStatus) bool {
	return ps.ShareeNode || (ps.ExitNodeOption && !ps.ExitNode && strings.HasSuffix(ps.DNSName, mullvadSuffix))
}

// gatherFrom builds the snapshot from st, the DERP map arriving on dmCh,
// when nodesCh is not nil every node from the IPN bus (nil on failure),
// and when hostDone is not nil this host's facts.
//
// Long on purpose: one gather's state (the node memo, the WhoIs refusal,
// warnOnce, the region codes) is shared by every step and its closures; split,
// each step would take most of it as arguments.
func gatherFrom(ctx context.Context, c LocalClient, st *status, prev *probes.Snapshot, now time.Time, opts GatherOptions,
	dmCh <-chan derpMapResult, nodesCh <-chan busFirst, hostDone func(probes.Self) *probes.HostFacts) (*probes.Snapshot, error) {
	snap := &probes.Snapshot{
		Time:         now,
		BackendState: safetext.New(st.BackendState),
		Regions:      map[int]probes.Region{},
	}
	// A node for this node and each peer at most: one table, never grown.
	m := &memo{nodes: make(map[string]cachedNode, len(st.Peer)+1)}
	snap.SetMemo(m)
	prevNodes := memoOf(prev).nodes
	var warnMu sync.Mutex
	warnOnce := map[string]bool{}
	warn := func(s string) {
		warnMu.Lock()
		defer warnMu.Unlock()
		if !warnOnce[s] {
			warnOnce[s] = true
			snap.Warnings = append(snap.Warnings, safetext.New(s))
		}
	}

	// A cold gather (nothing cached) reads every node at once from the
	// IPN bus's initial netmap; WhoIs serves what it lacks.
	var bulk netmapNodes
	wgStates := opts.WireGuard
	if nodesCh != nil {
		first := <-nodesCh
		bulk = first.nodes
		if wgStates == nil && first.wgKnown {
			wgStates = first.wg
			if wgStates == nil {
				wgStates = map[string]WireGuardState{}
			}
		}
	}

	// mu guards deniedFlag (a WhoIs was refused: ask no more) and m.nodes.
	var mu sync.Mutex
	var deniedFlag bool
	raw, _ := c.(rawLocalAPI)
	// cachedIn is id's answer cached in prev: fresh (younger than
	// WhoIsMaxAge), else stale; zero when prev holds none (or NoCache).
	cachedIn := func(id string) (fresh, stale cachedNode) {
		if prev == nil || opts.NoCache {
			return
		}
		cn, ok := prevNodes[id]
		if !ok || cn.node == nil {
			return
		}
		if age := now.Sub(cn.at); age < WhoIsMaxAge && age >= 0 {
			return cn, cachedNode{}
		}
		return cachedNode{}, cn
	}
	// nodeFor is id's node ("" ourselves, "peer:<stable id>"): a fresh
	// answer cached in prev, the netmap's, else, when ask, WhoIs of ip;
	// not asking, an older cached answer serves (display only: no
	// verdict reads it, needsNode).
	nodeFor := func(id string, ip netip.Addr, ask bool) *nodeLite {
		fresh, stale := cachedIn(id)
		if fresh.node != nil {
			mu.Lock()
			m.nodes[id] = fresh
			mu.Unlock()
			return fresh.node
		}
		if n := bulk[id]; n != nil {
			mu.Lock()
			m.nodes[id] = cachedNode{node: n, at: now}
			mu.Unlock()
			return n
		}
		if !ask {
			if stale.node != nil {
				mu.Lock()
				m.nodes[id] = stale
				mu.Unlock()
			}
			return stale.node
		}
		mu.Lock()
		skip := deniedFlag
		mu.Unlock()
		if skip || !ip.IsValid() {
			return nil
		}
		var n *nodeLite
		var err error
		ok := false
		if raw != nil {
			n, err, ok = whoisLite(ctx, raw, ip)
		}
		if !ok {
			var res *apitype.WhoIsResponse
			if res, err = c.WhoIs(ctx, ip.String()); err == nil && res != nil {
				n = liteOf(res.Node)
			}
		}
		if err != nil {
			if local.IsAccessDeniedError(err) || errors.Is(err, errWhoIsDenied) {
				mu.Lock()
				deniedFlag = true
				mu.Unlock()
				// warn keeps one copy however many lookups were refused.
				warn("WhoIs: permission denied, so peer endpoints, home DERP and NAT facts are unknown; run as root or `sudo tailscale set --operator=$USER`")
				return nil
			}
			if ctx.Err() == nil {
				warn("WhoIs " + ip.String() + ": " + whyText(err))
			}
			return nil
		}
		if n == nil {
			return nil
		}
		mu.Lock()
		m.nodes[id] = cachedNode{node: n, at: now}
		mu.Unlock()
		return n
	}

	// nodeHeld reports whether nodeFor(id, …, true) answers without a
	// request: a fresh answer cached in prev, or the netmap's.
	nodeHeld := func(id string) bool {
		fresh, _ := cachedIn(id)
		return fresh.node != nil || bulk[id] != nil
	}

	// Our own node, asked while the DERP map arrives: WhoIs of our
	// address when the bus brought none (a v1.104 daemon), so that
	// request is not left until after the map.
	selfCh := make(chan *nodeLite, 1)
	if s := st.Self; s != nil && len(s.TailscaleIPs) > 0 {
		if bulk[""] != nil {
			selfCh <- nodeFor("", s.TailscaleIPs[0], true)
		} else {
			go func() { selfCh <- nodeFor("", s.TailscaleIPs[0], true) }()
		}
	} else {
		selfCh <- nil
	}

	noSTUN, noSTUN6 := false, false
	var stunServers, derpRegions int
	if r := <-dmCh; r.err != nil {
		// First, as when nothing ran beside it: the WhoIs of our own
		// node may have warned already.
		w := "DERP map: " + whyText(r.err)
		warnMu.Lock()
		if !warnOnce[w] {
			warnOnce[w] = true
			snap.Warnings = slices.Insert(snap.Warnings, 0, safetext.New(w))
		}
		warnMu.Unlock()
	} else if dm := r.dm; dm != nil {
		noSTUN, noSTUN6 = stunDisabled(dm), stun6Disabled(dm)
		stunServers, derpRegions = derpMapCounts(dm)
		for rid, r := range dm.Regions {
			id := tscompat.IntRegionID(rid)
			if r == nil || id == 0 {
				continue
			}
			snap.Regions[id] = regionOf(dm, r, id)
		}
	}
	codeToID := make(map[safetext.Text]int, len(snap.Regions))
	for id, r := range snap.Regions {
		if r.Code != "" { // a region known by id only (pasted logs) has no code to match
			codeToID[r.Code] = id
		}
	}

	// Self.
	if s := st.Self; s != nil {
		snap.Self = probes.Self{
			Name:         shortName(s),
			DNSName:      safetext.New(strings.TrimSuffix(s.DNSName, ".")),
			OS:           safetext.New(s.OS),
			TailscaleIPs: slices.Clone(s.TailscaleIPs),
			HomeDERPCode: safetext.New(s.Relay),
			// Status.Self.Addrs are the daemon's live endpoints
			// (magicsock's last set); WhoIs of ourselves is control's echo.
			Endpoints:  parseAddrs(s.Addrs),
			OnlyTCP443: s.CapMap.Contains(tscompat.NodeAttrOnlyTCP443),
			// randomizeClientPort in the policy: tailscaled ignores
			// --port (wgengine/userspace.go Reconfig).
			RandomizePort: s.CapMap.Contains(tscompat.NodeAttrRandomizeClientPort),
			Version:       safetext.New(probes.ClientVersion(st.Version)),
			NoSTUN:        noSTUN,
			NoIPv6STUN:    noSTUN6,
			STUNServers:   stunServers,
			DERPRegions:   derpRegions,
		}
		if n := <-selfCh; n != nil {
			if len(snap.Self.Endpoints) == 0 {
				snap.Self.Endpoints = slices.Clone(n.Endpoints)
			}
			if ni := n.netInfo(); ni != nil {
				snap.Self.NAT = natFromNetInfo(ni)
				snap.Self.HomeDERP = tscompat.IntRegionID(ni.PreferredDERP)
			}
		}
		// Status.Self.Relay is current; NetInfo.PreferredDERP (as control
		// echoes it) can lag a home change by one map update.
		if id, ok := codeToID[snap.Self.HomeDERPCode]; ok && snap.Self.HomeDERPCode != "" {
			snap.Self.HomeDERP = id
		}
		if r, ok := snap.Regions[snap.Self.HomeDERP]; ok && snap.Self.HomeDERPCode == "" {
			snap.Self.HomeDERPCode = r.Code
		}
		noteLatencyAge(snap, prev, now, opts.Latency)
	}
	for _, h := range st.Health {
		snap.Self.Health = append(snap.Self.Health, safetext.New(h))
	}
	if hostDone != nil {
		snap.Self.Host = hostDone(snap.Self)
	}
	mu.Lock()
	whoisDenied := deniedFlag
	mu.Unlock()
	if snap.Self.NAT == nil && st.Self != nil && !whoisDenied {
		warn("NetInfo: the daemon has not reported its NAT facts yet (netcheck pending), so local NAT checks are unknown")
	}

	// Peers.
	prevByID := map[safetext.Text]*probes.Peer{}
	var dt float64
	if prev != nil {
		for i := range prev.Peers {
			prevByID[prev.Peers[i].ID] = &prev.Peers[i]
		}
		dt = now.Sub(prev.Time).Seconds()
	}
	pss := make([]*ipnstate.PeerStatus, 0, len(st.Peer))
	for _, ps := range st.Peer {
		if ps == nil {
			continue
		}
		if ps.PrimaryRoutes != nil {
			for _, r := range ps.PrimaryRoutes.All() {
				if r.Bits() > 0 {
					snap.Self.Routes = append(snap.Self.Routes, probes.SubnetRoute{Prefix: r, Via: shortName(ps)})
				}
			}
		}
		if !opts.All && HiddenByCLI(ps) {
			snap.Hidden++
			continue
		}
		pss = append(pss, ps)
	}
	// In the snapshot's order (the sort at the end: name, then ID), so
	// that sort finds the peers in place instead of moving 1,000 Peers.
	type keyed struct {
		name, id safetext.Text
		ps       *ipnstate.PeerStatus
	}
	order := make([]keyed, len(pss))
	for i, ps := range pss {
		order[i] = keyed{shortName(ps), safetext.New(string(ps.ID)), ps}
	}
	slices.SortFunc(order, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.id, b.id)) })
	for i := range order {
		pss[i] = order[i].ps
	}
	snap.Peers = make([]probes.Peer, len(pss))
	ask := askNodes(pss, opts, prevNodes, bulk, now)
	// Workers take the peers in turn: as many WhoIs at once as there are
	// peers to ask (whoisParallel at most), without a goroutine (and its
	// stack growth) per peer. When no peer's node needs a request (the
	// netmap or prev holds every one asked), the peers are built here.
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(pss) {
				return
			}
			ps := pss[i]
			var node *nodeLite
			if len(ps.TailscaleIPs) > 0 {
				node = nodeFor("peer:"+string(ps.ID), ps.TailscaleIPs[0], ask[i])
			}
			snap.Peers[i] = buildPeer(ps, node, snap.Regions, codeToID, now)
			if wgStates != nil {
				p := &snap.Peers[i]
				w, ok := wgStates[string(ps.ID)]
				if !ok {
					w = WireGuardState{State: probes.WGNone}
				}
				p.WireGuard, p.WireGuardSince = safetext.New(w.State), w.Since
			}
			if node != nil {
				p := &snap.Peers[i]
				p.PeerSide = peerSideOf(p, node, snap.Regions)
			}
		}
	}
	requests := 0
	for i, ps := range pss {
		if ask[i] && len(ps.TailscaleIPs) > 0 && !nodeHeld("peer:"+string(ps.ID)) {
			requests++
		}
	}
	if requests == 0 {
		work()
	} else {
		var wg sync.WaitGroup
		for range min(whoisParallel, requests) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work()
			}()
		}
		wg.Wait()
	}
	if opts.APIStatus != nil {
		snap.ControlAPI = probes.MatchPeerFacts(snap, opts.PeerFacts, *opts.APIStatus)
	}
	for i := range snap.Peers {
		p := &snap.Peers[i]
		pp := prevByID[p.ID]
		if pp != nil {
			if dt > 0 {
				p.TxRate = rate(p.TxBytes, pp.TxBytes, dt)
				p.RxRate = rate(p.RxBytes, pp.RxBytes, dt)
				p.RatesKnown = p.TxBytes >= pp.TxBytes && p.RxBytes >= pp.RxBytes
			}
			p.Latency = pp.Latency
			p.PingRun = pp.PingRun
			if !pp.LastDirect.IsZero() && now.Sub(pp.LastDirect) < probes.LostDirectWindow {
				p.LastDirect, p.LastDirectAddr = pp.LastDirect, pp.LastDirectAddr
			}
		}
		if p.Active && !probes.HandshakeRecent(p.LastHandshake, now) {
			p.NoHandshakeSince = now
			if pp != nil && !pp.NoHandshakeSince.IsZero() {
				p.NoHandshakeSince = pp.NoHandshakeSince
			}
		}
		if p.Path.Kind == probes.PathDirect {
			p.LastDirect, p.LastDirectAddr = now, p.Path.Addr
		}
		if (p.Path.Kind == probes.PathDERP || p.Path.Kind == probes.PathPeerRelay) && !p.LastDirect.IsZero() && len(p.TailscaleIPs) > 0 {
			p.LastChange = lastEndpointChange(ctx, c, p.TailscaleIPs[0], warn)
		}
	}
	slices.SortFunc(snap.Self.Routes, func(a, b probes.SubnetRoute) int {
		return cmp.Or(a.Prefix.Addr().Compare(b.Prefix.Addr()), cmp.Compare(a.Prefix.Bits(), b.Prefix.Bits()), cmp.Compare(a.Via, b.Via))
	})
	slices.SortFunc(snap.Peers, func(a, b probes.Peer) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	return snap, nil
}

// lastEndpointChange reads the newest endpoint-change log entry for ip; nil
// when there is none or the log is unavailable (permission adds a warning).
func lastEndpointChange(ctx context.Context, c LocalClient, ip netip.Addr, warn func(string)) *probes.EndpointChange {
	chs, err := EndpointChanges(ctx, c, ip)
	switch {
	case errors.Is(err, ErrNoEndpointLog):
		return nil
	case errors.Is(err, ErrPermission):
		warn("endpoint-change log: permission denied, so lost-direct shows no daemon event")
		return nil
	case err != nil:
		if ctx.Err() == nil {
			warn("endpoint-change log " + ip.String() + ": " + whyText(err))
		}
		return nil
	}
	var last *probes.EndpointChange
	for i := range chs {
		if last == nil || !chs[i].When.Before(last.When) {
			last = &chs[i]
		}
	}
	return last
}

// buildPeer converts one PeerStatus (and its node, may be nil) to a
// Peer without a verdict.
func buildPeer(ps *ipnstate.PeerStatus, node *nodeLite, regions map[int]probes.Region, codeToID map[safetext.Text]int, now time.Time) probes.Peer {
	online, onlineSrc := onlineState(ps, node)
	p := probes.Peer{
		ID:            safetext.New(string(ps.ID)),
		Name:          shortName(ps),
		DNSName:       safetext.New(strings.TrimSuffix(ps.DNSName, ".")),
		OS:            safetext.New(ps.OS),
		TailscaleIPs:  slices.Clone(ps.TailscaleIPs),
		Online:        online,
		OnlineSource:  onlineSrc,
		Active:        ps.Active,
		Expired:       ps.Expired,
		Path:          probes.Classify(ps, online, now),
		HomeDERPCode:  safetext.New(ps.Relay),
		TxBytes:       ps.TxBytes,
		RxBytes:       ps.RxBytes,
		LastHandshake: ps.LastHandshake,
		LastSeen:      ps.LastSeen,
		ExitNode:      ps.ExitNode,
	}
	if ps.KeyExpiry != nil {
		p.KeyExpiry = *ps.KeyExpiry
	}
	p.WireGuardOnly = strings.HasSuffix(string(p.DNSName), ".mullvad.ts.net")
	if node != nil {
		p.WireGuardOnly = p.WireGuardOnly || node.IsWireGuardOnly
		p.Endpoints = slices.Clone(node.Endpoints)
		p.EndpointsKnown = true
		p.HomeDERP = tscompat.IntRegionID(node.HomeDERP)
		if node.LastSeen != nil && p.LastSeen.IsZero() {
			p.LastSeen = *node.LastSeen
		}
		if ni := node.netInfo(); ni != nil {
			p.NAT = natFromNetInfo(ni)
		}
	}
	if p.HomeDERP == 0 {
		p.HomeDERP = codeToID[p.HomeDERPCode]
	}
	if p.HomeDERPCode == "" {
		p.HomeDERPCode = regions[p.HomeDERP].Code
	}
	return p
}

// parseAddrs parses Status's endpoint strings ("ip:port"), skipping any
// that do not parse.
func parseAddrs(ss []string) []netip.AddrPort {
	var out []netip.AddrPort
	for _, s := range ss {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			out = append(out, ap)
		}
	}
	return out
}

// derpMapCounts counts dm's distinct IPv4 STUN servers (address or host
// name, and port; netcheck compares the mapping two of them see) and its
// regions that relay (a node that is not STUN-only).
func derpMapCounts(dm *tailcfg.DERPMap) (stunServers, relaying int) {
	seen := map[string]bool{}
	for _, r := range dm.Regions {
		if r == nil {
			continue
		}
		relays := false
		for _, n := range r.Nodes {
			if n == nil {
				continue
			}
			relays = relays || !n.STUNOnly
			if n.STUNPort < 0 || n.IPv4 == "none" {
				continue
			}
			host := n.IPv4
			if host == "" {
				host = n.HostName
			}
			port := n.STUNPort
			if port == 0 {
				port = 3478
			}
			seen[host+":"+strconv.Itoa(port)] = true
		}
		if relays {
			relaying++
		}
	}
	return len(seen), relaying
}

// stunDisabled reports whether no node of dm answers STUN (STUNPort -1 on
// every node), so netcheck cannot test UDP.
func stunDisabled(dm *tailcfg.DERPMap) bool {
	return everyNode(dm, func(n *tailcfg.DERPNode) bool { return n.STUNPort < 0 })
}

// stun6Disabled reports whether netcheck can send no IPv6 STUN probe to
// dm's nodes: each has STUN off (a negative STUNPort: net/netcheck
// nodeAddrPort refuses it), IPv6 "none" (makeProbePlan and
// makeProbePlanInitial skip it for IPv6), or a STUNTestIP that is IPv4.
func stun6Disabled(dm *tailcfg.DERPMap) bool {
	return everyNode(dm, func(n *tailcfg.DERPNode) bool {
		if n.STUNPort < 0 || n.IPv6 == "none" {
			return true
		}
		ip, err := netip.ParseAddr(n.STUNTestIP)
		return err == nil && ip.Is4()
	})
}

// everyNode reports whether dm has a node and f holds for each.
func everyNode(dm *tailcfg.DERPMap, f func(*tailcfg.DERPNode) bool) bool {
	seen := false
	for _, r := range dm.Regions {
		if r == nil {
			continue
		}
		for _, n := range r.Nodes {
			if n == nil {
				continue
			}
			seen = true
			if !f(n) {
				return false
			}
		}
	}
	return seen
}

// noteLatencyAge dates snap's DERP latencies. NetInfo's are dated
// (DERPLatencyAt) only when they differ from prev's NetInfo values, because
// tailscaled sends new ones only with another NetInfo change; unchanged
// ones keep prev's date and first-seen time. A fresh measurement (lat)
// replaces them in Self.NAT.
func noteLatencyAge(snap, prev *probes.Snapshot, now time.Time, lat *probes.DERPLatencyReport) {
	self := &snap.Self
	if self.NAT != nil && len(self.NAT.DERPLatency) > 0 {
		m, pm := memoOf(snap), memoOf(prev)
		m.netinfoLatency = self.NAT.DERPLatency
		self.DERPLatencyFrom = "netinfo"
		self.DERPLatencySeen = now
		switch {
		case prev == nil || len(pm.netinfoLatency) == 0:
		case maps.Equal(pm.netinfoLatency, m.netinfoLatency):
			self.DERPLatencySeen = prev.Self.DERPLatencySeen
			self.DERPLatencyAt = pm.netinfoAt
		default:
			self.DERPLatencyAt = now
		}
		m.netinfoAt = self.DERPLatencyAt
	}
	if lat != nil && len(lat.ByRegion) > 0 {
		nat := probes.NATInfo{}
		if self.NAT != nil {
			nat = *self.NAT
			// What tailscaled itself reported, beside tailpath's figures.
			self.NetInfoLatency = self.NAT.DERPLatency
		}
		nat.DERPLatency = lat.ByRegion
		self.NAT = &nat
		self.DERPLatencyFrom = "netcheck"
		self.DERPLatencyAt = lat.At
	}
}

// natFromNetInfo converts the daemon's NetInfo; DERPLatency keys are
// "<regionID>-v4"/"-v6" in seconds; the best of the two is kept.
func natFromNetInfo(ni *tailcfg.NetInfo) *probes.NATInfo {
	if ni == nil {
		return nil
	}
	n := &probes.NATInfo{
		WorkingUDP:            probes.OptBool(string(ni.WorkingUDP)),
		WorkingIPv6:           probes.OptBool(string(ni.WorkingIPv6)),
		MappingVariesByDestIP: probes.OptBool(string(ni.MappingVariesByDestIP)),
		HavePortMap:           ni.HavePortMap,
		UPnP:                  probes.OptBool(string(ni.UPnP)),
		PMP:                   probes.OptBool(string(ni.PMP)),
		PCP:                   probes.OptBool(string(ni.PCP)),
		LinkType:              safetext.New(ni.LinkType),
	}
	if len(ni.DERPLatency) > 0 {
		n.DERPLatency = make(map[int]time.Duration, len(ni.DERPLatency))
		for k, sec := range ni.DERPLatency {
			idStr, _, _ := strings.Cut(k, "-")
			id, err := strconv.Atoi(idStr)
			if err != nil || sec <= 0 || sec > 3600 {
				continue
			}
			d := time.Duration(sec * float64(time.Second))
			if old, ok := n.DERPLatency[id]; !ok || d < old {
				n.DERPLatency[id] = d
			}
		}
	}
	return n
}

// shortName is the first label of DNSName, else HostName, sanitised.
func shortName(ps *ipnstate.PeerStatus) safetext.Text {
	if name, _, _ := strings.Cut(ps.DNSName, "."); name != "" {
		return safetext.New(name)
	}
	return safetext.New(ps.HostName)
}

func rate(cur, old int64, dt float64) float64 {
	if cur < old || dt <= 0 {
		return 0 // counters reset (daemon restarted)
	}
	return float64(cur-old) / dt
}

// whyText is a short sanitised reason for a warning.
func whyText(err error) string {
	if local.IsAccessDeniedError(err) {
		return "permission denied"
	}
	return errText(err)
}

// NodeOf returns the WhoIs answer the gather that built s used for the
// peer with stable id peerID ("" for ourselves), asked or reused from the
// previous snapshot, and the address it was asked for (the node's first
// Tailscale address); nil when none was used. A snapshot capture
// (probes/snapshot) records these instead of asking again.
func NodeOf(s *probes.Snapshot, peerID safetext.Text) (*tailcfg.Node, netip.Addr) {
	id, ips := "", s.Self.TailscaleIPs
	if peerID != "" {
		id, ips = "peer:"+string(peerID), nil
		for i := range s.Peers {
			if s.Peers[i].ID == peerID {
				ips = s.Peers[i].TailscaleIPs
				break
			}
		}
	}
	cn, ok := memoOf(s).nodes[id]
	if !ok || cn.node == nil || len(ips) == 0 {
		return nil, netip.Addr{}
	}
	return cn.node.node(), ips[0]
}

// cleanString sanitises one outside string.
func cleanString(s string) string { return safetext.Clean(s) }
