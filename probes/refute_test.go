package probes

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/internal/safetext"
)

// witness peers: other peers of the tailnet whose paths prove a fact
// about this end (Tailnet).
func directWitness(addr string) Peer {
	ap := netip.MustParseAddrPort(addr)
	return Peer{ID: safetext.New("w-" + addr), Name: "witness", Active: true, Online: boolp(true),
		Path: Path{Kind: PathDirect, Addr: ap, Text: safetext.New("active; direct " + addr)}}
}

func relayedWitness(code string, rx int64) Peer {
	return Peer{ID: safetext.New("r-" + code), Name: safetext.New("relayed-" + code), Active: true, Online: boolp(true), RxBytes: rx, TxBytes: rx,
		RatesKnown: true, RxRate: float64(rx) / 2, TxRate: float64(rx) / 2,
		Path: Path{Kind: PathDERP, DERPCode: safetext.New(code), Text: safetext.New(`active; relay "` + code + `"`)}}
}

// tailnetCases are gate evidence whose verdict needs the rest of the
// tailnet (Judge's Tailnet): UDP blocked by netcheck beside a direct
// peer, and the like.
func tailnetCases() []gateEv {
	stunDead := easySelf()
	stunDead.NAT.WorkingUDP = boolp(false)
	return []gateEv{
		{name: "tailnet: STUN unanswered, another peer direct", self: stunDead, peer: relayedPeer("203.0.113.5:41641", "192.168.7.2:41641"),
			regions: testRegions, others: []Peer{directWitness("198.51.100.40:41641")}},
		{name: "tailnet: STUN unanswered, alone", self: stunDead, peer: relayedPeer("203.0.113.5:41641", "192.168.7.2:41641"), regions: testRegions},
		{name: "tailnet: STUN unanswered on 1.77.160 (netcheck-stun-port-zero)", self: withVersion(stunDead, "1.77.160"),
			peer: relayedPeer("203.0.113.5:41641", "192.168.7.2:41641"), regions: testRegions},
	}
}

// refuteInjectors add each refuting fact (by Refuter.ID) to a piece of
// gate evidence, as an input holding it would carry it.
var refuteInjectors = map[string]func(*gateEv){
	"udp-works": func(c *gateEv) { c.others = append(c.others, directWitness("198.51.100.77:41641")) },
	"direct-pong": func(c *gateEv) {
		c.peer.PingRun = &PingRun{At: fixtureNow, Tries: 3, Pongs: 3, Direct: true, Via: "203.0.113.5:41641"}
	},
	"disco-pongs": func(c *gateEv) {
		c.peer.PingRun = &PingRun{At: fixtureNow, Tries: 2, Pongs: 2, Via: "DERP(nyc)"}
	},
	"rx-growing": func(c *gateEv) { c.peer.RatesKnown, c.peer.RxRate = true, 120 },
	"ipv6-works": func(c *gateEv) { c.others = append(c.others, directWitness("[2001:db8::7]:41641")) },
	"region-up": func(c *gateEv) {
		// Peers relayed through every region with bytes back, and
		// tailscaled's "derp-N connected" for every region id (an input
		// without a DERP map names regions by id only).
		for _, r := range c.regions {
			c.others = append(c.others, relayedWitness(string(r.Code), 2048))
		}
		ev := SelfEvidence{}
		if c.self.Evidence != nil {
			ev = *c.self.Evidence
		}
		ev.DERPConnected = nil
		for id := 1; id <= 10; id++ {
			if !slices.ContainsFunc(ev.DERPErrors, func(e DERPError) bool { return e.Region == id }) {
				ev.DERPConnected = append(ev.DERPConnected, id)
			}
		}
		ev.DERPErrors = slices.Clone(ev.DERPErrors)
		for i := range ev.DERPErrors {
			ev.DERPErrors[i].Reconnected, ev.DERPErrors[i].SinceConnect = true, 0
		}
		c.self.Evidence = &ev
	},
	"udp-received": func(c *gateEv) {
		c.others = append(c.others, directWitness("198.51.100.78:41641"), directWitness("[2001:db8::8]:41641"))
	},
	"known-bug": func(c *gateEv) {
		// Both ends on an unstable build whose netcheck sent STUN to port
		// 0 (netcheck-stun-port-zero).
		c.self.Version = "1.77.160"
		ps := PeerSide{Source: SourceControlAPI}
		if c.peer.PeerSide != nil {
			ps = *c.peer.PeerSide
		}
		ps.ClientVersion = "1.77.160"
		c.peer.PeerSide = &ps
	},
	"peer-udp-works": func(c *gateEv) {
		c.peer.Path = Path{Kind: PathPeerRelay, PeerRelay: "198.51.100.9:7777:vni:3", Text: "active; peer-relay 198.51.100.9:7777:vni:3"}
	},
}

// TestEveryRuleRefutableOrSaysWhy: every rule lists the facts that refute
// it, or says why nothing in tailpath's input can; and every refuter has
// an injector for TestRefutedRuleNeverStands.
func TestEveryRuleRefutableOrSaysWhy(t *testing.T) {
	for _, r := range rules {
		if len(r.Refutes) == 0 && r.Irrefutable == "" {
			t.Errorf("%s: no Refutes and no Irrefutable saying why", r.ID)
		}
		if len(r.Refutes) > 0 && r.Irrefutable != "" {
			t.Errorf("%s: both Refutes and Irrefutable", r.ID)
		}
		for _, f := range r.Refutes {
			if f.ID == "" || f.Field == "" || f.refutes == nil {
				t.Errorf("%s: refuter %+v incomplete", r.ID, f)
			}
			if refuteInjectors[f.ID] == nil {
				t.Errorf("%s: refuter %s has no injector in refuteInjectors", r.ID, f.ID)
			}
		}
	}
}

// TestRefutedRuleNeverStands adds each refuting fact in turn to every
// piece of gate evidence whose verdict (a peer's or this node's) holds a
// rule it refutes, and fails when the rule still stands: as the Reason,
// in Also, or in this node's verdict. Every refuter of every rule must be
// seen refuting at least once.
func TestRefutedRuleNeverStands(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range gateEvidence() {
		v, sv, _ := c.judge()
		ids := append([]ReasonID{v.Reason}, v.Also...)
		if sv != nil {
			ids = append(ids, sv.Reason)
			ids = append(ids, sv.Also...)
		}
		for _, id := range ids {
			r, ok := RuleOf(id)
			if !ok {
				continue
			}
			for _, f := range r.Refutes {
				inject := refuteInjectors[f.ID]
				if inject == nil {
					continue // TestEveryRuleRefutableOrSaysWhy says so
				}
				m := c
				m.others = slices.Clone(c.others)
				inject(&m)
				mv, msv, _ := m.judge()
				stands := mv.Reason == id || slices.Contains(mv.Also, id)
				if msv != nil && (msv.Reason == id || slices.Contains(msv.Also, id)) {
					stands = true
				}
				if stands {
					t.Errorf("%s + %s: %s still stands (%s also %v); checks:\n%s", c.name, f.ID, id, mv.Reason, mv.Also, checksText(mv.Checks))
					continue
				}
				for _, rf := range append(slices.Clone(mv.Refuted), refutedOf(msv)...) {
					if rf.Reason == id {
						seen[string(id)+" "+f.ID] = true
					}
				}
			}
		}
	}
	for _, r := range rules {
		for _, f := range r.Refutes {
			if !seen[string(r.ID)+" "+f.ID] {
				t.Errorf("%s is never seen refuted by %s: add gate evidence reaching it (gateCases, tailnetCases)", r.ID, f.ID)
			}
		}
	}
}

func refutedOf(v *Verdict) []Refutation {
	if v == nil {
		return nil
	}
	return v.Refuted
}

// TestNoVerdictContradictsItself: no verdict of the gate's evidence says
// in one check that an end has no NAT and in another that a NAT sits in
// front of it (issue 28: NoNAT beside peerFilters' "a NAT most likely").
func TestNoVerdictContradictsItself(t *testing.T) {
	for _, c := range gateEvidence() {
		v, _, _ := c.judge()
		var peerNoNAT, peerNAT bool
		for _, ch := range v.Checks {
			n := string(ch.Note)
			if strings.Contains(n, "the peer's own snapshot shows a public address on its interface: no NAT") {
				peerNoNAT = true
			}
			if strings.Contains(n, "a NAT most likely sits in front of it") {
				peerNAT = true
			}
		}
		if peerNoNAT && peerNAT {
			t.Errorf("%s: the peer has no NAT and a NAT in front of it in one verdict:\n%s", c.name, checksText(v.Checks))
		}
	}
}

// TestFixWordsPortOnce: no fix words a port "UDP UDP 41641" (a {port}
// that already says UDP put after "UDP").
func TestFixWordsPortOnce(t *testing.T) {
	for _, c := range gateEvidence() {
		v, sv, _ := c.judge()
		fixes := []safetext.Text{v.Fix}
		if sv != nil {
			fixes = append(fixes, sv.Fix)
		}
		for _, f := range fixes {
			if strings.Contains(string(f), "UDP UDP") {
				t.Errorf("%s: fix says %q", c.name, f)
			}
		}
	}
}

func withVersion(s Self, v string) Self {
	s.Version = safetext.New(v)
	return s
}

// TestWeakWitnessesProveNoUDP: a direct path on the LAN proves UDP only
// on the LAN, and a WireGuard-only peer (no DISCO: "direct" is picked, not
// proven by a pong) with nothing received proves nothing; neither may
// refute local-udp-blocked. A WireGuard-only peer whose bytes came back
// does.
func TestWeakWitnessesProveNoUDP(t *testing.T) {
	stunDead := easySelf()
	stunDead.NAT.WorkingUDP = boolp(false)
	wgOnly := func(rx int64) Peer {
		p := directWitness("198.51.100.41:51820")
		p.WireGuardOnly, p.RxBytes = true, rx
		return p
	}
	for _, c := range []struct {
		name    string
		witness Peer
		proves  bool
	}{
		{"LAN direct", directWitness("192.168.7.9:41641"), false},
		{"WireGuard-only, nothing received", wgOnly(0), false},
		{"WireGuard-only, bytes received", wgOnly(4096), true},
		{"public direct", directWitness("198.51.100.40:41641"), true},
	} {
		ev := gateEv{name: c.name, self: stunDead, peer: relayedPeer("203.0.113.5:41641", "192.168.7.2:41641"),
			regions: testRegions, others: []Peer{c.witness}}
		v, _, tn := ev.judge()
		if got := tn.UDPWorks(); got != c.proves {
			t.Errorf("%s: Tailnet.UDPWorks = %v, want %v (UDP %q, how %q)", c.name, got, c.proves, tn.UDP, tn.UDPHow)
		}
		refuted := slices.ContainsFunc(v.Refuted, func(r Refutation) bool { return r.Reason == ReasonLocalUDPBlocked })
		if refuted != c.proves {
			t.Errorf("%s: local-udp-blocked refuted = %v, want %v; verdict %s, refuted %v", c.name, refuted, c.proves, v.Reason, v.Refuted)
		}
	}
}

// TestRefuterHoldsIsRefutes: a refuter's words-free answer (holds) is its
// refutes' ok on every piece of gate evidence, each refuting fact
// injected too, so settling a verdict sets aside what judging it would.
func TestRefuterHoldsIsRefutes(t *testing.T) {
	checked, held := 0, 0
	for _, c := range gateEvidence() {
		cases := []gateEv{c}
		for _, inject := range refuteInjectors {
			m := c
			m.others = slices.Clone(c.others)
			inject(&m)
			cases = append(cases, m)
		}
		for _, m := range cases {
			s := &Snapshot{Time: fixtureNow, Self: m.self, Regions: m.regions, Peers: append([]Peer{m.peer}, m.others...)}
			tn := DeriveTailnet(s)
			d := newDiagOf(&s.Self, &s.Peers[0], s.Regions, s.Time)
			d.tn = &tn
			for _, r := range rules {
				for _, f := range r.Refutes {
					if f.holds == nil {
						continue
					}
					d.judging = r.ID
					_, _, _, want := f.refutes(d)
					if got := f.holds(d); got != want {
						t.Errorf("%s, %s: %s.holds = %v, refutes = %v", m.name, r.ID, f.ID, got, want)
					}
					checked++
					if want {
						held++
					}
				}
			}
			d.free()
		}
	}
	if checked == 0 || held == 0 || held == checked {
		t.Fatalf("%d answers compared, %d held: the evidence does not tell holds from refutes", checked, held)
	}
}
