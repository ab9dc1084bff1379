package tailscaled

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

func loadFixtureFile(name string) (*probestest.Fixture, error) {
	return probestest.LoadFixture(filepath.Join("..", "testdata", name+".json"))
}

func loadFixture(t *testing.T, name string) *probestest.Fixture {
	t.Helper()
	f, err := loadFixtureFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// gatherFixture serves the fixture on a real unix socket and gathers through
// a real local.Client.
func gatherFixture(t *testing.T, name string) (*probes.Snapshot, *probestest.Server) {
	t.Helper()
	return gatherFixtureWith(t, name, GatherOptions{})
}

// gatherFixtureWith is gatherFixture with options.
func gatherFixtureWith(t *testing.T, name string, opts GatherOptions) (*probes.Snapshot, *probestest.Server) {
	t.Helper()
	srv := probestest.New(t, loadFixture(t, name))
	snap, err := judgedAt(context.Background(), NewClient(srv.Socket), nil, fixtureNow, opts)
	if err != nil {
		t.Fatalf("gather %s: %v", name, err)
	}
	if len(snap.Peers) != 1 {
		t.Fatalf("gather %s: %d peers, want 1", name, len(snap.Peers))
	}
	return snap, srv
}

// failedFields lists the Field of every failed check.
func failedFields(v probes.Verdict) []string {
	var out []string
	for _, c := range v.Checks {
		if c.Failed {
			out = append(out, string(c.Field))
		}
	}
	return out
}

func TestDiagnoseFixtures(t *testing.T) {
	tests := []struct {
		fixture    string
		wantKind   probes.PathKind
		wantText   string
		wantReason probes.ReasonID
		wantAlso   []probes.ReasonID
		wantFailed []string
		wantFix    bool
		// netcheck: a fresh DERP latency measurement (one minute old, the
		// fixture's own NetInfo values) goes in GatherOptions.Latency.
		// Without one, NetInfo's latencies are of unknown age and
		// far-home-derp is not judged.
		netcheck bool
	}{
		{"direct", probes.PathDirect, "active; direct 203.0.113.5:41641", probes.ReasonDirect, nil, nil, false, false},
		{"peer-relay", probes.PathPeerRelay, "active; peer-relay 198.51.100.77:7777:vni:12", probes.ReasonPeerRelay,
			[]probes.ReasonID{probes.ReasonBothHardNAT}, []string{"NetInfo.MappingVariesByDestIP", "NetInfo.HavePortMap", "Peer.NetInfo.MappingVariesByDestIP"}, true, false},
		{"offline", probes.PathOffline, "offline, last seen 3h ago", probes.ReasonOffline, nil, []string{"WhoIs.Node.Online", "Status.LastHandshake"}, true, false},
		// Idle is a fact about the peer, not a failed check.
		{"idle", probes.PathIdle, "idle", probes.ReasonIdle, nil, nil, true, false},
		{"no-endpoints", probes.PathDERP, `active; relay "nyc"`, probes.ReasonNoEndpoints, nil,
			[]string{"Status.CurAddr", "WhoIs.Node.Endpoints"}, true, false},
		// The same-LAN check stays unknown: prefixes alone cannot tell.
		{"private-endpoints-only", probes.PathDERP, `active; relay "fra"`, probes.ReasonPrivateEndpointsOnly, []probes.ReasonID{probes.ReasonFarHomeDERP},
			[]string{"Status.CurAddr", "WhoIs.Node.Endpoints", "Netcheck.DERPLatency"}, true, true},
		{"local-udp-blocked", probes.PathDERP, `active; relay "nyc"`, probes.ReasonLocalUDPBlocked, nil,
			[]string{"Status.CurAddr", "NetInfo.WorkingUDP"}, true, false},
		{"local-hard-nat", probes.PathDERP, `active; relay "nyc"`, probes.ReasonLocalHardNAT, nil,
			[]string{"Status.CurAddr", "NetInfo.MappingVariesByDestIP", "NetInfo.HavePortMap"}, true, false},
		// The same hard NAT here, and the peer's NAT known easy but
		// filtering (no port mapping, behind a NAT): both ends known.
		{"hard-and-filtering-nat", probes.PathDERP, `active; relay "nyc"`, probes.ReasonHardAndFilteringNAT, nil,
			[]string{"Status.CurAddr", "NetInfo.MappingVariesByDestIP", "NetInfo.HavePortMap", "Peer.NetInfo.HavePortMap"}, true, false},
		// The peer's own NetInfo also shows its home (fra, 85 ms) far from
		// its best region (nyc, 12 ms): peer-far-home-derp.
		{"both-hard-nat", probes.PathDERP, `active; relay "fra"`, probes.ReasonBothHardNAT, []probes.ReasonID{probes.ReasonFarHomeDERP, probes.ReasonPeerFarHomeDERP},
			[]string{"Status.CurAddr", "NetInfo.MappingVariesByDestIP", "NetInfo.HavePortMap", "Peer.NetInfo.MappingVariesByDestIP", "Netcheck.DERPLatency", "Peer.NetInfo.DERPLatency"}, true, true},
		{"far-home-derp", probes.PathDERP, `active; relay "tok"`, probes.ReasonUnexplained, []probes.ReasonID{probes.ReasonFarHomeDERP},
			[]string{"Status.CurAddr", "Netcheck.DERPLatency"}, true, true},
		// NetInfo's latencies alone may be hours old (tailscaled does not
		// re-send NetInfo for latency changes): shown, not judged.
		{"far-home-derp", probes.PathDERP, `active; relay "tok"`, probes.ReasonUnexplained, nil,
			[]string{"Status.CurAddr"}, true, false},
		{"unexplained", probes.PathDERP, `active; relay "nyc"`, probes.ReasonUnexplained, nil,
			[]string{"Status.CurAddr"}, true, false},
		{"testcontrol", probes.PathDirect, "active; direct 127.0.0.1:40002; offline", probes.ReasonDirect, nil, nil, false, false},
		// One fixture per defect of issue 14, each resting on Tailscale's
		// code as its comment says.
		{"key-expired", probes.PathIdle, "-", probes.ReasonKeyExpired, nil, []string{"Status.Expired"}, true, false},
		{"no-home-derp", probes.PathDERP, "active; ", probes.ReasonNoHomeDERP, nil, []string{"Status.CurAddr", "Status.Relay"}, true, false},
		{"only-tcp443", probes.PathDERP, `active; relay "nyc"`, probes.ReasonLocalTCP443Only, nil, []string{"Status.CurAddr", "Self.CapMap"}, true, false},
		{"no-stun", probes.PathDERP, `active; relay "nyc"`, probes.ReasonUnexplained, nil, []string{"Status.CurAddr"}, true, false},
		{"docker-same-addr", probes.PathDERP, `active; relay "nyc"`, probes.ReasonPrivateEndpointsOnly, nil, []string{"Status.CurAddr", "WhoIs.Node.Endpoints"}, true, false},
		{"ipv6-both", probes.PathDERP, `active; relay "nyc"`, probes.ReasonUnexplained, nil, []string{"Status.CurAddr"}, true, false},
		{"no-common-family", probes.PathDERP, `active; relay "nyc"`, probes.ReasonNoCommonFamily, nil, []string{"Status.CurAddr", "NetInfo.WorkingIPv6"}, true, false},
		{"hidden-peers", probes.PathDERP, `active; relay "nyc"`, probes.ReasonUnexplained, nil, []string{"Status.CurAddr"}, true, false},
	}
	for _, tt := range tests {
		name := tt.fixture
		if tt.netcheck {
			name += "+netcheck"
		}
		t.Run(name, func(t *testing.T) {
			var opts GatherOptions
			if tt.netcheck {
				opts.Latency = fixtureNetcheck(t, tt.fixture)
			}
			snap, _ := gatherFixtureWith(t, tt.fixture, opts)
			p := snap.Peers[0]
			if p.Path.Kind != tt.wantKind || string(p.Path.Text) != tt.wantText {
				t.Errorf("path = %q %q, want %q %q", p.Path.Kind, p.Path.Text, tt.wantKind, tt.wantText)
			}
			v := p.Verdict
			if v.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q (checks %+v)", v.Reason, tt.wantReason, v.Checks)
			}
			if diff := cmp.Diff(tt.wantAlso, v.Also); diff != "" {
				t.Errorf("also (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFailed, failedFields(v)); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s", diff)
			}
			checkStates(t, v.Checks)
			if (v.Fix != "") != tt.wantFix {
				t.Errorf("fix = %q, want fix: %v", v.Fix, tt.wantFix)
			}
			if v.Summary == "" || len(v.Checks) == 0 {
				t.Errorf("verdict lacks summary or checks: %+v", v)
			}
			if len(snap.Warnings) != 0 {
				t.Errorf("warnings = %q, want none", snap.Warnings)
			}
		})
	}
}

// fixtureNetcheck is a DERP latency measurement taken a minute before
// fixtureNow with the values of the fixture's own NetInfo (of 100.64.0.1).
func fixtureNetcheck(t *testing.T, name string) *probes.DERPLatencyReport {
	t.Helper()
	snap, _ := gatherFixture(t, name)
	if snap.Self.NAT == nil || len(snap.Self.NAT.DERPLatency) == 0 {
		t.Fatalf("fixture %s has no DERP latencies", name)
	}
	return &probes.DERPLatencyReport{At: fixtureNow.Add(-time.Minute), ByRegion: snap.Self.NAT.DERPLatency}
}

func TestGatherFields(t *testing.T) {
	snap, _ := gatherFixture(t, "both-hard-nat")
	wantSelf := probes.Self{
		Version:      "1.102.5",
		Name:         "laptop",
		DNSName:      "laptop.tail1234.ts.net",
		OS:           "linux",
		TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.1"), netip.MustParseAddr("fd7a:115c:a1e0::1")},
		HomeDERP:     1,
		HomeDERPCode: "nyc",
		NAT: &probes.NATInfo{
			WorkingUDP: boolp(true), WorkingIPv6: boolp(false), MappingVariesByDestIP: boolp(true),
			UPnP: boolp(false), PMP: boolp(false), PCP: boolp(false), LinkType: "wired",
			DERPLatency: map[int]time.Duration{1: 12100 * time.Microsecond, 2: 85300 * time.Microsecond, 3: 160400 * time.Microsecond, 4: 70200 * time.Microsecond},
		},
		Endpoints: []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("192.168.1.20:41641")},
		// NetInfo's latencies seen for the first time: their age is unknown.
		DERPLatencyFrom: "netinfo",
		DERPLatencySeen: fixtureNow,
		// The fixture's DERP map: four regions, one STUN server each.
		STUNServers: 4, DERPRegions: 4,
		// The fixture's daemon serves no metrics (traffic_test.go has
		// those that do).
		Traffic: &probes.Traffic{At: fixtureNow, Err: "traffic by path unknown: this tailscaled serves no /localapi/v0/usermetrics (it predates them); it serves no /localapi/v0/metrics"},
	}
	// The view is probes' (TestDescribeSelf).
	if diff := cmp.Diff(wantSelf, snap.Self, append(cmpOpts, cmpopts.IgnoreFields(probes.Self{}, "View"))...); diff != "" {
		t.Errorf("self (-want +got):\n%s", diff)
	}
	p := snap.Peers[0]
	// The peer's NetInfo, shared by control, is its localapi PeerSide.
	wantSide := &probes.PeerSide{
		Source: probes.SourceLocalAPI, Endpoints: p.Endpoints,
		MappingVariesByDestIP: boolp(true), HavePortMap: boolp(false), HomeDERP: 2,
		DERPLatencyMs:  map[string]float64{"fra": 85.3, "nyc": 12.1, "sfo": 70.2, "tok": 160.4},
		ClientSupports: probes.ClientSupports{UDP: boolp(true), IPv6: boolp(false), UPnP: boolp(false), PMP: boolp(false), PCP: boolp(false)},
	}
	if diff := cmp.Diff(wantSide, p.PeerSide, cmpOpts...); diff != "" {
		t.Errorf("peer side (-want +got):\n%s", diff)
	}
	p.Verdict = probes.Verdict{}
	p.NAT = nil
	p.PeerSide = nil
	wantPeer := probes.Peer{
		ID: "n2CNTRL", Name: "office-pc", DNSName: "office-pc.tail1234.ts.net", OS: "windows",
		TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.2")},
		Online:       boolp(true), OnlineSource: "Status.Online", Active: true,
		Path:     probes.Path{Kind: probes.PathDERP, DERPCode: "fra", Text: `active; relay "fra"`},
		HomeDERP: 2, HomeDERPCode: "fra",
		Endpoints:      []netip.AddrPort{netip.MustParseAddrPort("203.0.113.31:62011"), netip.MustParseAddrPort("10.9.0.14:41641")},
		EndpointsKnown: true,
		TxBytes:        1048576, RxBytes: 2097152,
		LastHandshake: time.Date(2026, 11, 30, 11, 59, 30, 0, time.UTC),
	}
	if diff := cmp.Diff(wantPeer, p, cmpOpts...); diff != "" {
		t.Errorf("peer (-want +got):\n%s", diff)
	}
	if len(snap.Regions) != 4 || snap.Regions[3].Code != "tok" || snap.Regions[3].Name != "Tokyo" {
		t.Errorf("regions = %+v", snap.Regions)
	}
}

func TestGatherRates(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	c := NewClient(srv.Socket)
	prev, err := judgedAt(context.Background(), c, nil, fixtureNow.Add(-2*time.Second), GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prev.Peers[0].TxBytes -= 2000
	prev.Peers[0].RxBytes -= 4000
	prev.Peers[0].Latency = 23 * time.Millisecond
	snap, err := judgedAt(context.Background(), c, prev, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Peers[0]
	if p.TxRate != 1000 || p.RxRate != 2000 || p.Latency != 23*time.Millisecond {
		t.Errorf("tx %v rx %v latency %v; want 1000, 2000, 23ms", p.TxRate, p.RxRate, p.Latency)
	}
	// Counters going backwards (daemon restarted) give 0, not a negative rate.
	prev.Peers[0].TxBytes += 1 << 40
	snap, _ = judgedAt(context.Background(), c, prev, fixtureNow, GatherOptions{})
	if snap.Peers[0].TxRate != 0 {
		t.Errorf("tx rate after counter reset = %v, want 0", snap.Peers[0].TxRate)
	}
}

func TestGatherSanitises(t *testing.T) {
	snap, _ := gatherFixture(t, "escape-name")
	p := snap.Peers[0]
	for _, s := range []string{string(p.Name), string(p.DNSName), string(p.OS)} {
		if strings.ContainsAny(s, "\x1b\x07") {
			t.Errorf("unsanitised string %q", s)
		}
	}
	if p.Name != "evil" || p.OS != "linux" || p.DNSName != "evil.tail1234.ts.net" {
		t.Errorf("name %q os %q dns %q", p.Name, p.OS, p.DNSName)
	}
	b, _ := json.Marshal(snap)
	if strings.Contains(string(b), `\u001b`) || strings.Contains(string(b), `\u0007`) {
		t.Errorf("JSON carries escapes: %s", b)
	}
}

func TestGatherWhoIsDenied(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "no-endpoints"))
	srv.SetForbidden("whois", true)
	snap, err := judgedAt(context.Background(), NewClient(srv.Socket), nil, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Peers[0]
	if p.EndpointsKnown || snap.Self.NAT != nil {
		t.Errorf("endpoints known %v, self NAT %+v; want unknown", p.EndpointsKnown, snap.Self.NAT)
	}
	if p.Verdict.Reason != probes.ReasonUnexplained {
		t.Errorf("reason %q, want unexplained when evidence is missing", p.Verdict.Reason)
	}
	if got := srv.Requests("whois"); got != 1 {
		t.Errorf("whois requests = %d, want 1 (stop after the first denial)", got)
	}
	if len(snap.Warnings) == 0 || !strings.Contains(string(snap.Warnings[0]), "permission denied") {
		t.Errorf("warnings = %q, want a permission warning", snap.Warnings)
	}
	// The home region still comes from Status.Relay and the DERP map.
	if p.HomeDERP != 1 || p.HomeDERPCode != "nyc" {
		t.Errorf("home DERP %d %q, want 1 nyc", p.HomeDERP, p.HomeDERPCode)
	}
}

func TestGatherErrors(t *testing.T) {
	t.Run("not running", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "missing.sock")
		_, err := Gather(context.Background(), NewClient(sock), nil)
		if !errors.Is(err, ErrNotRunning) {
			t.Fatalf("err = %v, want ErrNotRunning", err)
		}
		want := "failed to connect to local tailscaled (socket " + sock + "); is it running?"
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("err = %q, want prefix %q", err, want)
		}
	})
	t.Run("permission", func(t *testing.T) {
		srv := probestest.New(t, loadFixture(t, "direct"))
		srv.SetForbidden("status", true)
		_, err := Gather(context.Background(), NewClient(srv.Socket), nil)
		if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("err = %v, want ErrPermission", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		srv := probestest.New(t, loadFixture(t, "direct"))
		srv.SetStatusBody([]byte(`{"BackendState": "Running", "Peer": [`))
		_, err := Gather(context.Background(), NewClient(srv.Socket), nil)
		if !errors.Is(err, ErrBadReply) {
			t.Fatalf("err = %v, want ErrBadReply", err)
		}
	})
	t.Run("wrong types", func(t *testing.T) {
		srv := probestest.New(t, loadFixture(t, "direct"))
		srv.SetStatusBody([]byte(`{"Peer": {"nodekey:zz": {"TailscaleIPs": ["not an ip"]}}}`))
		_, err := Gather(context.Background(), NewClient(srv.Socket), nil)
		if !errors.Is(err, ErrBadReply) {
			t.Fatalf("err = %v, want ErrBadReply", err)
		}
	})
}

// TestGatherReusesWhoIs: answers younger than WhoIsMaxAge are reused, older
// ones asked again (every node asked: the direct peer's verdict reads none).
func TestGatherReusesWhoIs(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	c := NewClient(srv.Socket)
	all := GatherOptions{AllNodes: true}
	first, err := judgedAt(context.Background(), c, nil, fixtureNow, all)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("whois"); got != 2 {
		t.Fatalf("first gather: %d whois requests, want 2 (self and the peer)", got)
	}
	second, err := judgedAt(context.Background(), c, first, fixtureNow.Add(2*time.Second), all)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("whois"); got != 2 {
		t.Errorf("second gather 2 s later: %d whois requests in all, want 2 (cached)", got)
	}
	if !second.Peers[0].EndpointsKnown || second.Self.NAT == nil {
		t.Errorf("cached answers not used: %+v %+v", second.Peers[0], second.Self)
	}
	if _, err := judgedAt(context.Background(), c, second, fixtureNow.Add(WhoIsMaxAge+time.Second), all); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("whois"); got != 4 {
		t.Errorf("after WhoIsMaxAge: %d whois requests in all, want 4", got)
	}
}

func TestGatherLostDirect(t *testing.T) {
	fix := loadFixture(t, "direct")
	fix.EndpointChanges = map[string]json.RawMessage{"100.64.0.2": json.RawMessage(`[
	{"When": "2026-11-30T11:58:00Z", "What": "handlePongConnLocked-bestAddr-update", "From": {}, "To": {"ap": "203.0.113.5:41641"}},
	{"When": "2026-11-30T12:00:02Z", "What": "deleteEndpointLocked-bestAddr-pong-timeout\u001b[2J", "From": {"ap": "203.0.113.5:41641"}}]`)}
	srv := probestest.New(t, fix)
	c := NewClient(srv.Socket)
	first, err := judgedAt(context.Background(), c, nil, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := first.Peers[0]; p.LastDirect != fixtureNow || p.LastDirectAddr != netip.MustParseAddrPort("203.0.113.5:41641") {
		t.Fatalf("LastDirect = %v %v", p.LastDirect, p.LastDirectAddr)
	}
	// The same peer, now relayed through "nyc".
	var st map[string]any
	if err := json.Unmarshal(fix.Status, &st); err != nil {
		t.Fatal(err)
	}
	for _, p := range st["Peer"].(map[string]any) {
		p.(map[string]any)["CurAddr"] = ""
	}
	b, _ := json.Marshal(st)
	srv.SetStatusBody(b)

	second, err := judgedAt(context.Background(), c, first, fixtureNow.Add(4*time.Second), GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := second.Peers[0].Verdict
	if v.Reason != probes.ReasonLostDirect || v.Summary != "was direct, fell back to relay" {
		t.Errorf("verdict = %q %q, want lost-direct; checks:\n%s", v.Reason, v.Summary, checksText(v.Checks))
	}
	if got := failedFields(v); !cmp.Equal(got, []string{"Status.CurAddr", "Path.LastDirect", "EndpointChanges"}) {
		t.Errorf("failed checks = %q", got)
	}
	if v.PeerSide {
		t.Error("lost-direct marked as resting on the peer's own facts: Peer.LastDirect is our observation")
	}
	wantChange := &probes.EndpointChange{When: time.Date(2026, 11, 30, 12, 0, 2, 0, time.UTC), What: "deleteEndpointLocked-bestAddr-pong-timeout", From: `{"ap":"203.0.113.5:41641"}`}
	if diff := cmp.Diff(wantChange, second.Peers[0].LastChange); diff != "" {
		t.Errorf("LastChange (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(string(v.Fix), "the daemon logged deleteEndpointLocked-bestAddr-pong-timeout at 12:00:02Z; ") {
		t.Errorf("fix = %q", v.Fix)
	}
	// Past the window it is no longer evidence.
	third, err := judgedAt(context.Background(), c, second, fixtureNow.Add(probes.LostDirectWindow+time.Second), GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := third.Peers[0].Verdict.Reason; r != probes.ReasonUnexplained {
		t.Errorf("after the window: reason %q, want unexplained", r)
	}
}

// TestGatherHidesWhatTheCLIHides: shared-in nodes and Mullvad location exit
// nodes are counted, not listed, asked WhoIs or diagnosed, unless All.
func TestGatherHidesWhatTheCLIHides(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "hidden-peers"))
	c := NewClient(srv.Socket)
	snap, err := judgedAt(context.Background(), c, nil, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Peers) != 1 || snap.Peers[0].Name != "nas" || snap.Hidden != 2 {
		t.Errorf("default: %d peers (first %q), hidden %d; want nas only, 2 hidden", len(snap.Peers), snap.Peers[0].Name, snap.Hidden)
	}
	if got := srv.Requests("whois"); got != 2 {
		t.Errorf("whois requests = %d, want 2 (ourselves and nas)", got)
	}
	all, err := judgedAt(context.Background(), c, nil, fixtureNow, GatherOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range all.Peers {
		names = append(names, string(p.Name))
	}
	if diff := cmp.Diff([]string{"friends-box", "nas", "se-sto-wg-001"}, names); diff != "" || all.Hidden != 0 {
		t.Errorf("All: hidden %d, peers (-want +got):\n%s", all.Hidden, diff)
	}
}

// TestGatherNoHandshake: a peer that stays Active without a WireGuard
// handshake for HandshakeGrace is no-handshake (no working path at all),
// judged across two Gathers; after one poll WireGuard is still trying.
func TestGatherNoHandshake(t *testing.T) {
	fix := loadFixture(t, "unexplained")
	var st map[string]any
	if err := json.Unmarshal(fix.Status, &st); err != nil {
		t.Fatal(err)
	}
	for _, p := range st["Peer"].(map[string]any) {
		p.(map[string]any)["LastHandshake"] = "0001-01-01T00:00:00Z"
	}
	srv := probestest.New(t, fix)
	b, _ := json.Marshal(st)
	srv.SetStatusBody(b)
	c := NewClient(srv.Socket)
	first, err := judgedAt(context.Background(), c, nil, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := first.Peers[0].Verdict.Reason; r != probes.ReasonUnexplained {
		t.Errorf("first poll: reason %q, want unexplained (WireGuard may still be trying)", r)
	}
	// WireGuard keeps sending handshake initiations (148 bytes every 5 s,
	// counted in tx: wireguard-go device/peer.go SendBuffers); with tx
	// standing still, Active could come from DISCO alone.
	for _, p := range st["Peer"].(map[string]any) {
		pm := p.(map[string]any)
		pm["TxBytes"] = pm["TxBytes"].(float64) + 3*148
	}
	b, _ = json.Marshal(st)
	srv.SetStatusBody(b)
	later, err := judgedAt(context.Background(), c, first, fixtureNow.Add(probes.HandshakeGrace+time.Second), GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := later.Peers[0]
	if p.Verdict.Reason != probes.ReasonNoHandshake || !p.NoHandshakeSince.Equal(fixtureNow) {
		t.Errorf("after %v: reason %q, no handshake since %v; want no-handshake since %v", probes.HandshakeGrace+time.Second, p.Verdict.Reason, p.NoHandshakeSince, fixtureNow)
	}
}

// TestGatherDatesDERPLatency: NetInfo's DERP latencies are of unknown age
// until tailpath sees them change; then they are dated by that snapshot.
func TestGatherDatesDERPLatency(t *testing.T) {
	fix := loadFixture(t, "far-home-derp")
	srv := probestest.New(t, fix)
	c := NewClient(srv.Socket)
	first, err := judgedAt(context.Background(), c, nil, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := judgedAt(context.Background(), c, first, fixtureNow.Add(time.Hour), GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Self.DERPLatencyAt.IsZero() || !second.Self.DERPLatencySeen.Equal(fixtureNow) {
		t.Errorf("unchanged latencies: at %v seen %v, want unknown age, seen at %v", second.Self.DERPLatencyAt, second.Self.DERPLatencySeen, fixtureNow)
	}
	if hasReason(second.Peers[0].Verdict.Also, probes.ReasonFarHomeDERP) {
		t.Errorf("far-home-derp judged on latencies unchanged for an hour")
	}
	// tailscaled sends NetInfo with new latencies (e.g. after a link change).
	var w map[string]any
	if err := json.Unmarshal(fix.WhoIs["100.64.0.1"], &w); err != nil {
		t.Fatal(err)
	}
	lat := w["Node"].(map[string]any)["Hostinfo"].(map[string]any)["NetInfo"].(map[string]any)["DERPLatency"].(map[string]any)
	lat["1-v4"] = 0.0119
	b, _ := json.Marshal(w)
	fix.WhoIs["100.64.0.1"] = b
	srv.SetFixture(fix)
	third, err := judgedAt(context.Background(), c, second, fixtureNow.Add(time.Hour+WhoIsMaxAge), GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := fixtureNow.Add(time.Hour + WhoIsMaxAge); !third.Self.DERPLatencyAt.Equal(want) {
		t.Errorf("changed latencies dated %v, want %v", third.Self.DERPLatencyAt, want)
	}
	if !hasReason(third.Peers[0].Verdict.Also, probes.ReasonFarHomeDERP) {
		t.Errorf("fresh latencies: far-home-derp not judged: %+v", third.Peers[0].Verdict)
	}
}

// TestSTUN6Disabled: netcheck can send an IPv6 STUN probe only to a node
// with STUN on, IPv6 not "none" and no IPv4 STUNTestIP (net/netcheck
// makeProbePlan, nodeAddrPort).
func TestSTUN6Disabled(t *testing.T) {
	m := func(nodes ...*tailcfg.DERPNode) *tailcfg.DERPMap {
		return &tailcfg.DERPMap{Regions: map[tscompat.RegionID]*tailcfg.DERPRegion{1: {RegionID: 1, Nodes: nodes}}}
	}
	for _, tc := range []struct {
		name string
		dm   *tailcfg.DERPMap
		want bool
	}{
		{"a node with IPv6 unset", m(&tailcfg.DERPNode{Name: "1a"}), false},
		{"every node IPv6 none", m(&tailcfg.DERPNode{Name: "1a", IPv6: "none"}, &tailcfg.DERPNode{Name: "1b", IPv6: "none"}), true},
		{"STUN off", m(&tailcfg.DERPNode{Name: "1a", STUNPort: -1}), true},
		{"an IPv4 STUN test IP", m(&tailcfg.DERPNode{Name: "1a", STUNTestIP: "127.0.0.1"}), true},
		{"one node of two takes IPv6", m(&tailcfg.DERPNode{Name: "1a", IPv6: "none"}, &tailcfg.DERPNode{Name: "1b", IPv6: "2001:db8::1"}), false},
		{"no nodes", &tailcfg.DERPMap{}, false},
	} {
		if got := stun6Disabled(tc.dm); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
