package probes

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/safetext"
)

// TestDescribeSelf: the view Judge writes: every region with its latency
// and marks (home, best, far, unreachable, relayed peers), each health
// warning's row of the reason table, UDP receive, the caveat.
func TestDescribeSelf(t *testing.T) {
	yes := true
	s := &Snapshot{
		Time:         fixtureNow,
		BackendState: "Running",
		Regions: map[int]Region{901: {ID: 901, Code: "lab1"}, 902: {ID: 902, Code: "lab2"}, 903: {ID: 903, Code: "lab3", STUNOnly: true},
			904: {ID: 904, Code: "lab4"}, 905: {ID: 905, Code: "lab5", NoHome: true}},
		Self: Self{HomeDERP: 902, HomeDERPCode: "lab2", DERPLatencyFrom: "netcheck", DERPLatencyAt: fixtureNow,
			NetInfoLatency: map[int]time.Duration{901: 10 * ms, 902: ms},
			NAT:            &NATInfo{WorkingUDP: &yes, DERPLatency: map[int]time.Duration{901: 10 * ms, 902: 80 * ms, 903: 20 * ms}},
			Health: []safetext.Text{
				"The MagicSock function ReceiveIPv4 is not running. You might experience connectivity issues.",
				"some warning no rule reads",
			}},
		Peers: []Peer{
			{Name: "hb", Path: Path{Kind: PathDERP, DERPCode: "lab2"}},
			{Name: "hc", Path: Path{Kind: PathDERP, DERPCode: "lab2"}},
			{Name: "hd", Path: Path{Kind: PathIdle}},
		},
	}
	Judge(s, nil)
	v := s.Self.View
	if v == nil {
		t.Fatal("Judge wrote no Self.View")
	}
	type row struct {
		ID                                          int
		Latency, Reported                           time.Duration
		Home, Best, Far, Unreachable, NoHome, STUNO bool
		Relayed                                     int
	}
	var got []row
	for _, r := range v.Regions {
		got = append(got, row{r.ID, r.Latency, r.Reported, r.Home, r.Best, r.Far, r.Unreachable, r.NoHome, r.STUNOnly, r.Relayed})
	}
	want := []row{
		{901, 10 * ms, 10 * ms, false, true, false, false, false, false, 0},
		{902, 80 * ms, ms, true, false, true, false, false, false, 2},
		{903, 20 * ms, 0, false, false, false, false, false, true, 0},
		{904, 0, 0, false, false, false, true, false, false, 0},
		{905, 0, 0, false, false, false, false, true, false, 0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("regions (-want +got):\n%s", d)
	}
	if v.Home.Why != HomeMoves || !v.Home.Far || v.Home.Behind != 70*ms {
		t.Errorf("home %+v", v.Home)
	}
	if len(v.Health) != 2 || v.Health[0].Reason != ReasonSelfUDPReceiveStopped || v.Health[0].Fix == "" || v.Health[1].Reason != "" {
		t.Errorf("health %+v", v.Health)
	}
	if v.UDPReceive.State != "stopped" {
		t.Errorf("UDP receive %+v, want stopped", v.UDPReceive)
	}
	if !strings.Contains(string(v.Caveat), "own socket") {
		t.Errorf("caveat %q", v.Caveat)
	}

	// A direct peer proves UDP gets in.
	s.Self.Health = nil
	s.Peers[2].Path = Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("198.51.100.7:41641")}
	Judge(s, nil)
	if u := s.Self.View.UDPReceive; u.State != "ok" || !strings.Contains(string(u.Text), "hd") {
		t.Errorf("UDP receive %+v, want ok by hd", u)
	}
}

// TestUDPReceiveLANPeer: a peer direct over a non-public address is named
// for what it proves (UDP on the LAN), whatever netcheck said, and the
// line never says no peer is direct beside it; a public direct peer
// still proves UDP outright.
func TestUDPReceiveLANPeer(t *testing.T) {
	yes, no := true, false
	lan := Peer{Name: "nas", Path: Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("192.168.1.20:41641")}}
	loop := Peer{Name: "lab-direct", Path: Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("127.0.0.1:41636")}}
	public := Peer{Name: "vps", Path: Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("198.51.100.7:41641")}}
	cases := []struct {
		name      string
		udp       *bool
		peers     []Peer
		state     string
		has, hasn []string
	}{
		{"STUN ok, LAN peer", &yes, []Peer{lan}, "ok", []string{"STUN replies came back", "peer nas is direct over a non-public address", "LAN only"}, []string{"no peer is direct now"}},
		{"STUN ok, loopback peer (the demo)", &yes, []Peer{loop}, "ok", []string{"peer lab-direct is direct over a non-public address"}, []string{"no peer is direct now"}},
		{"STUN ok, no direct peer", &yes, nil, "ok", []string{"no peer is direct now"}, []string{"non-public address"}},
		{"no STUN reply, LAN peer", &no, []Peer{lan}, "blocked", []string{"past the LAN looks blocked", "local-udp-blocked", "peer nas"}, nil},
		{"no STUN reply, no peer", &no, nil, "blocked", []string{"UDP looks blocked here"}, []string{"LAN"}},
		{"no netcheck, LAN peer", nil, []Peer{lan}, "unknown", []string{"unknown past the LAN", "peer nas"}, []string{"no direct peer"}},
		{"no netcheck, no peer", nil, nil, "unknown", []string{"no direct peer"}, nil},
		{"LAN and public peers", &yes, []Peer{lan, public}, "ok", []string{"peer vps proves it", "direct 198.51.100.7:41641"}, []string{"non-public address"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Snapshot{Time: fixtureNow, BackendState: "Running", Peers: c.peers}
			if c.udp != nil {
				s.Self.NAT = &NATInfo{WorkingUDP: c.udp}
			}
			Judge(s, nil)
			u := s.Self.View.UDPReceive
			if u.State != c.state {
				t.Errorf("state %q, want %q (%s)", u.State, c.state, u.Text)
			}
			for _, w := range c.has {
				if !strings.Contains(string(u.Text), w) {
					t.Errorf("text %q lacks %q", u.Text, w)
				}
			}
			for _, w := range c.hasn {
				if strings.Contains(string(u.Text), w) {
					t.Errorf("text %q has %q", u.Text, w)
				}
			}
		})
	}
}

// TestSelfBugs: the bugs whose versions and platforms hold this node's
// client, each with whether its symptom is in this node's evidence.
func TestSelfBugs(t *testing.T) {
	no := false
	ids := func(bs []BugMatch) (out []string) {
		for _, b := range bs {
			id := b.ID
			if b.Hit {
				id += "!"
			}
			out = append(out, id)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		self Self
		want []string
	}{
		{"unknown version", Self{}, nil},
		{"current", Self{Version: "1.102.5", OS: "linux"}, nil},
		{"1.77.160 with UDP false: hit", Self{Version: "1.77.160", OS: "linux", NAT: &NATInfo{WorkingUDP: &no}}, []string{"netcheck-stun-port-zero!"}},
		{"1.77.160, no symptom", Self{Version: "1.77.160", OS: "linux"}, []string{"netcheck-stun-port-zero"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ids(SelfBugs(tc.self, nil, fixtureNow, nil))
			// Only the bugs named: a version range may hold others.
			var named []string
			for _, g := range got {
				if strings.HasPrefix(g, "netcheck-stun-port-zero") {
					named = append(named, g)
				}
			}
			if d := cmp.Diff(tc.want, named); d != "" {
				t.Errorf("(-want +got):\n%s\nall: %v", d, got)
			}
		})
	}
	// Every bug of the table matches a version inside its range and
	// none at its fixed release.
	for _, b := range KnownBugs() {
		os := "linux"
		if len(b.OS) > 0 {
			os = b.OS[0]
		}
		if got := ids(SelfBugs(Self{Version: safetext.New(b.From), OS: safetext.New(os)}, nil, fixtureNow, nil)); !containsPrefix(got, b.ID) {
			t.Errorf("%s at %s: not matched (%v)", b.ID, b.From, got)
		}
		if b.FixedIn != "" {
			if got := ids(SelfBugs(Self{Version: safetext.New(b.FixedIn), OS: safetext.New(os)}, nil, fixtureNow, nil)); containsPrefix(got, b.ID) {
				t.Errorf("%s at %s (fixed): matched", b.ID, b.FixedIn)
			}
		}
	}
}

func containsPrefix(ss []string, p string) bool {
	for _, s := range ss {
		if s == p || s == p+"!" {
			return true
		}
	}
	return false
}

// TestTrafficRates: per second over the interval; unknown across a
// restart (a counter went back) or without counters.
func TestTrafficRates(t *testing.T) {
	t0 := &Traffic{At: fixtureNow, Source: "usermetrics", BytesIn: PathCounts{Direct: 1000, DERP: 500}, PacketsOut: PathCounts{PeerRelay: 10}}
	t1 := &Traffic{At: fixtureNow.Add(2 * time.Second), Source: "usermetrics", BytesIn: PathCounts{Direct: 3000, DERP: 1500}, PacketsOut: PathCounts{PeerRelay: 30}}
	r := t1.RatesSince(t0)
	if r == nil || r.BytesIn.Direct != 1000 || r.BytesIn.DERP != 500 || r.PacketsOut.PeerRelay != 10 || r.Seconds != 2 {
		t.Errorf("rates %+v", r)
	}
	if r := t0.RatesSince(t1); r != nil {
		t.Errorf("rates backwards in time: %+v", r)
	}
	restart := &Traffic{At: fixtureNow.Add(4 * time.Second), Source: "usermetrics", BytesIn: PathCounts{Direct: 10}}
	if r := restart.RatesSince(t1); r != nil {
		t.Errorf("rates across a restart: %+v", r)
	}
	if r := t1.RatesSince(&Traffic{At: fixtureNow, Err: "not served"}); r != nil {
		t.Errorf("rates from unknown: %+v", r)
	}
	if got := t1.DERPShare(); got != 1500.0/4500 {
		t.Errorf("DERPShare = %v", got)
	}
	if got := (&Traffic{Source: "usermetrics", At: fixtureNow}).DERPShare(); got != -1 {
		t.Errorf("DERPShare of nothing = %v, want -1", got)
	}
}
