// Package peerstest builds realistic, deterministic probes.Snapshot values
// for tests, goldens and benchmarks of the tui packages. Addresses are from
// the documentation ranges (203.0.113.0/24, 192.168.0.0/16, 100.64.0.0/10).
package peerstest

import (
	"net/netip"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
)

// Time is the fixed time of Snapshot, and Now the fixed clock tests inject
// (12 s later).
var (
	Time = time.Date(2026, 11, 30, 5, 21, 3, 0, time.UTC)
	Now  = func() time.Time { return Time.Add(12 * time.Second) }
)

// EvilName is a peer name carrying escape sequences (set the window title,
// colour red, ring the bell) as a hostile or broken peer could send it.
// The fixture holds it as a source hands it over: through safetext.New,
// where the bytes enter (tailscaled.Gather, a snapshot read).
const EvilName = "\x1b]0;pwned\x07evil\x1b[31mred\x1b[0m\x07box"

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
func ip(s string) netip.Addr     { return netip.MustParseAddr(s) }
func bptr(b bool) *bool          { return &b }

// Regions is the DERP map of the fixture.
func Regions() map[int]probes.Region {
	return map[int]probes.Region{
		1: {ID: 1, Code: "nyc", Name: "New York City"},
		2: {ID: 2, Code: "sfo", Name: "San Francisco"},
		9: {ID: 9, Code: "tok", Name: "Tokyo"},
	}
}

// Snapshot returns a tailnet with one peer of each kind: "nas" direct,
// "cores3" relayed through DERP "nyc" because it advertises no endpoints,
// "laptop" idle, "old-pi" offline, "build-box" through a peer relay, and
// "evil" whose name holds escape sequences (unsanitised, to prove the panes
// never write it raw).
func Snapshot() probes.Snapshot {
	return probes.Snapshot{
		Time:         Time,
		BackendState: "Running",
		Self: probes.Self{
			Name: "workstation", OS: "linux", HomeDERP: 1, HomeDERPCode: "nyc",
			TailscaleIPs: []netip.Addr{ip("100.64.0.1")},
		},
		Regions: Regions(),
		Peers: []probes.Peer{
			{
				ID: "nBUILD", Name: "build-box", OS: "windows",
				TailscaleIPs: []netip.Addr{ip("100.64.0.5")},
				Online:       bptr(true), Active: true,
				Path:     probes.Path{Kind: probes.PathPeerRelay, PeerRelay: "203.0.113.7:41641:vni:7", Text: "active; peer-relay 203.0.113.7:41641:vni:7"},
				HomeDERP: 2, HomeDERPCode: "sfo",
				Endpoints: []netip.AddrPort{ap("192.168.7.5:41641")}, EndpointsKnown: true,
				TxRate: 210_000, RxRate: 1_900_000, Latency: 18 * time.Millisecond,
				LastHandshake: Time.Add(-40 * time.Second),
				Verdict: probes.Verdict{
					Reason: probes.ReasonPeerRelay, Summary: "through a peer relay",
					Checks: []probes.Check{
						{Field: "Status.PeerRelay", Value: "203.0.113.7:41641:vni:7", Note: "a granted peer relay carries the traffic"},
					},
				},
			},
			{
				ID: "nCORES3", Name: "cores3", OS: "freertos",
				TailscaleIPs: []netip.Addr{ip("100.64.0.3")},
				Online:       bptr(true), Active: true,
				Path:     probes.Path{Kind: probes.PathDERP, DERPCode: "nyc", Text: `active; relay "nyc"`},
				HomeDERP: 1, HomeDERPCode: "nyc",
				Endpoints: nil, EndpointsKnown: true,
				TxRate: 1260, RxRate: 640, Latency: 42 * time.Millisecond,
				LastHandshake: Time.Add(-75 * time.Second),
				Verdict: probes.Verdict{
					Reason: probes.ReasonNoEndpoints, Also: []probes.ReasonID{probes.ReasonDeviceNoPublicEndpoint},
					Summary: "peer advertises no UDP endpoints",
					Checks: []probes.Check{
						{Field: "WhoIs.Node.Endpoints", Value: "[]", Failed: true, Note: "nothing to send DISCO pings to"},
						{Field: "NetInfo.WorkingUDP", Value: "true", Note: "UDP works here"},
						{Field: "NetInfo.MappingVariesByDestIP", Value: "false", Note: "our NAT is easy"},
						{Field: "Status.Relay", Value: "nyc", State: probes.CheckInfo, Note: "peer's home DERP; traffic relays there"},
					},
					Fix: "the peer cannot receive UDP (blocked, disabled, or an embedded client that never advertised its public endpoint)",
				},
			},
			{
				ID: "nEVIL", Name: safetext.New(EvilName), OS: safetext.New("linux\x1b[2J"),
				TailscaleIPs: []netip.Addr{ip("100.64.0.66")},
				Online:       bptr(true),
				Path:         probes.Path{Kind: probes.PathIdle, Text: "idle"},
				HomeDERP:     9, HomeDERPCode: "tok",
				Endpoints: []netip.AddrPort{ap("203.0.113.66:41641")}, EndpointsKnown: true,
				Verdict: probes.Verdict{Reason: probes.ReasonIdle, Summary: safetext.New("no traffic recently\x1b[5m")},
			},
			{
				ID: "nLAPTOP", Name: "laptop", OS: "macOS",
				TailscaleIPs: []netip.Addr{ip("100.64.0.4")},
				Online:       bptr(true),
				Path:         probes.Path{Kind: probes.PathIdle, Text: "idle"},
				HomeDERP:     2, HomeDERPCode: "sfo",
				Endpoints: []netip.AddrPort{ap("203.0.113.44:41641"), ap("192.168.1.44:41641")}, EndpointsKnown: true,
				LastHandshake: Time.Add(-3 * time.Hour),
				Verdict: probes.Verdict{
					Reason: probes.ReasonIdle, Summary: "no traffic recently",
					Checks: []probes.Check{{Field: "Status.Active", Value: "false", Note: "nothing sent in the last 45 s"}},
					Fix:    "send traffic or press p to ping",
				},
			},
			{
				ID: "nNAS", Name: "nas", OS: "linux",
				TailscaleIPs: []netip.Addr{ip("100.64.0.2"), ip("fd7a:115c:a1e0::2")},
				Online:       bptr(true), Active: true,
				Path:     probes.Path{Kind: probes.PathDirect, Addr: ap("203.0.113.10:41641"), Text: "active; direct 203.0.113.10:41641"},
				HomeDERP: 1, HomeDERPCode: "nyc",
				Endpoints: []netip.AddrPort{ap("203.0.113.10:41641"), ap("192.168.1.20:41641")}, EndpointsKnown: true,
				TxRate: 12_595, RxRate: 4_300_000, Latency: 3 * time.Millisecond,
				LastHandshake: Time.Add(-12 * time.Second),
				Verdict: probes.Verdict{
					Reason: probes.ReasonDirect, Summary: "direct",
					Checks: []probes.Check{{Field: "Status.CurAddr", Value: "203.0.113.10:41641", Note: "a trusted direct UDP path"}},
				},
			},
			{
				ID: "nOLDPI", Name: "old-pi", OS: "linux",
				TailscaleIPs: []netip.Addr{ip("100.64.0.9")},
				Online:       bptr(false),
				Path:         probes.Path{Kind: probes.PathOffline, Text: "offline, last seen 3h ago"},
				HomeDERP:     9,
				LastSeen:     Time.Add(-3 * time.Hour),
				Verdict: probes.Verdict{
					Reason: probes.ReasonOffline, Summary: "peer is offline",
					Checks: []probes.Check{{Field: "Node.Online", Value: "false", Failed: true, Note: "control says it is offline"}},
					Fix:    "bring the peer up",
				},
			},
		},
	}
}

// Joined is s as the dashboard's panes receive it: joined on its own (no
// board; each peer's only path change is its current path), but with the
// verdicts s carries, as written by hand, where a Joiner would judge them
// again (probes.Judge): for stand-ins of a source in the panes', status
// output's and metrics' tests.
func Joined(s probes.Snapshot) *join.Snapshot {
	var h join.History
	h.Observe(&s)
	changes := make(map[safetext.Text][]join.PathChange, len(s.Peers))
	for _, p := range s.Peers {
		changes[p.ID] = h.Changes(p.ID)
	}
	return (&join.Snapshot{Snapshot: &s}).WithChanges(changes)
}

// Many returns a snapshot of n synthetic peers cycling through the five
// path kinds, with distinct names, rates and reasons (for benchmarks).
func Many(n int) probes.Snapshot {
	s := Snapshot()
	base := s.Peers
	s.Peers = make([]probes.Peer, n)
	for i := range s.Peers {
		p := base[i%len(base)]
		if p.ID == "nEVIL" {
			p = base[(i+1)%len(base)]
		}
		p.ID = safetext.Format("n%05d", i)
		p.Name = safetext.Format("%s-%04d", p.Name, i)
		p.TxRate = float64(i * 37 % 100_000)
		p.RxRate = float64(i * 91 % 1_000_000)
		s.Peers[i] = p
	}
	return s
}

// Meter reports CPU time per op (cpu-ns/op) beside a benchmark's wall
// time, which on a shared machine mostly measures the other load. Call it
// after b.ResetTimer and defer the function it returns.
func Meter(b *testing.B) func() {
	start := CPUTime()
	return func() {
		if start == 0 || b.N == 0 {
			return
		}
		b.ReportMetric(float64(CPUTime()-start)/float64(b.N), "cpu-ns/op")
	}
}
