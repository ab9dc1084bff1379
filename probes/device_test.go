package probes

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// board is evidence from a CoreS3 at 100.64.0.9 "cores3" with a healthy
// probe table, one advertised endpoint and its nearest region as home.
func board() DeviceEvidence {
	return DeviceEvidence{
		TailnetIP: netip.MustParseAddr("100.64.0.9"), Hostname: "cores3",
		ProbesUsed: 3, ProbesCap: 64, Endpoints: 1,
		HomeDERP: 1, NearestDERP: 1, HomeLatency: 14 * time.Millisecond, NearestLatency: 14 * time.Millisecond,
		HomeDERPBy: "latency",
	}
}

func boardPeer(eps ...string) Peer {
	p := relayedPeer(eps...)
	p.Name = "cores3"
	p.TailscaleIPs = []netip.Addr{netip.MustParseAddr("100.64.0.9")}
	return p
}

// devNow is DiagnoseDevice's clock in these tests.
var devNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestDiagnoseDevice(t *testing.T) {
	type want struct {
		Reason  ReasonID
		Also    []ReasonID
		Summary string
		// Failed lists the Device.* checks that failed, by field.
		Failed []string
	}
	tests := []struct {
		name  string
		self  func(*Self)
		peer  func(*Peer)
		board func(*DeviceEvidence)
		want  want
	}{
		{
			name:  "0 advertised endpoints explains no-endpoints",
			peer:  func(p *Peer) { *p = boardPeer() },
			board: func(d *DeviceEvidence) { d.Endpoints = 0 },
			want: want{Reason: ReasonDeviceNoPublicEndpoint, Also: []ReasonID{ReasonNoEndpoints},
				Summary: "board advertised no endpoint", Failed: []string{"Device.Endpoints"}},
		},
		{
			name: "0 endpoints with WhoIs unknown: unexplained becomes device-no-public-endpoint",
			peer: func(p *Peer) {
				*p = boardPeer()
				p.EndpointsKnown = false
			},
			board: func(d *DeviceEvidence) { d.Endpoints = 0 },
			want: want{Reason: ReasonDeviceNoPublicEndpoint,
				Summary: "board advertised no endpoint", Failed: []string{"Device.Endpoints"}},
		},
		{
			name:  "0 endpoints but control lists a public one: stale telemetry, nothing changes",
			peer:  func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) { d.Endpoints = 0 },
			want:  want{Reason: ReasonUnexplained, Summary: "relayed; no checked cause holds"},
		},
		{
			// The board says it sent one; control lists none: it never
			// got there (the CoreS3 case's stalled control stream).
			name: "board advertised endpoints that control does not list, HTTP/2 window open: not the stall's fix",
			peer: func(p *Peer) { *p = boardPeer() },
			board: func(d *DeviceEvidence) {
				d.Endpoints, d.H2Known, d.H2Received, d.H2WindowReturned, d.H2WindowOpen = 1, true, 70000, 65535, 60000
			},
			want: want{Reason: ReasonDeviceNoPublicEndpoint, Also: []ReasonID{ReasonNoEndpoints},
				Summary: "board's endpoints never reached control", Failed: []string{"Device.Endpoints"}},
		},
		{
			name:  "board advertised endpoints that control does not list: device-no-public-endpoint",
			peer:  func(p *Peer) { *p = boardPeer() },
			board: func(d *DeviceEvidence) { d.Endpoints = 2 },
			want: want{Reason: ReasonDeviceNoPublicEndpoint, Also: []ReasonID{ReasonNoEndpoints},
				Summary: "board's endpoints never reached control", Failed: []string{"Device.Endpoints"}},
		},
		{
			name:  "board advertised endpoints, control lists a private one: not claimed",
			peer:  func(p *Peer) { *p = boardPeer("192.168.1.50:41641") },
			board: func(d *DeviceEvidence) { d.Endpoints = 2 },
			want:  want{Reason: ReasonPrivateEndpointsOnly, Summary: "peer has only private endpoints"},
		},
		{
			name: "board advertised endpoints, control's list unknown: not claimed",
			peer: func(p *Peer) {
				*p = boardPeer()
				p.EndpointsKnown = false
			},
			board: func(d *DeviceEvidence) { d.Endpoints = 2 },
			want:  want{Reason: ReasonUnexplained, Summary: "relayed; no checked cause holds"},
		},
		{
			name:  "endpoints unknown: the verdict stands",
			peer:  func(p *Peer) { *p = boardPeer() },
			board: func(d *DeviceEvidence) { d.Endpoints = -1 },
			want:  want{Reason: ReasonNoEndpoints, Summary: "peer advertises no UDP endpoints"},
		},
		{
			name:  "local UDP blocked stays ahead of the board's reason",
			self:  func(s *Self) { s.NAT.WorkingUDP = boolp(false) },
			peer:  func(p *Peer) { *p = boardPeer() },
			board: func(d *DeviceEvidence) { d.Endpoints = 0 },
			want: want{Reason: ReasonLocalUDPBlocked, Also: []ReasonID{ReasonDeviceNoPublicEndpoint, ReasonNoEndpoints},
				Summary: "UDP blocked here", Failed: []string{"Device.Endpoints"}},
		},
		{
			name:  "full probe table with a public endpoint: device-probe-table-full",
			peer:  func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) { d.ProbesUsed, d.ProbesDropped = 64, 12 },
			want: want{Reason: ReasonDeviceProbeTableFull,
				Summary: "board's DISCO probe table is full", Failed: []string{"Device.ProbeTable"}},
		},
		{
			name: "full probe table ranks ahead of hard NAT",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) {
				d.ProbesUsed = 64
			},
			want: want{Reason: ReasonDeviceProbeTableFull, Also: []ReasonID{ReasonLocalHardNAT},
				Summary: "board's DISCO probe table is full", Failed: []string{"Device.ProbeTable"}},
		},
		{
			name: "no public endpoint and full table: both, endpoint first",
			peer: func(p *Peer) { *p = boardPeer() },
			board: func(d *DeviceEvidence) {
				d.Endpoints, d.ProbesUsed = 0, 64
			},
			want: want{Reason: ReasonDeviceNoPublicEndpoint,
				Also:    []ReasonID{ReasonNoEndpoints, ReasonDeviceProbeTableFull},
				Summary: "board advertised no endpoint", Failed: []string{"Device.Endpoints", "Device.ProbeTable"}},
		},
		{
			name:  "drops earlier but not full now: no reason",
			peer:  func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) { d.ProbesUsed, d.ProbesDropped = 40, 7 },
			want:  want{Reason: ReasonUnexplained, Summary: "relayed; no checked cause holds"},
		},
		{
			name: "far home DERP on the board goes to Also, never primary",
			peer: func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) {
				d.HomeDERP, d.HomeLatency, d.HomeDERPBy = 3, 160*time.Millisecond, "lowest-id"
			},
			want: want{Reason: ReasonUnexplained, Also: []ReasonID{ReasonFarHomeDERP},
				Summary: "relayed; no checked cause holds", Failed: []string{"Device.HomeDERP"}},
		},
		{
			name: "peer relay: the board's reason explains why not direct",
			peer: func(p *Peer) {
				*p = boardPeer()
				p.Path = Path{Kind: PathPeerRelay, PeerRelay: "198.51.100.7:7777:vni:1"}
			},
			board: func(d *DeviceEvidence) { d.Endpoints = 0 },
			want: want{Reason: ReasonPeerRelay, Also: []ReasonID{ReasonDeviceNoPublicEndpoint, ReasonNoEndpoints},
				Summary: "via peer relay; not direct: board advertised no endpoint", Failed: []string{"Device.Endpoints"}},
		},
		{
			name: "board's DERP relay down while control is up: device-derp-down first",
			peer: func(p *Peer) { *p = boardPeer() },
			board: func(d *DeviceEvidence) {
				d.RelayKnown, d.RelayUp, d.RelayWasUp, d.RelayAttempts = true, false, true, 3
			},
			want: want{Reason: ReasonDeviceDERPDown, Also: []ReasonID{ReasonDeviceNoPublicEndpoint, ReasonNoEndpoints},
				Summary: "board's DERP relay is down", Failed: []string{"Device.DERPRelay", "Device.Endpoints"}},
		},
		{
			name: "relay down ranks ahead of local UDP blocked and the board's endpoint",
			self: func(s *Self) { s.NAT.WorkingUDP = boolp(false) },
			peer: func(p *Peer) { *p = boardPeer() },
			board: func(d *DeviceEvidence) {
				d.Endpoints, d.RelayKnown = 0, true
			},
			want: want{Reason: ReasonDeviceDERPDown,
				Also:    []ReasonID{ReasonLocalUDPBlocked, ReasonDeviceNoPublicEndpoint, ReasonNoEndpoints},
				Summary: "board's DERP relay is down", Failed: []string{"Device.DERPRelay", "Device.Endpoints"}},
		},
		{
			name:  "relay up: listed, nothing changes",
			peer:  func(p *Peer) { *p = boardPeer() },
			board: func(d *DeviceEvidence) { d.RelayKnown, d.RelayUp, d.Endpoints = true, true, -1 },
			want:  want{Reason: ReasonNoEndpoints, Summary: "peer advertises no UDP endpoints"},
		},
		// magicsock drops an undecryptable DISCO packet silently, as normal
		// after a restart (magicsock.go handleDiscoMessage): only repeated,
		// recent failures from this end's address mean a stale key.
		{
			name: "repeated recent DISCO decrypt failures from our address: device-disco-key-stale",
			peer: func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) {
				d.DiscoDecryptFails = 4
				for i := range 3 {
					d.DiscoDecryptRecent[i] = DecryptFailure{At: devNow.Add(-time.Duration(i*10) * time.Second), From: netip.MustParseAddrPort("198.51.100.10:41641")}
				}
			},
			want: want{Reason: ReasonDeviceDiscoKeyStale,
				Summary: "board can't decrypt DISCO (stale disco key)", Failed: []string{"Device.DiscoDecrypt"}},
		},
		{
			name:  "one DISCO decrypt failure since boot, none recent: normal after a restart, not a verdict",
			peer:  func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) { d.DiscoDecryptFails = 1 },
			want:  want{Reason: ReasonUnexplained, Summary: "relayed; no checked cause holds"},
		},
		{
			name: "recent failures from another peer's address: not this path's stale key",
			peer: func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) {
				d.DiscoDecryptFails = 5
				for i := range 5 {
					d.DiscoDecryptRecent[i] = DecryptFailure{At: devNow.Add(-time.Second), From: netip.MustParseAddrPort("192.0.2.44:41641")}
				}
			},
			want: want{Reason: ReasonUnexplained, Summary: "relayed; no checked cause holds"},
		},
		{
			name: "recent failures whose lines name no source: unknown, not a verdict",
			peer: func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) {
				d.DiscoDecryptFails = 4
				for i := range 4 {
					d.DiscoDecryptRecent[i] = DecryptFailure{At: devNow.Add(-time.Second)}
				}
			},
			want: want{Reason: ReasonUnexplained, Summary: "relayed; no checked cause holds"},
		},
		{
			name: "DISCO decrypt failures rank after the full probe table",
			peer: func(p *Peer) { *p = boardPeer("203.0.113.9:41641") },
			board: func(d *DeviceEvidence) {
				d.DiscoDecryptFails, d.ProbesUsed = 3, 64
				for i := range 3 {
					d.DiscoDecryptRecent[i] = DecryptFailure{At: devNow.Add(-time.Minute), From: netip.MustParseAddrPort("198.51.100.10:41641")}
				}
			},
			want: want{Reason: ReasonDeviceProbeTableFull, Also: []ReasonID{ReasonDeviceDiscoKeyStale},
				Summary: "board's DISCO probe table is full", Failed: []string{"Device.ProbeTable", "Device.DiscoDecrypt"}},
		},
		{
			// The board's evidence keeps its own state whatever the path:
			// failing facts fail, and are no reason for a direct path.
			name: "direct path with the relay down: failed, still direct",
			peer: func(p *Peer) {
				*p = boardPeer("203.0.113.9:41641")
				p.Path = Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("203.0.113.9:41641")}
			},
			board: func(d *DeviceEvidence) { d.RelayKnown = true },
			want:  want{Reason: ReasonDirect, Summary: "direct", Failed: []string{"Device.DERPRelay"}},
		},
		{
			name: "direct path: failing board checks fail, the verdict stays direct",
			peer: func(p *Peer) {
				*p = boardPeer("203.0.113.9:41641")
				p.Path = Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("203.0.113.9:41641")}
			},
			board: func(d *DeviceEvidence) {
				d.Endpoints, d.ProbesUsed = 0, 64
				d.H2Known, d.H2Received = true, 65535 // the window shut, no credit returned
			},
			want: want{Reason: ReasonDirect, Summary: "direct", Failed: []string{"Device.H2Window", "Device.ProbeTable"}},
		},
		{
			name: "direct path: a far home region fails, no far-home-derp",
			peer: func(p *Peer) {
				*p = boardPeer("203.0.113.9:41641")
				p.Path = Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("203.0.113.9:41641")}
			},
			board: func(d *DeviceEvidence) {
				d.HomeDERP, d.HomeLatency, d.NearestDERP, d.NearestLatency = 1, 182*time.Millisecond, 7, 24*time.Millisecond
			},
			want: want{Reason: ReasonDirect, Summary: "direct", Failed: []string{"Device.HomeDERP"}},
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
			d := board()
			tt.board(&d)
			if !d.Matches(&p) {
				t.Fatalf("board %v does not match peer %v", d, p.TailscaleIPs)
			}
			v := Diagnose(self, p, testRegions, time.Time{})
			before := append([]Check(nil), v.Checks...)
			got := DiagnoseDevice(v, self, p, d, testRegions, devNow)
			var failed []string
			for _, c := range got.Checks {
				if c.Failed && strings.HasPrefix(string(c.Field), "Device.") {
					failed = append(failed, string(c.Field))
				}
			}
			gotW := want{Reason: got.Reason, Also: got.Also, Summary: string(got.Summary), Failed: failed}
			if diff := cmp.Diff(tt.want, gotW); diff != "" {
				t.Errorf("verdict (-want +got):\n%s\nchecks:\n%s", diff, checksText(got.Checks))
			}
			if diff := cmp.Diff(before, v.Checks); diff != "" {
				t.Errorf("DiagnoseDevice changed its input's checks (-want +got):\n%s", diff)
			}
			if n := len(got.Checks) - len(v.Checks); n < 3 {
				t.Errorf("added %d checks, want at least 3 (node, endpoints, probe table)", n)
			}
			if got.Reason != v.Reason && got.Fix == v.Fix {
				t.Errorf("primary reason changed to %s but the fix did not: %q", got.Reason, got.Fix)
			}
		})
	}
}

func TestDeviceEvidenceChecksText(t *testing.T) {
	d := board()
	d.Endpoints, d.ProbesUsed, d.ProbesDropped = 0, 64, 12
	d.HomeDERP, d.HomeLatency, d.HomeDERPBy = 3, 160*time.Millisecond, "lowest-id"
	d.H2Known, d.H2Received = true, 65535
	p := boardPeer()
	got := DiagnoseDevice(Diagnose(easySelf(), p, testRegions, time.Time{}), easySelf(), p, d, testRegions, time.Time{})
	var dev []Check
	for _, c := range got.Checks {
		if strings.HasPrefix(string(c.Field), "Device.") {
			dev = append(dev, c)
		}
	}
	want := []Check{
		{Field: "Device.Node", Value: `100.64.0.9 "cores3"`, State: CheckInfo, Note: "the board's telemetry names this peer", Source: "device"},
		{Field: "Device.Endpoints", Value: "0", Failed: true, State: CheckFail, Note: "the board has advertised no UDP endpoint: its public (STUN) endpoint never reached control", Source: "device"},
		{Field: "Device.H2Window", Value: "65535 B received, 0 B credit returned, 0 B window open", Failed: true, State: CheckFail, Note: "the control stream's HTTP/2 receive window is shut and no WINDOW_UPDATE credit was ever returned: control can send the board nothing more", Source: "device"},
		{Field: "Device.ProbeTable", Value: "64/64 used, 12 dropped", Failed: true, State: CheckFail, Note: "the DISCO probe table is full: the board drops new pings, so no direct path can be validated", Source: "device"},
		{Field: "Device.HomeDERP", Value: `home "tok" (3)=160ms by lowest-id, nearest "nyc" (1)=14ms`, Failed: true, State: CheckFail, Note: "the board's home region is far from it while a nearer one exists", Source: "device"},
	}
	if diff := cmp.Diff(want, dev); diff != "" {
		t.Errorf("device checks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ReasonID{ReasonNoEndpoints, ReasonDeviceProbeTableFull, ReasonFarHomeDERP}, got.Also); diff != "" {
		t.Errorf("also (-want +got):\n%s", diff)
	}
}

func TestH2Stalled(t *testing.T) {
	tests := []struct {
		name                 string
		known                bool
		rx, returned, window int64
		want                 bool
	}{
		{"not reported", false, 65535, 0, 0, false},
		{"nothing received yet", true, 0, 0, 0, false},
		{"window still open", true, 53248, 0, 12287, false},
		{"shut, never credited", true, 65535, 0, 0, true},
		{"shut now, credited before", true, 200000, 131072, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DeviceEvidence{H2Known: tt.known, H2Received: tt.rx, H2WindowReturned: tt.returned, H2WindowOpen: tt.window}
			if got := d.H2Stalled(); got != tt.want {
				t.Errorf("H2Stalled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDeviceEvidenceMatches(t *testing.T) {
	peer := Peer{Name: "cores3", DNSName: "cores3-1.tail1234.ts.net",
		TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.9"), netip.MustParseAddr("fd7a:115c:a1e0::9")}}
	tests := []struct {
		name string
		d    DeviceEvidence
		peer Peer
		want bool
	}{
		{"same IPv4", DeviceEvidence{TailnetIP: netip.MustParseAddr("100.64.0.9")}, peer, true},
		{"IP decides over a shared host name", DeviceEvidence{TailnetIP: netip.MustParseAddr("100.64.0.10"), Hostname: "cores3"}, peer, false},
		{"host name when the IP is unknown", DeviceEvidence{Hostname: "CoreS3"}, peer, true},
		{"host name against the DNS label", DeviceEvidence{Hostname: "cores3-1"}, peer, true},
		{"host name when the peer has no IPs", DeviceEvidence{TailnetIP: netip.MustParseAddr("100.64.0.10"), Hostname: "cores3"}, Peer{Name: "cores3"}, true},
		{"nothing known", NewDeviceEvidence(), peer, false},
		{"other host", DeviceEvidence{Hostname: "nas"}, peer, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.Matches(&tt.peer); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

// A verdict that already names a device reason (from an older run of
// DiagnoseDevice, or a hand-made fixture) does not get it twice.
func TestDiagnoseDeviceNoDuplicateReason(t *testing.T) {
	p := boardPeer()
	v := Diagnose(easySelf(), p, testRegions, time.Time{})
	v.Also = []ReasonID{ReasonDeviceNoPublicEndpoint}
	d := board()
	d.Endpoints = 0
	got := DiagnoseDevice(v, easySelf(), p, d, nil, time.Time{})
	if got.Reason != ReasonDeviceNoPublicEndpoint {
		t.Errorf("reason = %q, want %q", got.Reason, ReasonDeviceNoPublicEndpoint)
	}
	if diff := cmp.Diff([]ReasonID{ReasonNoEndpoints}, got.Also); diff != "" {
		t.Errorf("also (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ReasonID{ReasonDeviceNoPublicEndpoint}, v.Also); diff != "" {
		t.Errorf("input's Also changed (-want +got):\n%s", diff)
	}
}

// TestDeviceUnreachedFix: endpoints the board sent but control does not
// list are blamed on the HTTP/2 stall only when the window is not known
// open.
func TestDeviceUnreachedFix(t *testing.T) {
	p := boardPeer()
	v := Diagnose(easySelf(), p, testRegions, time.Time{})
	d := board()
	if got := DiagnoseDevice(v, easySelf(), p, d, nil, time.Time{}).Fix; !strings.Contains(string(got), "WINDOW_UPDATE") {
		t.Errorf("window unknown: fix %q, want the HTTP/2 flow-control fix", got)
	}
	d.H2Known, d.H2Received, d.H2WindowReturned, d.H2WindowOpen = true, 70000, 65535, 60000
	if got := DiagnoseDevice(v, easySelf(), p, d, nil, time.Time{}).Fix; strings.Contains(string(got), "WINDOW_UPDATE") || !strings.Contains(string(got), "reaches control") {
		t.Errorf("window open: fix %q, want the endpoint update checked instead", got)
	}
}

// TestDeviceH2NoCreditYet: a control stream that received more than half
// its window and returned no credit is not "open" (ok): the window only
// shrinks. It reads info, beside a fix that names the missing
// WINDOW_UPDATE, and a stream that returned credit stays ok.
func TestDeviceH2NoCreditYet(t *testing.T) {
	check := func(received, returned, open int64) Check {
		d := board()
		d.H2Known, d.H2Received, d.H2WindowReturned, d.H2WindowOpen = true, received, returned, open
		p := boardPeer()
		v := DiagnoseDevice(Diagnose(easySelf(), p, testRegions, time.Time{}), easySelf(), p, d, testRegions, time.Time{})
		for _, c := range v.Checks {
			if c.Field == "Device.H2Window" {
				return c
			}
		}
		t.Fatalf("no Device.H2Window check in %+v", v.Checks)
		return Check{}
	}
	if c := check(61440, 0, 4095); c.State != CheckInfo || c.Failed || !strings.Contains(string(c.Note), "no WINDOW_UPDATE credit was returned") {
		t.Errorf("61440 B received, no credit: %+v, want info naming the missing credit", c)
	}
	if c := check(61440, 32768, 36863); c.State != CheckOK {
		t.Errorf("credit returned: %+v, want ok", c)
	}
	if c := check(4096, 0, 61439); c.State != CheckOK {
		t.Errorf("little received yet: %+v, want ok", c)
	}
}

// NewDeviceEvidence returns evidence that knows nothing yet (Endpoints -1).
func NewDeviceEvidence() DeviceEvidence { return DeviceEvidence{Endpoints: -1} }
