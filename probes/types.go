package probes

import (
	"errors"
	"net/netip"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// PathKind is how traffic to a peer flows right now, in Tailscale's own terms.
type PathKind string

const (
	// PathDirect: CurAddr is set; packets go straight to that UDP ip:port.
	PathDirect PathKind = "direct"
	// PathPeerRelay: PeerRelay is set; packets go through another tailnet node.
	PathPeerRelay PathKind = "peer-relay"
	// PathDERP: the peer is Active and neither CurAddr nor PeerRelay is set,
	// so packets go through the peer's home DERP region ("relay \"code\"").
	PathDERP PathKind = "relay"
	// PathIdle: nothing was sent recently, so no path is negotiated.
	PathIdle PathKind = "idle"
	// PathOffline: the control server says the peer is offline.
	PathOffline PathKind = "offline"
	// PathUnknown: the evidence shows no path (pasted `tailscale ping
	// --tsmp` or `--icmp` output alone: its pongs name the ping type, not
	// a path, cmd/tailscale/cli/ping.go runPing). Classify never returns
	// it.
	PathUnknown PathKind = "unknown"
)

// Rank orders path kinds relayed first: DERP relay 0, peer relay 1,
// direct 2, idle 3, offline 4, anything else 5 (the Peers pane's sort,
// serve's --max-peers).
func (k PathKind) Rank() int {
	switch k {
	case PathDERP:
		return 0
	case PathPeerRelay:
		return 1
	case PathDirect:
		return 2
	case PathIdle:
		return 3
	case PathOffline:
		return 4
	}
	return 5
}

// Path is a peer's current path and the words tailscale status would print.
type Path struct {
	Kind PathKind `json:"kind"`
	// Addr is the direct UDP endpoint (from PeerStatus.CurAddr); zero unless Kind is PathDirect.
	Addr netip.AddrPort `json:"addr,omitzero"`
	// PeerRelay is PeerStatus.PeerRelay ("ip:port:vni:N"); empty unless Kind is PathPeerRelay.
	PeerRelay safetext.Text `json:"peer_relay,omitempty"`
	// DERPCode is the region code relayed through (PeerStatus.Relay); set for PathDERP.
	DERPCode safetext.Text `json:"derp_code,omitempty"`
	// Text is the path as `tailscale status` words it, without the tx/rx
	// suffix: `active; direct 203.0.113.5:41641`, `active; relay "tok"`,
	// `active; peer-relay …`, `idle`, `offline, last seen 3h ago`.
	Text safetext.Text `json:"text"`
}

// ReasonID is a stable identifier from the reason catalogue (docs/diagnosis.md).
type ReasonID string

// Reason ids. Stable: they appear in JSON output and docs.
const (
	ReasonDirect                 ReasonID = "direct"
	ReasonPeerRelay              ReasonID = "peer-relay"
	ReasonOffline                ReasonID = "offline"
	ReasonIdle                   ReasonID = "idle"
	ReasonNoEndpoints            ReasonID = "no-endpoints"
	ReasonPrivateEndpointsOnly   ReasonID = "private-endpoints-only"
	ReasonLocalUDPBlocked        ReasonID = "local-udp-blocked"
	ReasonLocalHardNAT           ReasonID = "local-hard-nat"
	ReasonBothHardNAT            ReasonID = "both-hard-nat"
	ReasonDiscoUnanswered        ReasonID = "disco-unanswered"
	ReasonFarHomeDERP            ReasonID = "far-home-derp"
	ReasonLostDirect             ReasonID = "lost-direct"
	ReasonDeviceProbeTableFull   ReasonID = "device-probe-table-full"
	ReasonDeviceNoPublicEndpoint ReasonID = "device-no-public-endpoint"
	ReasonUnexplained            ReasonID = "unexplained"
	// ReasonKeyExpired: the peer's node key expired; magicsock refuses to
	// send to it (wgengine/magicsock endpoint.send returns errExpired).
	ReasonKeyExpired ReasonID = "key-expired"
	// ReasonNoHandshake: we keep sending but no WireGuard handshake
	// completes, so there is no working path at all (not only no direct one).
	ReasonNoHandshake ReasonID = "no-handshake"
	// ReasonNoHomeDERP: Status.Relay is empty on an active path: the peer's
	// home DERP is 0 or not in our DERP map, so there is no DERP path to it.
	ReasonNoHomeDERP ReasonID = "no-home-derp"
	// ReasonNoCommonFamily: the peer's public endpoints use only an address
	// family (IPv6) that does not work here.
	ReasonNoCommonFamily ReasonID = "no-common-family"
	// ReasonLocalTCP443Only: the tailnet policy restricts this node to TCP
	// 443 (node attribute only-tcp-443), so every path goes through DERP.
	ReasonLocalTCP443Only ReasonID = "local-tcp443-only"
	// ReasonPathUnknown: the evidence names no path for the peer (a
	// pasted TSMP or ICMP ping names the ping type, not a path).
	ReasonPathUnknown ReasonID = "path-unknown"

	// Peer-side reasons: they rest on the peer's own facts (PeerSide),
	// from the control API, a peer snapshot, or its NetInfo when control
	// passes it on.

	// ReasonPeerHardNAT: the peer's NAT maps per destination, it has no
	// port mapping, and our side is not hard.
	ReasonPeerHardNAT ReasonID = "peer-hard-nat"
	// ReasonHardAndFilteringNAT: a hard NAT on one end meets a NAT on the
	// other that filters unsolicited packets (easy, but with no port
	// mapping): relayed although only one end is hard.
	ReasonHardAndFilteringNAT ReasonID = "hard-and-filtering-nat"
	// ReasonPeerUDPBlocked: the peer reports that UDP does not work for it.
	ReasonPeerUDPBlocked ReasonID = "peer-udp-blocked"
	// ReasonPeerFarHomeDERP: the peer's own latencies show a region much
	// nearer to it than its home (explains slowness; goes in Also).
	ReasonPeerFarHomeDERP ReasonID = "peer-far-home-derp"
	// ReasonPeerOldClient: the peer's client predates a feature the path
	// could use (peer relays: Tailscale 1.86, capability version 121,
	// magicsock's capVerIsRelayCapable).
	ReasonPeerOldClient ReasonID = "peer-old-client"

	// ReasonDERPUnreachable: a health warning says tailscaled cannot
	// reach the DERP region the path is relayed through (or any region).
	ReasonDERPUnreachable ReasonID = "derp-unreachable"
	// ReasonSameNATLANBlocked: both ends share one public address and one
	// LAN, so the NAT does not matter; the LAN path between them is blocked.
	ReasonSameNATLANBlocked ReasonID = "same-nat-lan-blocked"
	// ReasonSharedNATNoHairpin: both ends leave through one public
	// address from different LANs; the shared NAT does not hairpin.
	ReasonSharedNATNoHairpin ReasonID = "shared-nat-no-hairpin"
	// ReasonLocalInboundUDPBlocked: this end has no NAT (a public address
	// on its interface), yet the path is relayed: inbound UDP is dropped here.
	ReasonLocalInboundUDPBlocked ReasonID = "local-inbound-udp-blocked"
	// ReasonPeerInboundUDPBlocked: the peer has no NAT, yet the path is
	// relayed: inbound UDP is dropped on the peer's end.
	ReasonPeerInboundUDPBlocked ReasonID = "peer-inbound-udp-blocked"
	// ReasonLocalPortMapBlocked: this host holds and advertises a port
	// mapping, yet the path is relayed: the mapping passes no traffic.
	ReasonLocalPortMapBlocked ReasonID = "local-portmap-blocked"
	// ReasonLocalDoubleNAT: this host's port mapping was made on a
	// router behind another NAT (its external address is private, or in
	// a carrier's 100.64.0.0/10), so nothing outside reaches it, and the
	// NAT in front needs one.
	ReasonLocalDoubleNAT ReasonID = "local-double-nat"
	// ReasonPeerPortMapBlocked: the peer holds a port mapping, yet the
	// path is relayed.
	ReasonPeerPortMapBlocked ReasonID = "peer-portmap-blocked"
	// ReasonDirectInTunnel: a direct path to a private address that lies
	// inside another peer's subnet route: maybe WireGuard inside WireGuard.
	ReasonDirectInTunnel ReasonID = "direct-in-tunnel"

	// Reasons about this node itself (diagnoseSelf; the others are in
	// selfverdict.go).

	// ReasonTailnetRangeCollision: an interface that is not Tailscale's
	// holds an address in 100.64.0.0/10, the tailnet's own range.
	ReasonTailnetRangeCollision ReasonID = "tailnet-range-collision"

	// ReasonKnownClientBug: a known path-affecting bug of this node's or
	// the peer's Tailscale version, with its symptom in the evidence
	// (knownbugs.go), explains it better than the network.
	ReasonKnownClientBug ReasonID = "known-client-bug"
)

// Check is one piece of evidence the diagnosis looked at: which field, what
// value it had, and how it bears on the verdict (State; Failed mirrors
// State == CheckFail for older readers of the JSON).
type Check struct {
	// Field names the source, e.g. "WhoIs.Node.Endpoints", "NetInfo.WorkingUDP".
	Field safetext.Text `json:"field"`
	// Value is the observed value, rendered as text ("[]", "false", "203.0.113.5:41641").
	Value safetext.Text `json:"value"`
	// Failed is true when this check explains (part of) why the path is
	// relayed; for a board's check (Source "device"), when the board's
	// fact is bad, whatever the path.
	Failed bool `json:"failed"`
	// State is ok, fail, info or unknown; "" reads as ok unless Failed (use
	// Mark). Set by Judge on every check.
	State CheckState `json:"state,omitempty"`
	// Note is a short human reading of the check.
	Note safetext.Text `json:"note,omitempty"`
	// Source is where the value came from: "localapi" (our tailscaled),
	// "control-api", "peer-snapshot", "netcheck" (tailpath's own STUN
	// measurement) or "device" (a linked board's telemetry).
	Source string `json:"source,omitempty"`
}

// CheckState is how one Check bears on the verdict.
type CheckState string

const (
	// CheckOK: the value rules this cause out (or shows a healthy path).
	CheckOK CheckState = "ok"
	// CheckFail: the value explains (part of) why the path is relayed or down.
	CheckFail CheckState = "fail"
	// CheckInfo: a fact that neither explains nor rules out relaying
	// (Status.PeerRelay = "" on a DERP path, the board's name).
	CheckInfo CheckState = "info"
	// CheckUnknown: the value was not available (no netcheck yet, WhoIs
	// failed, the peer does not share its NAT type).
	CheckUnknown CheckState = "unknown"
)

// Mark is c's state for display: CheckFail when Failed, else State, else
// CheckOK (a Check built without a State, e.g. by an older fixture).
func (c Check) Mark() CheckState {
	switch {
	case c.Failed:
		return CheckFail
	case c.State == "" || c.State == CheckFail:
		return CheckOK
	}
	return c.State
}

// Verdict is the diagnosis of one peer's path.
type Verdict struct {
	// Reason is the primary reason id.
	Reason ReasonID `json:"reason"`
	// Also lists further reasons that hold too, most telling first.
	Also []ReasonID `json:"also,omitempty"`
	// Summary is a one-phrase reason for the Peers table.
	Summary safetext.Text `json:"summary"`
	// Checks is the evidence checklist, in the order it was evaluated.
	Checks []Check `json:"checks"`
	// Fix is the suggested fix; empty when nothing needs fixing.
	Fix safetext.Text `json:"fix,omitempty"`
	// PeerSide is true when the primary reason rests on the peer's own
	// facts (a peer-side reason, or a failing check of the peer's end).
	PeerSide bool `json:"peer_side,omitempty"`
	// Refuted are the reasons whose own check held but that a fact in
	// the same input refutes (Rule.Refutes), with the fact: never the
	// Reason, never in Also.
	Refuted []Refutation `json:"refuted,omitempty"`
	// Settle is what would settle the verdict when it is open (the
	// reasons still possible and the facts that decide between them,
	// settle.go); nil when it is settled.
	Settle *Settle `json:"settle,omitempty"`
	// Pending: nothing is judged yet, because the facts a verdict reads
	// are still coming (Snapshot.Pending); the rest of the verdict is
	// empty. The dashboard shows "reason coming…". Never in a verdict
	// that is shown as judged, written or saved.
	Pending bool `json:"-"`
}

// Peer is everything tailpath knows about one peer. Strings from outside
// (names, OS) are already sanitised with safetext.Clean.
type Peer struct {
	// ID is the node's stable ID (tailcfg.StableNodeID).
	ID safetext.Text `json:"id"`
	// Name is the short host name (first label of DNSName, else HostName).
	Name safetext.Text `json:"name"`
	// DNSName is the MagicDNS FQDN without the trailing dot.
	DNSName safetext.Text `json:"dns_name,omitempty"`
	// OS is the peer's OS as reported by its Hostinfo ("linux", "windows", …).
	OS safetext.Text `json:"os,omitempty"`
	// TailscaleIPs are the peer's tailnet addresses (100.64.0.0/10, fd7a:115c:a1e0::/48).
	TailscaleIPs []netip.Addr `json:"tailscale_ips"`
	// Online is the control server's view; nil means the control server didn't say.
	Online *bool `json:"online"`
	// OnlineSource names the field Online was read from: "Status.Online"
	// (true), "WhoIs.Node.Online" (the netmap's tri-state) or
	// "Status.LastSeen" (control reported a last-seen time, so not online);
	// "" when Online is nil.
	OnlineSource string `json:"online_source,omitempty"`
	// Expired is PeerStatus.Expired: the peer's node key has expired, and
	// KeyExpiry when it did (or will); zero when the key never expires or
	// it is unknown.
	Expired   bool      `json:"expired,omitempty"`
	KeyExpiry time.Time `json:"key_expiry,omitzero"`
	// Active is PeerStatus.Active: something was sent to the peer recently.
	Active bool `json:"active"`
	// Path is the classified current path.
	Path Path `json:"path"`
	// HomeDERP is the peer's home DERP region id (WhoIs Node.HomeDERP, else from Relay); 0 means unknown.
	HomeDERP int `json:"home_derp,omitempty"`
	// HomeDERPCode is the region code of HomeDERP (PeerStatus.Relay).
	HomeDERPCode safetext.Text `json:"home_derp_code,omitempty"`
	// Endpoints are the UDP endpoints the peer advertises (WhoIs Node.Endpoints);
	// nil with EndpointsKnown false when WhoIs was not available.
	Endpoints      []netip.AddrPort `json:"endpoints"`
	EndpointsKnown bool             `json:"endpoints_known"`
	// TxBytes and RxBytes are WireGuard byte counters since the daemon started.
	TxBytes int64 `json:"tx_bytes"`
	RxBytes int64 `json:"rx_bytes"`
	// TxRate and RxRate are bytes per second over the last poll interval;
	// 0 on the first poll, when RatesKnown is false.
	TxRate     float64 `json:"tx_rate"`
	RxRate     float64 `json:"rx_rate"`
	RatesKnown bool    `json:"rates_known,omitempty"`
	// LastHandshake is the last WireGuard handshake. Zero means none is
	// recorded: never, or the peer was removed from wireguard-go while idle
	// (tailscaled trims idle peers from its WireGuard config).
	LastHandshake time.Time `json:"last_handshake,omitzero"`
	// HandshakeUnknown is true when the source does not show handshakes
	// at all (pasted `tailscale status` text, probes/snapshot), so a zero
	// LastHandshake is unknown rather than none recorded.
	HandshakeUnknown bool `json:"handshake_unknown,omitempty"`
	// WireGuard is the peer's WireGuard session state as tailscaled
	// reports it on the IPN bus (ipn.NotifyPeerWireGuardState): "none",
	// "handshake" (one in progress, no usable session), "established" or
	// "expired"; "" when not reported (an older tailscaled, a snapshot
	// without it). WireGuardSince is when the peer entered that state.
	WireGuard      safetext.Text `json:"wireguard,omitempty"`
	WireGuardSince time.Time     `json:"wireguard_since,omitzero"`
	// NoHandshakeSince is when tailpath first saw the peer Active without a
	// handshake within RecentHandshake, carried from snapshot to snapshot
	// by Gather while that lasts; zero otherwise.
	NoHandshakeSince time.Time `json:"no_handshake_since,omitzero"`
	// LastSeen is when the control server last saw the peer; zero if unknown.
	LastSeen time.Time `json:"last_seen,omitzero"`
	// LastSeenAgo, when set, is the age a pasted `tailscale status` gave
	// ("last seen 3d ago"), from which LastSeen was computed: LastSeen is
	// then no more precise than that, and verdicts say the age instead.
	LastSeenAgo time.Duration `json:"last_seen_ago_ns,omitempty"`
	// Latency is the most recent ping round trip; 0 means not measured.
	Latency time.Duration `json:"latency_ns,omitempty"`
	// Verdict is the diagnosis of Path.
	Verdict Verdict `json:"verdict"`
	// NAT is the peer's own NetInfo as control shares it in its Hostinfo
	// (WhoIs Node.Hostinfo.NetInfo); nil when not shared or WhoIs failed.
	NAT *NATInfo `json:"nat,omitempty"`
	// PeerSide is the peer's end of the path from every source tailpath
	// has (its NetInfo via WhoIs, the control API, a peer snapshot),
	// merged (MergePeerSide); nil when none says anything.
	PeerSide *PeerSide `json:"peer_side,omitempty"`
	// ExitNode is PeerStatus.ExitNode: we route internet traffic through it.
	ExitNode bool `json:"exit_node,omitempty"`
	// WireGuardOnly is a node that speaks WireGuard and no DISCO (a
	// Mullvad exit node: tailcfg.Node.IsWireGuardOnly, or a MagicDNS
	// name under mullvad.ts.net): magicsock picks its CurAddr without a
	// pong (endpoint.go addrForWireGuardSendLocked), so its "direct"
	// proves nothing about UDP until bytes come back.
	WireGuardOnly bool `json:"wireguard_only,omitempty"`
	// PingRun summarises the last finished DISCO "ping until direct" run the
	// Source made to this peer; nil if none. Judge uses it as the
	// evidence for disco-unanswered.
	PingRun *PingRun `json:"ping_run,omitempty"`
	// ICMPReply is whether the last `tailscale ping --icmp` to the peer
	// (pasted) was answered: an ICMP echo through WireGuard that the
	// peer's own OS answers, so its host firewall can drop it where a
	// DISCO ping, which tailscaled answers itself, passes; nil when none
	// was sent.
	ICMPReply *bool `json:"icmp_reply,omitempty"`
	// LastDirect is the last time a snapshot saw this peer's path direct,
	// and LastDirectAddr the address then; zero when not seen direct within
	// LostDirectWindow. Carried from snapshot to snapshot by Gather.
	LastDirect     time.Time      `json:"last_direct,omitzero"`
	LastDirectAddr netip.AddrPort `json:"last_direct_addr,omitzero"`
	// LastChange is the newest entry of the daemon's endpoint-change log for
	// this peer, read only for lost-direct candidates; nil otherwise.
	LastChange *EndpointChange `json:"last_change,omitempty"`
}

// EndpointChange is one entry of the daemon's per-peer endpoint-change log
// (magicsock.EndpointChange via /localapi/v0/debug-peer-endpoint-changes).
type EndpointChange struct {
	When time.Time `json:"when"`
	// What is the daemon's event name, e.g. "handlePongConnLocked-bestAddr-update",
	// "deleteEndpointLocked-bestAddr-<why>", "updateFromNode-DERP".
	What safetext.Text `json:"what"`
	// From and To are the previous and new state as compact JSON text
	// (sanitised, at most 160 bytes); empty when absent.
	From safetext.Text `json:"from,omitempty"`
	To   safetext.Text `json:"to,omitempty"`
}

// PingRun summarises one finished DISCO "ping until direct" run.
type PingRun struct {
	// At is when the run ended.
	At time.Time `json:"at"`
	// Tries is the number of pings that were answered or timed out on
	// their own; Pongs how many were answered. A ping the run's time
	// limit cut off on its way is in CutOff, not here: it is no try, so
	// never evidence that the peer does not answer.
	Tries int `json:"tries"`
	Pongs int `json:"pongs"`
	// Direct is true when a pong came over a direct UDP path.
	Direct bool `json:"direct"`
	// Via is the last pong's path in tailscale ping's words ("DERP(nyc)").
	Via safetext.Text `json:"via,omitempty"`
	// Latency is the last pong's round trip; 0 when none came. It becomes
	// the peer's Latency, as a dashboard ping's does.
	Latency time.Duration `json:"latency_ns,omitempty"`
	// Probe is true for a run of tailpath's bounded probe (`status
	// --probe`, P in the dashboard), which starts with one TSMP ping so
	// that magicsock sends CallMeMaybe at once (endpoint.send →
	// sendDiscoPingsLocked) rather than at its next heartbeat.
	Probe bool `json:"probe,omitempty"`
	// TSMPReply is whether that TSMP ping was answered through
	// WireGuard; nil when none was sent or it did not finish. A pasted
	// `tailscale ping --tsmp` run beside the DISCO run sets it too.
	TSMPReply *bool `json:"tsmp_reply,omitempty"`
	// CutOff is how many pings the probe's time budget ended before they
	// were answered or timed out (probes/discoping): not tried.
	CutOff int `json:"cut_off,omitempty"`
	// Unfinished is set when the probe's budget ended before this peer's
	// run did (its pings cut off, or none sent): the run is what it got
	// to, and the peer was not probed to the end.
	Unfinished bool `json:"unfinished,omitempty"`
}

// Self is the local node and its NAT facts (from the self node's NetInfo).
type Self struct {
	Name         safetext.Text `json:"name"`
	DNSName      safetext.Text `json:"dns_name,omitempty"`
	OS           safetext.Text `json:"os,omitempty"`
	TailscaleIPs []netip.Addr  `json:"tailscale_ips"`
	// Version is this node's tailscaled version (Status.Version, a
	// pasted `tailscale version` or log start line); "" unknown. Known
	// client bugs are matched against it (knownbugs.go).
	Version safetext.Text `json:"version,omitempty"`
	// HomeDERP is NetInfo.PreferredDERP; 0 means unknown.
	HomeDERP     int           `json:"home_derp,omitempty"`
	HomeDERPCode safetext.Text `json:"home_derp_code,omitempty"`
	// NAT holds the daemon's own netcheck facts; nil when NetInfo is absent.
	NAT *NATInfo `json:"nat,omitempty"`
	// Endpoints are the UDP endpoints we advertise (WhoIs of our own IP,
	// Node.Endpoints); nil when unknown.
	Endpoints []netip.AddrPort `json:"endpoints,omitempty"`
	// EndpointTypes are Endpoints' types as tailscaled logged them
	// ("local", "stun", "portmap", "stun4localport"; magicsock's
	// tailcfg.EndpointType), one per endpoint in the same order; nil
	// when not known (a live capture: Status and the netmap carry no
	// types, only tailscaled's "endpoints changed" log line does).
	EndpointTypes []string `json:"endpoint_types,omitempty"`
	// Health is the daemon's health warnings (Status.Health), sanitised.
	Health []safetext.Text `json:"health,omitempty"`
	// OnlyTCP443 is true when the tailnet policy gives this node the
	// only-tcp-443 attribute (tailcfg.NodeAttrOnlyTCP443, in
	// Status.Self.CapMap): it sends nothing but TCP 443, so every path
	// goes through DERP.
	OnlyTCP443 bool `json:"only_tcp_443,omitempty"`
	// RandomizePort is true when the tailnet policy sets
	// randomizeClientPort for this node (the randomize-client-port
	// attribute in Status.Self.CapMap): magicsock binds a random UDP port
	// and ignores --port (wgengine/userspace.go Reconfig), so no fix may
	// rest on `tailscaled --port` and a static forward until it goes.
	RandomizePort bool `json:"randomize_port,omitempty"`
	// NoSTUN is true when every node of the DERP map has STUN disabled
	// (STUNPort -1), so netcheck cannot test UDP and WorkingUDP false says
	// nothing about UDP.
	NoSTUN bool `json:"no_stun,omitempty"`
	// NoIPv6STUN is true when no node of the DERP map can take an IPv6
	// STUN probe (STUN off, IPv6 "none", or an IPv4 STUNTestIP:
	// net/netcheck makeProbePlan, nodeAddrPort), so WorkingIPv6 false
	// says nothing about IPv6.
	NoIPv6STUN bool `json:"no_ipv6_stun,omitempty"`
	// DERPLatencyFrom says where NAT.DERPLatency came from: "netinfo"
	// (tailscaled's NetInfo, as control echoes it) or "netcheck" (measured
	// by tailpath, GatherOptions.Latency). DERPLatencyAt is when they were
	// measured, zero when unknown: tailscaled re-sends NetInfo only when
	// something other than latency changes (magicsock skips NetInfo updates
	// that are tailcfg.NetInfo.BasicallyEqual, which ignores DERPLatency),
	// so NetInfo latencies are dated only when tailpath sees them change.
	// DERPLatencySeen is when tailpath first saw NetInfo's current values.
	DERPLatencyFrom string    `json:"derp_latency_from,omitempty"`
	DERPLatencyAt   time.Time `json:"derp_latency_at,omitzero"`
	DERPLatencySeen time.Time `json:"derp_latency_seen,omitzero"`
	// NetInfoLatency is NetInfo's DERPLatency as tailscaled last reported
	// it, kept when a fresh measurement (DERPLatencyFrom "netcheck")
	// replaced it in NAT: what the daemon's own report said, beside what
	// tailpath measured; nil otherwise.
	NetInfoLatency map[int]time.Duration `json:"netinfo_latency,omitempty"`
	// Traffic is tailscaled's own count of bytes and packets by path
	// (direct, DERP, peer relay), from its client metrics; nil when the
	// source has none (a pasted input).
	Traffic *Traffic `json:"traffic,omitempty"`
	// Evidence is this node's own trouble as tailscaled's log and the CLI
	// show it (pasted input only, selfverdict.go); nil when none was read.
	Evidence *SelfEvidence `json:"evidence,omitempty"`
	// Verdict is this node's own verdict (Judge: diagnoseSelf): trouble at this
	// end that touches every path; nil when the evidence shows none.
	// status, --json (self.verdict), snapshots, the Peers header and
	// /metrics all show this one.
	Verdict *Verdict `json:"verdict,omitempty"`
	// View is what the Self tab, status's self block, --json and /metrics
	// show of this node, worked out from the facts above by Judge
	// (DescribeSelf): the home DERP choice explained, every region's
	// latency, the health warnings' meanings, the known bugs of this
	// version; nil before Judge ran.
	View *SelfView `json:"view,omitempty"`
	// Settle is what would settle this node's own verdict, or show it has
	// one (a self rule that would hold but for an unknown fact); nil when
	// nothing is open. Judge writes it beside Verdict.
	Settle *Settle `json:"settle,omitempty"`
	// STUNServers is how many distinct STUN servers (IPv4 address and
	// port) the DERP map offers; 0 when unknown. netcheck compares the
	// mapping two of them see, so with one it cannot see a hard NAT.
	STUNServers int `json:"stun_servers,omitempty"`
	// DERPRegions is how many regions of the DERP map can relay (not
	// STUN-only); 0 when unknown.
	DERPRegions int `json:"derp_regions,omitempty"`
	// Routes are the subnet routes other peers advertise
	// (PeerStatus.PrimaryRoutes), by the peer that serves them.
	Routes []SubnetRoute `json:"routes,omitempty"`
	// Host is what tailpath read of the host it runs on (interfaces,
	// firewall); nil when not read (GatherOptions.Host unset, a pasted
	// input without the host's own tools' output).
	Host *HostFacts `json:"host,omitempty"`
	// Daemon is how tailscaled runs here (its flags, prefs, the
	// install) as far as the input shows it; nil when nothing does.
	Daemon *Daemon `json:"daemon,omitempty"`
	// Prose lists the fields (a Check's Field) whose value came from
	// the poster's words rather than a tool's output ("UDP: false" in a
	// sentence or a bullet): checks of them say so (Source "prose").
	Prose []string `json:"prose,omitempty"`
}

// SubnetRoute is one subnet route a peer advertises.
type SubnetRoute struct {
	Prefix netip.Prefix `json:"prefix"`
	// Via is the name of the peer that serves it.
	Via safetext.Text `json:"via"`
}

// HostFacts are facts tailpath reads from the host it runs on, which are
// tailscaled's when both run on one machine (probes/hostnet reads them).
type HostFacts struct {
	// At is when they were read.
	At time.Time `json:"at"`
	// Interfaces are the host's interfaces that are up, with their
	// addresses; InterfacesErr says why they are unknown.
	Interfaces    []Interface   `json:"interfaces,omitempty"`
	InterfacesErr safetext.Text `json:"interfaces_error,omitempty"`
	// Firewall is how this host's nftables ruleset treats inbound UDP
	// to tailscaled's port; nil when not read.
	Firewall *FirewallFacts `json:"firewall,omitempty"`
	// Neighbors are the addresses this host's neighbour table (ARP, NDP)
	// holds a link-layer address for (reachable, stale, delay, probe or
	// permanent): on one link with it. NeighborsRead says whether the
	// table was read (Linux); NeighborsErr why not.
	Neighbors     []netip.Addr  `json:"neighbors,omitempty"`
	NeighborsRead bool          `json:"neighbors_read,omitempty"`
	NeighborsErr  safetext.Text `json:"neighbors_error,omitempty"`
	// Down are interfaces the host's tools listed as down (`ip link`'s
	// DOWN, Windows' "Media disconnected"): not in Interfaces.
	Down []safetext.Text `json:"down,omitempty"`
	// Routes are this host's routes into tailscaled's tunnel (Linux
	// table 52: the subnet routes it accepted), as `ip route` printed
	// them; nil when not read.
	Routes []HostRoute `json:"routes,omitempty"`
	// BypassRule says whether `ip rule` (Linux) showed tailscaled's rule
	// that sends its own marked packets to the main table (priority
	// 5210, fwmark 0x80000/0xff0000: wgengine/router/osrouter
	// router_linux.go baseIPRules), which keeps its UDP out of table 52;
	// nil when not read.
	BypassRule *bool `json:"bypass_rule,omitempty"`
}

// Interface is one network interface of the host.
type Interface struct {
	Name  safetext.Text  `json:"name"`
	Addrs []netip.Prefix `json:"addrs,omitempty"`
	// Tailscale is true for tailscaled's own tunnel (named tailscale*,
	// utun* or "Tailscale", or holding our Tailscale address).
	Tailscale bool `json:"tailscale,omitempty"`
	// Bridge is true for a container or VM bridge (docker0, br-*,
	// virbr*, cni*, podman*, lxdbr*): its addresses are no LAN.
	Bridge bool `json:"bridge,omitempty"`
}

// Firewall verdicts (FirewallFacts.Verdict).
const (
	FirewallAccept  = "accept"
	FirewallDrop    = "drop"
	FirewallUnknown = "unknown"
)

// FirewallFacts is what this host's nftables ruleset does with a new
// inbound UDP packet to tailscaled's port.
type FirewallFacts struct {
	// Port is tailscaled's UDP port judged (from our endpoints).
	Port uint16 `json:"port"`
	// Verdict is FirewallAccept, FirewallDrop or FirewallUnknown.
	Verdict string `json:"verdict"`
	// Stateful: with Verdict drop, replies to what this host sent are
	// accepted (a ct state established rule comes before the drop).
	Stateful bool `json:"stateful,omitempty"`
	// Why says how it was decided, or why it is unknown ("not root",
	// "rule too complex to judge: …").
	Why safetext.Text `json:"why,omitempty"`
}

// NATInfo is the subset of tailcfg.NetInfo the diagnosis uses. Pointer
// booleans are nil when the daemon hasn't measured them (tailcfg's opt.Bool "").
type NATInfo struct {
	WorkingUDP            *bool `json:"working_udp"`
	WorkingIPv6           *bool `json:"working_ipv6"`
	MappingVariesByDestIP *bool `json:"mapping_varies_by_dest_ip"`
	HavePortMap           bool  `json:"have_port_map"`
	// PortMapUnknown is true when the source does not say whether a
	// port mapping exists (a pasted `tailscale netcheck` that did not
	// check; never the daemon's NetInfo, which knows): HavePortMap false
	// then means unknown, and no NAT reason rests on it.
	PortMapUnknown bool `json:"port_map_unknown,omitempty"`
	// UPnP, PMP and PCP: a port-mapping service answered (which is not a
	// mapping: HavePortMap is).
	UPnP *bool `json:"upnp"`
	PMP  *bool `json:"pmp"`
	PCP  *bool `json:"pcp"`
	// LinkType is NetInfo.LinkType ("wired", "wifi", "mobile"); "" if unknown.
	LinkType safetext.Text `json:"link_type,omitempty"`
	// DERPLatency is the measured latency to each DERP region id (from
	// NetInfo.DERPLatency, best of v4/v6); nanoseconds in JSON.
	DERPLatency map[int]time.Duration `json:"derp_latency,omitempty"`
	// FromCLI is true when the facts come from `tailscale netcheck` run
	// by the CLI (a paste), not tailscaled: the CLI measures from a
	// socket of its own on an OS-assigned port (cmd/tailscale/cli
	// netcheck.go → netcheck.Client.Standalone, bind ":0"), so its
	// MappingVariesByDestIP is another mapping than tailscaled's port
	// gets (a static-port rule for 41641, or several nodes contending
	// for it, make the two differ) and decides no NAT type.
	FromCLI bool `json:"from_cli,omitempty"`
	// STUNRegions is how many DERP regions answered the report these
	// facts come from, when that is all that is known of the DERP map (a
	// pasted report); 0 when unknown. With one, MappingVariesByDestIP
	// false cannot rule out a hard NAT (net/netcheck addNodeLatency sets
	// it false on a second reply, which may come from the same server).
	STUNRegions int `json:"stun_regions,omitempty"`
}

// Region is one DERP region from the DERP map.
type Region struct {
	ID   int           `json:"id"`
	Code safetext.Text `json:"code"`
	Name safetext.Text `json:"name"`
	// Score is the DERP map's HomeParams.RegionScore for the region: its
	// latency is multiplied by it when tailscaled picks a home (net/netcheck
	// addReportHistoryAndSetPreferredDERP; below 1 prefers it); 0 when the
	// map gives none.
	Score float64 `json:"score,omitempty"`
	// NoHome is the region's NoMeasureNoHome: never measured, never
	// home, reached only for a peer homed there.
	NoHome bool `json:"no_home,omitempty"`
	// STUNOnly: every node of the region is STUN-only, so it relays
	// nothing (netcheck still measures it).
	STUNOnly bool `json:"stun_only,omitempty"`
	// Unmeasurable says why netcheck can never measure the region, as
	// its DERP map entry shows it (UnmeasurableRegion); "" when it can.
	Unmeasurable safetext.Text `json:"unmeasurable,omitempty"`
}

// Snapshot is one complete view of the tailnet from the local tailscaled.
type Snapshot struct {
	// Time is when the Status poll that built this snapshot returned.
	Time time.Time `json:"time"`
	// BackendState is ipn.State as text ("Running", "NeedsLogin", "Stopped", …).
	BackendState safetext.Text `json:"backend_state"`
	Self         Self          `json:"self"`
	// Peers are sorted by Name.
	Peers []Peer `json:"peers"`
	// Regions is the DERP map by region id; empty when the map is unavailable.
	Regions map[int]Region `json:"-"`
	// Warnings are non-fatal problems gathering evidence (e.g. "WhoIs: permission denied").
	Warnings []safetext.Text `json:"warnings,omitempty"`
	// Hidden counts the peers left out as `tailscale status` leaves them
	// out: shared-in nodes (PeerStatus.ShareeNode) and Mullvad location
	// exit nodes not in use. GatherOptions.All keeps them.
	Hidden int `json:"hidden,omitempty"`
	// ControlAPI is how the control-API source did; nil when it was not
	// asked (no credentials, --no-api).
	ControlAPI *APIStatus `json:"control_api,omitempty"`
	// Tailnet is what the whole gather shows beyond any one peer, worked
	// out by Judge (which also writes every verdict); the zero value
	// before it ran.
	Tailnet Tailnet `json:"-"`
	// Pending: the gather sent Status's peers and paths before the facts
	// the verdicts read arrived (every peer's node from the netmap or
	// WhoIs, the DERP map, the host's facts), so that the dashboard draws
	// its first frame at once (probes/tailscaled GatherOptions.Early).
	// Judge judges nothing in it: every peer's verdict is Pending and
	// this node has none, rather than a verdict from facts not yet read.
	Pending bool `json:"-"`

	// memo is what the gather that built this snapshot keeps for the next
	// one (probes/tailscaled: its WhoIs answers, a refused netmap watch,
	// NetInfo's latencies as received); opaque here, not serialised.
	memo any
}

// Memo returns what the gather that built s keeps for the next gather on
// it (nil when none: a snapshot built by hand or read from a file). Only
// the package that set it (probes/tailscaled) reads it.
func (s *Snapshot) Memo() any { return s.memo }

// SetMemo sets what Memo returns; the gather that builds s calls it once.
func (s *Snapshot) SetMemo(m any) { s.memo = m }

// Event is one message from a Source (probes/tailscaled): a *Snapshot, a
// SourceStatus, a PingResult or a ProbeProgress. The set is closed;
// switch on the concrete type.
type Event interface{ probesEvent() }

func (*Snapshot) probesEvent()     {}
func (SourceStatus) probesEvent()  {}
func (PingResult) probesEvent()    {}
func (ProbeProgress) probesEvent() {}

// LostDirectWindow is how long a peer seen direct and now relayed counts
// as lost-direct (Peer.LastDirect).
const LostDirectWindow = 10 * time.Minute

// DERPLatencyReport is a fresh measurement of our round trip to each DERP
// region, taken by tailpath itself (tailscaled.MeasureDERPLatency). Judge
// prefers it to NetInfo's latencies, which tailscaled re-sends only when
// something other than latency changes and which can therefore be hours
// old.
type DERPLatencyReport struct {
	// At is when the measurement finished.
	At time.Time `json:"at"`
	// ByRegion is the best STUN round trip per DERP region id (IPv4 or
	// IPv6); regions that did not answer are absent.
	ByRegion map[int]time.Duration `json:"by_region"`
}

// PingKind selects the ping LocalAPI runs.
type PingKind string

const (
	// PingDISCO sends DISCO pings over UDP/DERP and stops at the first direct pong.
	PingDISCO PingKind = "disco"
	// PingTSMP sends a TSMP ping through WireGuard (tests the whole tunnel).
	PingTSMP PingKind = "tsmp"
)

// Ping defaults, as `tailscale ping` uses them.
const (
	// DefaultPingTries is the number of DISCO pings before giving up on a
	// direct path (`tailscale ping -c 10`).
	DefaultPingTries = 10
	// DefaultPingTime bounds a whole run.
	DefaultPingTime = 30 * time.Second
)

// ErrNoDirect is returned by a DISCO Ping that used all its tries or time
// without a direct pong ("direct connection not established").
var ErrNoDirect = errors.New("direct connection not established")

// ErrNoReply is returned by a TSMP Ping whose one ping got no reply within
// its timeout (5 s): nothing answered through WireGuard. TSMP never tries
// for a direct path, so this is not ErrNoDirect.
var ErrNoReply = errors.New("timeout: no reply through WireGuard")

// PingResult is one pong (or failure) from an active probe.
type PingResult struct {
	// PeerID is the Peer.ID pinged.
	PeerID safetext.Text `json:"peer_id"`
	Kind   PingKind      `json:"kind"`
	// Try is the 1-based attempt number within a "ping until direct" run.
	Try int `json:"try"`
	// Latency is the round trip; 0 when Err is set.
	Latency time.Duration `json:"latency_ns"`
	// Via is the path the pong came over, in tailscale ping's words:
	// "203.0.113.5:41641", "DERP(tok)" or "peer-relay(…)".
	Via safetext.Text `json:"via,omitempty"`
	// Path is Via classified.
	Path PathKind `json:"path,omitempty"`
	// Done is true on the last result of a run (direct reached, tries or time exhausted, or error).
	Done bool `json:"done"`
	// Err is the failure text ("direct connection not established", "timeout"); empty on success.
	Err safetext.Text `json:"err,omitempty"`
}

// ProbeProgress reports a bounded probe of relayed peers (`tailpath status
// --probe`, P in the dashboard; probes/discoping) while it runs: one at the
// start (Done 0), one as each peer's run ends, one with Finished set.
type ProbeProgress struct {
	// Total is how many peers are probed; Done how many runs ended.
	Total int `json:"total"`
	Done  int `json:"done"`
	// Peer names the peer whose run just ended ("" otherwise), Run is
	// that run.
	Peer safetext.Text `json:"peer,omitempty"`
	Run  *PingRun      `json:"run,omitempty"`
	// Direct counts the runs so far that reached a direct path.
	Direct int `json:"direct"`
	// Finished is set on the last report; Elapsed is the time since the
	// start.
	Finished bool          `json:"finished,omitempty"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// SourceStatus reports whether the tailscaled source is connected. The
// dashboard shows a banner while Up is false and keeps the last snapshot.
type SourceStatus struct {
	Up bool `json:"up"`
	// Err is the actionable message while down ("failed to connect to local
	// tailscaled…; is it running?").
	Err safetext.Text `json:"err,omitempty"`
	// NextRetry is when the source will try again; zero while up.
	NextRetry time.Time `json:"next_retry,omitzero"`
}
