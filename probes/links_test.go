package probes

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
)

// linkSelf is easySelf with changes.
func linkSelf(f func(*Self)) Self {
	s := easySelf()
	s.OS = "linux"
	f(&s)
	return s
}

// directPeer is a peer on a direct path to addr.
func directPeer(addr string) Peer {
	p := relayedPeer(addr)
	ap := netip.MustParseAddrPort(addr)
	p.Path = Path{Kind: PathDirect, Addr: ap, Text: safetext.New("active; direct " + addr)}
	return p
}

// dockerHost is a host with a LAN interface and Docker's bridge.
func dockerHost() *HostFacts {
	return &HostFacts{Interfaces: []Interface{
		{Name: "eth0", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.1.20/24")}},
		{Name: "docker0", Bridge: true, Addrs: []netip.Prefix{netip.MustParsePrefix("172.17.0.1/16")}},
	}}
}

// linkCases are the links' evidence for the gate's tests (gateEvidence):
// each reaches a rule the links gave the table, or a variant they added.
func linkCases() []gateEv {
	ap := netip.MustParseAddrPort
	cliHardOn := func(os string, dm *Daemon) Self {
		return linkSelf(func(s *Self) {
			s.OS = safetext.New(os)
			s.NAT.MappingVariesByDestIP, s.NAT.FromCLI = boolp(true), true
			s.Daemon = dm
		})
	}
	unmeasured := map[int]Region{
		1:   {ID: 1, Code: "nyc", Name: "New York City"},
		900: {ID: 900, Code: "home", Name: "Home", Unmeasurable: "its node \"900a\" has RegionID 0, not 900"},
	}
	oneWay := directPeer("203.0.113.5:41641")
	oneWay.TxBytes, oneWay.RxBytes = 812032, 2048
	icmp := directPeer("203.0.113.5:41641")
	icmp.ICMPReply = boolp(false)
	icmpRelayed := relayedPeer("203.0.113.5:41641")
	icmpRelayed.ICMPReply = boolp(false)
	icmpRelayed.PingRun = &PingRun{At: fixtureNow.Add(-time.Minute), Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
	guest := relayedPeer("198.51.100.10:38211", "172.17.0.2:41641")
	guest.TxBytes = 1480
	inRoute := directPeer("10.20.0.5:41641")
	return []gateEv{
		{name: "links: one-way traffic on a direct path", self: linkSelf(func(*Self) {}), peer: oneWay, regions: testRegions},
		{name: "links: ICMP unanswered, direct", self: linkSelf(func(*Self) {}), peer: icmp, regions: testRegions},
		{name: "links: ICMP unanswered, DISCO via DERP", self: linkSelf(func(*Self) {}), peer: icmpRelayed, regions: testRegions},
		{name: "links: a region without its RegionID", self: linkSelf(func(*Self) {}), peer: relayedPeer("203.0.113.5:41641"), regions: unmeasured},
		{name: "links: CLI hard NAT on macOS", self: cliHardOn("macOS", nil), peer: relayedPeer("203.0.113.5:41641"), regions: testRegions},
		{name: "links: CLI hard NAT on Windows", self: cliHardOn("windows", nil), peer: relayedPeer("203.0.113.5:41641"), regions: testRegions},
		{name: "links: CLI hard NAT, tailscaled on port 0", self: cliHardOn("linux", &Daemon{PortKnown: true}), peer: relayedPeer("203.0.113.5:41641"), regions: testRegions},
		{name: "links: CLI hard NAT, tailscaled on 41641", self: cliHardOn("macOS", &Daemon{PortKnown: true, Port: 41641}), peer: relayedPeer("203.0.113.5:41641"), regions: testRegions},
		{name: "links: a pod's hard NAT", self: linkSelf(func(s *Self) {
			s.NAT.MappingVariesByDestIP = boolp(true)
			s.Daemon = &Daemon{Kubernetes: true, Userspace: boolp(true), PodAddr: netip.MustParseAddr("10.244.1.7")}
		}), peer: relayedPeer("203.0.113.5:41641"), regions: testRegions},
		{name: "links: this host's own container, relayed", self: linkSelf(func(s *Self) {
			s.Endpoints = []netip.AddrPort{ap("198.51.100.10:41641"), ap("192.168.1.20:41641"), ap("172.17.0.1:41641")}
			s.Host = dockerHost()
		}), peer: guest, regions: testRegions},
		{name: "links: direct inside a route, Linux without its bypass rule", self: linkSelf(func(s *Self) {
			s.Routes = []SubnetRoute{{Prefix: netip.MustParsePrefix("10.20.0.0/16"), Via: "router"}}
			s.Host = &HostFacts{BypassRule: boolp(false)}
		}), peer: inRoute, regions: testRegions},
		{name: "links: direct inside a route, routes not accepted", self: linkSelf(func(s *Self) {
			s.OS = "freebsd"
			s.Routes = []SubnetRoute{{Prefix: netip.MustParsePrefix("10.20.0.0/16"), Via: "router"}}
			s.Daemon = &Daemon{AcceptRoutes: boolp(false)}
		}), peer: inRoute, regions: testRegions},
	}
}

// TestLinks: each link's evidence gives the verdict it should, and the
// link is a check of it.
func TestLinks(t *testing.T) {
	want := map[string]struct {
		reason ReasonID
		also   ReasonID // in Also ("" none asked)
		self   ReasonID // this node's verdict ("" none asked)
		check  string   // a check's field that must be there
		words  string   // in the summary
	}{
		"links: one-way traffic on a direct path":                     {reason: ReasonDirect, also: ReasonOneWayTraffic, check: "Link.TxRx", words: "almost nothing comes back (tx 793 KiB, rx 2.0 KiB)"},
		"links: ICMP unanswered, direct":                              {reason: ReasonDirect, also: ReasonPeerICMPBlocked, check: "Ping.ICMP", words: "the peer's host firewall"},
		"links: ICMP unanswered, DISCO via DERP":                      {reason: ReasonDiscoUnanswered, also: ReasonPeerICMPBlocked, check: "Ping.ICMP"},
		"links: a region without its RegionID":                        {self: ReasonDERPRegionUnmeasured},
		"links: CLI hard NAT on macOS":                                {reason: ReasonLocalHardNAT, check: "NetInfo.MappingVariesByDestIP", words: "(probably: the tailscale CLI measured it from its own port)"},
		"links: CLI hard NAT on Windows":                              {reason: ReasonLocalHardNAT, words: "probably"},
		"links: CLI hard NAT, tailscaled on port 0":                   {reason: ReasonLocalHardNAT, words: "probably"},
		"links: CLI hard NAT, tailscaled on 41641":                    {reason: ReasonUnexplained},
		"links: a pod's hard NAT":                                     {reason: ReasonLocalHardNAT, words: "the cluster's NAT in front of this pod"},
		"links: this host's own container, relayed":                   {reason: ReasonSameNATLANBlocked, check: "Link.GuestBridge", words: "this host's own guest"},
		"links: direct inside a route, Linux without its bypass rule": {reason: ReasonDirect, also: ReasonDirectInTunnel},
		"links: direct inside a route, routes not accepted":           {reason: ReasonDirect, check: "Link.Route"},
	}
	for _, c := range linkCases() {
		w, ok := want[c.name]
		if !ok {
			t.Errorf("%s: no verdict wanted", c.name)
			continue
		}
		v, sv, _ := c.judge()
		if w.reason != "" && v.Reason != w.reason {
			t.Errorf("%s: %s (%s), want %s; checks:\n%s", c.name, v.Reason, v.Summary, w.reason, checksText(v.Checks))
		}
		if w.also != "" && !slices.Contains(v.Also, w.also) {
			t.Errorf("%s: also %v, want %s in it", c.name, v.Also, w.also)
		}
		if w.self != "" && (sv == nil || sv.Reason != w.self) {
			t.Errorf("%s: self verdict %+v, want %s", c.name, sv, w.self)
		}
		if w.check != "" && !slices.ContainsFunc(v.Checks, func(ch Check) bool { return string(ch.Field) == w.check }) {
			t.Errorf("%s: no %s check:\n%s", c.name, w.check, checksText(v.Checks))
		}
		if w.words != "" && !strings.Contains(string(v.Summary), w.words) {
			t.Errorf("%s: summary %q lacks %q", c.name, v.Summary, w.words)
		}
		if w.reason == ReasonLocalHardNAT && strings.Contains(string(v.Fix), "look for a firewall") {
			t.Errorf("%s: fix falls back to a firewall: %q", c.name, v.Fix)
		}
	}
	if len(want) != len(linkCases()) {
		t.Errorf("%d verdicts wanted for %d cases", len(want), len(linkCases()))
	}
}

// TestOrderedRunsHeadlineLostDirect: a path seen direct minutes ago whose
// last DISCO run got pongs only through DERP lost its direct path:
// lost-direct is the reason, the run's "never answered directly" beside
// it.
func TestOrderedRunsHeadlineLostDirect(t *testing.T) {
	p := relayedPeer("203.0.113.5:41641")
	p.EndpointsKnown, p.Endpoints = false, nil
	p.PingRun = &PingRun{At: fixtureNow, Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
	p.LastDirect, p.LastDirectAddr = fixtureNow, netip.MustParseAddrPort("203.0.113.7:41641")
	v := Diagnose(Self{}, p, testRegions, fixtureNow)
	if v.Reason != ReasonLostDirect || !slices.Contains(v.Also, ReasonDiscoUnanswered) {
		t.Errorf("%s also %v, want lost-direct also [disco-unanswered]; checks:\n%s", v.Reason, v.Also, checksText(v.Checks))
	}
	// Never direct: the run is the reason.
	p.LastDirect, p.LastDirectAddr = time.Time{}, netip.AddrPort{}
	if v := Diagnose(Self{}, p, testRegions, fixtureNow); v.Reason != ReasonDiscoUnanswered {
		t.Errorf("never direct: %s, want disco-unanswered", v.Reason)
	}
}

// TestRegionLink: a relayed path's region code tied to the id the
// daemon's lines use is a check saying what the lines show, and how the
// two were tied.
func TestRegionLink(t *testing.T) {
	self := easySelf()
	self.Evidence = &SelfEvidence{DERPConnected: []int{1}, Thread: &ThreadFacts{RegionLinks: []RegionLink{{ID: 1, Code: "nyc", From: "default map"}}}}
	v := Diagnose(self, relayedPeer("203.0.113.5:41641"), testRegions, fixtureNow)
	i := slices.IndexFunc(v.Checks, func(c Check) bool { return c.Field == "Link.Region" })
	if i < 0 {
		t.Fatalf("no Link.Region check:\n%s", checksText(v.Checks))
	}
	c := v.Checks[i]
	if c.Value != `derp-1 = "nyc"` || !strings.Contains(string(c.Note), "tailscaled logged derp-1 connected") || !strings.Contains(string(c.Note), "Tailscale's own DERP map") {
		t.Errorf("Link.Region = %q (%s)", c.Value, c.Note)
	}
	// Tied by nothing the input said: no check.
	self.Evidence.Thread = nil
	v = Diagnose(self, relayedPeer("203.0.113.5:41641"), testRegions, fixtureNow)
	if slices.ContainsFunc(v.Checks, func(c Check) bool { return c.Field == "Link.Region" }) {
		t.Error("a Link.Region check with no link made")
	}
}

// TestProseMarked: checks of facts read from prose say so.
func TestProseMarked(t *testing.T) {
	self := easySelf()
	self.NAT.WorkingUDP = boolp(false)
	self.Prose = []string{"NetInfo.WorkingUDP"}
	v := Diagnose(self, relayedPeer("203.0.113.5:41641"), testRegions, fixtureNow)
	i := slices.IndexFunc(v.Checks, func(c Check) bool { return c.Field == "NetInfo.WorkingUDP" })
	if i < 0 || v.Checks[i].Source != "prose" || !strings.Contains(string(v.Checks[i].Note), "poster's words") {
		t.Errorf("checks:\n%s", checksText(v.Checks))
	}
	sv := DiagnoseSelf("Running", self, testRegions, fixtureNow)
	if sv == nil || !slices.ContainsFunc(sv.Checks, func(c Check) bool { return c.Source == "prose" }) {
		t.Errorf("self verdict %+v: no prose check", sv)
	}
}

// TestUnmeasurableRegion reads a DERP map entry as netcheck would.
func TestUnmeasurableRegion(t *testing.T) {
	for _, c := range []struct {
		name string
		r    *tailcfg.DERPRegion
		want string // in the reason; "" measurable
	}{
		{"fine", &tailcfg.DERPRegion{RegionID: 900, Nodes: []*tailcfg.DERPNode{{Name: "a", RegionID: 900}}}, ""},
		{"node without its RegionID", &tailcfg.DERPRegion{RegionID: 900, Nodes: []*tailcfg.DERPNode{{Name: "900a"}}}, `"900a" has RegionID 0`},
		{"STUN off", &tailcfg.DERPRegion{RegionID: 900, Nodes: []*tailcfg.DERPNode{{Name: "a", RegionID: 900, STUNPort: -1}}}, "STUN is off"},
		{"one good node of two", &tailcfg.DERPRegion{RegionID: 900, Nodes: []*tailcfg.DERPNode{{Name: "a"}, {Name: "b", RegionID: 900}}}, ""},
		{"no nodes (a map pasted text implies)", &tailcfg.DERPRegion{RegionID: 900}, ""},
	} {
		got := UnmeasurableRegion(c.r)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
