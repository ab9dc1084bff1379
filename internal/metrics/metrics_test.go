package metrics

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

var t0 = time.Date(2026, 11, 30, 21, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// fixedSnapshot is a node with a direct peer, a DERP-relayed one that
// advertises no endpoints (the CoreS3 case), an idle and an offline peer,
// two DERP regions and a hard NAT.
func fixedSnapshot(at time.Time) *probes.Snapshot {
	return &probes.Snapshot{
		Time:         at,
		BackendState: "Running",
		Self: probes.Self{
			Name: "nas", HomeDERP: 1, HomeDERPCode: "nyc",
			NAT: &probes.NATInfo{
				WorkingUDP: ptr(true), MappingVariesByDestIP: ptr(true), WorkingIPv6: ptr(false),
				DERPLatency: map[int]time.Duration{1: 12 * time.Millisecond, 2: 85 * time.Millisecond},
			},
		},
		Regions: map[int]probes.Region{1: {ID: 1, Code: "nyc", Name: "New York"}, 2: {ID: 2, Code: "fra", Name: "Frankfurt"}},
		Peers: []probes.Peer{
			{ID: "nBOARD", Name: "cores3", TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.3")}, Active: true,
				Path:    probes.Path{Kind: probes.PathDERP, DERPCode: "fra", Text: `active; relay "fra"`},
				TxBytes: 4096, RxBytes: 1024, LastHandshake: at.Add(-90 * time.Second),
				Verdict: probes.Verdict{Reason: probes.ReasonNoEndpoints}},
			{ID: "nDIRECT", Name: "laptop", Active: true,
				Path:    probes.Path{Kind: probes.PathDirect, Addr: netip.MustParseAddrPort("203.0.113.5:41641"), Text: "active; direct 203.0.113.5:41641"},
				TxBytes: 1 << 20, RxBytes: 3 << 20, LastHandshake: at.Add(-30 * time.Second), Latency: 4 * time.Millisecond,
				Verdict: probes.Verdict{Reason: probes.ReasonDirect}},
			{ID: "nIDLE", Name: "printer", Path: probes.Path{Kind: probes.PathIdle, Text: "idle"},
				Verdict: probes.Verdict{Reason: probes.ReasonIdle}},
			{ID: "nOFF", Name: "tv", Path: probes.Path{Kind: probes.PathOffline, Text: "offline"},
				Verdict: probes.Verdict{Reason: probes.ReasonOffline}},
		},
	}
}

// fixedBoard is the CoreS3 on its port: no endpoint advertised, table full, a nearer region than
// its home, the control stream stalled, one crash, two boots.
func fixedBoard(at time.Time) *devlink.State {
	st := devlink.NewState()
	st.Link = devlink.LinkStatus{Up: true, Port: "/dev/ttyACM0", At: at}
	st.Hostname, st.TailnetIP, st.Endpoints = "cores3", netip.MustParseAddr("100.64.0.3"), 0
	st.ProbesUsed, st.ProbesCap, st.ProbesDropped, st.ProbesReaped = 64, 64, 17, 3
	st.HeapFree, st.HeapMin, st.HeapLargest = 81920, 40960, 31744
	st.HomeDERP, st.HomeLatency, st.NearestDERP, st.NearestLatency = 2, 140*time.Millisecond, 1, 20*time.Millisecond
	st.H2Known, st.H2Received, st.H2WindowReturned, st.H2WindowOpen = true, 65535, 0, 0
	st.Relay = devlink.Relay{Known: true, Connected: true}
	st.Boots, st.Crashes, st.Frames, st.LastFrameAt = 2, 1, 40, at.Add(-3*time.Second)
	return st
}

// fixedTuning is the seed NAS: 4 MiB buffers against a 20 ms RTT
// measured on its connections, no BBR.
func fixedTuning() tune.Report {
	return tune.Report{
		Settings: sysctl.Settings{
			TCPRmem: sysctl.Triple{Min: 4096, Default: 131072, Max: 4194304},
			TCPWmem: sysctl.Triple{Min: 4096, Default: 16384, Max: 4194304},
			RmemMax: 212992, WmemMax: 212992, CongestionControl: "cubic",
		},
		BBR: sysctl.BBRStatus{State: sysctl.BBRImpossible},
		Rec: sysctl.Recommendation{
			Target:   sysctl.Target{Bandwidth: 400e6, BandwidthSource: "flag --bandwidth", RTT: 20 * time.Millisecond, RTTSource: "measured: highest smoothed RTT (tcp_info) of 2 tailnet connection(s)"},
			BDPBytes: 1000000, BufferMax: 16777216,
			TCPRmem: sysctl.Triple{Max: 16777216}, TCPWmem: sysctl.Triple{Max: 16777216}, RmemMax: 16777216, WmemMax: 16777216,
		},
		Conns: []sockdiag.Conn{
			{Verdict: sockdiag.Verdict{Kind: sockdiag.VerdictSndbuf}},
			{Verdict: sockdiag.Verdict{Kind: sockdiag.VerdictHealthy}},
		},
		Tunnel:     tune.Tunnel{Mode: tune.TunnelKernel},
		Crypto:     &tune.Crypto{Here: true, Measured: &tune.CryptoMeasure{Cores: 4, Packet: 1280, OneCore: 1.6e9, AllCores: 4.8e9}},
		Limits:     []tune.Limit{{Kind: tune.LimitKernel}, {Kind: tune.LimitForwarding}},
		Kernel:     []tune.KernelHit{{KernelHit: sysctl.KernelHit{Bug: sysctl.KernelBugs[0], Sure: true}}},
		Forwarding: &tune.Forwarding{ExitNode: true, From: "tailscaled's prefs (LocalAPI)"},
		Offloads:   &tune.Offloads{UDPGRO: &tune.GROCheck{Suboptimal: true}},
	}
}

const wantTailnet = `
# HELP tailpath_derp_region_home 1 for this node's home DERP region, 0 for every other region of the DERP map.
# TYPE tailpath_derp_region_home gauge
tailpath_derp_region_home{region="fra"} 0
tailpath_derp_region_home{region="nyc"} 1
# HELP tailpath_derp_region_latency_seconds This node's measured round trip to each DERP region (tailpath's own netcheck when fresh, else tailscaled's NetInfo).
# TYPE tailpath_derp_region_latency_seconds gauge
tailpath_derp_region_latency_seconds{region="fra"} 0.085
tailpath_derp_region_latency_seconds{region="nyc"} 0.012
# HELP tailpath_nat_ipv6_working 1 when this node has working IPv6, 0 when not; absent when not measured.
# TYPE tailpath_nat_ipv6_working gauge
tailpath_nat_ipv6_working 0
# HELP tailpath_nat_mapping_varies_by_dest_ip 1 when this node is behind a hard NAT (its mapping varies by destination), 0 when not; absent when not measured.
# TYPE tailpath_nat_mapping_varies_by_dest_ip gauge
tailpath_nat_mapping_varies_by_dest_ip 1
# HELP tailpath_nat_port_mapping 1 when this node's router offers port mapping (UPnP, NAT-PMP or PCP), else 0.
# TYPE tailpath_nat_port_mapping gauge
tailpath_nat_port_mapping 0
# HELP tailpath_nat_udp_working 1 when this node's netcheck says UDP works, 0 when it does not; absent when not measured.
# TYPE tailpath_nat_udp_working gauge
tailpath_nat_udp_working 1
# HELP tailpath_peer_last_handshake_timestamp_seconds Unix time of the last WireGuard handshake with the peer; absent when none is recorded (time() minus this is the time since it).
# TYPE tailpath_peer_last_handshake_timestamp_seconds gauge
tailpath_peer_last_handshake_timestamp_seconds{id="nBOARD",peer="cores3"} 1.79607231e+09
tailpath_peer_last_handshake_timestamp_seconds{id="nDIRECT",peer="laptop"} 1.79607237e+09
# HELP tailpath_peer_path_changes_total Changes of the peer's path (kind, direct address, peer relay or DERP region) seen by this tailpath serve.
# TYPE tailpath_peer_path_changes_total counter
tailpath_peer_path_changes_total{id="nBOARD",peer="cores3"} 0
tailpath_peer_path_changes_total{id="nDIRECT",peer="laptop"} 0
tailpath_peer_path_changes_total{id="nIDLE",peer="printer"} 0
tailpath_peer_path_changes_total{id="nOFF",peer="tv"} 0
# HELP tailpath_peer_path_info A peer's current path and why (the reason id of docs/diagnosis.md; region is the DERP region relayed through, empty unless path is derp), always 1.
# TYPE tailpath_peer_path_info gauge
tailpath_peer_path_info{id="nBOARD",path="derp",peer="cores3",reason="no-endpoints",region="fra"} 1
tailpath_peer_path_info{id="nDIRECT",path="direct",peer="laptop",reason="direct",region=""} 1
tailpath_peer_path_info{id="nIDLE",path="idle",peer="printer",reason="idle",region=""} 1
tailpath_peer_path_info{id="nOFF",path="offline",peer="tv",reason="offline",region=""} 1
# HELP tailpath_peer_ping_latency_seconds Round trip of the last ping to the peer (a TSMP ping through WireGuard every --ping-every to active peers); absent until one answered.
# TYPE tailpath_peer_ping_latency_seconds gauge
tailpath_peer_ping_latency_seconds{id="nDIRECT",peer="laptop"} 0.004
# HELP tailpath_peer_rx_bytes_total WireGuard bytes received from the peer since tailscaled started.
# TYPE tailpath_peer_rx_bytes_total counter
tailpath_peer_rx_bytes_total{id="nBOARD",peer="cores3"} 1024
tailpath_peer_rx_bytes_total{id="nDIRECT",peer="laptop"} 3.145728e+06
tailpath_peer_rx_bytes_total{id="nIDLE",peer="printer"} 0
tailpath_peer_rx_bytes_total{id="nOFF",peer="tv"} 0
# HELP tailpath_peer_tx_bytes_total WireGuard bytes sent to the peer since tailscaled started.
# TYPE tailpath_peer_tx_bytes_total counter
tailpath_peer_tx_bytes_total{id="nBOARD",peer="cores3"} 4096
tailpath_peer_tx_bytes_total{id="nDIRECT",peer="laptop"} 1.048576e+06
tailpath_peer_tx_bytes_total{id="nIDLE",peer="printer"} 0
tailpath_peer_tx_bytes_total{id="nOFF",peer="tv"} 0
# HELP tailpath_peers Peers by current path (direct, peer-relay, derp, idle, offline), all of them, including those --max-peers leaves out.
# TYPE tailpath_peers gauge
tailpath_peers{path="derp"} 1
tailpath_peers{path="direct"} 1
tailpath_peers{path="idle"} 1
tailpath_peers{path="offline"} 1
tailpath_peers{path="peer-relay"} 0
# HELP tailpath_peers_dropped Peers left out of the per-peer series at the last scrape because of --max-peers.
# TYPE tailpath_peers_dropped gauge
tailpath_peers_dropped 0
# HELP tailpath_series_dropped_total Per-peer series left out because of --max-peers, summed over every snapshot (each --interval poll), however often scraped.
# TYPE tailpath_series_dropped_total counter
tailpath_series_dropped_total 0
# HELP tailpath_snapshot_timestamp_seconds Unix time of the newest snapshot read from tailscaled (kept while tailscaled is down: time() minus this is how stale the last view is).
# TYPE tailpath_snapshot_timestamp_seconds gauge
tailpath_snapshot_timestamp_seconds 1.7960724e+09
# HELP tailpath_tailscaled_state_info The local tailscaled's backend state (Running, NeedsLogin, Stopped, ...), always 1.
# TYPE tailpath_tailscaled_state_info gauge
tailpath_tailscaled_state_info{state="Running"} 1
# HELP tailpath_tailscaled_up 1 while the local tailscaled answers its LocalAPI, 0 while it does not (not running, restarting, permission denied); the peer, DERP and NAT series are absent while it is 0.
# TYPE tailpath_tailscaled_up gauge
tailpath_tailscaled_up 1
`

// TestTailnetSeries: a fixed snapshot gives exactly these series.
func TestTailnetSeries(t *testing.T) {
	var st Store
	st.SetSource(probes.SourceStatus{Up: true})
	st.SetSnapshot(peerstest.Joined(*fixedSnapshot(t0)))
	g := NewGatherer(&st, Options{})
	if err := testutil.GatherAndCompare(g, strings.NewReader(wantTailnet)); err != nil {
		t.Error(err)
	}
}

// TestSelfReasonSeries: the self's verdict is one series per reason that
// holds, the primary marked; none without a verdict (TestTailnetSeries).
func TestSelfReasonSeries(t *testing.T) {
	snap := fixedSnapshot(t0)
	snap.Self.Health = []safetext.Text{"The MagicSock function ReceiveIPv4 is not running. You might experience connectivity issues."}
	snap.Self.Evidence = &probes.SelfEvidence{UPnPFrom: netip.MustParseAddr("192.168.1.2"), UPnPGateway: netip.MustParseAddr("192.168.1.1")}
	var st Store
	st.SetSource(probes.SourceStatus{Up: true})
	st.SetSnapshot(peerstest.Joined(*judged(snap)))
	want := `
# HELP tailpath_self_reason_info Trouble at this node's own end that touches every path: a reason id of docs/diagnosis.md that judges this node, primary true for the verdict's reason and false for the others that hold too; always 1, absent when none holds.
# TYPE tailpath_self_reason_info gauge
tailpath_self_reason_info{primary="true",reason="self-udp-receive-stopped"} 1
tailpath_self_reason_info{primary="false",reason="self-upnp-not-gateway"} 1
`
	if err := testutil.GatherAndCompare(NewGatherer(&st, Options{}), strings.NewReader(want), "tailpath_self_reason_info"); err != nil {
		t.Error(err)
	}
}

// TestTailscaledDown: while tailscaled does not answer, only up (0), the
// age of the last view and the dropped counter remain; the snapshot
// endpoint says why.
func TestTailscaledDown(t *testing.T) {
	var st Store
	st.SetSource(probes.SourceStatus{Up: true})
	st.SetSnapshot(peerstest.Joined(*fixedSnapshot(t0)))
	st.SetSource(probes.SourceStatus{Up: false, Err: "failed to connect to local tailscaled; is it running?"})
	g := NewGatherer(&st, Options{})
	want := `
# HELP tailpath_tailscaled_up 1 while the local tailscaled answers its LocalAPI, 0 while it does not (not running, restarting, permission denied); the peer, DERP and NAT series are absent while it is 0.
# TYPE tailpath_tailscaled_up gauge
tailpath_tailscaled_up 0
# HELP tailpath_snapshot_timestamp_seconds Unix time of the newest snapshot read from tailscaled (kept while tailscaled is down: time() minus this is how stale the last view is).
# TYPE tailpath_snapshot_timestamp_seconds gauge
tailpath_snapshot_timestamp_seconds 1.7960724e+09
# HELP tailpath_series_dropped_total Per-peer series left out because of --max-peers, summed over every snapshot (each --interval poll), however often scraped.
# TYPE tailpath_series_dropped_total counter
tailpath_series_dropped_total 0
`
	if err := testutil.GatherAndCompare(g, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if s, why := st.Snapshot(); s != nil || !strings.Contains(why, "is it running") {
		t.Errorf("Snapshot() while down = %v, %q; want nil and the source's error", s, why)
	}
	if h := st.Health(); h.Tailscaled != "down" || h.TailscaledErr == "" {
		t.Errorf("Health() = %+v, want tailscaled down with its error", h)
	}
}

const wantBoard = `
# HELP tailpath_board_boots_total Boots of the board (ROM banners, reset lines) since tailpath serve started reading it.
# TYPE tailpath_board_boots_total counter
tailpath_board_boots_total 2
# HELP tailpath_board_crashes_total Crash reports (panic, abort, assert, stack overflow, heap corruption) the board printed since tailpath serve started reading it.
# TYPE tailpath_board_crashes_total counter
tailpath_board_crashes_total 1
# HELP tailpath_board_derp_connected 1 while the board's connection to its home DERP relay is up, 0 while it is down.
# TYPE tailpath_board_derp_connected gauge
tailpath_board_derp_connected 1
# HELP tailpath_board_h2_window_open_bytes The board's HTTP/2 receive window still open on its control stream.
# TYPE tailpath_board_h2_window_open_bytes gauge
tailpath_board_h2_window_open_bytes 0
# HELP tailpath_board_h2_window_stalled 1 while the board's control stream is stalled (data received, no window credit ever returned, window shut), else 0.
# TYPE tailpath_board_h2_window_stalled gauge
tailpath_board_h2_window_stalled 1
# HELP tailpath_board_h2_window_stalls_total Times the board's control stream went into an HTTP/2 window stall, seen by this tailpath serve.
# TYPE tailpath_board_h2_window_stalls_total counter
tailpath_board_h2_window_stalls_total 1
# HELP tailpath_board_heap_free_bytes The board's free internal heap.
# TYPE tailpath_board_heap_free_bytes gauge
tailpath_board_heap_free_bytes 81920
# HELP tailpath_board_heap_largest_free_block_bytes The largest free block of the board's internal heap.
# TYPE tailpath_board_heap_largest_free_block_bytes gauge
tailpath_board_heap_largest_free_block_bytes 31744
# HELP tailpath_board_heap_min_free_bytes The lowest the board's free internal heap has been this boot.
# TYPE tailpath_board_heap_min_free_bytes gauge
tailpath_board_heap_min_free_bytes 40960
# HELP tailpath_board_home_derp_is_nearest 1 when the board's home DERP region is the nearest it measured, 0 when a nearer one exists.
# TYPE tailpath_board_home_derp_is_nearest gauge
tailpath_board_home_derp_is_nearest 0
# HELP tailpath_board_home_derp_latency_seconds The board's measured round trip to its home DERP region (region).
# TYPE tailpath_board_home_derp_latency_seconds gauge
tailpath_board_home_derp_latency_seconds{region="fra"} 0.14
# HELP tailpath_board_info The board's host name as its telemetry gives it and the stable id of the peer it is (empty when none matches), always 1.
# TYPE tailpath_board_info gauge
tailpath_board_info{host="cores3",id="nBOARD"} 1
# HELP tailpath_board_last_telemetry_timestamp_seconds Unix time the board's last telemetry frame arrived (time() minus this is the telemetry age).
# TYPE tailpath_board_last_telemetry_timestamp_seconds gauge
tailpath_board_last_telemetry_timestamp_seconds 1.796072397e+09
# HELP tailpath_board_nearest_derp_latency_seconds The board's measured round trip to the nearest DERP region it measured (region).
# TYPE tailpath_board_nearest_derp_latency_seconds gauge
tailpath_board_nearest_derp_latency_seconds{region="nyc"} 0.02
# HELP tailpath_board_probe_table_capacity Slots in the board's DISCO probe table.
# TYPE tailpath_board_probe_table_capacity gauge
tailpath_board_probe_table_capacity 64
# HELP tailpath_board_probe_table_used Slots in use in the board's DISCO probe table.
# TYPE tailpath_board_probe_table_used gauge
tailpath_board_probe_table_used 64
# HELP tailpath_board_probes_dropped_total DISCO pings the board dropped because its probe table was full, this boot.
# TYPE tailpath_board_probes_dropped_total counter
tailpath_board_probes_dropped_total 17
# HELP tailpath_board_probes_reaped_total Stale DISCO probes the board reaped from its table, this boot.
# TYPE tailpath_board_probes_reaped_total counter
tailpath_board_probes_reaped_total 3
# HELP tailpath_board_up 1 while the board's serial port (--port) is open, 0 while it is unplugged or unusable; the board's live gauges are absent while it is 0.
# TYPE tailpath_board_up gauge
tailpath_board_up 1
`

// familiesWith returns the names of the families starting with prefix.
func familiesWith(prefix string) []string {
	var names []string
	for _, f := range families {
		if strings.HasPrefix(f.Name, prefix) {
			names = append(names, f.Name)
		}
	}
	return names
}

var boardFamilies = familiesWith("tailpath_board_")

// TestBoardSeries: the board's state, linked to its peer, gives exactly
// these series; unplugged, only up (0), its identity and what spans boots.
func TestBoardSeries(t *testing.T) {
	var st Store
	st.ExpectBoard()
	g := NewGatherer(&st, Options{})
	before := `
# HELP tailpath_board_up 1 while the board's serial port (--port) is open, 0 while it is unplugged or unusable; the board's live gauges are absent while it is 0.
# TYPE tailpath_board_up gauge
tailpath_board_up 0
`
	if err := testutil.GatherAndCompare(g, strings.NewReader(before), boardFamilies...); err != nil {
		t.Errorf("before the board's first state: %v", err)
	}
	// A port that cannot be opened yet: a state, but nothing the board said.
	setBoard(&st, &devlink.State{Link: devlink.LinkStatus{Port: "/dev/ttyACM0", Err: errors.New("serial port not found")}})
	if err := testutil.GatherAndCompare(g, strings.NewReader(before), "tailpath_board_up", "tailpath_board_info"); err != nil {
		t.Errorf("a port that never opened: %v", err)
	}

	var l join.Joiner
	st.SetSource(probes.SourceStatus{Up: true})
	st.SetSnapshot(l.SetSnapshot(fixedSnapshot(t0)))
	board := fixedBoard(t0)
	setBoard(&st, board)
	ls, _ := l.SetDevice(board)
	st.SetSnapshot(ls)
	if err := testutil.GatherAndCompare(g, strings.NewReader(wantBoard), boardFamilies...); err != nil {
		t.Errorf("board up: %v", err)
	}
	// The board's peer carries the board's own verdict.
	if err := testutil.GatherAndCompare(g, strings.NewReader(`
# HELP tailpath_peer_path_info A peer's current path and why (the reason id of docs/diagnosis.md; region is the DERP region relayed through, empty unless path is derp), always 1.
# TYPE tailpath_peer_path_info gauge
tailpath_peer_path_info{id="nBOARD",path="derp",peer="cores3",reason="device-no-public-endpoint",region="fra"} 1
tailpath_peer_path_info{id="nDIRECT",path="direct",peer="laptop",reason="direct",region=""} 1
tailpath_peer_path_info{id="nIDLE",path="idle",peer="printer",reason="idle",region=""} 1
tailpath_peer_path_info{id="nOFF",path="offline",peer="tv",reason="offline",region=""} 1
`), "tailpath_peer_path_info"); err != nil {
		t.Errorf("the board's peer: %v", err)
	}

	unplugged := *board
	unplugged.Link = devlink.LinkStatus{Up: false, Port: "/dev/ttyACM0"}
	setBoard(&st, &unplugged)
	wantUnplugged := `
# HELP tailpath_board_boots_total Boots of the board (ROM banners, reset lines) since tailpath serve started reading it.
# TYPE tailpath_board_boots_total counter
tailpath_board_boots_total 2
# HELP tailpath_board_crashes_total Crash reports (panic, abort, assert, stack overflow, heap corruption) the board printed since tailpath serve started reading it.
# TYPE tailpath_board_crashes_total counter
tailpath_board_crashes_total 1
# HELP tailpath_board_h2_window_stalls_total Times the board's control stream went into an HTTP/2 window stall, seen by this tailpath serve.
# TYPE tailpath_board_h2_window_stalls_total counter
tailpath_board_h2_window_stalls_total 1
# HELP tailpath_board_info The board's host name as its telemetry gives it and the stable id of the peer it is (empty when none matches), always 1.
# TYPE tailpath_board_info gauge
tailpath_board_info{host="cores3",id="nBOARD"} 1
# HELP tailpath_board_last_telemetry_timestamp_seconds Unix time the board's last telemetry frame arrived (time() minus this is the telemetry age).
# TYPE tailpath_board_last_telemetry_timestamp_seconds gauge
tailpath_board_last_telemetry_timestamp_seconds 1.796072397e+09
# HELP tailpath_board_up 1 while the board's serial port (--port) is open, 0 while it is unplugged or unusable; the board's live gauges are absent while it is 0.
# TYPE tailpath_board_up gauge
tailpath_board_up 0
`
	if err := testutil.GatherAndCompare(g, strings.NewReader(wantUnplugged), boardFamilies...); err != nil {
		t.Errorf("unplugged: %v", err)
	}
	if h := st.Health(); h.Board != "down" {
		t.Errorf("Health().Board unplugged = %q, want down", h.Board)
	}
}

// TestH2StallsCounted: each entry into a stall counts once, however many
// states repeat it; a reboot (window unknown) and a new stall count again.
func TestH2StallsCounted(t *testing.T) {
	var st Store
	stalled := fixedBoard(t0)
	fresh := devlink.NewState()
	fresh.Link.Up = true
	for _, s := range []*devlink.State{fresh, stalled, stalled, stalled, fresh, stalled} {
		setBoard(&st, s)
	}
	if st.h2Stalls != 2 {
		t.Errorf("h2Stalls = %d, want 2", st.h2Stalls)
	}
}

const wantTuning = `
# HELP tailpath_tuning_bbr_available 1 when this kernel can run bbr now or after loading its module, 0 when it cannot.
# TYPE tailpath_tuning_bbr_available gauge
tailpath_tuning_bbr_available 0
# HELP tailpath_tuning_bbr_in_use 1 when bbr is the default congestion control, else 0.
# TYPE tailpath_tuning_bbr_in_use gauge
tailpath_tuning_bbr_in_use 0
# HELP tailpath_tuning_bdp_bytes Bandwidth-delay product of the target: bandwidth times RTT.
# TYPE tailpath_tuning_bdp_bytes gauge
tailpath_tuning_bdp_bytes 1e+06
# HELP tailpath_tuning_buffer_max_bytes This host's current buffer maximum: tcp_rmem and tcp_wmem max (autotuning), rmem_max and wmem_max (programs' SO_RCVBUF/SO_SNDBUF).
# TYPE tailpath_tuning_buffer_max_bytes gauge
tailpath_tuning_buffer_max_bytes{buffer="rmem_max"} 212992
tailpath_tuning_buffer_max_bytes{buffer="tcp_rmem"} 4.194304e+06
tailpath_tuning_buffer_max_bytes{buffer="tcp_wmem"} 4.194304e+06
tailpath_tuning_buffer_max_bytes{buffer="wmem_max"} 212992
# HELP tailpath_tuning_crypto_ceiling_bytes_per_second This machine's ChaCha20-Poly1305 ceiling as measured by serve (1,280-byte packets sealed or opened per second), on one core and on all; absent when not measured.
# TYPE tailpath_tuning_crypto_ceiling_bytes_per_second gauge
tailpath_tuning_crypto_ceiling_bytes_per_second{cores="all"} 6e+08
tailpath_tuning_crypto_ceiling_bytes_per_second{cores="one"} 2e+08
# HELP tailpath_tuning_forwarding 1 when this box advertises subnet routes or an exit node (it forwards, so its own TCP sysctls do not govern forwarded flows), 0 when it advertises none; absent when unknown.
# TYPE tailpath_tuning_forwarding gauge
tailpath_tuning_forwarding 1
# HELP tailpath_tuning_kernel_regression_info A known kernel regression whose release range holds this kernel (id of tailpath's table), mitigated true when tailscaled here works around it and sure false when the release does not say its stable patch level; always 1.
# TYPE tailpath_tuning_kernel_regression_info gauge
tailpath_tuning_kernel_regression_info{id="virtio-net-hdr-gso-einval",mitigated="false",sure="true"} 1
# HELP tailpath_tuning_limit_info What other than this host's buffers limits tailnet throughput (path, kernel, cpu, offload, forwarding), primary true for tune's verdict and false for the others that hold; always 1, absent when none holds.
# TYPE tailpath_tuning_limit_info gauge
tailpath_tuning_limit_info{kind="forwarding",primary="false"} 1
tailpath_tuning_limit_info{kind="kernel",primary="true"} 1
# HELP tailpath_tuning_recommended_buffer_max_bytes The buffer maximum tailpath recommends for the target bandwidth and RTT (as tailpath tune).
# TYPE tailpath_tuning_recommended_buffer_max_bytes gauge
tailpath_tuning_recommended_buffer_max_bytes{buffer="rmem_max"} 1.6777216e+07
tailpath_tuning_recommended_buffer_max_bytes{buffer="tcp_rmem"} 1.6777216e+07
tailpath_tuning_recommended_buffer_max_bytes{buffer="tcp_wmem"} 1.6777216e+07
tailpath_tuning_recommended_buffer_max_bytes{buffer="wmem_max"} 1.6777216e+07
# HELP tailpath_tuning_sufficient 1 when tailpath tune would change nothing (it raises buffers only where something says they limit), 0 when it would change something.
# TYPE tailpath_tuning_sufficient gauge
tailpath_tuning_sufficient 0
# HELP tailpath_tuning_target_bandwidth_bytes_per_second The bandwidth the recommendation is for; source is measured (tailnet TCP connections), given (--bandwidth), default, or cpu_ceiling (the target capped at this CPU's crypto ceiling).
# TYPE tailpath_tuning_target_bandwidth_bytes_per_second gauge
tailpath_tuning_target_bandwidth_bytes_per_second{source="given"} 5e+07
# HELP tailpath_tuning_target_rtt_seconds The RTT the recommendation is for; source is measured (tailnet TCP connections), given (--rtt) or default.
# TYPE tailpath_tuning_target_rtt_seconds gauge
tailpath_tuning_target_rtt_seconds{source="measured"} 0.02
# HELP tailpath_tuning_tcp_connections Tailnet TCP connections on this host by verdict (healthy, sndbuf-limited, rwnd-limited, mtu, ...).
# TYPE tailpath_tuning_tcp_connections gauge
tailpath_tuning_tcp_connections{verdict="app-sndbuf"} 0
tailpath_tuning_tcp_connections{verdict="healthy"} 1
tailpath_tuning_tcp_connections{verdict="mtu"} 0
tailpath_tuning_tcp_connections{verdict="retransmitting"} 0
tailpath_tuning_tcp_connections{verdict="rwnd-limited"} 0
tailpath_tuning_tcp_connections{verdict="sndbuf-limited"} 1
tailpath_tuning_tcp_connections{verdict="sndbuf-wmem-max"} 0
tailpath_tuning_tcp_connections{verdict="unknown"} 0
# HELP tailpath_tuning_udp_gro_forwarding_suboptimal 1 when Tailscale's UDP GRO forwarding check warns on the default-route interface, 0 when it passes; absent when it does not apply or could not run.
# TYPE tailpath_tuning_udp_gro_forwarding_suboptimal gauge
tailpath_tuning_udp_gro_forwarding_suboptimal 1
# HELP tailpath_tuning_up 1 when the last reading of this host's TCP tuning succeeded, else 0 (Linux only).
# TYPE tailpath_tuning_up gauge
tailpath_tuning_up 1
# HELP tailpath_tuning_userspace_networking 1 when tailscaled runs in userspace networking, so tailnet TCP never reaches the kernel and its buffers and congestion control do not apply; 0 with a kernel TUN; absent when unknown.
# TYPE tailpath_tuning_userspace_networking gauge
tailpath_tuning_userspace_networking 0
`

// TestTuningSeries: a fixed tuning report gives exactly these series; a
// failed reading only tailpath_tuning_up 0.
func TestTuningSeries(t *testing.T) {
	var st Store
	st.ExpectTuning()
	g := NewGatherer(&st, Options{})
	st.SetTuning(fixedTuning(), nil)
	if err := testutil.GatherAndCompare(g, strings.NewReader(wantTuning), familiesWith("tailpath_tuning_")...); err != nil {
		t.Error(err)
	}
	st.SetTuning(tune.Report{}, tune.ErrNotLinux)
	if err := testutil.GatherAndCompare(g, strings.NewReader(`
# HELP tailpath_tuning_udp_gro_forwarding_suboptimal 1 when Tailscale's UDP GRO forwarding check warns on the default-route interface, 0 when it passes; absent when it does not apply or could not run.
# TYPE tailpath_tuning_udp_gro_forwarding_suboptimal gauge
tailpath_tuning_udp_gro_forwarding_suboptimal 1
# HELP tailpath_tuning_up 1 when the last reading of this host's TCP tuning succeeded, else 0 (Linux only).
# TYPE tailpath_tuning_up gauge
tailpath_tuning_up 0
`), "tailpath_tuning_up", "tailpath_tuning_bdp_bytes"); err != nil {
		t.Error(err)
	}
	// Userspace networking is 1; not knowing is no series at all.
	const help = `# HELP tailpath_tuning_userspace_networking 1 when tailscaled runs in userspace networking, so tailnet TCP never reaches the kernel and its buffers and congestion control do not apply; 0 with a kernel TUN; absent when unknown.
# TYPE tailpath_tuning_userspace_networking gauge
`
	for _, tt := range []struct {
		mode tune.TunnelMode
		want string
	}{{tune.TunnelUserspace, help + "tailpath_tuning_userspace_networking 1\n"}, {tune.TunnelUnknown, ""}, {"", ""}} {
		r := fixedTuning()
		r.Tunnel.Mode = tt.mode
		st.SetTuning(r, nil)
		if err := testutil.GatherAndCompare(g, strings.NewReader(tt.want), "tailpath_tuning_userspace_networking"); err != nil {
			t.Errorf("mode %q: %v", tt.mode, err)
		}
	}
}

// TestPathChangesCounted: each observed change counts once, however many
// times the same joined snapshot (or a re-link after a board change) is
// stored; a peer's first sighting is no change.
func TestPathChangesCounted(t *testing.T) {
	var st Store
	var l join.Joiner
	st.SetSource(probes.SourceStatus{Up: true})
	direct := probes.Path{Kind: probes.PathDirect, Addr: netip.MustParseAddrPort("203.0.113.5:41641")}
	relay := probes.Path{Kind: probes.PathDERP, DERPCode: "nyc"}
	paths := []probes.Path{direct, direct, relay, relay, direct, relay}
	for i, p := range paths {
		s := fixedSnapshot(t0.Add(time.Duration(i) * 2 * time.Second))
		s.Peers[1].Path = p
		ls := l.SetSnapshot(s)
		st.SetSnapshot(ls)
		st.SetSnapshot(ls) // stored twice: counted once
		if i == 3 {
			ls, _ := l.SetDevice(fixedBoard(t0)) // a re-link, no path change
			st.SetSnapshot(ls)
		}
	}
	g := NewGatherer(&st, Options{})
	want := `
# HELP tailpath_peer_path_changes_total Changes of the peer's path (kind, direct address, peer relay or DERP region) seen by this tailpath serve.
# TYPE tailpath_peer_path_changes_total counter
tailpath_peer_path_changes_total{id="nBOARD",peer="cores3"} 0
tailpath_peer_path_changes_total{id="nDIRECT",peer="laptop"} 3
tailpath_peer_path_changes_total{id="nIDLE",peer="printer"} 0
tailpath_peer_path_changes_total{id="nOFF",peer="tv"} 0
`
	if err := testutil.GatherAndCompare(g, strings.NewReader(want), "tailpath_peer_path_changes_total"); err != nil {
		t.Error(err)
	}
}

// TestMaxPeers: over the cap, relayed peers are kept before idle and
// offline ones; tailpath_peers still counts all, and the dropped series
// are counted once for each new snapshot.
func TestMaxPeers(t *testing.T) {
	var st Store
	st.SetSource(probes.SourceStatus{Up: true})
	st.SetSnapshot(peerstest.Joined(*fixedSnapshot(t0)))
	g := NewGatherer(&st, Options{MaxPeers: 2})
	want := `
# HELP tailpath_peer_path_info A peer's current path and why (the reason id of docs/diagnosis.md; region is the DERP region relayed through, empty unless path is derp), always 1.
# TYPE tailpath_peer_path_info gauge
tailpath_peer_path_info{id="nBOARD",path="derp",peer="cores3",reason="no-endpoints",region="fra"} 1
tailpath_peer_path_info{id="nDIRECT",path="direct",peer="laptop",reason="direct",region=""} 1
# HELP tailpath_peers_dropped Peers left out of the per-peer series at the last scrape because of --max-peers.
# TYPE tailpath_peers_dropped gauge
tailpath_peers_dropped 2
# HELP tailpath_series_dropped_total Per-peer series left out because of --max-peers, summed over every snapshot (each --interval poll), however often scraped.
# TYPE tailpath_series_dropped_total counter
tailpath_series_dropped_total %d
# HELP tailpath_peers Peers by current path (direct, peer-relay, derp, idle, offline), all of them, including those --max-peers leaves out.
# TYPE tailpath_peers gauge
tailpath_peers{path="derp"} 1
tailpath_peers{path="direct"} 1
tailpath_peers{path="idle"} 1
tailpath_peers{path="offline"} 1
tailpath_peers{path="peer-relay"} 0
`
	names := []string{"tailpath_peer_path_info", "tailpath_peers_dropped", "tailpath_series_dropped_total", "tailpath_peers"}
	// The idle and offline peers have 4 series each (no latency, no
	// handshake): counted once per snapshot, however often it is scraped.
	for scrape, total := range []int{8, 8, 16} {
		if scrape == 2 {
			st.SetSnapshot(peerstest.Joined(*fixedSnapshot(t0.Add(2 * time.Second))))
		}
		if err := testutil.GatherAndCompare(g, strings.NewReader(strings.Replace(want, "%d", strconv.Itoa(total), 1)), names...); err != nil {
			t.Errorf("scrape %d: %v", scrape+1, err)
		}
	}
}

// TestFamilyConventions: every family is named by Prometheus conventions
// (prefix, _total exactly on counters, a base unit where it measures
// one), has HELP text, and sorted label names; no label carries an
// address or a port.
func TestFamilyConventions(t *testing.T) {
	name := regexp.MustCompile(`^tailpath_[a-z0-9_]+$`)
	seen := map[string]bool{}
	for _, f := range families {
		if !name.MatchString(f.Name) || seen[f.Name] {
			t.Errorf("%s: bad or repeated name", f.Name)
		}
		seen[f.Name] = true
		if isCounter := f.Type == dto.MetricType_COUNTER; isCounter != strings.HasSuffix(f.Name, "_total") {
			t.Errorf("%s: %v; _total belongs on counters and only there", f.Name, f.Type)
		}
		if f.Help == "" || !strings.HasSuffix(f.Help, ".") {
			t.Errorf("%s: HELP %q should be a sentence", f.Name, f.Help)
		}
		if !slices.IsSorted(f.Labels) {
			t.Errorf("%s: labels %v are not sorted", f.Name, f.Labels)
		}
		for _, l := range f.Labels {
			if strings.Contains(l, "addr") || strings.Contains(l, "port") || strings.Contains(l, "endpoint") || l == "ip" {
				t.Errorf("%s: label %q would carry addresses (unbounded cardinality)", f.Name, l)
			}
		}
		for _, unit := range []string{"latency", "heap", "buffer_max", "bdp", "rtt"} {
			if strings.Contains(f.Name, unit) && !strings.HasSuffix(f.Name, "_seconds") && !strings.HasSuffix(f.Name, "_bytes") &&
				!strings.HasSuffix(f.Name, "_is_nearest") {
				t.Errorf("%s: measures a %s but names no unit", f.Name, unit)
			}
		}
	}
}

// TestScrapeMemoryReused: a scrape built in the memory of an earlier one
// (Transactional, after its done) says exactly what a fresh Gatherer
// says, with peers gone, paths changed and counters turned into gauges
// in between; concurrent scrapes through the handler do not share it
// (go test -race).
func TestScrapeMemoryReused(t *testing.T) {
	var st Store
	st.ExpectBoard()
	st.ExpectTuning()
	st.SetSource(probes.SourceStatus{Up: true})
	var l join.Joiner
	st.SetSnapshot(l.SetSnapshot(manyPeers(300, t0, false)))
	setBoard(&st, fixedBoard(t0))
	st.SetTuning(fixedTuning(), nil)
	g := NewGatherer(&st, Options{})
	tg := g.Transactional()
	for round := range 3 {
		_, done, err := tg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		done()
		// Fewer peers, other paths: the reused memory must not show the old ones.
		st.SetSnapshot(l.SetSnapshot(manyPeers(120-round*40, t0.Add(time.Duration(round+1)*time.Second), round%2 == 0)))
		var want strings.Builder
		fresh, _ := NewGatherer(&st, Options{}).Gather()
		for _, mf := range fresh {
			if _, err := expfmt.MetricFamilyToText(&want, mf); err != nil {
				t.Fatal(err)
			}
		}
		got, done2, _ := tg.Gather()
		var gotText strings.Builder
		for _, mf := range got {
			expfmt.MetricFamilyToText(&gotText, mf)
		}
		done2()
		if gotText.String() != want.String() {
			t.Fatalf("round %d: a scrape in reused memory differs from a fresh one", round)
		}
	}

	h := Handler(g, nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
				if rec.Code != http.StatusOK && rec.Code != http.StatusServiceUnavailable {
					t.Errorf("scrape: %d", rec.Code)
				}
			}
		})
	}
	wg.Wait()
}

// judged is s with this node's verdict as probes.Judge makes it from this
// node's own evidence (judging a copy without the peers, whose paths would
// speak for or against it too), the peers' hand-made verdicts kept.
func judged(s *probes.Snapshot) *probes.Snapshot {
	self := probes.Snapshot{Time: s.Time, BackendState: s.BackendState, Self: s.Self, Regions: s.Regions}
	probes.Judge(&self, nil)
	s.Self.Verdict = self.Self.Verdict
	return s
}

// TestSelfViewSeries: the Self tab's facts are series too: tailscaled's
// traffic by direction and path (its own counters, as counters), how far
// the home DERP region is, whether UDP gets in, the known bugs of this
// version; without traffic counters the traffic families are absent.
func TestSelfViewSeries(t *testing.T) {
	snap := fixedSnapshot(t0)
	snap.Self.Version = "1.96.0"
	snap.Self.Traffic = &probes.Traffic{At: t0, Source: "usermetrics",
		BytesIn: probes.PathCounts{Direct: 100, DERP: 2000, PeerRelay: 3}, BytesOut: probes.PathCounts{Direct: 50, DERP: 1000},
		PacketsIn: probes.PathCounts{Direct: 1, DERP: 20}, PacketsOut: probes.PathCounts{DERP: 10}}
	var st Store
	st.SetSource(probes.SourceStatus{Up: true})
	var l join.Joiner // judges, as serve's joiner does (Self.View)
	ls := l.SetSnapshot(snap)
	st.SetSnapshot(ls)
	g := NewGatherer(&st, Options{})
	want := `
# HELP tailpath_traffic_bytes_total Bytes tailscaled moved to and from peers since it started, by direction (in, out) and path (direct, derp, peer_relay), from its own client metrics (usermetrics or clientmetrics); absent when it serves neither.
# TYPE tailpath_traffic_bytes_total counter
tailpath_traffic_bytes_total{direction="in",path="direct"} 100
tailpath_traffic_bytes_total{direction="in",path="derp"} 2000
tailpath_traffic_bytes_total{direction="in",path="peer_relay"} 3
tailpath_traffic_bytes_total{direction="out",path="direct"} 50
tailpath_traffic_bytes_total{direction="out",path="derp"} 1000
tailpath_traffic_bytes_total{direction="out",path="peer_relay"} 0
`
	if err := testutil.GatherAndCompare(g, strings.NewReader(want), "tailpath_traffic_bytes_total"); err != nil {
		t.Error(err)
	}
	for name, n := range map[string]int{"tailpath_traffic_packets_total": 6, "tailpath_udp_receive_info": 1, "tailpath_known_bug_info": 3} {
		if got, err := testutil.GatherAndCount(g, name); err != nil || got < n || (name != "tailpath_known_bug_info" && got != n) {
			t.Errorf("%s: %d series (%v), want %d", name, got, err, n)
		}
	}
	// Home nyc (12 ms) is the best: not far, nothing behind.
	if got, _ := testutil.GatherAndCount(g, "tailpath_derp_home_far", "tailpath_derp_home_behind_seconds"); got != 2 || ls.Self.View.Home.Far {
		t.Errorf("home far and behind: %d series (home %+v), want 2", got, ls.Self.View.Home)
	}

	snap = fixedSnapshot(t0)
	snap.Self.Traffic = &probes.Traffic{At: t0, Err: "this tailscaled serves neither"}
	st.SetSnapshot(l.SetSnapshot(snap))
	if got, _ := testutil.GatherAndCount(g, "tailpath_traffic_bytes_total", "tailpath_traffic_packets_total"); got != 0 {
		t.Errorf("%d traffic series without counters, want none", got)
	}
}

// setBoard records b in st with its evidence, as serve's sink does.
func setBoard(st *Store, b *devlink.State) { st.SetBoard(b, join.EvidenceFrom(b)) }
