package probes

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		ps     ipnstate.PeerStatus
		online *bool
		want   Path
	}{
		{
			name:   "direct",
			ps:     ipnstate.PeerStatus{Active: true, Online: true, CurAddr: "203.0.113.5:41641", Relay: "tok", TxBytes: 10, RxBytes: 20},
			online: boolp(true),
			want:   Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("203.0.113.5:41641"), Text: "active; direct 203.0.113.5:41641"},
		},
		{
			name:   "relay: active, no CurAddr, no PeerRelay",
			ps:     ipnstate.PeerStatus{Active: true, Online: true, Relay: "tok"},
			online: boolp(true),
			want:   Path{Kind: PathDERP, DERPCode: "tok", Text: `active; relay "tok"`},
		},
		{
			name:   "peer relay",
			ps:     ipnstate.PeerStatus{Active: true, Online: true, Relay: "tok", PeerRelay: "198.51.100.7:7777:vni:3"},
			online: boolp(true),
			want:   Path{Kind: PathPeerRelay, PeerRelay: "198.51.100.7:7777:vni:3", Text: "active; peer-relay 198.51.100.7:7777:vni:3"},
		},
		{
			name:   "Relay alone on an idle peer is not relayed",
			ps:     ipnstate.PeerStatus{Online: true, Relay: "tok", TxBytes: 5},
			online: boolp(true),
			want:   Path{Kind: PathIdle, Text: "idle"},
		},
		{
			name:   "idle, no traffic, online prints a dash",
			ps:     ipnstate.PeerStatus{Online: true, Relay: "tok"},
			online: boolp(true),
			want:   Path{Kind: PathIdle, Text: "-"},
		},
		{
			name:   "offline, last seen 3h ago",
			ps:     ipnstate.PeerStatus{Relay: "tok", LastSeen: now.Add(-3*time.Hour - time.Minute)},
			online: boolp(false),
			want:   Path{Kind: PathOffline, Text: "offline, last seen 3h ago"},
		},
		{
			name:   "offline per control but recent handshake is idle, not offline",
			ps:     ipnstate.PeerStatus{LastHandshake: now.Add(-30 * time.Second)},
			online: boolp(false),
			want:   Path{Kind: PathIdle, Text: "offline"},
		},
		{
			name:   "pinged offline peer: Active but control says offline and no handshake stays offline",
			ps:     ipnstate.PeerStatus{Active: true, Relay: "lab1", LastSeen: now.Add(-90 * time.Second)},
			online: boolp(false),
			want:   Path{Kind: PathOffline, Text: `active; relay "lab1"; offline, last seen 1m ago`},
		},
		{
			name:   "Active, control says offline, but a recent handshake: relayed",
			ps:     ipnstate.PeerStatus{Active: true, Relay: "lab1", LastHandshake: now.Add(-30 * time.Second)},
			online: boolp(false),
			want:   Path{Kind: PathDERP, DERPCode: "lab1", Text: `active; relay "lab1"; offline`},
		},
		{
			name:   "Active, Online unknown, no handshake: relayed (testcontrol never sets Online)",
			ps:     ipnstate.PeerStatus{Active: true, Relay: "lab1"},
			online: nil,
			want:   Path{Kind: PathDERP, DERPCode: "lab1", Text: `active; relay "lab1"; offline`},
		},
		{
			name:   "testcontrol: Online unknown, active direct, CLI prints offline suffix",
			ps:     ipnstate.PeerStatus{Active: true, CurAddr: "127.0.0.1:40001"},
			online: nil,
			want:   Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("127.0.0.1:40001"), Text: "active; direct 127.0.0.1:40001; offline"},
		},
		{
			name:   "testcontrol: Online unknown and not active is idle",
			ps:     ipnstate.PeerStatus{},
			online: nil,
			want:   Path{Kind: PathIdle, Text: "offline"},
		},
		{
			name:   "exit node option, idle",
			ps:     ipnstate.PeerStatus{Online: true, ExitNodeOption: true},
			online: boolp(true),
			want:   Path{Kind: PathIdle, Text: "idle; offers exit node"},
		},
		{
			name:   "active exit node relayed",
			ps:     ipnstate.PeerStatus{Online: true, Active: true, ExitNode: true, Relay: "fra"},
			online: boolp(true),
			want:   Path{Kind: PathDERP, DERPCode: "fra", Text: `active; exit node; relay "fra"`},
		},
		{
			name:   "escape sequences in relay code are stripped",
			ps:     ipnstate.PeerStatus{Online: true, Active: true, Relay: "t\x1b[31mok\x07"},
			online: boolp(true),
			want:   Path{Kind: PathDERP, DERPCode: "tok", Text: `active; relay "tok"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(&tt.ps, tt.online, now)
			if diff := cmp.Diff(tt.want, got, cmpOpts...); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOnlineState(t *testing.T) {
	seen := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		ps      ipnstate.PeerStatus
		node    *tailcfg.Node
		want    *bool
		wantSrc string
	}{
		{"node says online", ipnstate.PeerStatus{Online: true}, &tailcfg.Node{Online: boolp(true)}, boolp(true), "Status.Online"},
		{"node says offline", ipnstate.PeerStatus{}, &tailcfg.Node{Online: boolp(false)}, boolp(false), "WhoIs.Node.Online"},
		{"cached node says online, status now says not", ipnstate.PeerStatus{}, &tailcfg.Node{Online: boolp(true)}, boolp(false), "WhoIs.Node.Online"},
		{"cached node says offline, status now online", ipnstate.PeerStatus{Online: true}, &tailcfg.Node{Online: boolp(false)}, boolp(true), "Status.Online"},
		{"node silent (testcontrol)", ipnstate.PeerStatus{}, &tailcfg.Node{}, nil, ""},
		{"no node, status online", ipnstate.PeerStatus{Online: true}, nil, boolp(true), "Status.Online"},
		// The offline fact then comes from LastSeen, and the check says so.
		{"no node, last seen set", ipnstate.PeerStatus{LastSeen: seen}, nil, boolp(false), "Status.LastSeen"},
		{"no node, nothing known", ipnstate.PeerStatus{}, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, src := OnlineState(&tt.ps, tt.node)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("OnlineState (-want +got):\n%s", diff)
			}
			if src != tt.wantSrc {
				t.Errorf("OnlineState source = %q, want %q", src, tt.wantSrc)
			}
		})
	}
}

func TestViaText(t *testing.T) {
	tests := []struct {
		pr       ipnstate.PingResult
		want     string
		wantKind PathKind
	}{
		{ipnstate.PingResult{Endpoint: "203.0.113.5:41641"}, "203.0.113.5:41641", PathDirect},
		{ipnstate.PingResult{DERPRegionID: 2, DERPRegionCode: "tok"}, "DERP(tok)", PathDERP},
		{ipnstate.PingResult{PeerRelay: "198.51.100.7:7777:vni:3"}, "peer-relay(198.51.100.7:7777:vni:3)", PathPeerRelay},
		{ipnstate.PingResult{}, "TSMP", ""},
	}
	for _, tt := range tests {
		got, kind := ViaText(&tt.pr, tailcfg.PingTSMP)
		if string(got) != tt.want || kind != tt.wantKind {
			t.Errorf("ViaText(%+v) = %q, %q; want %q, %q", tt.pr, got, kind, tt.want, tt.wantKind)
		}
	}
}

// TestPathKindRank: relayed paths sort first, unknown kinds last.
func TestPathKindRank(t *testing.T) {
	kinds := []PathKind{"", PathOffline, PathIdle, PathDirect, PathPeerRelay, PathDERP}
	slices.SortFunc(kinds, func(a, b PathKind) int { return a.Rank() - b.Rank() })
	want := []PathKind{PathDERP, PathPeerRelay, PathDirect, PathIdle, PathOffline, ""}
	if !slices.Equal(kinds, want) {
		t.Errorf("sorted by Rank: %q, want %q", kinds, want)
	}
}
