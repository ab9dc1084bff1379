package probes

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
	"github.com/tailpath/tailpath/probes/probestest"
)

// fixtureNow is the clock for fixture tests; fixture timestamps are around it.
var fixtureNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func loadFixtureFile(name string) (*probestest.Fixture, error) {
	return probestest.LoadFixture(filepath.Join("testdata", name+".json"))
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
func gatherFixture(t *testing.T, name string) (*Snapshot, *probestest.Server) {
	t.Helper()
	srv := probestest.New(t, loadFixture(t, name))
	snap, err := gatherAt(context.Background(), NewClient(srv.Socket), nil, fixtureNow)
	if err != nil {
		t.Fatalf("gather %s: %v", name, err)
	}
	if len(snap.Peers) != 1 {
		t.Fatalf("gather %s: %d peers, want 1", name, len(snap.Peers))
	}
	return snap, srv
}

// failedFields lists the Field of every failed check.
func failedFields(v Verdict) []string {
	var out []string
	for _, c := range v.Checks {
		if c.Failed {
			out = append(out, c.Field)
		}
	}
	return out
}

func TestDiagnoseFixtures(t *testing.T) {
	tests := []struct {
		fixture    string
		wantKind   PathKind
		wantText   string
		wantReason ReasonID
		wantAlso   []ReasonID
		wantFailed []string
		wantFix    bool
	}{
		{"direct", PathDirect, "active; direct 203.0.113.5:41641", ReasonDirect, nil, nil, false},
		{"peer-relay", PathPeerRelay, "active; peer-relay 198.51.100.77:7777:vni:12", ReasonPeerRelay,
			[]ReasonID{ReasonBothHardNAT}, []string{"NetInfo.MappingVariesByDestIP", "NetInfo.HavePortMap", "Peer.NetInfo.MappingVariesByDestIP"}, true},
		{"offline", PathOffline, "offline, last seen 3h ago", ReasonOffline, nil, []string{"WhoIs.Node.Online", "Status.LastHandshake"}, true},
		{"idle", PathIdle, "idle", ReasonIdle, nil, []string{"Status.Active"}, true},
		{"no-endpoints", PathDERP, `active; relay "nyc"`, ReasonNoEndpoints, nil,
			[]string{"Status.CurAddr", "WhoIs.Node.Endpoints"}, true},
		{"private-endpoints-only", PathDERP, `active; relay "fra"`, ReasonPrivateEndpointsOnly, []ReasonID{ReasonFarHomeDERP},
			[]string{"Status.CurAddr", "WhoIs.Node.Endpoints", "Self.Endpoints", "NetInfo.DERPLatency"}, true},
		{"local-udp-blocked", PathDERP, `active; relay "nyc"`, ReasonLocalUDPBlocked, nil,
			[]string{"Status.CurAddr", "NetInfo.WorkingUDP"}, true},
		{"local-hard-nat", PathDERP, `active; relay "nyc"`, ReasonLocalHardNAT, nil,
			[]string{"Status.CurAddr", "NetInfo.MappingVariesByDestIP", "NetInfo.HavePortMap"}, true},
		{"both-hard-nat", PathDERP, `active; relay "fra"`, ReasonBothHardNAT, []ReasonID{ReasonFarHomeDERP},
			[]string{"Status.CurAddr", "NetInfo.MappingVariesByDestIP", "NetInfo.HavePortMap", "Peer.NetInfo.MappingVariesByDestIP", "NetInfo.DERPLatency"}, true},
		{"far-home-derp", PathDERP, `active; relay "tok"`, ReasonUnexplained, []ReasonID{ReasonFarHomeDERP},
			[]string{"Status.CurAddr", "NetInfo.DERPLatency"}, true},
		{"unexplained", PathDERP, `active; relay "nyc"`, ReasonUnexplained, nil,
			[]string{"Status.CurAddr"}, true},
		{"testcontrol", PathDirect, "active; direct 127.0.0.1:40002; offline", ReasonDirect, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			snap, _ := gatherFixture(t, tt.fixture)
			p := snap.Peers[0]
			if p.Path.Kind != tt.wantKind || p.Path.Text != tt.wantText {
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

func TestGatherFields(t *testing.T) {
	snap, _ := gatherFixture(t, "both-hard-nat")
	wantSelf := Self{
		Name:         "laptop",
		DNSName:      "laptop.tail1234.ts.net",
		OS:           "linux",
		TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.1"), netip.MustParseAddr("fd7a:115c:a1e0::1")},
		HomeDERP:     1,
		HomeDERPCode: "nyc",
		NAT: &NATInfo{
			WorkingUDP: boolp(true), WorkingIPv6: boolp(false), MappingVariesByDestIP: boolp(true),
			UPnP: boolp(false), PMP: boolp(false), PCP: boolp(false), LinkType: "wired",
			DERPLatency: map[int]time.Duration{1: 12100 * time.Microsecond, 2: 85300 * time.Microsecond, 3: 160400 * time.Microsecond, 4: 70200 * time.Microsecond},
		},
		Endpoints: []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("192.168.1.20:41641")},
	}
	if diff := cmp.Diff(wantSelf, snap.Self, cmpOpts...); diff != "" {
		t.Errorf("self (-want +got):\n%s", diff)
	}
	p := snap.Peers[0]
	p.Verdict = Verdict{}
	p.NAT = nil
	wantPeer := Peer{
		ID: "n2CNTRL", Name: "office-pc", DNSName: "office-pc.tail1234.ts.net", OS: "windows",
		TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.2")},
		Online:       boolp(true), Active: true,
		Path:     Path{Kind: PathDERP, DERPCode: "fra", Text: `active; relay "fra"`},
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
	prev, err := gatherAt(context.Background(), c, nil, fixtureNow.Add(-2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	prev.Peers[0].TxBytes -= 2000
	prev.Peers[0].RxBytes -= 4000
	prev.Peers[0].Latency = 23 * time.Millisecond
	snap, err := gatherAt(context.Background(), c, prev, fixtureNow)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Peers[0]
	if p.TxRate != 1000 || p.RxRate != 2000 || p.Latency != 23*time.Millisecond {
		t.Errorf("tx %v rx %v latency %v; want 1000, 2000, 23ms", p.TxRate, p.RxRate, p.Latency)
	}
	// Counters going backwards (daemon restarted) give 0, not a negative rate.
	prev.Peers[0].TxBytes += 1 << 40
	snap, _ = gatherAt(context.Background(), c, prev, fixtureNow)
	if snap.Peers[0].TxRate != 0 {
		t.Errorf("tx rate after counter reset = %v, want 0", snap.Peers[0].TxRate)
	}
}

func TestGatherSanitises(t *testing.T) {
	snap, _ := gatherFixture(t, "escape-name")
	p := snap.Peers[0]
	for _, s := range []string{p.Name, p.DNSName, p.OS} {
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
	snap, err := gatherAt(context.Background(), NewClient(srv.Socket), nil, fixtureNow)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Peers[0]
	if p.EndpointsKnown || snap.Self.NAT != nil {
		t.Errorf("endpoints known %v, self NAT %+v; want unknown", p.EndpointsKnown, snap.Self.NAT)
	}
	if p.Verdict.Reason != ReasonUnexplained {
		t.Errorf("reason %q, want unexplained when evidence is missing", p.Verdict.Reason)
	}
	if got := srv.Requests("whois"); got != 1 {
		t.Errorf("whois requests = %d, want 1 (stop after the first denial)", got)
	}
	if len(snap.Warnings) == 0 || !strings.Contains(snap.Warnings[0], "permission denied") {
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

func TestGatherReusesWhoIs(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	c := NewClient(srv.Socket)
	first, err := gatherAt(context.Background(), c, nil, fixtureNow)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("whois"); got != 2 {
		t.Fatalf("first gather: %d whois requests, want 2 (self and the peer)", got)
	}
	second, err := gatherAt(context.Background(), c, first, fixtureNow.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("whois"); got != 2 {
		t.Errorf("second gather 2 s later: %d whois requests in all, want 2 (cached)", got)
	}
	if !second.Peers[0].EndpointsKnown || second.Self.NAT == nil {
		t.Errorf("cached answers not used: %+v %+v", second.Peers[0], second.Self)
	}
	if _, err := gatherAt(context.Background(), c, second, fixtureNow.Add(WhoIsMaxAge+time.Second)); err != nil {
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
	first, err := gatherAt(context.Background(), c, nil, fixtureNow)
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

	second, err := gatherAt(context.Background(), c, first, fixtureNow.Add(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	v := second.Peers[0].Verdict
	if v.Reason != ReasonLostDirect || v.Summary != "was direct, fell back to relay" {
		t.Errorf("verdict = %q %q, want lost-direct; checks:\n%s", v.Reason, v.Summary, checksText(v.Checks))
	}
	if got := failedFields(v); !cmp.Equal(got, []string{"Status.CurAddr", "Peer.LastDirect", "EndpointChanges"}) {
		t.Errorf("failed checks = %q", got)
	}
	wantChange := &EndpointChange{When: time.Date(2026, 11, 30, 12, 0, 2, 0, time.UTC), What: "deleteEndpointLocked-bestAddr-pong-timeout", From: `{"ap":"203.0.113.5:41641"}`}
	if diff := cmp.Diff(wantChange, second.Peers[0].LastChange); diff != "" {
		t.Errorf("LastChange (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(v.Fix, "the daemon logged deleteEndpointLocked-bestAddr-pong-timeout at 12:00:02Z; ") {
		t.Errorf("fix = %q", v.Fix)
	}
	// Past the window it is no longer evidence.
	third, err := gatherAt(context.Background(), c, second, fixtureNow.Add(LostDirectWindow+time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r := third.Peers[0].Verdict.Reason; r != ReasonUnexplained {
		t.Errorf("after the window: reason %q, want unexplained", r)
	}
}
