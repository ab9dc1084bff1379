package probes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
)

var testRegions = map[int]Region{
	1: {ID: 1, Code: "nyc", Name: "New York City"},
	2: {ID: 2, Code: "fra", Name: "Frankfurt"},
	3: {ID: 3, Code: "tok", Name: "Tokyo"},
}

func easySelf() Self {
	return Self{
		Name:      "laptop",
		HomeDERP:  1,
		Endpoints: []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("192.168.1.20:41641")},
		NAT: &NATInfo{
			WorkingUDP: boolp(true), MappingVariesByDestIP: boolp(false),
			DERPLatency: map[int]time.Duration{1: 12 * time.Millisecond, 2: 85 * time.Millisecond, 3: 160 * time.Millisecond},
		},
	}
}

func relayedPeer(eps ...string) Peer {
	p := Peer{ID: "nP", Name: "peer", Active: true, HomeDERP: 1, HomeDERPCode: "nyc",
		Path: Path{Kind: PathDERP, DERPCode: "nyc", Text: `active; relay "nyc"`}, EndpointsKnown: true}
	for _, e := range eps {
		p.Endpoints = append(p.Endpoints, netip.MustParseAddrPort(e))
	}
	return p
}

func TestDiagnoseCases(t *testing.T) {
	tests := []struct {
		name       string
		self       func(*Self)
		peer       func(*Peer)
		wantReason ReasonID
		wantAlso   []ReasonID
	}{
		{
			name:       "private endpoints on our own LAN do not count as another network",
			peer:       func(p *Peer) { *p = relayedPeer("192.168.1.77:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name:       "private endpoints with our endpoints unknown: assume another network",
			self:       func(s *Self) { s.Endpoints = nil },
			peer:       func(p *Peer) { *p = relayedPeer("192.168.1.77:41641", "[fd00::7]:41641", "[fe80::1]:41641") },
			wantReason: ReasonPrivateEndpointsOnly,
		},
		{
			name:       "hard NAT rescued by a port mapping is not a cause",
			self:       func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true); s.NAT.HavePortMap = true },
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name:       "no NetInfo at all: nothing fails, unexplained",
			self:       func(s *Self) { s.NAT = nil },
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name: "UDP blocked and no endpoints: UDP first, the rest in Also",
			self: func(s *Self) { s.NAT.WorkingUDP = boolp(false) },
			peer: func(p *Peer) {
				*p = relayedPeer()
				p.HomeDERP = 3
			},
			wantReason: ReasonLocalUDPBlocked,
			wantAlso:   []ReasonID{ReasonNoEndpoints, ReasonFarHomeDERP},
		},
		{
			name: "peer relay with a healthy local side",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.Path = Path{Kind: PathPeerRelay, PeerRelay: "198.51.100.7:7777:vni:1"}
			},
			wantReason: ReasonPeerRelay,
		},
		{
			name: "far threshold: 40ms vs 12ms is under 2x+30ms? no: 40 ≥ 24 but 28 < 30",
			self: func(s *Self) { s.NAT.DERPLatency[2] = 40 * time.Millisecond },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.HomeDERP = 2
			},
			wantReason: ReasonUnexplained,
		},
		{
			name: "DISCO run answered only over DERP: disco-unanswered",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PingRun = &PingRun{Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
			},
			wantReason: ReasonDiscoUnanswered,
		},
		{
			name: "DISCO run with no pong at all does not blame UDP",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PingRun = &PingRun{Tries: 10}
			},
			wantReason: ReasonUnexplained,
		},
		{
			name: "DISCO run against a peer without endpoints: no-endpoints, not disco-unanswered",
			peer: func(p *Peer) {
				*p = relayedPeer()
				p.PingRun = &PingRun{Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
			},
			wantReason: ReasonNoEndpoints,
		},
		{
			name:       "peer on this host: loopback endpoints on both sides are the same network",
			self:       func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:45005")} },
			peer:       func(p *Peer) { *p = relayedPeer("127.0.0.1:44175") },
			wantReason: ReasonUnexplained,
		},
		{
			name:       "peer on this host: same private address as ours, other port",
			self:       func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("10.9.8.7:41641")} },
			peer:       func(p *Peer) { *p = relayedPeer("10.9.8.7:41642") },
			wantReason: ReasonUnexplained,
		},
		{
			name:       "peer loopback only, ours public only: another network",
			self:       func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641")} },
			peer:       func(p *Peer) { *p = relayedPeer("127.0.0.1:44175") },
			wantReason: ReasonPrivateEndpointsOnly,
		},
		{
			name: "pinged offline peer (Active) keeps the offline verdict",
			peer: func(p *Peer) {
				*p = Peer{Name: "x", Active: true, Online: boolp(false), Path: Path{Kind: PathOffline, DERPCode: "nyc"},
					Endpoints: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:44175")}, EndpointsKnown: true}
			},
			wantReason: ReasonOffline,
		},
		{
			name: "offline",
			peer: func(p *Peer) {
				*p = Peer{Name: "x", Online: boolp(false), Path: Path{Kind: PathOffline}, LastSeen: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
			},
			wantReason: ReasonOffline,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			self := easySelf()
			if tt.self != nil {
				tt.self(&self)
			}
			var p Peer
			tt.peer(&p)
			v := Diagnose(self, p, testRegions)
			if v.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q; checks:\n%s", v.Reason, tt.wantReason, checksText(v.Checks))
			}
			if diff := cmp.Diff(tt.wantAlso, v.Also); diff != "" {
				t.Errorf("also (-want +got):\n%s", diff)
			}
			if v.Reason == ReasonUnexplained && len(v.Checks) < 5 {
				t.Errorf("unexplained lists only %d checks", len(v.Checks))
			}
			checkStates(t, v.Checks)
		})
	}
}

func checksText(cs []Check) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %v %s=%s (%s)\n", c.Failed, c.Field, c.Value, c.Note)
	}
	return b.String()
}

func TestIsPrivateAddr(t *testing.T) {
	private := []string{"10.1.2.3", "172.17.0.1", "192.168.1.1", "100.64.0.1", "100.127.255.254", "169.254.1.1",
		"127.0.0.1", "fe80::1", "fd00::1", "fd7a:115c:a1e0::1", "::1", "0.0.0.0", "::ffff:10.0.0.1", "198.18.0.1"}
	public := []string{"203.0.113.5", "198.51.100.10", "192.0.2.1", "8.8.8.8", "100.128.0.1", "2001:db8::1", "172.32.0.1"}
	for _, s := range private {
		if !IsPrivateAddr(netip.MustParseAddr(s)) {
			t.Errorf("IsPrivateAddr(%s) = false, want true", s)
		}
	}
	for _, s := range public {
		if IsPrivateAddr(netip.MustParseAddr(s)) {
			t.Errorf("IsPrivateAddr(%s) = true, want false", s)
		}
	}
}

func TestNATFromNetInfo(t *testing.T) {
	ni := &tailcfg.NetInfo{WorkingUDP: "true", MappingVariesByDestIP: "", PCP: "false",
		DERPLatency: map[string]float64{"1-v4": 0.02, "1-v6": 0.015, "2-v4": 0.1, "x-v4": 1, "3-v4": -1}}
	got := natFromNetInfo(ni)
	want := &NATInfo{WorkingUDP: boolp(true), PCP: boolp(false),
		DERPLatency: map[int]time.Duration{1: 15 * time.Millisecond, 2: 100 * time.Millisecond}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("natFromNetInfo (-want +got):\n%s", diff)
	}
	if legacyDERPRegion("127.3.3.40:7") != 7 || legacyDERPRegion("127.3.3.40:x") != 0 || legacyDERPRegion("1.2.3.4:7") != 0 {
		t.Error("legacyDERPRegion")
	}
}

// fakeClient answers from decoded values; for fuzzing without sockets.
type fakeClient struct {
	st    *ipnstate.Status
	whois *apitype.WhoIsResponse
	dm    *tailcfg.DERPMap
}

func (f *fakeClient) Status(context.Context) (*ipnstate.Status, error) { return f.st, nil }
func (f *fakeClient) WhoIs(context.Context, string) (*apitype.WhoIsResponse, error) {
	if f.whois == nil {
		return nil, local.ErrPeerNotFound
	}
	return f.whois, nil
}
func (f *fakeClient) CurrentDERPMap(context.Context) (*tailcfg.DERPMap, error) { return f.dm, nil }
func (f *fakeClient) WatchIPNBus(context.Context, ipn.NotifyWatchOpt) (*local.IPNBusWatcher, error) {
	return nil, errors.New("no bus")
}
func (f *fakeClient) Ping(context.Context, netip.Addr, tailcfg.PingType) (*ipnstate.PingResult, error) {
	return nil, errors.New("no ping")
}

// FuzzGather feeds arbitrary Status, WhoIs and DERP map JSON (whatever
// decodes) through Gather and Diagnose: it must not panic and every string
// in the snapshot must be free of control characters.
func FuzzGather(f *testing.F) {
	for _, name := range []string{"no-endpoints", "escape-name", "peer-relay", "offline"} {
		b, err := readFixtureParts(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[0], b[1], b[2])
	}
	f.Add([]byte(`{"Peer":{"nodekey:0000000000000000000000000000000000000000000000000000000000000000":null}}`), []byte(`{"Node":{"Hostinfo":{"NetInfo":{"DERPLatency":{"-":1e308}}}}}`), []byte(`{"Regions":{"1":null}}`))
	f.Fuzz(func(t *testing.T, stJSON, whoisJSON, dmJSON []byte) {
		var st ipnstate.Status
		if json.Unmarshal(stJSON, &st) != nil {
			return
		}
		c := &fakeClient{st: &st}
		var w apitype.WhoIsResponse
		if json.Unmarshal(whoisJSON, &w) == nil {
			c.whois = &w
		}
		var dm tailcfg.DERPMap
		if json.Unmarshal(dmJSON, &dm) == nil {
			c.dm = &dm
		}
		snap, err := gatherAt(context.Background(), c, nil, fixtureNow)
		if err != nil {
			return
		}
		b, err := json.Marshal(snap)
		if err != nil {
			t.Fatalf("snapshot does not marshal: %v", err)
		}
		var back Snapshot
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("snapshot JSON does not round-trip: %v", err)
		}
		for _, p := range snap.Peers {
			for _, s := range []string{p.Name, p.OS, p.DNSName, p.Path.Text, p.HomeDERPCode, p.Verdict.Summary} {
				if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
					t.Fatalf("control character in %q", s)
				}
			}
		}
	})
}

func readFixtureParts(name string) ([3][]byte, error) {
	var out [3][]byte
	f, err := loadFixtureFile(name)
	if err != nil {
		return out, err
	}
	out[0] = f.Status
	out[1] = f.WhoIs["100.64.0.2"]
	out[2] = f.DERPMap
	return out, nil
}

// TestRelayedChecksCount keeps relayedChecks in step with what run adds.
func TestRelayedChecksCount(t *testing.T) {
	for i, p := range syntheticPeers(200) {
		if p.Path.Kind != PathDERP && p.Path.Kind != PathPeerRelay {
			continue
		}
		for _, self := range []Self{easySelf(), {}, func() Self { s := easySelf(); s.NAT.MappingVariesByDestIP = boolp(true); return s }()} {
			d := diag{self: self, p: p, regions: testRegions}
			want := d.relayedChecks()
			got := len(Diagnose(self, p, testRegions).Checks)
			if got > want {
				t.Errorf("peer %d: %d checks, estimate %d", i, got, want)
			}
		}
	}
}

// checkStates asserts the Check invariants: every check has a State,
// Failed exactly when State is fail, and an "unknown" value is never
// marked ok or failed.
func checkStates(t *testing.T, cs []Check) {
	t.Helper()
	for _, c := range cs {
		switch {
		case c.State == "":
			t.Errorf("%s has no State", c.Field)
		case c.Failed != (c.State == CheckFail):
			t.Errorf("%s: Failed %v but State %q", c.Field, c.Failed, c.State)
		case c.Value == "unknown" && c.State != CheckUnknown:
			t.Errorf("%s = unknown marked %q, want %q", c.Field, c.State, CheckUnknown)
		}
	}
}

// TestCheckStateMarks: the evidence a person reads says unknown for values
// not measured and info for facts that neither explain nor rule out
// relaying, instead of "ok" or "FAIL".
func TestCheckStateMarks(t *testing.T) {
	self := easySelf()
	self.NAT.MappingVariesByDestIP = nil
	p := relayedPeer("203.0.113.5:41641")
	p.PingRun = &PingRun{Tries: 10}
	v := Diagnose(self, p, testRegions)
	got := map[string]CheckState{}
	for _, c := range v.Checks {
		got[c.Field] = c.Mark()
	}
	want := map[string]CheckState{
		"Status.CurAddr":                     CheckFail,
		"Status.PeerRelay":                   CheckInfo,
		"NetInfo.WorkingUDP":                 CheckOK,
		"WhoIs.Node.Endpoints":               CheckOK,
		"NetInfo.MappingVariesByDestIP":      CheckUnknown,
		"Peer.NetInfo.MappingVariesByDestIP": CheckUnknown,
		"PingRun":                            CheckInfo, // no pong at all: says nothing about direct
		"NetInfo.DERPLatency":                CheckOK,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check marks (-want +got):\n%s", diff)
	}
	checkStates(t, v.Checks)

	// Mark reads a Check built without a State (an older fixture) by Failed.
	for _, tt := range []struct {
		c    Check
		want CheckState
	}{
		{Check{}, CheckOK},
		{Check{Failed: true}, CheckFail},
		{Check{State: CheckUnknown}, CheckUnknown},
		{Check{State: CheckFail}, CheckOK}, // Failed is the source of truth for fail
		{Check{Failed: true, State: CheckInfo}, CheckFail},
	} {
		if got := tt.c.Mark(); got != tt.want {
			t.Errorf("%+v.Mark() = %q, want %q", tt.c, got, tt.want)
		}
	}
}
