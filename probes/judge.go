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
// (DiagnoseDevice), and this node's own verdict (DiagnoseSelf). It
// writes s.Tailnet, every s.Peers[i].Verdict and s.Self.Verdict, and
// returns the index of the peer board is (-1 when board is nil or
// matches none). Pure: no I/O, and it reads nothing but s and board.
//
// The joiner (probes/link: Linker) calls it on its own copy of a
// gather each time the gather or the board changes; the dashboard,
// status, serve and snapshots all show what it made.
func Judge(s *Snapshot, board *DeviceEvidence) int {
	s.Tailnet = DeriveTailnet(s)
	tn := &s.Tailnet
	at := -1
	for i := range s.Peers {
		p := &s.Peers[i]
		p.Verdict = diagnose(s.Self, *p, s.Regions, s.Time, tn)
		if board != nil && at < 0 && board.Matches(p) {
			at = i
			p.Verdict = diagnoseDevice(p.Verdict, s.Self, *p, *board, s.Regions, s.Time, tn)
		}
	}
	s.Self.Verdict, s.Self.Settle = diagnoseSelfSettle(string(s.BackendState), s.Self, s.Regions, s.Time, tn)
	return at
}

// Tailnet is what a whole gather shows beyond any one peer's evidence,
// worked out once per gather (DeriveTailnet) and read by every rule.
// Its zero value knows nothing: Diagnose, which judges one peer alone,
// uses it.
type Tailnet struct {
	// UDP names a peer whose path proves that UDP works at this end, and
	// UDPHow how: a direct address exists only after a UDP pong came back
	// on it (wgengine/magicsock/endpoint.go handlePongConnLocked sets
	// bestAddr, which CurAddr reports), a peer relay is UDP from the same
	// sockets (Geneve over magicsock's pconn4/pconn6), and a DISCO pong
	// that came directly crossed UDP both ways. "" when no peer shows it.
	UDP    safetext.Text `json:"udp_peer,omitempty"`
	UDPHow safetext.Text `json:"udp_how,omitempty"`
	// IPv6 names a peer direct over IPv6 (so IPv6 works here), and
	// IPv6Addr its address; "" when none is.
	IPv6     safetext.Text  `json:"ipv6_peer,omitempty"`
	IPv6Addr netip.AddrPort `json:"ipv6_addr,omitzero"`
	// RegionsUp are DERP regions the evidence shows reachable from here,
	// by region id, with how: a peer relayed through the region with
	// bytes coming back over the last poll (a relayed packet came back
	// through it; the total since tailscaled started says nothing of
	// now), or tailscaled's "derp-N connected" after its last failure.
	RegionsUp map[int]safetext.Text `json:"regions_up,omitempty"`
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
	codeToID := func(code safetext.Text) int {
		for id, r := range s.Regions {
			if r.Code == code && code != "" {
				return id
			}
		}
		return 0
	}
	for i := range s.Peers {
		p := &s.Peers[i]
		switch p.Path.Kind {
		case PathDirect:
			if t.UDP == "" {
				t.UDP, t.UDPHow = p.Name, safetext.New("direct "+p.Path.Addr.String())
			}
			if a := p.Path.Addr.Addr(); a.Is6() && !a.Is4In6() && t.IPv6 == "" {
				t.IPv6, t.IPv6Addr = p.Name, p.Path.Addr
			}
		case PathPeerRelay:
			if t.UDP == "" {
				t.UDP, t.UDPHow = p.Name, "via a peer relay"
			}
		case PathDERP:
			// Bytes coming back now, not the counter's total since
			// tailscaled started, which a region that failed since
			// leaves standing.
			if p.RatesKnown && p.RxRate > 0 && p.Path.DERPCode != "" {
				if id := codeToID(p.Path.DERPCode); id != 0 && t.RegionsUp[id] == "" {
					if t.RegionsUp == nil {
						t.RegionsUp = map[int]safetext.Text{}
					}
					t.RegionsUp[id] = safetext.New("peer " + string(p.Name) + " is relayed through it and bytes keep coming back (" + strconv.FormatFloat(p.RxRate, 'f', 0, 64) + " B/s)")
				}
			}
		}
		if r := p.PingRun; r != nil && r.Direct && t.UDP == "" {
			t.UDP, t.UDPHow = p.Name, safetext.New("a DISCO pong came directly ("+strings.TrimSpace(string(r.Via))+")")
		}
	}
	if ev := s.Self.Evidence; ev != nil {
		for _, e := range ev.DERPErrors {
			if e.Reconnected && t.RegionsUp[e.Region] == "" {
				if t.RegionsUp == nil {
					t.RegionsUp = map[int]safetext.Text{}
				}
				t.RegionsUp[e.Region] = safetext.New("tailscaled logged derp-" + strconv.Itoa(e.Region) + " connected after its last failure")
			}
		}
		for _, id := range ev.DERPConnected {
			if t.RegionsUp[id] == "" {
				if t.RegionsUp == nil {
					t.RegionsUp = map[int]safetext.Text{}
				}
				t.RegionsUp[id] = safetext.New("tailscaled logged derp-" + strconv.Itoa(id) + " connected")
			}
		}
	}
	return t
}
