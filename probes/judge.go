package probes

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Judge is where every verdict tailpath shows is made: it takes a whole
// gather (this node, every peer, the host's facts, the pasted evidence
// and, when one is linked, a board's) and judges it at once. It first
// works out the facts that only the whole tailnet shows (Tailnet: a peer
// that is direct proves UDP works here, whatever netcheck said; a region
// that carries traffic is reachable), once, then each peer's verdict
// with them, the board's peer with the board's evidence too
// (diagnoseDevice), and this node's own verdict (diagnoseSelf) and view
// (DescribeSelf). It writes s.Tailnet, every s.Peers[i].Verdict,
// s.Self.Verdict and s.Self.View, and
// returns the index of the peer board is (-1 when board is nil or
// matches none). Pure: no I/O, and it reads nothing but s and board.
//
// The joiner (probes/join: Joiner) calls it on its own copy of a
// gather each time the gather or the board changes; the dashboard,
// status, serve and snapshots all show what it made.
//
// A Pending snapshot (the facts still coming) is not judged: every peer's
// verdict is Verdict{Pending: true}, this node has no verdict or view, and
// no peer is the board's (-1), so nothing is concluded from facts that
// are missing only because they have not arrived.
func Judge(s *Snapshot, board *DeviceEvidence) int {
	return judge(s, board, true)
}

// JudgePoll is Judge for a poll that shows what would settle one peer at
// a time (the dashboard's Detail, SettleOf) or none (serve's /metrics):
// every verdict, this node's own settle, and no peer's Settle, which
// otherwise costs as much again as the verdicts of a gather whose
// relayed peers are open (BenchmarkJudgePoll10k against
// BenchmarkJudge10k). Its verdicts are Judge's (TestJudgePollIsJudge).
func JudgePoll(s *Snapshot, board *DeviceEvidence) int {
	return judge(s, board, false)
}

// judge is Judge; settle says whether each peer's Settle is worked out.
func judge(s *Snapshot, board *DeviceEvidence, settle bool) int {
	if s.Pending {
		s.Tailnet = Tailnet{}
		for i := range s.Peers {
			s.Peers[i].Verdict = Verdict{Pending: true}
		}
		s.Self.Verdict, s.Self.Settle, s.Self.View = nil, nil, nil
		return -1
	}
	s.Tailnet = DeriveTailnet(s)
	tn := &s.Tailnet
	at := -1
	var arena checkArena
	var once selfOnce
	for i := range s.Peers {
		p := &s.Peers[i]
		p.Verdict = diagnoseIn(&s.Self, p, s.Regions, s.Time, tn, &arena, &once, settle)
		if board != nil && at < 0 && board.Matches(p) {
			at = i
			p.Verdict = diagnoseDevice(p.Verdict, s.Self, *p, *board, s.Regions, s.Time, tn)
		}
	}
	s.Self.Verdict, s.Self.Settle = diagnoseSelfSettle(string(s.BackendState), s.Self, s.Regions, s.Time, tn)
	s.Self.View = DescribeSelf(s, tn)
	return at
}

// SettleOf is what would settle peer i's verdict in s, a gather
// JudgePoll (or Judge) judged with board: the Settle Judge would have
// written, worked out for this one peer (nil when its verdict is
// settled, i is out of range, or s is Pending: nothing is judged yet).
func SettleOf(s *Snapshot, i int, board *DeviceEvidence) *Settle {
	if i < 0 || i >= len(s.Peers) || s.Pending {
		return nil
	}
	if st := s.Peers[i].Verdict.Settle; st != nil {
		return st
	}
	p := &s.Peers[i]
	v := diagnoseIn(&s.Self, p, s.Regions, s.Time, &s.Tailnet, nil, nil, true)
	if board != nil && board.Matches(p) && boardAt(s, board) == i {
		v = diagnoseDevice(v, s.Self, *p, *board, s.Regions, s.Time, &s.Tailnet)
	}
	return v.Settle
}

// boardAt is the index of the first peer board matches (Judge's); -1
// when none does.
func boardAt(s *Snapshot, board *DeviceEvidence) int {
	for i := range s.Peers {
		if board.Matches(&s.Peers[i]) {
			return i
		}
	}
	return -1
}

// Tailnet is what a whole gather shows beyond any one peer's evidence,
// worked out once per gather (DeriveTailnet) and read by every rule.
// Its zero value knows nothing: a peer judged alone (this package's
// tests) reads it.
type Tailnet struct {
	// UDP names a peer whose path proves that UDP to the internet works
	// at this end, and UDPHow how: a direct address exists only after a
	// UDP pong came back on it (wgengine/magicsock/endpoint.go
	// handlePongConnLocked sets bestAddr, which CurAddr reports), a peer
	// relay is UDP from the same sockets, and a DISCO pong that came
	// directly crossed UDP both ways. Only a public address counts: a
	// LAN path proves UDP on the LAN, not past the network's edge (a
	// hotel or office network dropping internet UDP still has LAN
	// peers go direct); and a WireGuard-only peer (a Mullvad exit node)
	// counts only once bytes came back, since magicsock picks its
	// address without a pong (addrForWireGuardSendLocked). "" when no
	// peer shows it.
	UDP    safetext.Text `json:"udp_peer,omitempty"`
	UDPHow safetext.Text `json:"udp_how,omitempty"`
	// LANUDP names a peer direct over a private address: UDP works on
	// the LAN (weaker: it refutes nothing about internet UDP).
	LANUDP safetext.Text `json:"lan_udp_peer,omitempty"`
	// IPv6 names a peer direct over a global IPv6 address (so IPv6
	// works here), and IPv6Addr its address; "" when none is.
	IPv6     safetext.Text  `json:"ipv6_peer,omitempty"`
	IPv6Addr netip.AddrPort `json:"ipv6_addr,omitzero"`
	// RegionsUp are DERP regions the evidence shows reachable from here,
	// by region id, with how: tailscaled's "derp-N connected" after its
	// last failure, or bytes coming back now from a peer relayed through
	// a region that is both ends' home. (A peer relayed through its home
	// region may answer through ours: magicsock replies over the route
	// the packet came in on, derp.go derpWriteChanForRegion, so its
	// bytes prove only that some region works: AnyRegionUp.)
	RegionsUp map[int]safetext.Text `json:"regions_up,omitempty"`
	// AnyRegionUp says how the evidence shows some DERP region working
	// (a relayed peer's bytes coming back now); "" when nothing does.
	AnyRegionUp safetext.Text `json:"any_region_up,omitempty"`
}

// UDPWorks reports whether some peer's path proves UDP works here.
func (t *Tailnet) UDPWorks() bool { return t != nil && t.UDP != "" }

// RegionUp is how the evidence shows region id reachable, "" when it
// does not.
func (t *Tailnet) RegionUp(id int) safetext.Text {
	if t == nil || id == 0 {
		return ""
	}
	return t.RegionsUp[id]
}

// anyRegionUp is the lowest region id RegionsUp holds, 0 when none.
func (t *Tailnet) anyRegionUp() int {
	best := 0
	if t == nil {
		return 0
	}
	for id := range t.RegionsUp {
		if best == 0 || id < best {
			best = id
		}
	}
	return best
}

// anyRegion is diag.derpFailing when no one region is blamed: every
// region, or an HTTP proxy in the way of all.
const anyRegion = -1

// DeriveTailnet works out s's tailnet-wide facts (Tailnet) in one pass
// over its peers.
func DeriveTailnet(s *Snapshot) Tailnet {
	var t Tailnet
	up := func(id int, how string) {
		if id == 0 || t.RegionsUp[id] != "" {
			return
		}
		if t.RegionsUp == nil {
			t.RegionsUp = map[int]safetext.Text{}
		}
		t.RegionsUp[id] = safetext.New(how)
	}
	for i := range s.Peers {
		p := &s.Peers[i]
		switch p.Path.Kind {
		case PathDirect:
			a := p.Path.Addr.Addr().Unmap()
			switch {
			case p.WireGuardOnly && p.RxBytes == 0:
				// Picked without a pong; nothing came back.
			case !routableAddr(a):
				if t.LANUDP == "" {
					t.LANUDP = p.Name
				}
			default:
				if t.UDP == "" {
					t.UDP, t.UDPHow = p.Name, safetext.New("direct "+p.Path.Addr.String())
				}
				if a.Is6() && t.IPv6 == "" {
					t.IPv6, t.IPv6Addr = p.Name, p.Path.Addr
				}
			}
		case PathPeerRelay:
			if relay, ok := peerRelayAddr(string(p.Path.PeerRelay)); ok && routableAddr(relay) && t.UDP == "" {
				t.UDP, t.UDPHow = p.Name, "via a peer relay at a public address"
			}
		case PathDERP:
			// Bytes coming back now, not the counter's total since
			// tailscaled started, which a region that failed since
			// leaves standing.
			if p.RatesKnown && p.RxRate > 0 {
				how := "peer " + string(p.Name) + " is relayed and bytes keep coming back (" + strconv.FormatFloat(p.RxRate, 'f', 0, 64) + " B/s)"
				if t.AnyRegionUp == "" {
					t.AnyRegionUp = safetext.New(how)
				}
				if id := regionOfCode(s.Regions, p.Path.DERPCode); id != 0 && id == s.Self.HomeDERP {
					up(id, how+" through "+string(p.Path.DERPCode)+", both ends' home")
				}
			}
		}
		if r := p.PingRun; r != nil && r.Direct && t.UDP == "" {
			if ap, err := netip.ParseAddrPort(strings.TrimSpace(string(r.Via))); err == nil && routableAddr(ap.Addr().Unmap()) {
				t.UDP, t.UDPHow = p.Name, safetext.New("a DISCO pong came directly ("+ap.String()+")")
			}
		}
	}
	if ev := s.Self.Evidence; ev != nil {
		for _, e := range ev.DERPErrors {
			if e.Reconnected {
				up(e.Region, "tailscaled logged derp-"+strconv.Itoa(e.Region)+" connected after its last failure")
			}
		}
		for _, id := range ev.DERPConnected {
			up(id, "tailscaled logged derp-"+strconv.Itoa(id)+" connected")
		}
	}
	return t
}

// routableAddr reports whether a is an address past the network's edge:
// public IPv4 (not 198.18.0.0/15, which proxy TUNs take) or global IPv6.
func routableAddr(a netip.Addr) bool {
	if a.Is4() {
		return routable4(a)
	}
	return a.IsValid() && !IsPrivateAddr(a)
}

// peerRelayAddr is the relay's address in PeerStatus.PeerRelay
// ("ip:port:vni:N", magicsock epAddr.String).
func peerRelayAddr(s string) (netip.Addr, bool) {
	host, _, ok := strings.Cut(s, ":vni:")
	if !ok {
		host = s
	}
	ap, err := netip.ParseAddrPort(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// regionOfCode is the id of the region with code; 0 when none.
func regionOfCode(regions map[int]Region, code safetext.Text) int {
	if code == "" {
		return 0
	}
	for id, r := range regions {
		if r.Code == code {
			return id
		}
	}
	return 0
}
