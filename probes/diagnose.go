package probes

import (
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Far-home-DERP threshold: the region relaying to the peer (the region in
// use, PeerStatus.Relay) is "far" when our measured latency to it is at
// least FarDERPFactor times, and at least FarDERPMargin more than, our best
// region's latency. Both must hold so that 2 ms vs 5 ms is not flagged.
const (
	FarDERPFactor = 2
	FarDERPMargin = 30 * time.Millisecond
)

// Freshness limits: evidence older than these is shown with its age but no
// longer counts towards a verdict.
const (
	// PingRunMaxAge is how long a finished DISCO "ping until direct" run
	// counts as evidence: a path can change in minutes.
	PingRunMaxAge = 5 * time.Minute
	// DERPLatencyMaxAge is how old NetInfo's DERP latencies may be (by
	// what tailpath saw, Self.DERPLatencySince) and still judge
	// far-home-derp.
	DERPLatencyMaxAge = 30 * time.Minute
	// HandshakeGrace is how long a peer may be Active with no recent
	// WireGuard handshake before no-handshake holds. WireGuard retries a
	// handshake every 5 s (REKEY_TIMEOUT) and gives up after 90 s; a few
	// tries must have failed.
	HandshakeGrace = 15 * time.Second
)

// privatePrefixes are the ranges netip's IsPrivate/IsLoopback/IsLinkLocal*
// do not cover but that a peer on another network cannot reach either.
// 198.18.0.0/15 (benchmarking) is not among them: Tailscale treats it as
// any other address.
var privatePrefixes = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"), // CGNAT (RFC 6598), also Tailscale IPs
	netip.MustParsePrefix("fd7a:115c:a1e0::/48"),
}

// IsPrivateAddr reports whether a is an address a peer on another network
// cannot send to: RFC 1918 (which includes container bridges such as
// Docker's 172.17.0.0/16 and Podman's 10.88.0.0/16), CGNAT 100.64.0.0/10,
// link-local, ULA fc00::/7, loopback, unspecified or multicast.
// Documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
// 2001:db8::/32) count as public so fixtures can use them.
func IsPrivateAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() ||
		a.IsUnspecified() || a.IsLinkLocalMulticast() || a.IsMulticast() {
		return true
	}
	for _, p := range privatePrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Diagnose explains p's current path as of now (the snapshot's time). It is
// pure: evidence in, verdict out, no I/O, safe for concurrent use. self
// carries our NetInfo (self.NAT may be nil: then local checks read
// "unknown" and never fail); regions maps DERP region ids to codes (may be
// nil). now dates the evidence: ping runs, handshakes and DERP latencies
// older than their limits are shown but do not count.
//
// Order: key-expired first (magicsock sends nothing to an expired peer),
// then direct and peer-relay paths are healthy (a peer-relay verdict lists
// in Also why it is not direct, when evidence says); offline and idle come
// from the path kind. For a DERP-relayed path the causes are checked in
// this order, the first that holds is the Reason and the rest go to Also:
// no-home-derp and no-handshake (there is no working path at all),
// local-tcp443-only, local-udp-blocked, no-endpoints,
// private-endpoints-only, peer-udp-blocked (the peer's own NetInfo, from
// the control API), no-common-family, then one NAT reason: both-hard-nat,
// hard-and-filtering-nat, local-hard-nat or peer-hard-nat (not when both
// ends have global IPv6 endpoints: netcheck measures the NAT on IPv4 only;
// not when either end has a port mapping), disco-unanswered (a fresh
// PingRun), lost-direct (seen direct within LostDirectWindow).
// far-home-derp, peer-far-home-derp and peer-old-client go to Also (they
// explain slowness or what would help, not relaying). Peer-side facts older
// than PeerSideMaxAge are shown but do not count. With no cause it is
// unexplained, and Checks list everything looked at.
// docs/diagnosis.md gives each rule with the Tailscale code it rests on.
func Diagnose(self Self, p Peer, regions map[int]Region, now time.Time) Verdict {
	d := diag{self: self, p: p, regions: regions, now: now}
	return d.run()
}

type diag struct {
	self    Self
	p       Peer
	regions map[int]Region
	now     time.Time
	checks  []Check
	// stale says why the peer side was set aside (stalePeerSide), and
	// staleField names the set-aside source's facts; "" when it was not.
	stale, staleField string
}

// add records a check that either explains relaying (failed) or rules
// that cause out.
func (d *diag) add(field, value string, failed bool, note string) {
	st := CheckOK
	if failed {
		st = CheckFail
	}
	d.checks = append(d.checks, Check{Field: field, Value: value, Failed: failed, State: st, Note: note, Source: sourceOf(field)})
}

// info records a fact that neither explains nor rules out relaying.
func (d *diag) info(field, value, note string) {
	d.checks = append(d.checks, Check{Field: field, Value: value, State: CheckInfo, Note: note, Source: sourceOf(field)})
}

// unknown records a check whose value was not available.
func (d *diag) unknown(field, note string) {
	d.checks = append(d.checks, Check{Field: field, Value: "unknown", State: CheckUnknown, Note: note, Source: sourceOf(field)})
}

// PeerSideMaxAge is how old a dated source's facts of the peer's end (the
// control API's read, a peer's snapshot) may be and still judge a path.
const PeerSideMaxAge = 10 * time.Minute

// stalePeerSide drops peer-side facts older than PeerSideMaxAge from the
// judgement, keeping the netmap's own copy when there is one; the dropped
// facts' age is said in a check.
func (d *diag) stalePeerSide() {
	ps := d.p.PeerSide
	if ps == nil || ps.At.IsZero() || d.fresh(ps.At, PeerSideMaxAge) {
		return
	}
	d.stale = ps.Source + " facts of the peer's end are " + durText(d.now.Sub(ps.At)) + " old: too old to judge the path by"
	d.staleField = peerField(ps, factMapping)
	if o := ps.Other; o != nil && (o.At.IsZero() || d.fresh(o.At, PeerSideMaxAge)) {
		d.p.PeerSide = o
		return
	}
	d.p.PeerSide = nil
}

// onlineField is the field the peer's online state came from.
func (d *diag) onlineField() string {
	if d.p.OnlineSource != "" {
		return d.p.OnlineSource
	}
	return "WhoIs.Node.Online"
}

func (d *diag) run() Verdict {
	p := &d.p
	d.stalePeerSide()
	if p.Expired {
		d.checks = make([]Check, 0, 2)
		d.add("Status.Expired", "true", true, "the peer's node key has expired: tailscaled sends it nothing (magicsock: \"peer's node key has expired\")")
		if !p.KeyExpiry.IsZero() {
			d.info("Status.KeyExpiry", p.KeyExpiry.UTC().Format(time.RFC3339), "when the key expired")
		}
		return Verdict{Reason: ReasonKeyExpired, Summary: "node key expired", Checks: d.checks,
			Fix: "re-authenticate the peer (`tailscale up` or `tailscale login` on it), or disable key expiry for it in the admin console; pings and traffic cannot reach it until then"}
	}
	switch p.Path.Kind {
	case PathDirect:
		d.checks = make([]Check, 0, 1)
		d.add("Status.CurAddr", p.Path.Addr.String(), false, "a direct UDP path is in use")
		return Verdict{Reason: ReasonDirect, Summary: "direct", Checks: d.checks}
	case PathOffline:
		d.checks = make([]Check, 0, 3)
		d.add(d.onlineField(), "false", true, "the control server says the peer is offline")
		d.add("Status.LastHandshake", handshakeText(p.LastHandshake), true, "no WireGuard handshake in the last "+RecentHandshake.String())
		if p.Active {
			d.info("Status.Active", "true", "we sent packets recently (a ping does), but nothing answered: that is not a path")
		}
		sum := "offline"
		if !p.LastSeen.IsZero() {
			sum = "offline since " + p.LastSeen.UTC().Format("2006-01-02 15:04Z")
		}
		return Verdict{Reason: ReasonOffline, Summary: sum, Checks: d.checks,
			Fix: "bring the peer up (start tailscaled on it and run `tailscale up`); nothing on this side can make a path to it"}
	case PathIdle:
		d.checks = make([]Check, 0, 2)
		d.add("Status.Active", "false", true, "nothing was sent to the peer recently, so no path is negotiated")
		if p.Online == nil {
			d.unknown("WhoIs.Node.Online", "the control server did not say")
		} else {
			d.add(d.onlineField(), strconv.FormatBool(*p.Online), false, "")
		}
		return Verdict{Reason: ReasonIdle, Summary: "idle: no recent traffic", Checks: d.checks,
			Fix: "send traffic to it or run a DISCO ping (`tailscale ping " + pingName(p) + "`) to negotiate a path"}
	}

	// Relayed: through DERP, or through a peer relay.
	d.checks = make([]Check, 0, d.relayedChecks())
	if p.Path.Kind == PathPeerRelay {
		d.add("Status.PeerRelay", p.Path.PeerRelay, false, "traffic goes through a peer relay, not DERP")
	} else {
		d.add("Status.CurAddr", `""`, true, "no trusted direct UDP address")
		d.info("Status.PeerRelay", `""`, "no peer relay in use: the traffic goes through DERP")
	}
	var causeBuf [6]ReasonID
	causes := causeBuf[:0]
	var firstFix string
	addCause := func(r ReasonID, fix string) {
		if len(causes) == 0 {
			firstFix = fix
		}
		causes = append(causes, r)
	}
	if p.Path.Kind == PathDERP {
		if d.checkHomeDERP() {
			addCause(ReasonNoHomeDERP, "the peer has no home DERP region in our DERP map, so nothing can be relayed to it unless it writes first: run `tailscale netcheck` on the peer (does it reach any DERP region?) and check that both ends use the same DERP map (derpMap in the tailnet policy file)")
		}
		if d.checkSession() {
			addCause(ReasonNoHandshake, "there is no working path at all, not only no direct one: check that the peer is up and logged in (`tailscale status` on it), that its clock is right, and that the tailnet policy lets the two nodes talk; `tailscale ping --tsmp "+pingName(p)+"` tests the tunnel")
		}
	}
	if d.checkPolicyTCP443() {
		addCause(ReasonLocalTCP443Only, "the tailnet policy file gives this node the only-tcp-443 attribute (nodeAttrs), so it sends nothing but TCP 443 and every path goes through DERP; remove the attribute for this node to allow direct UDP paths")
	}
	if d.checkLocalUDP() {
		addCause(ReasonLocalUDPBlocked, "allow outbound UDP from this host: UDP 3478 to the DERP servers for STUN, and UDP to peers' ports (41641 by default)")
	}
	ep := d.checkEndpoints()
	if ep.none {
		addCause(ReasonNoEndpoints, "make the peer advertise a UDP endpoint: allow UDP on it (it may be blocked or disabled), or, for an embedded client, make it learn and advertise its public (STUN) endpoint")
	}
	if ep.privateOnly {
		addCause(ReasonPrivateEndpointsOnly, "unless the peer is on your LAN or a network routed to yours, give it a reachable endpoint: enable UPnP/NAT-PMP/PCP on its router or forward UDP 41641 to it; if it is on your LAN or a routed site network, allow UDP between the two (guest-Wi-Fi or VLAN isolation, host firewalls)")
	}
	if d.checkPeerUDP() {
		addCause(ReasonPeerUDPBlocked, "the peer's own netcheck got no UDP reply: allow outbound UDP on the peer's host and network (UDP 3478 for STUN, and to peers' ports, 41641 by default)")
	}
	if ep.noFamily {
		addCause(ReasonNoCommonFamily, "the peer can only be reached over IPv6 and IPv6 does not work here: enable IPv6 on this network (or give the peer a public IPv4 endpoint, e.g. a UDP port forward on its router)")
	}
	if r, fix := d.checkNAT(ep.v6Both); r != "" {
		addCause(r, fix)
	}
	d.checkCGNAT()
	if d.checkPingRun() {
		addCause(ReasonDiscoUnanswered, "something drops UDP between the two ends: the peer's inbound firewall (UDP 41641 or its --port), this host's outbound firewall for ports other than 3478, or a NAT on either side that filters unsolicited packets; allow UDP both ways and compare `tailscale netcheck` on both ends")
	}
	if !p.LastDirect.IsZero() {
		buf := make([]byte, 0, 48)
		buf = p.LastDirect.UTC().AppendFormat(buf, "15:04:05Z")
		if p.LastDirectAddr.IsValid() {
			buf = append(buf, " via "...)
			buf = p.LastDirectAddr.AppendTo(buf)
		}
		d.add("Path.LastDirect", string(buf), true, "the path was direct and fell back")
		fix := "look at what changed at that time on either side (network switch, new endpoints, firewall, NAT mapping expiry); a DISCO ping re-tries the direct path"
		if lc := p.LastChange; lc != nil {
			buf = lc.When.UTC().AppendFormat(buf[:0], "15:04:05Z")
			buf = append(buf, ' ')
			buf = append(buf, lc.What...)
			d.add("EndpointChanges", string(buf), true, "the daemon's newest endpoint change for this peer")
			fix = "the daemon logged " + lc.What + " at " + lc.When.UTC().Format("15:04:05Z") + "; " + fix
		}
		addCause(ReasonLostDirect, fix)
	}
	var far bool
	var farInfo farDERP
	var extra [2]ReasonID // peer-far-home-derp, peer-old-client: slowness and what would help
	also := extra[:0]
	if p.Path.Kind == PathDERP && p.Path.DERPCode != "" {
		far, farInfo = d.checkFarDERP()
	}
	if p.Path.Kind == PathDERP {
		if d.checkPeerHomeDERP() {
			also = append(also, ReasonPeerFarHomeDERP)
		}
		if d.checkPeerClient() {
			also = append(also, ReasonPeerOldClient)
		}
	}

	v := Verdict{Checks: d.checks}
	if len(causes) > 0 {
		v.PeerSide = restsOnPeerSide(causes[0], d.checks)
	}
	if p.Path.Kind == PathPeerRelay {
		v.Reason = ReasonPeerRelay
		v.Summary = "via peer relay"
		if len(causes) > 0 {
			v.Also = append([]ReasonID(nil), causes...)
			v.Summary = "via peer relay; not direct: " + summaryFor(causes[0])
			v.Fix = firstFix
		}
		return v
	}
	if len(causes) > 0 {
		v.Reason = causes[0]
		if n := len(causes) - 1; n > 0 || far {
			v.Also = make([]ReasonID, n, n+1)
			copy(v.Also, causes[1:])
		}
		v.Summary = summaryFor(causes[0])
		v.Fix = firstFix
	} else {
		v.Reason = ReasonUnexplained
		v.Summary = "relayed; no checked cause holds"
		v.Fix = "run a DISCO ping until direct (`tailscale ping " + pingName(p) +
			"`); if it never goes direct, look for a firewall dropping UDP on either end"
		if ep.v6Both {
			v.Summary = "relayed although both ends have IPv6"
			v.Fix = "IPv4 NAT does not explain it: both ends have global IPv6 endpoints, which no NAT maps; check IPv6 reachability: inbound UDP over IPv6 on both hosts' and routers' firewalls, and `tailscale netcheck` (IPv6: yes) on both ends"
		}
	}
	if far {
		v.Also = append(v.Also, ReasonFarHomeDERP)
		if v.Reason == ReasonUnexplained {
			farSummary, farFix := d.farTexts(farInfo)
			v.Summary = "relayed; " + farSummary
			v.Fix += "; meanwhile " + farFix
		}
	}
	v.Also = append(v.Also, also...)
	if len(v.Also) == 0 {
		v.Also = nil
	}
	return v
}

// restsOnPeerSide reports whether the primary cause r is judged on the
// peer's own facts (its NetInfo, the control API, its snapshot): a reason
// that reads them, with one of them failing.
func restsOnPeerSide(r ReasonID, cs []Check) bool {
	switch r {
	case ReasonPeerHardNAT, ReasonHardAndFilteringNAT, ReasonBothHardNAT, ReasonPeerUDPBlocked:
	default:
		return false
	}
	for _, c := range cs {
		if c.Failed && isPeerField(c.Field) {
			return true
		}
	}
	return false
}

// checkPeerUDP: the peer reports that UDP does not work for it (its
// netcheck's WorkingUDP, the API's clientSupports.udp). Checked only when
// a source other than our netmap says so or NetInfo was shared.
func (d *diag) checkPeerUDP() bool {
	ps := d.p.PeerSide
	if ps == nil || ps.ClientSupports.UDP == nil {
		return false
	}
	if *ps.ClientSupports.UDP {
		d.add(peerField(ps, factUDP), "true", false, "the peer's STUN probes got UDP replies (UDP 3478; not proof for other ports)")
		return false
	}
	if d.self.NoSTUN {
		// The DERP map is the tailnet's: the peer's netcheck had no STUN either.
		d.info(peerField(ps, factUDP), "false", "not a test of UDP: the tailnet's DERP map disables STUN, so the peer's netcheck sent no STUN probe")
		return false
	}
	d.add(peerField(ps, factUDP), "false", true, "the peer's own STUN probes (UDP 3478 to the DERP servers) got no reply: UDP looks blocked on its side, or it is restricted to TCP 443 by policy")
	return true
}

// checkCGNAT records, as evidence only, an endpoint in 100.64.0.0/10 on
// either end: the address of a carrier-grade NAT (RFC 6598), which no port
// mapping on a home router reaches. ChromeOS's 100.115.92.0/23 is left out.
func (d *diag) checkCGNAT() {
	for _, side := range [2]struct {
		field string
		eps   []netip.AddrPort
	}{{"Self.Endpoints", d.self.Endpoints}, {"WhoIs.Node.Endpoints", d.p.Endpoints}} {
		for _, ep := range side.eps {
			if a := ep.Addr().Unmap(); cgnat.Contains(a) && !chromeOS.Contains(a) {
				who := "our"
				if side.field != "Self.Endpoints" {
					who = "the peer's"
				}
				d.info(side.field, a.String(), "in 100.64.0.0/10: "+who+" traffic crosses a carrier-grade NAT (the ISP's), which no port mapping on a home router reaches")
				break
			}
		}
	}
}

var (
	cgnat    = netip.MustParsePrefix("100.64.0.0/10")
	chromeOS = netip.MustParsePrefix("100.115.92.0/23")
)

// checkPeerHomeDERP: the peer's own latencies show a region much nearer to
// it than its home (FarDERPFactor and FarDERPMargin). NetInfo is re-sent
// when the home changes, so the latencies were current when the peer
// chose; they may have drifted since.
func (d *diag) checkPeerHomeDERP() bool {
	ps := d.p.PeerSide
	if ps == nil || ps.HomeDERP == 0 || len(ps.DERPLatencyMs) == 0 {
		return false
	}
	home, ok := ps.DERPLatencyMs[regionKey(d.regions, ps.HomeDERP)]
	if !ok {
		return false
	}
	bestKey, best := "", 0.0
	for k, ms := range ps.DERPLatencyMs {
		if bestKey == "" || ms < best || (ms == best && k < bestKey) {
			bestKey, best = k, ms
		}
	}
	homeD := time.Duration(home * float64(time.Millisecond))
	bestD := time.Duration(best * float64(time.Millisecond))
	far := homeD >= FarDERPFactor*bestD && homeD-bestD >= FarDERPMargin
	value := regionKey(d.regions, ps.HomeDERP) + "=" + msText(homeD) + ", best " + bestKey + "=" + msText(bestD)
	note := "the peer's home region is about as near to it as its best"
	if far {
		note = "the peer's home region is far from it while a nearer one exists (as it last reported its latencies)"
	}
	d.add(peerField(ps, factLatency), value, far, note)
	return far
}

// peerRelayMinVersion is the first Tailscale release whose clients use peer
// relays (capability version 120, 2025-07: "Client understands peer relay
// disco messages", tailcfg.go).
const (
	peerRelayMinMajor, peerRelayMinMinor = 1, 86
	peerRelayMinCap                      = 121
)

// checkPeerClient: the peer's client predates peer relays, which could
// carry a path that cannot go direct; also notes an available update.
func (d *diag) checkPeerClient() bool {
	ps := d.p.PeerSide
	if ps == nil {
		return false
	}
	old, known := false, false
	if ok, parsed := clientVersionAtLeast(ps.ClientVersion, peerRelayMinMajor, peerRelayMinMinor); parsed {
		old, known = !ok, true
	} else if ps.CapVersion > 0 {
		old, known = ps.CapVersion < peerRelayMinCap, true
	}
	if !known {
		return false
	}
	value := ps.ClientVersion
	if value == "" {
		value = "capability " + strconv.Itoa(ps.CapVersion)
	}
	note := "new enough for peer relays"
	if old {
		note = "predates peer relays (Tailscale 1.86, capability 121; magicsock's capVerIsRelayCapable), which, if a peer relay is granted, could carry this path instead of DERP"
	}
	if ps.UpdateAvailable != nil && *ps.UpdateAvailable {
		note += "; an update is available for it"
	}
	d.add(peerField(ps, factVersion), value, old, note)
	return old
}

// relayedChecks is how many checks a relayed path usually gets, so the
// slice is allocated once at its size (an underestimate only costs a
// regrowth).
func (d *diag) relayedChecks() int {
	p := &d.p
	n := 2 + 1 + 1 + 2 // CurAddr+PeerRelay, WorkingUDP, Endpoints, NAT both ends
	if p.Path.Kind == PathPeerRelay {
		n--
	} else {
		n += 2 // LastHandshake, DERPLatency
	}
	if nat := d.self.NAT; nat != nil && nat.MappingVariesByDestIP != nil && *nat.MappingVariesByDestIP {
		n++
	}
	if p.EndpointsKnown && len(p.Endpoints) > 0 && !hasPublic(p.Endpoints) {
		n++ // same-LAN
	}
	if p.PingRun != nil {
		n++
	}
	if !p.LastDirect.IsZero() {
		n += 2
	}
	return n
}

func summaryFor(r ReasonID) string {
	switch r {
	case ReasonDiscoUnanswered:
		return "DISCO pings never answered directly"
	case ReasonLostDirect:
		return "was direct, fell back to relay"
	case ReasonLocalUDPBlocked:
		return "UDP blocked here"
	case ReasonNoEndpoints:
		return "peer advertises no UDP endpoints"
	case ReasonPrivateEndpointsOnly:
		return "peer has only private endpoints"
	case ReasonBothHardNAT:
		return "hard NAT on both ends"
	case ReasonLocalHardNAT:
		return "hard NAT here, no port mapping"
	case ReasonNoHandshake:
		return "no WireGuard session: the peer does not answer"
	case ReasonNoHomeDERP:
		return "peer has no usable home DERP"
	case ReasonNoCommonFamily:
		return "no address family in common"
	case ReasonLocalTCP443Only:
		return "policy allows only TCP 443 here"
	case ReasonPeerHardNAT:
		return "hard NAT on the peer's end, no port mapping"
	case ReasonHardAndFilteringNAT:
		return "hard NAT meets a filtering NAT, no port mapping"
	case ReasonPeerUDPBlocked:
		return "UDP blocked on the peer's end"
	}
	return string(r)
}

// checkHomeDERP: Status.Relay is empty on an active path with no direct
// address: the peer's home DERP (WhoIs.Node.HomeDERP) is 0 or not in our
// DERP map. magicsock then sends over UDP if it can, else to the region
// the peer last wrote from, else fails ("no UDP or DERP addr").
func (d *diag) checkHomeDERP() bool {
	if d.p.Path.DERPCode != "" {
		return false
	}
	note := "the peer's home DERP region is unknown to us: it has none, or it is not in our DERP map"
	if h := d.p.HomeDERP; h != 0 {
		note = "the peer's home DERP region " + strconv.Itoa(h) + " is not in our DERP map"
	}
	if recentHandshake(d.p.LastHandshake, d.now) {
		// magicsock falls back to the region the peer last wrote from
		// (endpoint.send, fallbackDERPRegionForPeer), and a session is up.
		d.info("Status.Relay", `""`, note+"; a WireGuard session is up, relayed through the region the peer last wrote from")
		return false
	}
	d.add("Status.Relay", `""`, true, note)
	return true
}

// checkSession: the peer has been Active for at least HandshakeGrace (or a
// fresh DISCO run got no pong at all) without a WireGuard handshake within
// RecentHandshake. A live session re-handshakes every 2 minutes while
// traffic flows, and keys are rejected after 3 (wireguard-go
// RejectAfterTime), so an active peer without a recent handshake has no
// session.
func (d *diag) checkSession() bool {
	p := &d.p
	if p.HandshakeUnknown && p.LastHandshake.IsZero() {
		d.unknown("Status.LastHandshake", "the source does not show WireGuard handshakes (pasted `tailscale status` text)")
		return false
	}
	if recentHandshake(p.LastHandshake, d.now) {
		d.add("Status.LastHandshake", handshakeText(p.LastHandshake), false, "a WireGuard session is up")
		return false
	}
	held := !p.NoHandshakeSince.IsZero() && d.now.Sub(p.NoHandshakeSince) >= HandshakeGrace
	r := p.PingRun
	silent := r != nil && r.Pongs == 0 && r.Tries > 0 && d.fresh(r.At, PingRunMaxAge)
	if !held && !silent {
		d.info("Status.LastHandshake", handshakeText(p.LastHandshake), "no recent handshake yet; WireGuard retries every 5 s")
		return false
	}
	note := "we have been sending for " + durText(d.now.Sub(p.NoHandshakeSince)) + " and no WireGuard handshake completed"
	if !held {
		note = "no WireGuard handshake in the last " + RecentHandshake.String() + ", and DISCO pings got no answer even through DERP"
	}
	d.add("Status.LastHandshake", handshakeText(p.LastHandshake), true, note)
	if p.RatesKnown && p.RxRate == 0 {
		d.info("Status.RxBytes", "not growing", "nothing was received from the peer over the last poll")
	}
	return true
}

// checkPolicyTCP443: the node attribute only-tcp-443 (tailcfg
// NodeAttrOnlyTCP443; magicsock sends no UDP at all with it).
func (d *diag) checkPolicyTCP443() bool {
	if !d.self.OnlyTCP443 {
		return false
	}
	d.add("Self.CapMap", "only-tcp-443", true, "the tailnet policy restricts this node to TCP 443: it sends no UDP, so every path goes through DERP")
	return true
}

// checkPingRun: the last DISCO "ping until direct" run, if fresh, got pongs
// but only through DERP or a peer relay, although the peer advertises
// endpoints. Only checked when a run exists (the Source records them).
func (d *diag) checkPingRun() bool {
	r := d.p.PingRun
	if r == nil {
		return false
	}
	buf := make([]byte, 0, 64)
	buf = strconv.AppendInt(buf, int64(r.Tries), 10)
	buf = append(buf, " tries, "...)
	buf = strconv.AppendInt(buf, int64(r.Pongs), 10)
	buf = append(buf, " pongs"...)
	if r.Via != "" {
		buf = append(buf, ", last via "...)
		buf = append(buf, r.Via...)
	}
	if r.Direct {
		buf = append(buf, ", direct"...)
	}
	if !d.fresh(r.At, PingRunMaxAge) {
		buf = append(buf, ", "...)
		buf = append(buf, durText(d.now.Sub(r.At))...)
		buf = append(buf, " ago"...)
		d.info("PingRun", string(buf), "too old to count: a path can change within minutes; ping again")
		return false
	}
	failed := !r.Direct && r.Pongs > 0 && len(d.p.Endpoints) > 0
	note := "pongs came only through DERP or a peer relay: DISCO pings to the peer's endpoints were never answered directly"
	switch {
	case r.Direct:
		note = "a pong came directly; the path may go direct again soon"
	case r.Pongs == 0:
		note = "no pong at all: the peer is not answering even through DERP"
	case !d.p.EndpointsKnown:
		note = "no pong directly; the peer's endpoints are unknown, so this does not say why"
	case len(d.p.Endpoints) == 0:
		note = "no pong directly, as expected with no endpoints"
	}
	if !failed && !r.Direct {
		d.info("PingRun", string(buf), note)
	} else {
		d.add("PingRun", string(buf), failed, note)
	}
	return failed
}

// fresh reports whether t is set and at most maxAge before d.now (a zero
// now, as in hand-built tests, treats every dated fact as fresh).
func (d *diag) fresh(t time.Time, maxAge time.Duration) bool {
	if d.now.IsZero() {
		return true
	}
	return !t.IsZero() && d.now.Sub(t) <= maxAge
}

// checkLocalUDP: our netcheck says UDP does not work. netcheck sets
// WorkingUDP from STUN to the DERP map's servers (UDP 3478), so false says
// nothing when the map disables STUN, and true proves only that port.
func (d *diag) checkLocalUDP() bool {
	nat := d.self.NAT
	switch {
	case nat == nil || nat.WorkingUDP == nil:
		d.unknown("NetInfo.WorkingUDP", "the daemon has not reported a netcheck")
	case d.self.OnlyTCP443:
		d.info("NetInfo.WorkingUDP", strconv.FormatBool(*nat.WorkingUDP), "not tested: the node sends no UDP by policy")
	case !*nat.WorkingUDP && d.self.NoSTUN:
		d.info("NetInfo.WorkingUDP", "false", "not a test of UDP: the DERP map disables STUN on every node, so netcheck sent no STUN probe")
	case !*nat.WorkingUDP:
		d.add("NetInfo.WorkingUDP", "false", true, "our STUN probes (UDP 3478 to the DERP servers) got no reply: outbound UDP looks blocked")
		return true
	default:
		d.add("NetInfo.WorkingUDP", "true", false, "STUN replies came back on UDP 3478: outbound UDP works to that port (not proof for other ports)")
	}
	return false
}

// endpointFacts is what checkEndpoints found.
type endpointFacts struct {
	none, privateOnly bool
	// noFamily: the peer's public endpoints are all IPv6 and IPv6 does not work here.
	noFamily bool
	// v6Both: both ends have global IPv6 endpoints and IPv6 is not known
	// to fail on either, so IPv4 NAT facts do not decide the path.
	v6Both bool
}

// checkEndpoints: the peer advertises none, only private ones, or public
// ones of an address family that does not work here.
func (d *diag) checkEndpoints() endpointFacts {
	p := &d.p
	var f endpointFacts
	field := "WhoIs.Node.Endpoints"
	if !p.EndpointsKnown {
		// The control API lists the peer's endpoints too.
		if ps := p.PeerSide; ps != nil && ps.sourceOfFact(FactEndpoints) != SourceLocalAPI && len(ps.Endpoints) > 0 {
			p.Endpoints, p.EndpointsKnown = ps.Endpoints, true
			field = "API.clientConnectivity.endpoints"
			if ps.sourceOfFact(FactEndpoints) == SourcePeerSnapshot {
				field = "PeerSnapshot.Endpoints"
			}
		} else {
			d.unknown("WhoIs.Node.Endpoints", "WhoIs was not available")
			return f
		}
	}
	if len(p.Endpoints) == 0 {
		d.add(field, "[]", true, "the peer cannot be reached over UDP at any address")
		f.none = true
		return f
	}
	pub4, pub6 := publicFamilies(p.Endpoints)
	if !pub4 && !pub6 {
		d.add(field, endpointsText(p.Endpoints), true, "all private, CGNAT, link-local or loopback addresses: reachable only from the peer's own network")
		d.sameLAN()
		f.privateOnly = true
		return f
	}
	d.add(field, endpointsText(p.Endpoints), false, "at least one public endpoint")
	if a, ok := sharedPublicAddr(d.self.Endpoints, p.Endpoints); ok {
		d.info("Self.Endpoints", a.String(), "the same public address on both ends: both are behind one NAT, so the direct path needs their LAN addresses or the router's hairpinning")
	}
	if !pub6 {
		return f
	}
	var ours *bool
	if d.self.NAT != nil {
		ours = d.self.NAT.WorkingIPv6
	}
	switch {
	case ours == nil:
		d.unknown("NetInfo.WorkingIPv6", "whether IPv6 works here is not known; the peer has IPv6 endpoints")
	case !*ours && !pub4:
		d.add("NetInfo.WorkingIPv6", "false", true, "the peer's only public endpoints are IPv6 and IPv6 does not work here: no address family in common")
		f.noFamily = true
	case !*ours:
		d.info("NetInfo.WorkingIPv6", "false", "IPv6 does not work here; the peer's public IPv4 endpoints remain")
	default:
		d.add("NetInfo.WorkingIPv6", "true", false, "IPv6 works here and the peer has global IPv6 endpoints")
	}
	peerV6 := true
	if ps := p.PeerSide; ps != nil && ps.ClientSupports.IPv6 != nil {
		peerV6 = *ps.ClientSupports.IPv6
	}
	_, ourPub6 := publicFamilies(d.self.Endpoints)
	f.v6Both = peerV6 && ((ours != nil && *ours) || (ours == nil && ourPub6))
	return f
}

// sameLAN records whether the peer, whose endpoints are all private, is on
// one of our networks. Prefixes alone cannot tell: two homes on a router's
// default 192.168.1.0/24, Docker's first container (172.17.0.2) on every
// host, ChromeOS's 100.115.92.0/23 and 169.254.0.0/16 sandboxes look the
// same everywhere, and a routed site LAN (10.1.0.0/16 beside 10.2.0.0/16)
// shares no prefix. Only corroboration decides, so without it the check is
// unknown.
func (d *diag) sameLAN() {
	const field = "SameLAN"
	if len(d.self.Endpoints) == 0 {
		d.unknown(field, "our own endpoints are unknown; unless the peer is on your LAN, it cannot be reached at these addresses")
		return
	}
	for _, pe := range d.p.Endpoints {
		pa := pe.Addr().Unmap()
		for _, se := range d.self.Endpoints {
			sa := se.Addr().Unmap()
			if pa == sa || (pa.IsLoopback() && sa.IsLoopback()) {
				d.unknown(field, pa.String()+" is an address of ours too, but container bridges, sandboxes and loopback repeat on every host: unless the peer is on this host or your LAN, it cannot be reached there")
				return
			}
		}
	}
	for _, pe := range d.p.Endpoints {
		pa := pe.Addr().Unmap()
		for _, se := range d.self.Endpoints {
			sa := se.Addr().Unmap()
			if !sa.IsValid() || sa.Is4() != pa.Is4() || !IsPrivateAddr(sa) {
				continue
			}
			bits := 64
			if sa.Is4() {
				bits = 24
			}
			if sp, err := sa.Prefix(bits); err == nil && sp.Contains(pa) {
				d.unknown(field, pa.String()+" is in our "+sp.String()+", but many networks use the same private range: unless the peer is on your LAN, it cannot be reached there")
				return
			}
		}
	}
	d.unknown(field, "no private address of ours shares a prefix with the peer's; unless the peer is on your LAN or a network routed to it, it cannot be reached at these addresses")
}

// publicFamilies reports whether eps has a public IPv4 and a public IPv6 endpoint.
func publicFamilies(eps []netip.AddrPort) (v4, v6 bool) {
	for _, ep := range eps {
		a := ep.Addr().Unmap()
		if IsPrivateAddr(a) {
			continue
		}
		if a.Is4() {
			v4 = true
		} else {
			v6 = true
		}
	}
	return v4, v6
}

// sharedPublicAddr returns a public address that both endpoint lists hold.
func sharedPublicAddr(ours, theirs []netip.AddrPort) (netip.Addr, bool) {
	for _, s := range ours {
		sa := s.Addr().Unmap()
		if IsPrivateAddr(sa) {
			continue
		}
		for _, t := range theirs {
			if t.Addr().Unmap() == sa {
				return sa, true
			}
		}
	}
	return netip.Addr{}, false
}

// checkNAT: hard NAT (mapping varies by destination) without port mapping,
// on our end (NetInfo) and on the peer's (PeerSide, from whichever source
// has it). Tailscale's rules: easy ↔ easy and no NAT ↔ anything go direct;
// easy ↔ hard and hard ↔ hard are relayed; a port mapping rescues a hard
// NAT. A NAT "filters" when it drops unsolicited packets, as an easy NAT
// without a port mapping does. netcheck measures the mapping on IPv4 only
// (net/netcheck: "TODO: track MappingVariesByDestIP for IPv6"), so with
// v6Both the facts are shown but decide nothing.
func (d *diag) checkNAT(v6Both bool) (ReasonID, string) {
	const v6Note = "IPv4 only: both ends have global IPv6 endpoints, which no NAT maps"
	nat := d.self.NAT
	var ourHard, ourEasy, ourMap bool
	switch {
	case nat == nil || nat.MappingVariesByDestIP == nil:
		d.unknown("NetInfo.MappingVariesByDestIP", "the daemon has not measured our NAT type")
	case *nat.MappingVariesByDestIP && v6Both:
		d.info("NetInfo.MappingVariesByDestIP", "true", v6Note)
	case *nat.MappingVariesByDestIP && nat.PortMapUnknown && !nat.HavePortMap:
		d.info("NetInfo.MappingVariesByDestIP", "true", "our NAT picks a new port per destination (hard NAT); whether a port mapping rescues it is not known")
		d.unknown("NetInfo.HavePortMap", "the source does not say whether UPnP, NAT-PMP or PCP answered (netcheck: \"not checked\")")
	case *nat.MappingVariesByDestIP:
		ourMap = nat.HavePortMap
		ourHard = !ourMap
		d.add("NetInfo.MappingVariesByDestIP", "true", ourHard, "our NAT picks a new port per destination (hard NAT)")
		d.add("NetInfo.HavePortMap", strconv.FormatBool(nat.HavePortMap), ourHard, portMapNote(nat))
	default:
		ourEasy, ourMap = true, nat.HavePortMap
		d.add("NetInfo.MappingVariesByDestIP", "false", false, "our NAT is easy or absent")
	}
	ps := d.p.PeerSide
	var peerHard, peerEasy bool
	var peerMap *bool
	switch {
	case ps == nil || ps.MappingVariesByDestIP == nil:
		d.unknown(peerField(ps, factMapping), "the peer's NAT type is not known"+d.apiHint())
	case *ps.MappingVariesByDestIP && v6Both:
		d.info(peerField(ps, factMapping), "true", v6Note)
	case *ps.MappingVariesByDestIP:
		peerMap = ps.portMap()
		switch {
		case peerMap == nil:
			// Hard, but a port mapping might rescue it: no verdict.
			d.info(peerField(ps, factMapping), "true", "the peer's NAT picks a new port per destination (hard NAT); whether it can map a port is not known")
		case *peerMap:
			d.add(peerField(ps, factMapping), "true", false, "the peer's NAT is hard, but it can map a port, which rescues it")
		default:
			peerHard = true
			d.add(peerField(ps, factMapping), "true", true, "the peer's NAT picks a new port per destination (hard NAT) and it has no UPnP, NAT-PMP or PCP")
		}
	default:
		peerEasy = true
		peerMap = ps.portMap()
		d.add(peerField(ps, factMapping), "false", false, "the peer's NAT is easy or absent")
	}
	d.otherSide(ps)
	if d.stale != "" {
		d.info(d.staleField, "too old", d.stale)
	}
	// A port mapping on either end rescues a hard NAT.
	if (ourHard || peerHard) && peerEasy && peerMap != nil && *peerMap {
		d.add(peerField(ps, factPortMap), "true", false, "the peer can map a port, which rescues our hard NAT")
		return "", ""
	}
	if peerHard && ourEasy && ourMap {
		d.add("NetInfo.HavePortMap", "true", false, "we hold a port mapping, which rescues the peer's hard NAT")
		return "", ""
	}
	switch {
	case ourHard && peerHard:
		return ReasonBothHardNAT, "enable UPnP, NAT-PMP or PCP on either router, or add a static UDP port-forward (e.g. 41641 with `tailscaled --port=41641`) on one side; a granted peer relay also avoids DERP"
	case ourHard && peerEasy && d.peerFilters(ps, peerMap):
		return ReasonHardAndFilteringNAT, "the peer's router needs a port mapping: enable UPnP, NAT-PMP or PCP on it, or forward a UDP port to the peer (`tailscaled --port=41641` and a static forward of 41641); this end's hard NAT (a mobile carrier's, say) cannot be changed from here"
	case ourHard:
		return ReasonLocalHardNAT, "enable UPnP, NAT-PMP or PCP on this network's router, or add a static UDP port-forward (e.g. 41641 with `tailscaled --port=41641`); several nodes behind one firewall make NAT hard"
	case peerHard && ourEasy && d.weFilter(nat):
		return ReasonHardAndFilteringNAT, "this end's router needs a port mapping: enable UPnP, NAT-PMP or PCP here, or forward a UDP port to this host (`tailscaled --port=41641` and a static forward of 41641); the peer's hard NAT (a mobile carrier's, say) may not be changeable"
	case peerHard && ourEasy:
		return ReasonPeerHardNAT, "enable UPnP, NAT-PMP or PCP on the peer's router, or forward a UDP port to the peer (`tailscaled --port=41641` on it); several nodes behind one firewall make NAT hard, and `randomizeClientPort` helps some firewalls"
	}
	// The peer's hard NAT with our NAT type unknown: shown (failed above),
	// but not a verdict, since a hard NAT here would make it both-hard-nat.
	return "", ""
}

// peerFilters records whether the peer's easy NAT filters unsolicited
// packets: it has no port mapping (known) and has LAN addresses among its
// endpoints, so a NAT most likely sits in front of it.
func (d *diag) peerFilters(ps *PeerSide, pm *bool) bool {
	if pm == nil {
		d.unknown(peerField(ps, factPortMap), "whether the peer can map a port is not known"+d.apiHint())
		return false
	}
	behind := hasLAN(ps.Endpoints) || hasLAN(d.p.Endpoints)
	note := "no UPnP, NAT-PMP or PCP on the peer's network"
	if behind {
		note += ", and it has LAN addresses, so a NAT most likely sits in front of it, dropping what it did not ask for"
	}
	d.add(peerField(ps, factPortMap), "false", behind, note)
	return behind
}

// weFilter records whether our easy NAT filters unsolicited packets: no
// port mapping, and LAN addresses among our endpoints (so a NAT most
// likely sits in front of us).
func (d *diag) weFilter(nat *NATInfo) bool {
	if nat == nil || nat.HavePortMap || nat.PortMapUnknown {
		return false
	}
	behind := hasLAN(d.self.Endpoints)
	if behind {
		d.add("NetInfo.HavePortMap", "false", true, "no port mapping here, and this host has LAN addresses, so a NAT most likely sits in front of it, dropping what it did not ask for")
	}
	return behind
}

// otherSide shows what the older source said of the peer's NAT when two
// sources disagree (the newer one decided).
func (d *diag) otherSide(ps *PeerSide) {
	if ps == nil || ps.Other == nil || ps.Other.MappingVariesByDestIP == nil || ps.MappingVariesByDestIP == nil ||
		*ps.Other.MappingVariesByDestIP == *ps.MappingVariesByDestIP {
		return
	}
	d.info(peerField(ps.Other, factMapping), strconv.FormatBool(*ps.Other.MappingVariesByDestIP),
		"older than "+ps.Source+"'s answer, which decides")
}

// apiHint is what a person can do about an unknown peer-side fact.
func (d *diag) apiHint() string {
	if ps := d.p.PeerSide; ps != nil && ps.Source != SourceLocalAPI {
		return ""
	}
	return "; control does not pass it on: the control API (a read-only API key, TAILSCALE_API_KEY) can fill it"
}

// Peer-side facts, for peerField.
const (
	factMapping = iota
	factPortMap
	factUDP
	factIPv6
	factLatency
	factVersion
)

// peerFieldNames names each fact per source: localapi, control-api,
// peer-snapshot.
var peerFieldNames = [...][3]string{
	factMapping: {"Peer.NetInfo.MappingVariesByDestIP", "API.clientConnectivity.mappingVariesByDestIP", "PeerSnapshot.NetInfo.MappingVariesByDestIP"},
	factPortMap: {"Peer.NetInfo.HavePortMap", "API.clientConnectivity.clientSupports.upnp/pmp/pcp", "PeerSnapshot.NetInfo.HavePortMap"},
	factUDP:     {"Peer.NetInfo.WorkingUDP", "API.clientConnectivity.clientSupports.udp", "PeerSnapshot.NetInfo.WorkingUDP"},
	factIPv6:    {"Peer.NetInfo.WorkingIPv6", "API.clientConnectivity.clientSupports.ipv6", "PeerSnapshot.NetInfo.WorkingIPv6"},
	factLatency: {"Peer.NetInfo.DERPLatency", "API.clientConnectivity.latency", "PeerSnapshot.NetInfo.DERPLatency"},
	factVersion: {"Peer.Hostinfo.IPNVersion", "API.clientVersion", "PeerSnapshot.Version"},
}

// factNames are the PeerSide.FactSources names of peerField's facts.
var factNames = [...]string{
	factMapping: FactMapping, factPortMap: FactPortMap, factUDP: FactUDP,
	factIPv6: FactIPv6, factLatency: FactLatency, factVersion: FactVersion,
}

// peerField is the Field of a peer-side check of fact, named for the
// source that fact came from (localapi's names when ps is nil).
func peerField(ps *PeerSide, fact int) string {
	col := 0
	if ps != nil {
		switch ps.sourceOfFact(factNames[fact]) {
		case SourceControlAPI:
			col = 1
		case SourcePeerSnapshot:
			col = 2
		}
	}
	return peerFieldNames[fact][col]
}

// sourceOf is the Check.Source of a field, by its prefix.
func sourceOf(field string) string {
	switch {
	case strings.HasPrefix(field, "API."):
		return SourceControlAPI
	case strings.HasPrefix(field, "PeerSnapshot."):
		return SourcePeerSnapshot
	case strings.HasPrefix(field, "Netcheck."):
		return "netcheck"
	case strings.HasPrefix(field, "Device."):
		return "device"
	}
	return SourceLocalAPI
}

// isPeerField reports whether field is a fact of the peer's own end.
func isPeerField(field string) bool {
	if field == "Peer.LastDirect" {
		return false // our own observation of the path, not the peer's end
	}
	return strings.HasPrefix(field, "Peer.") || strings.HasPrefix(field, "API.") || strings.HasPrefix(field, "PeerSnapshot.")
}

// hasLAN reports whether eps hold a LAN address (private, CGNAT, ULA or
// link-local; not loopback, which no router sits in front of): with no
// port mapping, a NAT most likely sits between that host and the internet.
func hasLAN(eps []netip.AddrPort) bool {
	for _, ep := range eps {
		if a := ep.Addr().Unmap(); IsPrivateAddr(a) && !a.IsLoopback() {
			return true
		}
	}
	return false
}

func portMapNote(n *NATInfo) string {
	if n.HavePortMap {
		return "a port mapping (UPnP/NAT-PMP/PCP) rescues the hard NAT"
	}
	return "no UPnP, NAT-PMP or PCP port mapping"
}

// farDERP is what checkFarDERP measured, for the texts built only when needed.
type farDERP struct {
	region, best      int
	relayLat, bestLat time.Duration
}

// relayRegion is the id of the region in use (Path.DERPCode, which is
// PeerStatus.Relay, the region magicsock relays through), falling back to
// the peer's home DERP from WhoIs.
func (d *diag) relayRegion() int {
	code := d.p.Path.DERPCode
	for id, r := range d.regions {
		if r.Code == code {
			return id
		}
	}
	return d.p.HomeDERP
}

// checkFarDERP: the relaying region is much slower from here than our best
// region (see FarDERPFactor and FarDERPMargin), judged only on latencies
// tailpath saw change within DERPLatencyMaxAge: NetInfo's latencies are
// re-sent only with other NetInfo changes (magicsock skips an update when
// NetInfo.BasicallyEqual, which ignores DERPLatency), so unchanged ones may
// be hours old.
func (d *diag) checkFarDERP() (bool, farDERP) {
	nat := d.self.NAT
	region := d.relayRegion()
	if nat == nil || len(nat.DERPLatency) == 0 || region == 0 {
		d.unknown("NetInfo.DERPLatency", "no DERP latencies or the relay region is unknown")
		return false, farDERP{}
	}
	relayLat, ok := nat.DERPLatency[region]
	if !ok {
		d.unknown("NetInfo.DERPLatency", "region "+d.regionName(region)+" not measured")
		return false, farDERP{}
	}
	bestID, bestLat := 0, time.Duration(0)
	for id, l := range nat.DERPLatency {
		if bestID == 0 || l < bestLat || (l == bestLat && id < bestID) {
			bestID, bestLat = id, l
		}
	}
	far := relayLat >= FarDERPFactor*bestLat && relayLat-bestLat >= FarDERPMargin
	buf := make([]byte, 0, 64)
	buf = d.appendRegion(buf, region)
	buf = append(buf, '=')
	buf = appendMs(buf, relayLat)
	buf = append(buf, ", best "...)
	buf = d.appendRegion(buf, bestID)
	buf = append(buf, '=')
	buf = appendMs(buf, bestLat)
	if !d.now.IsZero() && !d.fresh(d.self.DERPLatencyAt, DERPLatencyMaxAge) {
		buf = append(buf, " ("...)
		switch {
		case !d.self.DERPLatencyAt.IsZero():
			buf = append(buf, "measured "...)
			buf = append(buf, durText(d.now.Sub(d.self.DERPLatencyAt))...)
			buf = append(buf, " ago"...)
		case !d.self.DERPLatencySeen.IsZero() && d.now.Sub(d.self.DERPLatencySeen) >= time.Minute:
			buf = append(buf, "age unknown, unchanged for "...)
			buf = append(buf, durText(d.now.Sub(d.self.DERPLatencySeen))...)
		default:
			buf = append(buf, "age unknown"...)
		}
		buf = append(buf, ')')
		note := "as tailscaled last reported them; it re-sends NetInfo only when something other than latency changes, so they may be hours old: `tailscale netcheck` measures fresh ones"
		if far {
			note = "the relay region looked far when these latencies were measured, which may be hours ago: `tailscale netcheck` measures fresh ones"
		}
		d.info("NetInfo.DERPLatency", string(buf), note)
		return false, farDERP{}
	}
	field := "NetInfo.DERPLatency"
	if d.self.DERPLatencyFrom == "netcheck" {
		field = "Netcheck.DERPLatency"
	}
	note := "the relay region is about as close as the best one"
	if far {
		note = farNote
		// Far from here is not far from both ends: when the peer's own
		// latencies show the region near it, the distance is the two
		// ends' own and no home DERP choice is wrong.
		if ps := d.p.PeerSide; ps != nil {
			if ms, ok := ps.DERPLatencyMs[regionKey(d.regions, region)]; ok && !d.farFromPeer(ps, ms) {
				d.info(field, string(buf), "far from here, but near the peer ("+msText(time.Duration(ms*float64(time.Millisecond)))+" from it, by its own latencies): the distance is between the two ends, no home DERP choice is wrong")
				return false, farDERP{}
			}
		}
	}
	d.add(field, string(buf), far, note)
	return far, farDERP{region: region, best: bestID, relayLat: relayLat, bestLat: bestLat}
}

// farFromPeer reports whether ms, the peer's latency to a region, is far
// by the same thresholds against the peer's best region.
func (d *diag) farFromPeer(ps *PeerSide, ms float64) bool {
	best := ms
	for _, l := range ps.DERPLatencyMs {
		best = min(best, l)
	}
	r := time.Duration(ms * float64(time.Millisecond))
	b := time.Duration(best * float64(time.Millisecond))
	return r >= FarDERPFactor*b && r-b >= FarDERPMargin
}

// farTexts are the summary and fix for a far relay region.
func (d *diag) farTexts(f farDERP) (summary, fix string) {
	rn, bn := d.regionName(f.region), d.regionName(f.best)
	rl, bl := msText(f.relayLat), msText(f.bestLat)
	return "relay " + rn + " is far (" + rl + " vs " + bl + ")",
		"the relay " + rn + " is " + rl + " away from here while " + bn + " is " + bl + ": if the region is far from the peer too (its netcheck, or the control API's latencies), its home DERP choice is wrong; if it is near the peer, the distance is the two ends' own"
}

var farNote = "the relay region is far: at least " + strconv.Itoa(FarDERPFactor) + "x and " + msText(FarDERPMargin) + " slower than the best"

func (d *diag) appendRegion(b []byte, id int) []byte {
	if r, ok := d.regions[id]; ok && r.Code != "" {
		return strconv.AppendQuote(b, r.Code)
	}
	return strconv.AppendInt(append(b, "region "...), int64(id), 10)
}

func appendMs(b []byte, d time.Duration) []byte {
	return append(strconv.AppendInt(b, d.Round(time.Millisecond).Milliseconds(), 10), "ms"...)
}

func (d *diag) regionName(id int) string {
	if r, ok := d.regions[id]; ok && r.Code != "" {
		return strconv.Quote(r.Code)
	}
	return "region " + strconv.Itoa(id)
}

func msText(d time.Duration) string {
	return strconv.FormatInt(d.Round(time.Millisecond).Milliseconds(), 10) + "ms"
}

// durText is a coarse age: "40s", "12m", "3h", "2d".
func durText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

func endpointsText(eps []netip.AddrPort) string {
	if len(eps) == 0 {
		return "[]"
	}
	b := make([]byte, 0, 2+len(eps)*22)
	b = append(b, '[')
	for i, ep := range eps {
		if i > 0 {
			b = append(b, ' ')
		}
		b = ep.AppendTo(b)
	}
	return string(append(b, ']'))
}

// handshakeText is a WireGuard handshake time; zero reads "none recorded"
// because it means never, or that tailscaled removed the idle peer from
// wireguard-go (its lazy WireGuard config), which clears the time.
func handshakeText(t time.Time) string {
	if t.IsZero() {
		return "none recorded"
	}
	return t.UTC().Format(time.RFC3339)
}

func pingName(p *Peer) string {
	if p.Name != "" {
		return p.Name
	}
	if len(p.TailscaleIPs) > 0 {
		return p.TailscaleIPs[0].String()
	}
	return p.ID
}
