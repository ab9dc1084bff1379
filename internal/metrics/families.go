package metrics

import (
	dto "github.com/prometheus/client_model/go"
)

// Family is one metric family tailpath exports; docs/metrics.md lists each
// with its meaning (TestDocsNameRealMetrics holds the two together).
type Family struct {
	// Name follows Prometheus conventions: the tailpath_ prefix, the unit
	// as a suffix (_bytes, _seconds), _total on counters, _info on series
	// whose value is always 1 and whose labels carry the facts.
	Name string
	// Help is the HELP text.
	Help string
	// Type is dto.MetricType_GAUGE or dto.MetricType_COUNTER.
	Type dto.MetricType
	// Labels are the label names, sorted (the order series carry them).
	Labels []string
}

// fam indexes families.
type fam int

const (
	famTailscaledUp fam = iota
	famTailscaledState
	famSnapshotTime
	famPeers
	famPeersDropped
	famSeriesDropped
	famPeerPath
	famPeerLatency
	famPeerTx
	famPeerRx
	famPeerPathChanges
	famPeerHandshake
	famDERPHome
	famDERPLatency
	famNATUDP
	famNATHard
	famNATPortMap
	famNATIPv6
	famSelfReason
	famHomeFar
	famHomeBehind
	famUDPReceive
	famTrafficBytes
	famTrafficPackets
	famKnownBug
	famControlAPIUp

	famBoardUp
	famBoardInfo
	famBoardProbesUsed
	famBoardProbesCap
	famBoardProbesDropped
	famBoardProbesReaped
	famBoardHeapFree
	famBoardHeapMin
	famBoardHeapLargest
	famBoardHomeLatency
	famBoardNearestLatency
	famBoardHomeIsNearest
	famBoardDERPConnected
	famBoardH2Open
	famBoardH2Stalled
	famBoardH2Stalls
	famBoardCrashes
	famBoardBoots
	famBoardTelemetryTime

	famTuningUp
	famTuningBuffer
	famTuningRecommended
	famTuningBDP
	famTuningRTT
	famTuningBandwidth
	famTuningSuffices
	famTuningBBRInUse
	famTuningBBRAvailable
	famTuningConns
	famTuningUserspace
	famTuningCrypto
	famTuningLimit
	famTuningKernel
	famTuningForwarding
	famTuningUDPGRO

	numFamilies
)

var (
	gauge   = dto.MetricType_GAUGE
	counter = dto.MetricType_COUNTER
)

// families is every family, indexed by fam.
var families = [numFamilies]Family{
	famTailscaledUp:    {"tailpath_tailscaled_up", "1 while the local tailscaled answers its LocalAPI, 0 while it does not (not running, restarting, permission denied); the peer, DERP and NAT series are absent while it is 0.", gauge, nil},
	famTailscaledState: {"tailpath_tailscaled_state_info", "The local tailscaled's backend state (Running, NeedsLogin, Stopped, ...), always 1.", gauge, []string{"state"}},
	famSnapshotTime:    {"tailpath_snapshot_timestamp_seconds", "Unix time of the newest snapshot read from tailscaled (kept while tailscaled is down: time() minus this is how stale the last view is).", gauge, nil},
	famPeers:           {"tailpath_peers", "Peers by current path (direct, peer-relay, derp, idle, offline), all of them, including those --max-peers leaves out.", gauge, []string{"path"}},
	famPeersDropped:    {"tailpath_peers_dropped", "Peers left out of the per-peer series at the last scrape because of --max-peers.", gauge, nil},
	famSeriesDropped:   {"tailpath_series_dropped_total", "Per-peer series left out because of --max-peers, summed over every snapshot (each --interval poll), however often scraped.", counter, nil},
	famPeerPath:        {"tailpath_peer_path_info", "A peer's current path and why (the reason id of docs/diagnosis.md; region is the DERP region relayed through, empty unless path is derp), always 1.", gauge, []string{"id", "path", "peer", "reason", "region"}},
	famPeerLatency:     {"tailpath_peer_ping_latency_seconds", "Round trip of the last ping to the peer (a TSMP ping through WireGuard every --ping-every to active peers); absent until one answered.", gauge, []string{"id", "peer"}},
	famPeerTx:          {"tailpath_peer_tx_bytes_total", "WireGuard bytes sent to the peer since tailscaled started.", counter, []string{"id", "peer"}},
	famPeerRx:          {"tailpath_peer_rx_bytes_total", "WireGuard bytes received from the peer since tailscaled started.", counter, []string{"id", "peer"}},
	famPeerPathChanges: {"tailpath_peer_path_changes_total", "Changes of the peer's path (kind, direct address, peer relay or DERP region) seen by this tailpath serve.", counter, []string{"id", "peer"}},
	famPeerHandshake:   {"tailpath_peer_last_handshake_timestamp_seconds", "Unix time of the last WireGuard handshake with the peer; absent when none is recorded (time() minus this is the time since it).", gauge, []string{"id", "peer"}},
	famDERPHome:        {"tailpath_derp_region_home", "1 for this node's home DERP region, 0 for every other region of the DERP map.", gauge, []string{"region"}},
	famDERPLatency:     {"tailpath_derp_region_latency_seconds", "This node's measured round trip to each DERP region (tailpath's own netcheck when fresh, else tailscaled's NetInfo).", gauge, []string{"region"}},
	famNATUDP:          {"tailpath_nat_udp_working", "1 when this node's netcheck says UDP works, 0 when it does not; absent when not measured.", gauge, nil},
	famNATHard:         {"tailpath_nat_mapping_varies_by_dest_ip", "1 when this node is behind a hard NAT (its mapping varies by destination), 0 when not; absent when not measured.", gauge, nil},
	famNATPortMap:      {"tailpath_nat_port_mapping", "1 when this node's router offers port mapping (UPnP, NAT-PMP or PCP), else 0.", gauge, nil},
	famNATIPv6:         {"tailpath_nat_ipv6_working", "1 when this node has working IPv6, 0 when not; absent when not measured.", gauge, nil},
	famSelfReason:      {"tailpath_self_reason_info", "Trouble at this node's own end that touches every path: a reason id of docs/diagnosis.md that judges this node, primary true for the verdict's reason and false for the others that hold too; always 1, absent when none holds.", gauge, []string{"primary", "reason"}},
	famHomeFar:         {"tailpath_derp_home_far", "1 when this node's home DERP region is far from the best region (at least 2x and 30 ms slower in the last report), 0 when not; absent when either latency is unknown.", gauge, nil},
	famHomeBehind:      {"tailpath_derp_home_behind_seconds", "How much slower this node's home DERP region is than the fastest region in the last report (0 when it is the fastest); absent when unknown.", gauge, nil},
	famUDPReceive:      {"tailpath_udp_receive_info", "Whether direct UDP gets in to this node: state ok, stopped (a receive loop stopped), blocked (no STUN reply) or unknown; always 1.", gauge, []string{"state"}},
	famTrafficBytes:    {"tailpath_traffic_bytes_total", "Bytes tailscaled moved to and from peers since it started, by direction (in, out) and path (direct, derp, peer_relay), from its own client metrics (usermetrics or clientmetrics); absent when it serves neither.", counter, []string{"direction", "path"}},
	famTrafficPackets:  {"tailpath_traffic_packets_total", "Packets tailscaled moved to and from peers since it started, by direction and path, as tailpath_traffic_bytes_total.", counter, []string{"direction", "path"}},
	famKnownBug:        {"tailpath_known_bug_info", "A known Tailscale client bug whose versions hold this node's tailscaled (docs/diagnosis.md), hit true when its symptom shows in this node's evidence; always 1.", gauge, []string{"hit", "id"}},
	famControlAPIUp:    {"tailpath_control_api_up", "1 when the last read of the Tailscale control API (the peers' own side of each path) succeeded, else 0; absent without credentials.", gauge, nil},

	famBoardUp:             {"tailpath_board_up", "1 while the board's serial port (--port) is open, 0 while it is unplugged or unusable; the board's live gauges are absent while it is 0.", gauge, nil},
	famBoardInfo:           {"tailpath_board_info", "The board's host name as its telemetry gives it and the stable id of the peer it is (empty when none matches), always 1.", gauge, []string{"host", "id"}},
	famBoardProbesUsed:     {"tailpath_board_probe_table_used", "Slots in use in the board's DISCO probe table.", gauge, nil},
	famBoardProbesCap:      {"tailpath_board_probe_table_capacity", "Slots in the board's DISCO probe table.", gauge, nil},
	famBoardProbesDropped:  {"tailpath_board_probes_dropped_total", "DISCO pings the board dropped because its probe table was full, this boot.", counter, nil},
	famBoardProbesReaped:   {"tailpath_board_probes_reaped_total", "Stale DISCO probes the board reaped from its table, this boot.", counter, nil},
	famBoardHeapFree:       {"tailpath_board_heap_free_bytes", "The board's free internal heap.", gauge, nil},
	famBoardHeapMin:        {"tailpath_board_heap_min_free_bytes", "The lowest the board's free internal heap has been this boot.", gauge, nil},
	famBoardHeapLargest:    {"tailpath_board_heap_largest_free_block_bytes", "The largest free block of the board's internal heap.", gauge, nil},
	famBoardHomeLatency:    {"tailpath_board_home_derp_latency_seconds", "The board's measured round trip to its home DERP region (region).", gauge, []string{"region"}},
	famBoardNearestLatency: {"tailpath_board_nearest_derp_latency_seconds", "The board's measured round trip to the nearest DERP region it measured (region).", gauge, []string{"region"}},
	famBoardHomeIsNearest:  {"tailpath_board_home_derp_is_nearest", "1 when the board's home DERP region is the nearest it measured, 0 when a nearer one exists.", gauge, nil},
	famBoardDERPConnected:  {"tailpath_board_derp_connected", "1 while the board's connection to its home DERP relay is up, 0 while it is down.", gauge, nil},
	famBoardH2Open:         {"tailpath_board_h2_window_open_bytes", "The board's HTTP/2 receive window still open on its control stream.", gauge, nil},
	famBoardH2Stalled:      {"tailpath_board_h2_window_stalled", "1 while the board's control stream is stalled (data received, no window credit ever returned, window shut), else 0.", gauge, nil},
	famBoardH2Stalls:       {"tailpath_board_h2_window_stalls_total", "Times the board's control stream went into an HTTP/2 window stall, seen by this tailpath serve.", counter, nil},
	famBoardCrashes:        {"tailpath_board_crashes_total", "Crash reports (panic, abort, assert, stack overflow, heap corruption) the board printed since tailpath serve started reading it.", counter, nil},
	famBoardBoots:          {"tailpath_board_boots_total", "Boots of the board (ROM banners, reset lines) since tailpath serve started reading it.", counter, nil},
	famBoardTelemetryTime:  {"tailpath_board_last_telemetry_timestamp_seconds", "Unix time the board's last telemetry frame arrived (time() minus this is the telemetry age).", gauge, nil},

	famTuningUp:           {"tailpath_tuning_up", "1 when the last reading of this host's TCP tuning succeeded, else 0 (Linux only).", gauge, nil},
	famTuningBuffer:       {"tailpath_tuning_buffer_max_bytes", "This host's current buffer maximum: tcp_rmem and tcp_wmem max (autotuning), rmem_max and wmem_max (programs' SO_RCVBUF/SO_SNDBUF).", gauge, []string{"buffer"}},
	famTuningRecommended:  {"tailpath_tuning_recommended_buffer_max_bytes", "The buffer maximum tailpath recommends for the target bandwidth and RTT (as tailpath tune).", gauge, []string{"buffer"}},
	famTuningBDP:          {"tailpath_tuning_bdp_bytes", "Bandwidth-delay product of the target: bandwidth times RTT.", gauge, nil},
	famTuningRTT:          {"tailpath_tuning_target_rtt_seconds", "The RTT the recommendation is for; source is measured (tailnet TCP connections), given (--rtt) or default.", gauge, []string{"source"}},
	famTuningBandwidth:    {"tailpath_tuning_target_bandwidth_bytes_per_second", "The bandwidth the recommendation is for; source is measured (tailnet TCP connections), given (--bandwidth), default, or cpu_ceiling (the target capped at this CPU's crypto ceiling).", gauge, []string{"source"}},
	famTuningSuffices:     {"tailpath_tuning_sufficient", "1 when tailpath tune would change nothing (it raises buffers only where something says they limit), 0 when it would change something.", gauge, nil},
	famTuningBBRInUse:     {"tailpath_tuning_bbr_in_use", "1 when bbr is the default congestion control, else 0.", gauge, nil},
	famTuningBBRAvailable: {"tailpath_tuning_bbr_available", "1 when this kernel can run bbr now or after loading its module, 0 when it cannot.", gauge, nil},
	famTuningUserspace:    {"tailpath_tuning_userspace_networking", "1 when tailscaled runs in userspace networking, so tailnet TCP never reaches the kernel and its buffers and congestion control do not apply; 0 with a kernel TUN; absent when unknown.", gauge, nil},
	famTuningConns:        {"tailpath_tuning_tcp_connections", "Tailnet TCP connections on this host by verdict (healthy, sndbuf-limited, rwnd-limited, mtu, ...).", gauge, []string{"verdict"}},
	famTuningCrypto:       {"tailpath_tuning_crypto_ceiling_bytes_per_second", "This machine's ChaCha20-Poly1305 ceiling as measured by serve (1,280-byte packets sealed or opened per second), on one core and on all; absent when not measured.", gauge, []string{"cores"}},
	famTuningLimit:        {"tailpath_tuning_limit_info", "What other than this host's buffers limits tailnet throughput (path, kernel, cpu, offload, forwarding), primary true for tune's verdict and false for the others that hold; always 1, absent when none holds.", gauge, []string{"kind", "primary"}},
	famTuningKernel:       {"tailpath_tuning_kernel_regression_info", "A known kernel regression whose release range holds this kernel (id of tailpath's table), mitigated true when tailscaled here works around it and sure false when the release does not say its stable patch level; always 1.", gauge, []string{"id", "mitigated", "sure"}},
	famTuningForwarding:   {"tailpath_tuning_forwarding", "1 when this box advertises subnet routes or an exit node (it forwards, so its own TCP sysctls do not govern forwarded flows), 0 when it advertises none; absent when unknown.", gauge, nil},
	famTuningUDPGRO:       {"tailpath_tuning_udp_gro_forwarding_suboptimal", "1 when Tailscale's UDP GRO forwarding check warns on the default-route interface, 0 when it passes; absent when it does not apply or could not run.", gauge, nil},
}
