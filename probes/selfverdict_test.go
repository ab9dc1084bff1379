package probes

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tailpath/tailpath/internal/safetext"
)

// TestDiagnoseSelf: each rule that judges this node holds on its evidence
// and not without it, the first that holds is the reason and the others
// go to Also, and an unknown fact is never the verdict.
// selfCase is one case of TestDiagnoseSelf: this node's state and facts,
// and the self verdict wanted. The gate's tests read the evidence too
// (gateEvidence).
type selfCase struct {
	name  string
	state string
	self  Self
	want  ReasonID
	also  []ReasonID
}

// selfCases is TestDiagnoseSelf's table.
func selfCases() []selfCase {
	yes, no := true, false
	t0 := fixtureNow
	return []selfCase{
		{"healthy", "Running", Self{NAT: &NATInfo{WorkingUDP: &yes, DERPLatency: map[int]time.Duration{1: time.Millisecond}}}, "", nil},
		{"nothing known", "", Self{}, "", nil},
		{"logged out", "NeedsLogin", Self{}, ReasonSelfLoggedOut, nil},
		{"not approved", "NeedsMachineAuth", Self{}, ReasonSelfLoggedOut, nil},
		{"starting is not trouble", "Starting", Self{}, "", nil},
		{"netcheck measured nothing", "", Self{Evidence: &SelfEvidence{NetcheckEmpty: true, NetcheckEmptyFrom: "tailscale netcheck"}}, ReasonSelfNetcheckEmpty, nil},
		{"logged out and netcheck empty", "NeedsLogin", Self{Evidence: &SelfEvidence{NetcheckEmpty: true}}, ReasonSelfLoggedOut, []ReasonID{ReasonSelfNetcheckEmpty}},
		{"ReceiveIPv4 stopped (1.70+ words)", "Running", Self{Health: []safetext.Text{"The MagicSock function ReceiveIPv4 is not running. You might experience connectivity issues."}}, ReasonSelfUDPReceiveStopped, nil},
		{"ReceiveIPv4 stopped (1.50 words)", "Running", Self{Health: []safetext.Text{"ReceiveIPv4 is not running"}}, ReasonSelfUDPReceiveStopped, nil},
		{"no UDP bind", "Running", Self{Health: []safetext.Text{"Tailscale couldn't listen for incoming UDP connections."}}, ReasonSelfUDPReceiveStopped, nil},
		{"ReceiveDERP is not UDP", "Running", Self{Health: []safetext.Text{"The MagicSock function ReceiveDERP is not running. You might experience connectivity issues."}}, "", nil},
		{"UDP blocked, DERP reached", "Running", Self{NAT: &NATInfo{WorkingUDP: &no, DERPLatency: map[int]time.Duration{1: 40 * time.Millisecond}}}, ReasonLocalUDPBlocked, nil},
		// A daemon's NetInfo carries only STUN latencies (magicsock
		// updateNetInfo), so a real block has none.
		{"UDP false in NetInfo, no STUN latency", "Running", Self{NAT: &NATInfo{WorkingUDP: &no}}, ReasonLocalUDPBlocked, nil},
		{"no report, netcheck logged the block", "Running", Self{Evidence: &SelfEvidence{UDPBlockedLogged: "netcheck: UDP is blocked, trying HTTPS"}}, ReasonLocalUDPBlocked, nil},
		{"the block logged a minute ago", "Running", Self{Evidence: &SelfEvidence{UDPBlockedLogged: "netcheck: UDP is blocked, trying HTTPS", UDPBlockedAt: fixtureNow.Add(-time.Minute)}}, ReasonLocalUDPBlocked, nil},
		// net/netcheck logs the line at every report while UDP stays
		// blocked (magicsock re-STUNs every 20-26 s while paths are
		// active): one four hours old says nothing of now.
		{"the block logged 4h before the newest evidence", "Running", Self{Evidence: &SelfEvidence{UDPBlockedLogged: "netcheck: UDP is blocked, trying HTTPS", UDPBlockedAt: fixtureNow.Add(-4 * time.Hour)}}, "", nil},
		// magicsock determineEndpoints adds a STUN endpoint only from
		// STUN replies (kept 5m10s, endpointTrackerLifetime).
		{"the block logged, a STUN endpoint 19 s later", "Running", Self{Evidence: &SelfEvidence{UDPBlockedLogged: "netcheck: UDP is blocked, trying HTTPS", UDPBlockedAt: fixtureNow.Add(-time.Minute),
			UDPWorkedLogged: "198.51.100.10:60201 (stun)", UDPWorkedAt: fixtureNow.Add(-41 * time.Second)}}, "", nil},
		{"the block logged, a STUN endpoint an hour later", "Running", Self{Evidence: &SelfEvidence{UDPBlockedLogged: "netcheck: UDP is blocked, trying HTTPS", UDPBlockedAt: fixtureNow.Add(-2 * time.Hour),
			UDPWorkedLogged: "198.51.100.10:60201 (stun)", UDPWorkedAt: fixtureNow.Add(-time.Hour)}}, "", nil},
		{"the block logged, but reports disagree on UDP", "Running", Self{Evidence: &SelfEvidence{UDPBlockedLogged: "netcheck: UDP is blocked, trying HTTPS",
			Spread: []FactSpread{{Fact: "UDP", Values: []TimedReport{{At: t0, Value: "true"}, {At: t0.Add(time.Minute), Value: "false"}}}}}}, ReasonSelfNetcheckFlaps, nil},
		{"UDP false by policy", "Running", Self{OnlyTCP443: true, NAT: &NATInfo{WorkingUDP: &no, DERPLatency: map[int]time.Duration{1: time.Millisecond}}}, ReasonLocalTCP443Only, nil},
		{"UDP untested: no STUN", "Running", Self{NoSTUN: true, NAT: &NATInfo{WorkingUDP: &no, DERPLatency: map[int]time.Duration{1: time.Millisecond}}}, "", nil},
		{"control EOF and TLS record", "Running", Self{Evidence: &SelfEvidence{LogLines: 3, ControlBreaks: 1, TLSRecordErrors: 1, BreakRun: &BreakRun{Breaks: 1, TLSErrors: 1}}}, ReasonSelfControlBreaking, nil},
		{"control EOF twice", "Running", Self{Evidence: &SelfEvidence{LogLines: 3, ControlBreaks: 2, BreakRun: &BreakRun{Breaks: 2}}}, ReasonSelfControlBreaking, nil},
		{"one EOF is not a pattern", "Running", Self{Evidence: &SelfEvidence{LogLines: 3, ControlBreaks: 1, BreakRun: &BreakRun{Breaks: 1}}}, "", nil},
		// control/controlclient/auto.go mapRoutine retries PollNetMap, and
		// UpdateFullNetmap logs "netmap received" when the whole (large)
		// map arrived: two EOFs 33 hours apart, each followed by a
		// received netmap, are two ordinary breaks, not one run
		// (review corpus log-control-eof-apart.txt).
		{"two EOFs a day apart, a netmap received after each", "Running", Self{Evidence: &SelfEvidence{LogLines: 4, ControlBreaks: 2, NetmapsReceived: 2, BreakRun: &BreakRun{Breaks: 1}}}, "", nil},
		{"breaks counted, run not worked out (an older file): unknown, not the verdict", "Running", Self{Evidence: &SelfEvidence{LogLines: 4, ControlBreaks: 3}}, "", nil},
		{"no home DERP (health)", "Running", Self{Health: []safetext.Text{"Tailscale could not connect to any relay server. Check your Internet connection."}}, ReasonDERPUnreachable, nil},
		{"home DERP unreachable (1.102 health)", "Running", Self{HomeDERP: 1, Health: []safetext.Text{"Tailscale could not connect to the 'New York City' relay server. Your Internet connection might be down, or the server might be temporarily unavailable."}}, ReasonDERPUnreachable, nil},
		{"home DERP silent (1.50 health)", "Running", Self{Health: []safetext.Text{"haven't heard from home DERP region 1 in 2m10s"}}, ReasonDERPUnreachable, nil},
		// derpRegionErrorWarnable comes from a health frame over a live
		// connection (magicsock/derp.go runDerpReader), whose only
		// unhealthy state is a duplicate key (derp/derp.go FrameHealth):
		// never derp-unreachable, whichever region.
		{"another region reports an issue", "Running", Self{HomeDERP: 1, Health: []safetext.Text{"The relay server #4 is reporting an issue: maintenance"}}, ReasonSelfDERPServerWarns, nil},
		{"our home region reports an issue", "Running", Self{HomeDERP: 1, Health: []safetext.Text{"The relay server #1 is reporting an issue: overloaded"}}, ReasonSelfDERPServerWarns, nil},
		// health.go warns of the home region only: with our home unknown,
		// one failing region is not known to be ours.
		{"a region fails in the log, our home unknown", "Running", Self{DERPRegions: 3, Evidence: &SelfEvidence{LogLines: 2, DERPErrors: []DERPError{{Region: 1, Code: "nyc", Count: 2, Err: "dial tcp: i/o timeout"}}}}, "", nil},
		{"every region fails in the log, our home unknown", "Running", Self{DERPRegions: 1, Evidence: &SelfEvidence{LogLines: 2, DERPErrors: []DERPError{{Region: 1, Code: "nyc", Count: 2, Err: "dial tcp: i/o timeout"}}}}, ReasonDERPUnreachable, nil},
		{"home region fails in the log", "Running", Self{HomeDERP: 1, Evidence: &SelfEvidence{LogLines: 2, DERPErrors: []DERPError{{Region: 1, Code: "nyc", Count: 2, Err: "dial tcp: i/o timeout"}}}}, ReasonDERPUnreachable, nil},
		// magicsock/derp.go logs "derp-%d connected" when a connection
		// succeeds: a failure before it is over.
		{"home region failed once, then connected", "Running", Self{HomeDERP: 1, Evidence: &SelfEvidence{LogLines: 3, DERPErrors: []DERPError{{Region: 1, Code: "nyc", Count: 1, Err: "dial tcp: i/o timeout", Last: fixtureNow.Add(-4 * time.Hour), Reconnected: true}}}}, "", nil},
		{"home region failed once, 4h ago, nothing since", "Running", Self{HomeDERP: 1, Evidence: &SelfEvidence{LogLines: 3, DERPErrors: []DERPError{{Region: 1, Code: "nyc", Count: 1, SinceConnect: 1, Err: "dial tcp: i/o timeout", Last: fixtureNow.Add(-4 * time.Hour)}}}}, "", nil},
		{"home region failed once, a minute ago", "Running", Self{HomeDERP: 1, Evidence: &SelfEvidence{LogLines: 3, DERPErrors: []DERPError{{Region: 1, Code: "nyc", Count: 1, SinceConnect: 1, Err: "dial tcp: i/o timeout", Last: fixtureNow.Add(-time.Minute)}}}}, ReasonDERPUnreachable, nil},
		{"home region failed twice since it last connected, 4h ago", "Running", Self{HomeDERP: 1, Evidence: &SelfEvidence{LogLines: 3, DERPErrors: []DERPError{{Region: 1, Code: "nyc", Count: 3, SinceConnect: 2, Err: "dial tcp: i/o timeout", Last: fixtureNow.Add(-4 * time.Hour)}}}}, ReasonDERPUnreachable, nil},
		{"another region fails: the peers' trouble", "Running", Self{HomeDERP: 1, Evidence: &SelfEvidence{LogLines: 2, DERPErrors: []DERPError{{Region: 4, Code: "fra", Count: 2, Err: "dial tcp: i/o timeout"}}}}, "", nil},
		{"a proxy refuses CONNECT", "Running", Self{Evidence: &SelfEvidence{LogLines: 1, ProxyError: "CONNECT to derp1.tailscale.com:443: 403 Forbidden"}}, ReasonDERPUnreachable, nil},
		{"reports disagree", "Running", Self{Evidence: &SelfEvidence{Spread: []FactSpread{{Fact: "UDP", Values: []TimedReport{{At: t0, Value: "true"}, {At: t0.Add(time.Minute), Value: "false"}}}}}}, ReasonSelfNetcheckFlaps, nil},
		// net/portmapper Client.Probe logs the line and keeps the answer;
		// upnp.go getUPnPRootDevice asks the gateway instead, "assumed to
		// be floating": never the verdict, beside one only with no mapping.
		{"UPnP from another router alone: not a verdict", "Running", Self{Evidence: upnpOther}, "", nil},
		{"UPnP from another router, no mapping held, beside UDP blocked", "Running", Self{NAT: &NATInfo{WorkingUDP: &no}, Evidence: upnpOther}, ReasonLocalUDPBlocked, []ReasonID{ReasonSelfUPnPNotGateway}},
		{"UPnP from another router beside a mapping held: nothing", "Running", Self{NAT: &NATInfo{WorkingUDP: &no, HavePortMap: true}, Evidence: upnpOther}, ReasonLocalUDPBlocked, nil},
		{"UPnP from another router, a (portmap) endpoint logged: nothing", "Running", Self{NAT: &NATInfo{WorkingUDP: &no},
			Endpoints: []netip.AddrPort{netip.MustParseAddrPort("198.51.100.33:41641")}, EndpointTypes: []string{"portmap"}, Evidence: upnpOther}, ReasonLocalUDPBlocked, nil},
		// health.go checkReceiveFuncsLocked tracks ReceiveIPv4 and
		// ReceiveIPv6 apart: IPv6 alone is IPv6's trouble (review rx6.txt).
		{"ReceiveIPv6 stopped only", "Running", Self{Health: []safetext.Text{"The MagicSock function ReceiveIPv6 is not running. You might experience connectivity issues."}}, ReasonSelfUDPReceiveStopped, nil},
		{"network changes often", "Running", Self{Evidence: &SelfEvidence{LinkChanges: 3, FirstLinkChange: t0, LastLinkChange: t0.Add(4 * time.Minute)}}, ReasonSelfNetworkChanges, nil},
		{"network changes over a day", "Running", Self{Evidence: &SelfEvidence{LinkChanges: 5, FirstLinkChange: t0, LastLinkChange: t0.Add(24 * time.Hour)}}, "", nil},
		{"several at once", "Running", Self{
			Health:   []safetext.Text{"The MagicSock function ReceiveIPv4 is not running. You might experience connectivity issues."},
			NAT:      &NATInfo{WorkingUDP: &no, DERPLatency: map[int]time.Duration{1: time.Millisecond}},
			Evidence: &SelfEvidence{LogLines: 4, ControlBreaks: 2, BreakRun: &BreakRun{Breaks: 2}},
		}, ReasonSelfUDPReceiveStopped, []ReasonID{ReasonLocalUDPBlocked, ReasonSelfControlBreaking}},
	}
}

func TestDiagnoseSelf(t *testing.T) {
	for _, tt := range selfCases() {
		t.Run(tt.name, func(t *testing.T) {
			v := DiagnoseSelf(tt.state, tt.self, testRegions, fixtureNow)
			if tt.want == "" {
				if v != nil {
					t.Fatalf("verdict %s (%v), want none", v.Reason, v.Checks)
				}
				return
			}
			if v == nil {
				t.Fatalf("no verdict, want %s", tt.want)
			}
			if v.Reason != tt.want || !cmp.Equal(v.Also, tt.also) {
				t.Errorf("verdict %s also %v, want %s also %v", v.Reason, v.Also, tt.want, tt.also)
			}
			if v.Summary == "" || v.Fix == "" {
				t.Errorf("verdict %s without summary or fix: %+v", v.Reason, v)
			}
			failed := false
			for _, c := range v.Checks {
				failed = failed || c.Mark() == CheckFail
				if c.Source == "" {
					t.Errorf("check %s has no source", c.Field)
				}
			}
			if !failed {
				t.Errorf("verdict %s rests on no failing check: %+v", v.Reason, v.Checks)
			}
		})
	}
}

// upnpOther is a UPnP answer from a device that is not the gateway.
var upnpOther = &SelfEvidence{LogLines: 1, UPnPFrom: netip.MustParseAddr("192.168.1.2"), UPnPGateway: netip.MustParseAddr("192.168.1.1")}

// TestReceiveIPv6Words: ReceiveIPv6 alone says direct UDP over IPv6 is
// lost, never that this end cannot receive direct UDP (IPv4 has its own
// socket and receive loop: magicsock receiveIPv4).
func TestReceiveIPv6Words(t *testing.T) {
	v := DiagnoseSelf("Running", Self{Health: []safetext.Text{"The MagicSock function ReceiveIPv6 is not running. You might experience connectivity issues."}}, testRegions, fixtureNow)
	if v == nil || !strings.Contains(string(v.Summary), "over IPv6") || !strings.Contains(string(v.Summary), "IPv4 is not touched") {
		t.Fatalf("ReceiveIPv6: %+v", v)
	}
	v = DiagnoseSelf("Running", Self{Health: []safetext.Text{"ReceiveIPv6 is not running", "ReceiveIPv4 is not running"}}, testRegions, fixtureNow)
	if v == nil || strings.Contains(string(v.Summary), "IPv6") {
		t.Fatalf("both: %+v, want the IPv4 wording", v)
	}
}

// TestRangeCollision: a 100.64.0.0/10 address on an interface that is not
// Tailscale's collides with the tailnet's range (net/netmon
// LocalAddresses skips it); without host facts it is unknown, never the
// verdict.
func TestRangeCollision(t *testing.T) {
	self := easySelf()
	self.TailscaleIPs = []netip.Addr{netip.MustParseAddr("100.64.0.1")}
	v := DiagnoseSelf("Running", self, testRegions, fixtureNow)
	if v != nil {
		t.Errorf("no host facts: %s %q, want no self verdict", v.Reason, v.Summary)
	}
	self.Host = &HostFacts{Interfaces: []Interface{
		{Name: "tailscale0", Tailscale: true, Addrs: []netip.Prefix{netip.MustParsePrefix("100.64.0.1/32")}},
		{Name: "eth0", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.1.20/24")}},
	}}
	if v := DiagnoseSelf("Running", self, testRegions, fixtureNow); v != nil {
		t.Errorf("clean host: %s %q, want no self verdict", v.Reason, v.Summary)
	}
	self.Host.Interfaces = append(self.Host.Interfaces, Interface{Name: "wwan0", Addrs: []netip.Prefix{netip.MustParsePrefix("100.72.9.4/10")}})
	v = DiagnoseSelf("Running", self, testRegions, fixtureNow)
	if v == nil || v.Reason != ReasonTailnetRangeCollision || !strings.Contains(string(v.Fix), "wwan0") || !strings.Contains(string(v.Fix), "100.72.9.4/10") {
		t.Fatalf("collision: %+v", v)
	}
	checkStates(t, v.Checks)
	// The fix per OS (review c5a.json): on Linux tailscaled's own
	// firewall drops 100.64.0.0/10 sources arriving elsewhere than
	// tailscale0 (util/linuxfw buildExternalCGNATRules), which only the
	// node attribute disable-linux-cgnat-drop-rule turns off; macOS and
	// Android switch to per-peer routes (ipn/ipnlocal
	// shouldUseOneCGNATRoute).
	for _, tt := range []struct{ os, want, not string }{
		{"linux", "which a custom IP pool does not replace", "shouldUseOneCGNATRoute"},
		{"macOS", "shouldUseOneCGNATRoute", "disable-linux-cgnat-drop-rule"},
		{"windows", "custom IP pool", "drops"},
	} {
		self.OS = safetext.New(tt.os)
		v := DiagnoseSelf("Running", self, testRegions, fixtureNow)
		if v == nil || !strings.Contains(string(v.Fix), tt.want) || strings.Contains(string(v.Fix), tt.not) {
			t.Errorf("%s: fix %q, want %q and not %q", tt.os, v.Fix, tt.want, tt.not)
		}
	}
}

// TestSelfAndPeerAgree: a rule that judges this node and every peer's
// path (ScopeBoth) reads the same evidence the same way in both: when it
// is this node's verdict, it holds for a relayed peer too, and not when
// it is not.
func TestSelfAndPeerAgree(t *testing.T) {
	no := false
	p := relayedPeer("203.0.113.5:41641")
	for _, tt := range []struct {
		name string
		self Self
		id   ReasonID
	}{
		{"UDP blocked", Self{NAT: &NATInfo{WorkingUDP: &no}}, ReasonLocalUDPBlocked},
		{"UDP blocked, logged", Self{Evidence: &SelfEvidence{UDPBlockedLogged: "netcheck: UDP is blocked, trying HTTPS"}}, ReasonLocalUDPBlocked},
		{"only TCP 443", Self{OnlyTCP443: true}, ReasonLocalTCP443Only},
		{"home DERP unreachable", Self{HomeDERP: 1, DERPRegions: 1, Health: []safetext.Text{"Tailscale could not connect to the 'New York City' relay server. Your Internet connection might be down, or the server might be temporarily unavailable."}}, ReasonDERPUnreachable},
		{"home DERP fails in the log", Self{HomeDERP: 1, DERPRegions: 1, Evidence: &SelfEvidence{LogLines: 1, DERPErrors: []DERPError{{Region: 1, Code: "nyc", Count: 3, Err: "dial tcp: i/o timeout"}}}}, ReasonDERPUnreachable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sv := DiagnoseSelf("Running", tt.self, testRegions, fixtureNow)
			if sv == nil || sv.Reason != tt.id {
				t.Fatalf("self verdict %+v, want %s", sv, tt.id)
			}
			pv := Diagnose(tt.self, p, testRegions, fixtureNow)
			if pv.Reason != tt.id {
				t.Errorf("peer verdict %s also %v, want %s; checks:\n%s", pv.Reason, pv.Also, tt.id, checksText(pv.Checks))
			}
		})
	}
}
