package probes

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// The checks of the reason table's rules (reasons.go): each records the
// evidence it looked at and says whether its rule holds.

// checkHomeDERP: Status.Relay is empty on an active path with no direct
// address. magicsock fills Relay with the region code of the peer's home
// DERP (derpRegionCodeOfIDLocked), "" when the region is not in our DERP
// map, and also when it is but has no RegionCode: then endpoint.send
// still relays through it, so the map is looked at first. Not in the map
// (or no home at all), magicsock sends over UDP if it can, else to the
// region the peer last wrote from, else fails ("no UDP or DERP addr"). A
// recent handshake, an established session or DISCO pongs through DERP
// show a DERP route that works; pasted text shows no handshakes, so
// there the rule cannot decide.
func (d *diag) checkHomeDERP() result {
	p := d.p
	if p.Path.DERPCode != "" {
		return notHeld()
	}
	h := p.HomeDERP
	if r, ok := d.regions[h]; ok && h != 0 {
		name := "region " + strconv.Itoa(h)
		if r.Name != "" {
			name += " (" + string(r.Name) + ")"
		}
		d.info("Status.Relay", `""`, safetext.New("the peer's home DERP "+name+" is in our DERP map without a region code, which Relay prints as empty: magicsock relays through it all the same (endpoint.send)"))
		return notHeld()
	}
	note := "the peer's home DERP region is unknown to us: it has none, or it is not in our DERP map"
	if h != 0 {
		note = "the peer's home DERP region " + strconv.Itoa(h) + " is not in our DERP map"
	}
	if r := p.PingRun; r != nil && r.Pongs > 0 && !r.Direct && d.fresh(r.At, PingRunMaxAge) && strings.HasPrefix(string(r.Via), "DERP(") {
		d.info("Status.Relay", `""`, safetext.New(note+"; yet the last DISCO ping run got pongs through DERP ("+string(r.Via)+"): a DERP route to the peer works"))
		return notHeld()
	}
	if HandshakeRecent(p.LastHandshake, d.now) || p.WireGuard == WGEstablished {
		// magicsock falls back to the region the peer last wrote from
		// (endpoint.send, fallbackDERPRegionForPeer), and a session is up.
		d.info("Status.Relay", `""`, safetext.New(note+"; a WireGuard session is up, relayed through the region the peer last wrote from"))
		return notHeld()
	}
	if p.HandshakeUnknown && p.LastHandshake.IsZero() && p.WireGuard == "" {
		d.unknownV("Status.Relay", `""`, safetext.New(note+"; a recent handshake would let magicsock relay through the region the peer last wrote from, and the source (pasted text) shows no handshakes, so this cannot be judged"))
		return notHeld()
	}
	if h != 0 && len(d.regions) == 0 {
		d.unknownV("Status.Relay", `""`, safetext.New("the peer's home DERP is region "+strconv.Itoa(h)+" and our DERP map is not known: it may be in the map without a region code (Relay prints empty then, and magicsock relays through it)"))
		return notHeld()
	}
	d.add("Status.Relay", `""`, true, safetext.New(note))
	return holds()
}

// WireGuard session states (Peer.WireGuard), as ipn.PeerWireGuardState
// writes them.
const (
	WGNone        = "none"
	WGHandshake   = "handshake"
	WGEstablished = "established"
	WGExpired     = "expired"
)

// checkSession: is there a WireGuard session at all? tailscaled's own
// session state (IPN bus, NotifyPeerWireGuardState) decides when known: a
// handshake in progress for at least HandshakeGrace means none completes.
// Otherwise the handshake time decides: a live session re-handshakes every
// 2 minutes while traffic flows and keys are rejected after 3
// (wireguard-go RejectAfterTime), so an Active peer without a handshake
// within RecentHandshake for HandshakeGrace has none. Active alone proves
// nothing (a DISCO ping sets it, and DISCO never makes a session): a
// fresh DISCO run with pongs means the peer is up, and without
// tailscaled's session state, tx bytes that never grew (or did not over
// the last poll) mean WireGuard sent nothing, so the handshake time says
// nothing either. Pasted text has no handshakes, but tx > 0 with rx 0
// says nothing ever answered.
func (d *diag) checkSession() result {
	p := d.p
	r := p.PingRun
	freshRun := r != nil && r.Tries > 0 && d.fresh(r.At, PingRunMaxAge)
	answered := freshRun && r.Pongs > 0
	silent := freshRun && r.Pongs == 0
	const field = "IPNBus.PeerState"
	switch p.WireGuard {
	case WGEstablished:
		d.add(field, d.wgText(), false, "a WireGuard session is up (wireguard-go's own state)")
		return notHeld()
	case WGHandshake:
		since := p.WireGuardSince
		if since.IsZero() {
			since = p.NoHandshakeSince
		}
		if !since.IsZero() && !d.now.IsZero() && d.now.Sub(since) >= HandshakeGrace {
			note := "a WireGuard handshake has been in progress for " + d.sinceText(since) + " and none completed"
			if answered {
				d.add(field, d.wgText(), true, safetext.New(note+", yet the peer answers DISCO pings: it is up"))
				return holdsAs("disco-answers")
			}
			d.add(field, d.wgText(), true, safetext.New(note))
			d.rxInfo()
			return holds()
		}
		d.info(field, d.wgText(), "a handshake is in progress; WireGuard retries every 5 s")
		return notHeld()
	case WGNone, WGExpired:
		if silent {
			d.add(field, d.wgText(), true, "no WireGuard session, and DISCO pings got no answer even through DERP")
			return holds()
		}
		d.info(field, d.wgText(), "no WireGuard session and none being attempted: nothing but DISCO was sent (a ping makes a peer Active, and DISCO never starts a session)")
		return notHeld()
	}
	nothing := p.TxBytes > 0 && p.RxBytes == 0
	if !p.HandshakeUnknown && !silent && !answered {
		// Active may come from a DISCO ping alone (endpoint.go
		// startDiscoPingLocked: a CLI ping calls
		// noteTxActivityExtTriggerLocked), which never makes a session.
		// wireguard-go counts every packet it sends, handshake
		// initiations too, in its tx bytes (device/peer.go SendBuffers):
		// none sent, or none over the last poll, means WireGuard was not
		// trying, and the handshake time says nothing.
		switch {
		case p.TxBytes == 0 && p.Path.DERPCode != "":
			d.unknownV("Status.TxBytes", "0", "nothing was ever sent to the peer through WireGuard, not even a handshake, though a DERP route exists: Active comes from DISCO only (a ping), and whether a session would form is not known")
			return notHeld()
		case p.RatesKnown && p.TxRate == 0 && !HandshakeRecent(p.LastHandshake, d.now):
			d.unknownV("Status.TxBytes", "not growing", "nothing was sent to the peer through WireGuard over the last poll, not even a handshake: Active may come from DISCO only (a ping), and whether a session would form is not known")
			return notHeld()
		}
	}
	if p.HandshakeUnknown && p.LastHandshake.IsZero() {
		if silent {
			// A pasted `tailscale ping` run that got no pong at all: the
			// CLI's DISCO ping goes to DERP and every candidate endpoint
			// (magicsock endpoint.discoPing), so nothing answered, as a
			// live run shows (checkPingRun's "no pong at all").
			d.unknownV("Status.LastHandshake", "not shown", "the source (pasted text) shows no WireGuard handshakes")
			d.add("PingRun", strconv.Itoa(r.Tries)+" tries, 0 pongs", true, "DISCO pings got no answer, not even through DERP: the peer does not answer")
			return holdsAs("disco-silent")
		}
		if nothing {
			if answered {
				d.add("Status.RxBytes", "0 (tx "+strconv.FormatInt(p.TxBytes, 10)+")", true, "bytes were sent to the peer and no WireGuard packet ever came back, yet it answers DISCO pings: it is up, but no session forms")
				return holdsAs("disco-answers")
			}
			d.add("Status.RxBytes", "0 (tx "+strconv.FormatInt(p.TxBytes, 10)+")", true, safetext.New("bytes were sent to the peer and none ever came back: nothing answered, not even a WireGuard handshake"+initiationsNote(p.TxBytes)))
			return holdsAs("nothing-answered")
		}
		d.unknown("Status.LastHandshake", "the source does not show WireGuard handshakes (pasted `tailscale status` text)")
		return notHeld()
	}
	if answered {
		d.info("Status.LastHandshake", handshakeText(p.LastHandshake), "the peer answered DISCO pings in the last run, so it is up (a DISCO ping makes it Active without a WireGuard session)")
		return notHeld()
	}
	if HandshakeRecent(p.LastHandshake, d.now) {
		d.add("Status.LastHandshake", handshakeText(p.LastHandshake), false, "a WireGuard session is up")
		return notHeld()
	}
	held := !p.NoHandshakeSince.IsZero() && d.now.Sub(p.NoHandshakeSince) >= HandshakeGrace
	if !held && !silent {
		d.info("Status.LastHandshake", handshakeText(p.LastHandshake), "no recent handshake yet; WireGuard retries every 5 s")
		return notHeld()
	}
	note := "we have been sending for " + durText(d.now.Sub(p.NoHandshakeSince)) + " and no WireGuard handshake completed"
	if !held {
		note = "no WireGuard handshake in the last " + RecentHandshake.String() + ", and DISCO pings got no answer even through DERP"
	}
	d.add("Status.LastHandshake", handshakeText(p.LastHandshake), true, safetext.New(note))
	d.rxInfo()
	if nothing {
		return holdsAs("nothing-answered")
	}
	return holds()
}

// sessionKnown reports whether anything shows the WireGuard session:
// tailscaled's session state, a handshake time the source shows, a fresh
// DISCO run, or pasted counters with traffic.
func (d *diag) sessionKnown() bool {
	p := d.p
	if p.WireGuard != "" || !p.HandshakeUnknown || !p.LastHandshake.IsZero() {
		return true
	}
	if r := p.PingRun; r != nil && r.Tries > 0 && d.fresh(r.At, PingRunMaxAge) {
		return true
	}
	return p.TxBytes > 0 && p.RxBytes == 0
}

// rxInfo notes a receive counter that did not move.
func (d *diag) rxInfo() {
	if p := d.p; p.RatesKnown && p.RxRate == 0 {
		d.info("Status.RxBytes", "not growing", "nothing was received from the peer over the last poll")
	}
}

// wgText is the WireGuard state and since when.
func (d *diag) wgText() string {
	if d.p.WireGuardSince.IsZero() {
		return string(d.p.WireGuard)
	}
	return string(d.p.WireGuard) + " since " + d.p.WireGuardSince.UTC().Format("15:04:05Z")
}

// sinceText is how long ago t was, "a while" when unknown.
func (d *diag) sinceText(t time.Time) string {
	if t.IsZero() || d.now.IsZero() {
		return "a while"
	}
	return durText(d.now.Sub(t))
}

// checkPolicyTCP443: the node attribute only-tcp-443 (tailcfg
// NodeAttrOnlyTCP443; magicsock sends no UDP at all with it).
func (d *diag) checkPolicyTCP443() result {
	if !d.self.OnlyTCP443 {
		return notHeld()
	}
	d.add("Self.CapMap", "only-tcp-443", true, "the tailnet policy restricts this node to TCP 443: it sends no UDP, so every path goes through DERP")
	return holds()
}

// checkLocalUDP (this node and every peer's path): our netcheck says UDP
// does not work. netcheck sets WorkingUDP from STUN to the DERP map's
// servers (UDP 3478), so false says nothing when the map disables STUN
// or the policy sends no UDP, and true proves only that port. A daemon's
// NetInfo has no latencies when UDP is blocked (magicsock updateNetInfo
// copies only the STUN latencies, RegionV4Latency and RegionV6Latency;
// the HTTPS and ICMP fallback fills RegionLatency), so none are needed;
// a pasted report that measured nothing at all leaves WorkingUDP
// unknown. Without a report, tailscaled's own "UDP is blocked" log line
// is the evidence, unless reports disagree over time.
func (d *diag) checkLocalUDP() result {
	nat := d.self.NAT
	switch {
	case nat == nil || nat.WorkingUDP == nil:
		if ev := d.evidence(); ev.UDPBlockedLogged != "" && !spreads(ev, "UDP") {
			return d.udpBlockedLine(ev)
		}
		d.unknown("NetInfo.WorkingUDP", "the daemon has not reported a netcheck")
	case d.self.OnlyTCP443:
		d.info("NetInfo.WorkingUDP", strconv.FormatBool(*nat.WorkingUDP), "not tested: the node sends no UDP by policy")
	case !*nat.WorkingUDP && d.self.NoSTUN:
		d.info("NetInfo.WorkingUDP", "false", "not a test of UDP: the DERP map disables STUN on every node, so netcheck sent no STUN probe")
	case !*nat.WorkingUDP:
		note := "our STUN probes (UDP 3478 to the DERP servers) got no reply: outbound UDP looks blocked"
		if n := len(nat.DERPLatency); n > 0 {
			note = "our STUN probes (UDP 3478 to the DERP servers) got no reply, while " + countOf(n, "DERP region") + " answered: the network drops UDP"
		}
		d.add("NetInfo.WorkingUDP", "false", true, safetext.New(note))
		return holds()
	default:
		d.add("NetInfo.WorkingUDP", "true", false, "STUN replies came back on UDP 3478: outbound UDP works to that port (not proof for other ports)")
	}
	return notHeld()
}

// UDPBlockedMaxAge is how old tailscaled's "UDP is blocked" line may be,
// before the newest evidence, and still say UDP is blocked: netcheck
// logs it at every report while UDP stays blocked, and magicsock
// reports every 20-26 s while paths are active (ReSTUN).
const UDPBlockedMaxAge = 10 * time.Minute

// udpBlockedLine judges tailscaled's "UDP is blocked" line, the only UDP
// evidence there is: a STUN endpoint logged after it (determineEndpoints
// adds one only from STUN replies, and keeps it at most
// endpointTrackerLifetime, 5m10s, after the last) contradicts it, and a
// line older than UDPBlockedMaxAge before the newest evidence is stale.
func (d *diag) udpBlockedLine(ev *SelfEvidence) result {
	const lifetime = 5*time.Minute + 10*time.Second
	line := ev.UDPBlockedLogged
	if !ev.UDPBlockedAt.IsZero() {
		line += " (" + ev.UDPBlockedAt.UTC().Format("15:04:05Z") + ")"
	}
	if ev.UDPWorkedLogged != "" {
		gap := ev.UDPWorkedAt.Sub(ev.UDPBlockedAt)
		if !ev.UDPWorkedAt.IsZero() && !ev.UDPBlockedAt.IsZero() && gap > lifetime {
			d.add("Log.Netcheck", line, false, safetext.New("contradicted: tailscaled advertised a STUN endpoint "+durText(gap)+" later ("+ev.UDPWorkedLogged+"), which only a STUN reply gives once the old ones expire (5m10s): UDP worked since"))
			return notHeld()
		}
		d.unknownV("Log.Netcheck", line, safetext.New("contradicted by a STUN endpoint tailscaled advertised after it ("+ev.UDPWorkedLogged+"): a STUN reply came, or magicsock still advertised one from before (it keeps them 5m10s, endpointTrackerLifetime); whether UDP works now is not known"))
		return notHeld()
	}
	if !ev.UDPBlockedAt.IsZero() && !d.now.IsZero() && d.now.Sub(ev.UDPBlockedAt) > UDPBlockedMaxAge {
		d.unknownV("Log.Netcheck", line, safetext.New("logged "+durText(d.now.Sub(ev.UDPBlockedAt))+" before the newest evidence, and not since: netcheck logs it at every report while UDP stays blocked (every 20-26 s while paths are active), so an old line says nothing of now"))
		return notHeld()
	}
	d.add("Log.Netcheck", line, true, "netcheck sent STUN and heard nothing back: outbound UDP looks blocked")
	return holds()
}

// spreads reports whether reports in ev disagree on fact.
func spreads(ev *SelfEvidence, fact string) bool {
	for _, s := range ev.Spread {
		if s.Fact == fact {
			return true
		}
	}
	return false
}

// ipv6Untested reports whether netcheck could send no IPv6 STUN probe
// (the DERP map's STUN is off, or no node takes IPv6), so its
// WorkingIPv6 false is no test.
func (d *diag) ipv6Untested() bool { return d.self.NoSTUN || d.self.NoIPv6STUN }

// udpWorksHere reports whether UDP works here: our netcheck saw STUN
// answered, or a path of the gather proves it (Tailnet.UDP: a direct
// peer, a peer relay, a direct pong).
func (d *diag) udpWorksHere() bool {
	if d.self.OnlyTCP443 {
		return false
	}
	n := d.self.NAT
	return (n != nil && n.WorkingUDP != nil && *n.WorkingUDP) || d.tn.UDPWorks()
}

// checkPeerUDP: the peer reports that UDP does not work for it (its
// netcheck's WorkingUDP, the API's clientSupports.udp). Checked only when
// a source other than our netmap says so or NetInfo was shared.
func (d *diag) checkPeerUDP() result {
	ps := d.p.PeerSide
	if ps == nil || ps.ClientSupports.UDP == nil {
		return notHeld()
	}
	if *ps.ClientSupports.UDP {
		d.add(safetext.New(peerField(ps, factUDP)), "true", false, "the peer's STUN probes got UDP replies (UDP 3478; not proof for other ports)")
		return notHeld()
	}
	if d.self.NoSTUN {
		// The DERP map is the tailnet's: the peer's netcheck had no STUN either.
		d.info(safetext.New(peerField(ps, factUDP)), "false", "not a test of UDP: the tailnet's DERP map disables STUN, so the peer's netcheck sent no STUN probe")
		return notHeld()
	}
	d.add(safetext.New(peerField(ps, factUDP)), "false", true, "the peer's own STUN probes (UDP 3478 to the DERP servers) got no reply: UDP looks blocked on its side, or it is restricted to TCP 443 by policy")
	return holds()
}

// peerUDPBlocked reports whether the peer says its UDP does not work.
func (d *diag) peerUDPBlocked() bool {
	ps := d.p.PeerSide
	return ps != nil && ps.ClientSupports.UDP != nil && !*ps.ClientSupports.UDP && !d.self.NoSTUN
}

// endpointFacts is what checkEndpoints found.
type endpointFacts struct {
	known, none, privateOnly bool
	// noFamily: the peer's public endpoints are all IPv6 and IPv6 does not work here.
	noFamily bool
	// v6Both: both ends have global IPv6 endpoints and IPv6 is not known
	// to fail on either, so IPv4 NAT facts do not decide the path.
	v6Both bool
}

func (d *diag) checkNoEndpoints() result  { return resultIf(d.endpoints().none) }
func (d *diag) checkPrivateOnly() result  { return resultIf(d.endpoints().privateOnly) }
func (d *diag) checkNoFamily() result     { return resultIf(d.endpoints().noFamily) }
func resultIf(b bool) result              { return result{holds: b} }
func (d *diag) endpoints() *endpointFacts { d.checkEndpoints(); return &d.ep }

// checkEndpoints: the peer advertises none, only private ones, or public
// ones of an address family that does not work here. Worked out once.
func (d *diag) checkEndpoints() {
	if d.epDone {
		return
	}
	d.epDone = true
	f := &d.ep
	p := d.p
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
			return
		}
	}
	f.known = true
	if len(p.Endpoints) == 0 {
		d.add(safetext.New(field), "[]", true, "the peer cannot be reached over UDP at any address")
		f.none = true
		return
	}
	pub4, pub6 := publicFamilies(p.Endpoints)
	if !pub4 && !pub6 {
		d.add(safetext.New(field), d.peerEndpointsText(), true, "all private, CGNAT, link-local or loopback addresses: reachable only from the peer's own network")
		d.sameLAN()
		f.privateOnly = true
		return
	}
	d.add(safetext.New(field), d.peerEndpointsText(), false, "at least one public endpoint")
	if !pub6 {
		return
	}
	var ours *bool
	if d.self.NAT != nil {
		ours = d.self.NAT.WorkingIPv6
	}
	switch {
	case ours != nil && !*ours && d.ipv6Untested():
		d.unknownV("NetInfo.WorkingIPv6", "false", "IPv6 was never tested: netcheck sends no IPv6 STUN probe when the DERP map has STUN off or every node's IPv6 \"none\" (net/netcheck makeProbePlan, nodeAddrPort), so false says nothing; the peer has IPv6 endpoints")
		ours = nil
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
				d.unknown(field, safetext.New(pa.String()+" is an address of ours too, but container bridges, sandboxes and loopback repeat on every host: unless the peer is on this host or your LAN, it cannot be reached there"))
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
				d.unknown(field, safetext.New(pa.String()+" is in our "+sp.String()+", but many networks use the same private range: unless the peer is on your LAN, it cannot be reached there"))
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

// checkPingRun: the last DISCO "ping until direct" run, if fresh, got pongs
// but only through DERP or a peer relay, although the peer advertises
// endpoints. Only checked when a run exists (the Source, `status --probe`).
func (d *diag) checkPingRun() result {
	r := d.p.PingRun
	if r == nil || (r.Pongs == 0 && d.recorded("PingRun")) {
		return notHeld() // a silent run already decided no-handshake
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
	if r.TSMPReply != nil {
		if *r.TSMPReply {
			buf = append(buf, ", TSMP answered"...)
		} else {
			buf = append(buf, ", TSMP unanswered"...)
		}
	}
	if r.CutOff > 0 {
		buf = append(buf, ", "...)
		buf = strconv.AppendInt(buf, int64(r.CutOff), 10)
		buf = append(buf, " cut off by the probe's time limit"...)
	}
	if r.Tries == 0 {
		// Only pings the budget cut off, or none: not tried, so no
		// evidence either way (probes/discoping).
		d.info("PingRun", string(buf), "no ping was answered or timed out: the probe ran out of time first, so this says nothing about the peer; probe again")
		return notHeld()
	}
	if !d.fresh(r.At, PingRunMaxAge) {
		buf = append(buf, ", "...)
		buf = append(buf, durText(d.now.Sub(r.At))...)
		buf = append(buf, " ago"...)
		d.info("PingRun", string(buf), "too old to count: a path can change within minutes; ping again")
		return notHeld()
	}
	// The run's pings went to DERP and every candidate endpoint the
	// daemon knows (magicsock endpoint.discoPing), so pongs only through
	// DERP mean no endpoint answered directly, whether or not we know
	// the endpoints: unknown ones (pasted text, WhoIs denied) change the
	// fix (the peer may advertise none), not the finding.
	failed := !r.Direct && r.Pongs > 0 && (len(d.p.Endpoints) > 0 || !d.p.EndpointsKnown)
	note := "pongs came only through DERP or a peer relay: DISCO pings to the peer's endpoints were never answered directly"
	switch {
	case r.Direct:
		note = "a pong came directly; the path may go direct again soon"
	case r.Pongs == 0:
		note = "no pong at all: the peer is not answering even through DERP"
	case !d.p.EndpointsKnown:
		note = "pongs came only through DERP or a peer relay: the daemon's DISCO pings to the peer's endpoints were never answered directly (which endpoints it has is unknown here)"
	case len(d.p.Endpoints) == 0:
		note = "no pong directly, as expected with no endpoints"
	}
	// The path was direct lately (an earlier run's direct pong, or an
	// earlier snapshot): the run says it lost its direct path, which
	// lost-direct words; "never answered directly" goes beside it.
	lost := failed && !d.p.LastDirect.IsZero() && d.fresh(d.p.LastDirect, LostDirectWindow)
	if lost {
		note += "; the path was direct at " + d.p.LastDirect.UTC().Format("15:04:05Z") + ", so this run shows a direct path lost, not one that never worked"
	}
	if !failed && !r.Direct {
		d.info("PingRun", string(buf), safetext.New(note))
	} else {
		d.add("PingRun", string(buf), failed, safetext.New(note))
	}
	res := resultIf(failed)
	if failed && !d.p.EndpointsKnown {
		res = holdsAs("endpoints-unknown")
	}
	res.alsoOnly = lost
	return res
}

// recorded reports whether a check of field is recorded already.
func (d *diag) recorded(field string) bool {
	for i := range d.checks {
		if string(d.checks[i].Field) == field {
			return true
		}
	}
	return false
}

// checkLostDirect: an earlier snapshot saw the path direct, and the
// daemon's endpoint-change log, when read, says what changed.
func (d *diag) checkLostDirect() result {
	p := d.p
	if p.LastDirect.IsZero() {
		return notHeld()
	}
	buf := make([]byte, 0, 48)
	buf = p.LastDirect.UTC().AppendFormat(buf, "15:04:05Z")
	if p.LastDirectAddr.IsValid() {
		buf = append(buf, " via "...)
		buf = p.LastDirectAddr.AppendTo(buf)
	}
	d.add("Path.LastDirect", string(buf), true, "the path was direct and fell back")
	lc := p.LastChange
	if lc == nil {
		return holds()
	}
	buf = lc.When.UTC().AppendFormat(buf[:0], "15:04:05Z")
	buf = append(buf, ' ')
	buf = append(buf, lc.What...)
	d.add("EndpointChanges", string(buf), true, "the daemon's newest endpoint change for this peer")
	return holdsAs("logged", "{what}", string(lc.What), "{when}", lc.When.UTC().Format("15:04:05Z"))
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
	if id, ok := d.regionOfCode(d.p.Path.DERPCode); ok {
		return id
	}
	return d.p.HomeDERP
}

// homeChoiceNote is what Tailscale weighs beside latency when it picks a
// home region (net/netcheck addReportHistoryAndSetPreferredDERP).
const homeChoiceNote = "Tailscale's home choice also weighs the DERP map's RegionScore and keeps the old home unless another is at least 10 ms and a third faster, so a home that is not the nearest is not by itself a fault"

// checkFarDERP: the relaying region is much slower from here than our best
// region (see FarDERPFactor and FarDERPMargin), judged only on latencies
// tailpath saw change within DERPLatencyMaxAge: NetInfo's latencies are
// re-sent only with other NetInfo changes (magicsock skips an update when
// NetInfo.BasicallyEqual, which ignores DERPLatency), so unchanged ones may
// be hours old.
//
// The path has two relay regions: magicsock writes to a peer through the
// peer's home region (endpoint.send, derpAddr) and the peer answers
// through ours, so this node's own home far from here is on the path too
// (farOwnHome), whatever the peer's.
func (d *diag) checkFarDERP() result {
	if d.p.Path.DERPCode == "" {
		return notHeld()
	}
	res := d.farRelay()
	own := d.farOwnHome()
	if res.holds {
		return res
	}
	return own
}

// farRelay is checkFarDERP for the region the path is relayed through
// (the peer's home).
func (d *diag) farRelay() result {
	nat := d.self.NAT
	region := d.relayRegion()
	if nat == nil || len(nat.DERPLatency) == 0 || region == 0 {
		d.unknown("NetInfo.DERPLatency", "no DERP latencies or the relay region is unknown")
		return notHeld()
	}
	relayLat, ok := nat.DERPLatency[region]
	if !ok {
		d.unknown("NetInfo.DERPLatency", safetext.New("region "+d.regionName(region)+" not measured"))
		return notHeld()
	}
	bestID, bestLat := d.bestDERP()
	far := relayLat >= FarDERPFactor*bestLat && relayLat-bestLat >= FarDERPMargin
	w := d.relayWords(region, relayLat, bestID, bestLat, far)
	if !d.now.IsZero() && !d.fresh(d.self.DERPLatencyAt, DERPLatencyMaxAge) {
		buf := append([]byte(w.vsBest), " ("...)
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
		d.info("NetInfo.DERPLatency", string(buf), safetext.New(note))
		return notHeld()
	}
	field := "NetInfo.DERPLatency"
	if d.self.DERPLatencyFrom == "netcheck" {
		field = "Netcheck.DERPLatency"
	}
	if far {
		// Far from here is not far from both ends: when the peer's own
		// latencies show the region near it, the distance is the two
		// ends' own and no home DERP choice is wrong.
		if ps := d.p.PeerSide; ps != nil {
			if ms, ok := ps.DERPLatencyMs[regionKey(d.regions, region)]; ok && !d.farFromPeer(ps, ms) {
				d.info(safetext.New(field), w.vsBest, safetext.New("far from here, but near the peer ("+msText(time.Duration(ms*float64(time.Millisecond)))+" from it, by its own latencies): the distance is between the two ends, no home DERP choice is wrong"))
				return notHeld()
			}
		}
	}
	d.add(safetext.New(field), w.vsBest, far, w.note)
	if !far {
		return notHeld()
	}
	d.far, d.isFar = farDERP{region: region, best: bestID, relayLat: relayLat, bestLat: bestLat}, true
	return result{holds: true, words: w.words}
}

// relayWords are farRelay's words for region, whose latency is
// relayLat, beside the best region's: worked out once per region per
// gather.
func (d *diag) relayWords(region int, relayLat time.Duration, bestID int, bestLat time.Duration, far bool) *farRelayWords {
	o := d.once
	if o != nil {
		if w := o.relays[region]; w != nil {
			return w
		}
	}
	var buf [64]byte
	w := &farRelayWords{vsBest: string(d.appendVsBest(buf[:0], region, relayLat, bestID, bestLat)), note: safetext.New("the relay region is about as close as the best one")}
	if far {
		w.note = safetext.New(farNote + ": +" + msText(relayLat-bestLat) + " each way through it")
		words := []string{"", "{region}", d.regionName(region), "{rl}", msText(relayLat), "{best}", d.regionName(bestID), "{bl}", msText(bestLat)}
		w.words = words[:len(words):len(words)]
	}
	if o != nil {
		if o.relays == nil {
			o.relays = map[int]*farRelayWords{}
		}
		o.relays[region] = w
	}
	return w
}

var farNote = "the relay region is far: at least " + strconv.Itoa(FarDERPFactor) + "x and " + msText(FarDERPMargin) + " slower than the best"

// farOwnHome: this node's own home region (Self.HomeDERP) is far from
// here by the same thresholds and on latencies as fresh, while Tailscale's
// rule on them prefers another region (PreferredDERP: a RegionScore that
// prefers the home makes it the tailnet's own choice, not a fault). The
// peer's packets to this node come through that region, each paying the
// difference. Recorded only when far or scored: a home near enough is
// said by the relay region's check when it is the same region, and by the
// Self tab otherwise.
func (d *diag) farOwnHome() result {
	home, nat := d.self.HomeDERP, d.self.NAT
	if home == 0 || nat == nil || len(nat.DERPLatency) == 0 || (d.isFar && d.far.region == home) {
		return notHeld()
	}
	o := d.once
	if o == nil {
		return d.farOwnHomeOf(nat)
	}
	if !o.homeDone {
		// Nothing below reads the peer: what it records, once, is every
		// peer's.
		n := len(d.checks)
		isFar, far := d.isFar, d.far
		res := d.farOwnHomeOf(nat)
		o.home = farHome{checks: slices.Clip(slices.Clone(d.checks[n:])), res: res, far: d.far}
		o.home.res.words = slices.Clip(res.words)
		d.isFar, d.far = isFar, far
		o.homeDone = true
		d.checks = d.checks[:n]
	}
	h := &o.home
	d.checks = append(d.checks, h.checks...)
	if h.res.holds {
		d.far, d.isFar = h.far, true
	}
	return h.res
}

// farOwnHomeOf is farOwnHome past its reading of the peer's path.
func (d *diag) farOwnHomeOf(nat *NATInfo) result {
	home := d.self.HomeDERP
	if !d.now.IsZero() && !d.fresh(d.self.DERPLatencyAt, DERPLatencyMaxAge) {
		return notHeld() // farRelay said how old the latencies are
	}
	homeLat, ok := nat.DERPLatency[home]
	if !ok {
		return notHeld() // no answer from it: derp-unreachable's evidence, the Self tab's
	}
	bestID, bestLat := d.bestDERP()
	if homeLat < FarDERPFactor*bestLat || homeLat-bestLat < FarDERPMargin {
		return notHeld()
	}
	field := "Self.HomeDERP"
	buf := d.appendVsBest(make([]byte, 0, 64), home, homeLat, bestID, bestLat)
	scores := map[int]float64{}
	for id, r := range d.regions {
		if r.Score > 0 {
			scores[id] = r.Score
		}
	}
	if out := PreferredDERP(HomeInput{Latency: nat.DERPLatency, Prev: home, Scores: scores}); out.Candidate == home {
		d.info(safetext.New(field), string(buf), "this node's home is far by latency, but the DERP map's RegionScore prefers it: the tailnet's own choice")
		return notHeld()
	}
	extra := homeLat - bestLat
	d.add(safetext.New(field), string(buf), true, safetext.New("this node's own home region is far: +"+msText(extra)+" over the best; the peer's packets to this node come through it (each end writes through the other's home region)"))
	d.far, d.isFar = farDERP{region: home, best: bestID, relayLat: homeLat, bestLat: bestLat}, true
	return holdsAs("own-home", "{region}", d.regionName(home), "{rl}", msText(homeLat), "{best}", d.regionName(bestID), "{bl}", msText(bestLat), "{extra}", msText(extra))
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

// checkPeerHomeDERP: the peer's own latencies show a region much nearer to
// it than its home (FarDERPFactor and FarDERPMargin). NetInfo is re-sent
// when the home changes, so the latencies were current when the peer
// chose; they may have drifted since.
func (d *diag) checkPeerHomeDERP() result {
	ps := d.p.PeerSide
	if ps == nil || ps.HomeDERP == 0 || len(ps.DERPLatencyMs) == 0 {
		return notHeld()
	}
	home, ok := ps.DERPLatencyMs[regionKey(d.regions, ps.HomeDERP)]
	if !ok {
		return notHeld()
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
		note = "the peer's home region is far from it while a nearer one exists (as it last reported its latencies); " + homeChoiceNote
	}
	d.add(safetext.New(peerField(ps, factLatency)), value, far, safetext.New(note))
	return resultIf(far)
}

// peerRelayMinMajor/Minor are the first Tailscale release whose clients
// use peer relays, and peerRelayMinCap its capability version: magicsock's
// capVerIsRelayCapable is version >= 121 (tailcfg.go: 121, 2025-07-19,
// "Client understands peer relay endpoint alloc"; 120 understood peer
// relay disco messages but cannot allocate endpoints).
const (
	peerRelayMinMajor, peerRelayMinMinor = 1, 86
	peerRelayMinCap                      = 121
)

// checkPeerClient: the peer's client predates peer relays, which could
// carry a path that cannot go direct; also notes an available update.
func (d *diag) checkPeerClient() result {
	ps := d.p.PeerSide
	if ps == nil {
		return notHeld()
	}
	old, known := false, false
	if ok, parsed := ClientVersionAtLeast(string(ps.ClientVersion), peerRelayMinMajor, peerRelayMinMinor); parsed {
		old, known = !ok, true
	} else if ps.CapVersion > 0 {
		old, known = ps.CapVersion < peerRelayMinCap, true
	}
	if !known {
		return notHeld()
	}
	value := ps.ClientVersion
	if value == "" {
		value = safetext.New("capability " + strconv.Itoa(ps.CapVersion))
	}
	note := "new enough for peer relays"
	if old {
		note = "predates peer relays (Tailscale 1.86, capability 121; magicsock's capVerIsRelayCapable), which, if a peer relay is granted, could carry this path instead of DERP"
	}
	if ps.UpdateAvailable != nil && *ps.UpdateAvailable {
		note += "; an update is available for it"
	}
	d.add(safetext.New(peerField(ps, factVersion)), string(value), old, safetext.New(note))
	return resultIf(old)
}

// checkDERPReach (this node and every peer's DERP path): tailscaled
// cannot reach a DERP region. Evidence: its health warnings
// (health/warnings.go: noDERPHome, noDERPConnection and derpTimeout,
// which health.go raises for the home region only, and derpRegionError,
// for any region), failed DERP connections in its log (derphttp, by
// region) and a proxy that refused the CONNECT. For this node it holds
// when the home region (or every region) fails: peers reach it through
// its home. For a peer's DERP path it holds when the region in use (we
// write through it) or our home (the peer answers through it) fails;
// with other regions left it goes to Also, with one it is the verdict.
// Nothing is recorded when no DERP trouble is in the evidence.
//
// Long on purpose: each kind of DERP trouble (health, dial errors, the proxy)
// worded in turn into one result.
func (d *diag) checkDERPReach() result {
	probs := slices.DeleteFunc(DERPProblems(d.self.Health, d.regions), func(p DERPProblem) bool {
		if p.Issue && !d.selfScope {
			// A health frame over a live connection: no reachability
			// problem (this node's self-derp-server-warns reads it).
			d.info("Status.Health", string(p.Text.Cut(160)), "the region's server sent this over a live connection (magicsock/derp.go runDerpReader, derp.HealthMessage): the region is reachable; it reports the connection unhealthy, not unreachable")
		}
		return p.Issue
	})
	ev := d.evidence()
	if len(probs) == 0 && len(ev.DERPErrors) == 0 && ev.ProxyError == "" && ev.ProxyConnect == "" {
		return notHeld()
	}
	errs := d.liveDERPErrors(ev.DERPErrors)
	home := d.self.HomeDERP
	if d.selfScope {
		held, variant, variantErr := false, "", ""
		for _, pr := range probs {
			switch {
			case pr.Home:
				d.add("Status.Health", string(pr.Text.Cut(160)), true, "tailscaled warns of its home DERP region")
				held = true
				d.derpFailing = cmpOrInt(pr.Region, home)
				if pr.NoHome {
					d.derpFailing = anyRegion
				}
			default:
				d.info("Status.Health", string(pr.Text.Cut(160)), "not our home region: it touches the peers homed there")
			}
		}
		failing := map[int]bool{}
		for _, e := range errs {
			failing[e.Region] = true
		}
		all := d.self.DERPRegions > 0 && len(failing) >= d.self.DERPRegions
		for _, e := range errs {
			switch {
			case home == 0 && all:
				d.add("Log.DERPErrors", derpErrorText(e), true, "our home region is unknown, and every DERP region of the map fails to connect")
				held = true
				d.derpFailing = anyRegion
			case home == 0 && selfHostedOnly(e, errs, d.self.DERPRegions, len(d.regions)):
				// The input names one region, a self-hosted one, and it
				// fails: whether or not it is our home, it is the only
				// relay the input shows, and the error says how it fails.
				d.add("Log.DERPErrors", derpErrorText(e), true, safetext.New("the only DERP region the input names, a self-hosted one (region ids 900-999 are custom regions: tailscale.com/kb/1118/custom-derp-servers), fails to connect"+derpErrTexts[derpErrKindOf(string(e.Err))].how))
				held = true
				d.derpFailing = e.Region
				variant, variantErr = "self-hosted", string(e.Err)
			case home == 0:
				// health.go warns only of the home region: a failing
				// region says nothing of ours unless it is known to be it.
				d.unknownV("Log.DERPErrors", derpErrorText(e), "a DERP region fails to connect, and our home region is unknown, so whether it is ours is not known; it touches the peers homed there")
			case e.Region == home || (e.Code != "" && e.Code == d.self.HomeDERPCode):
				d.add("Log.DERPErrors", derpErrorText(e), true, "our home region")
				held = true
				d.derpFailing = e.Region
			default:
				d.info("Log.DERPErrors", derpErrorText(e), "not our home region: it touches the peers homed there")
			}
		}
		if ev.ProxyError != "" {
			d.add("Log.ProxyError", string(ev.ProxyError), true, "DERP goes through an HTTP proxy that refused or failed the CONNECT")
			held = true
			d.derpFailing = anyRegion
		}
		if e, ok := proxiedTLSFailure(ev, errs); ok {
			d.add("Log.ProxyConnect", string(ev.ProxyConnect), true, safetext.New("the HTTP proxy answered 200 and connected DERP to "+string(ev.ProxyConnect)+", and TLS there failed ("+string(e.Err.Cut(100))+"): what answers at that port is not the DERP server (derphttp dialNodeUsingProxy)"))
			held = true
			if d.derpFailing == 0 {
				d.derpFailing = e.Region
			}
			return holdsAs("proxy-port", "{target}", string(ev.ProxyConnect))
		}
		if !held {
			return notHeld()
		}
		if variant == "self-hosted" && d.derpFailing > 0 {
			return holdsAs(variant, "{region}", d.regionName(d.derpFailing), "{regionid}", strconv.Itoa(d.derpFailing), "{how}", derpErrTexts[derpErrKindOf(variantErr)].fix)
		}
		return holdsAs("self")
	}
	inUse := d.relayRegion()
	res := func(region int, variant string) result {
		if region == 0 && home != 0 {
			region = home
		}
		if region == 0 {
			region = inUse
		}
		d.derpFailing = region
		if variant == "proxy" {
			d.derpFailing = anyRegion
		}
		r := holdsAs(variant, "{region}", d.regionName(region))
		r.alsoOnly = d.self.DERPRegions != 1
		return r
	}
	for _, pr := range probs {
		if !pr.Home && (pr.Region == 0 || pr.Region != inUse && pr.Region != home) {
			continue
		}
		why := "the relay region in use"
		switch {
		case pr.NoHome:
			why = "no relay region"
		case pr.Region == 0 || pr.Region != inUse:
			why = "our home region, through which the peer answers,"
		}
		d.add("Status.Health", string(pr.Text.Cut(120)), true, safetext.New("tailscaled says "+why+" cannot be reached: relayed packets to or from the peer are lost"))
		return res(pr.Region, "")
	}
	for _, e := range errs {
		ours := e.Region == home || (e.Code != "" && e.Code == d.self.HomeDERPCode)
		if e.Region != inUse && (e.Code == "" || e.Code != d.p.Path.DERPCode) && !ours {
			continue
		}
		why := "the relay region in use"
		if e.Region != inUse && e.Code != d.p.Path.DERPCode {
			why = "our home region, through which the peer answers,"
		}
		d.add("Log.DERPErrors", derpErrorText(e), true, safetext.New("tailscaled logged that "+why+" failed to connect: relayed packets to or from the peer are lost"))
		return res(e.Region, "")
	}
	if ev.ProxyError != "" {
		d.add("Log.ProxyError", string(ev.ProxyError), true, "DERP goes through an HTTP proxy that refused or failed the CONNECT: no region can be reached through it")
		return res(0, "proxy")
	}
	return notHeld()
}

// DERPFailureMaxAge is how old a region's newest logged DERP failure may
// be, before the newest evidence, and still count when it was the only
// one since the region last connected: magicsock redials a failed region
// and logs "derp-N connected" when it succeeds.
const DERPFailureMaxAge = 10 * time.Minute

// liveDERPErrors keeps the logged DERP failures that still say a region
// cannot be reached: none after which the region connected again
// ("derp-N connected", wgengine/magicsock/derp.go), and of the rest those
// repeated since the last connect or recent (DERPFailureMaxAge before
// the newest evidence); the others are recorded as info.
func (d *diag) liveDERPErrors(all []DERPError) []DERPError {
	var out []DERPError
	for _, e := range all {
		since := e.SinceConnect
		if since == 0 && !e.Reconnected {
			since = e.Count
		}
		recent := e.Last.IsZero() || d.now.IsZero() || d.now.Sub(e.Last) <= DERPFailureMaxAge
		switch {
		case e.Reconnected:
			d.info("Log.DERPErrors", derpErrorText(e), safetext.New("it connected again after that (\"derp-"+strconv.Itoa(e.Region)+" connected\"): a passing failure, magicsock redials"))
		case since < 2 && !recent:
			d.info("Log.DERPErrors", derpErrorText(e), safetext.New("one failure, "+durText(d.now.Sub(e.Last))+" before the newest evidence, and none logged since: magicsock redials a failed region, so one old failure says nothing of now"))
		default:
			out = append(out, e)
		}
	}
	return out
}

// selfHostedOnly reports whether e is the only DERP region an input
// without a home region shows, and a self-hosted one (ids 900-999).
func selfHostedOnly(e DERPError, errs []DERPError, mapRegions, known int) bool {
	if e.Region < 900 || e.Region > 999 || mapRegions > 1 || known > 1 {
		return false
	}
	for _, o := range errs {
		if o.Region != e.Region {
			return false
		}
	}
	return true
}

// derpErrKind is what a DERP connection error (derp/derphttp
// Client.connect's) says of where the fault is.
type derpErrKind int

const (
	derpErrOther derpErrKind = iota
	derpErrEOF
	derpErrRefused
	derpErrTimeout
	derpErrTLS
)

func derpErrKindOf(err string) derpErrKind {
	switch {
	case strings.HasSuffix(err, "EOF"):
		return derpErrEOF
	case strings.Contains(err, "connection refused"):
		return derpErrRefused
	case strings.Contains(err, "i/o timeout"), strings.Contains(err, "deadline exceeded"):
		return derpErrTimeout
	case isTLSErr(err):
		return derpErrTLS
	}
	return derpErrOther
}

// isTLSErr reports a TLS failure (Go's crypto/x509 and crypto/tls errors).
func isTLSErr(err string) bool {
	return strings.Contains(err, "x509:") || strings.Contains(err, "tls:")
}

// derpErrTexts word each kind: how, appended to a check's note; fix,
// where to look first.
var derpErrTexts = map[derpErrKind]struct{ how, fix string }{
	derpErrOther: {"", "check that this host reaches the DERP server (TCP 443, or the port in the DERP map) and that the server runs"},
	derpErrEOF: {": EOF, the connection opened and was then closed from the far end, so this host reaches the server's address; the DERP server, or a firewall, load balancer or reverse proxy in front of it, cut it (DERP needs its HTTP Upgrade passed through)",
		"the connection opens and is then cut from the far end: look at the DERP server's log and whatever fronts it (a firewall, load balancer or reverse proxy that closes idle or upgraded connections; DERP needs its HTTP Upgrade passed through); this host's own outbound 443 is not necessarily at fault"},
	derpErrRefused: {": refused, nothing listens on the DERP port at that address (or a firewall rejects it)",
		"nothing answers on the DERP port: check the server runs and listens on the port in the DERP map, and any firewall in front of it"},
	derpErrTimeout: {": timed out, the packets go unanswered (a firewall dropping outbound TCP, or the server down)",
		"check that this host reaches the DERP server (TCP 443, or the port in the DERP map) and that the server runs"},
	derpErrTLS: {": TLS failed, something other than the DERP server answered (a proxy, another service on that port) or its certificate is wrong",
		"TLS fails: something other than the DERP server answers (a proxy, another service on that port) or its certificate does not match the host name in the DERP map"},
}

// proxiedTLSFailure is a DERP connection that failed its TLS handshake
// after an HTTP proxy connected it (ProxyConnect): the proxy worked, the
// port or host behind it is not DERP's.
func proxiedTLSFailure(ev *SelfEvidence, errs []DERPError) (DERPError, bool) {
	if ev.ProxyConnect == "" {
		return DERPError{}, false
	}
	for _, e := range errs {
		if isTLSErr(string(e.Err)) {
			return e, true
		}
	}
	return DERPError{}, false
}

// derpErrorText words a logged DERP failure: "region 1 (nyc): 2× err".
func derpErrorText(e DERPError) string {
	where := "region " + strconv.Itoa(e.Region)
	if e.Code != "" {
		where += " (" + string(e.Code) + ")"
	}
	return where + ": " + strconv.Itoa(e.Count) + "× " + string(e.Err)
}

// DERPProblem is one health warning about a DERP region.
type DERPProblem struct {
	// Region is the region named; 0 when none is (noDERPHome), or its
	// name is not in the DERP map.
	Region int
	// Home: tailscaled raises this warning for its home region only
	// (noDERPConnection, derpTimeout) or for having none (noDERPHome,
	// NoHome); health.go names the home region it tracks.
	Home, NoHome bool
	// Issue: the region's server reported this connection unhealthy
	// ("The relay server #N is reporting an issue: …",
	// derpRegionErrorWarnable). It arrived over a live connection, so the
	// region is reachable; per derp/derp.go (FrameHealth) the only
	// unhealthy state a server reports is a duplicate connection for one
	// node key: the key is in use on another machine.
	Issue bool
	Text  safetext.Text
}

// DERPProblems reads tailscaled's health warnings (Status.Health) for
// DERP regions it cannot reach, as health/warnings.go words them: "could
// not connect to the 'NAME' relay server", "… relay server with ID 'N'",
// "hasn't heard from the 'NAME' relay server", "… home relay server
// (region ID 'N')", "could not connect to any relay server" (all of the
// home region), "The relay server #N is reporting an issue" (any region);
// and as 1.50's health.go words them: "no DERP home", "not connected to
// home DERP region N", "haven't heard from home DERP region N". Names are
// matched to regions by their long name or code.
func DERPProblems(health []safetext.Text, regions map[int]Region) []DERPProblem {
	var out []DERPProblem
	for _, ht := range health {
		h := string(ht)
		pr := DERPProblem{Home: true, Text: ht}
		switch {
		case strings.Contains(h, "any relay server"), strings.Contains(h, "no DERP home"):
			pr.NoHome = true
		case quoted(h, "with ID '") != "":
			pr.Region, _ = strconv.Atoi(quoted(h, "with ID '"))
		case quoted(h, "region ID '") != "":
			pr.Region, _ = strconv.Atoi(quoted(h, "region ID '"))
		case strings.Contains(h, "relay server #"):
			// derpRegionErrorWarnable: set only by magicsock/derp.go
			// runDerpReader on a health frame the server sent over a live
			// connection (derp.HealthMessage): the region is reachable.
			pr.Home, pr.Issue = false, true
			pr.Region = leadingInt(h, "relay server #")
		case strings.Contains(h, "home DERP region "):
			pr.Region = leadingInt(h, "home DERP region ")
		case strings.Contains(h, "relay server") && quoted(h, "the '") != "":
			name := quoted(h, "the '")
			for rid, r := range regions {
				if string(r.Name) == name || string(r.Code) == name {
					pr.Region = rid
				}
			}
		default:
			continue
		}
		out = append(out, pr)
	}
	return out
}

// leadingInt is the number right after prefix in s; 0 if none.
func leadingInt(s, prefix string) int {
	_, after, _ := strings.Cut(s, prefix)
	n := 0
	for n < len(after) && after[n] >= '0' && after[n] <= '9' {
		n++
	}
	v, _ := strconv.Atoi(after[:n])
	return v
}

// quoted is the text between prefix and the next "'" in s; "" if none.
func quoted(s, prefix string) string {
	_, after, ok := strings.Cut(s, prefix)
	if !ok {
		return ""
	}
	v, _, ok := strings.Cut(after, "'")
	if !ok {
		return ""
	}
	return v
}

// checkDirectInTunnel: the direct address is private, on none of our
// networks, and inside a subnet route another peer advertises. Only
// where net/netns leaves tailscaled's own UDP sockets unprotected can
// that UDP follow the route into the tunnel: Linux marks them to bypass
// table 52 (netns_linux.go, router_linux.go baseIPRules), macOS, iOS and
// Windows bind them to the default-route interface, Android protects
// them; FreeBSD and the others do nothing (netns_default.go), and
// OpenBSD binds them to a bypass routing table only with an exit node.
func (d *diag) checkDirectInTunnel() result {
	a := d.p.Path.Addr.Addr().Unmap()
	routes := d.routes()
	if !a.IsValid() || !IsPrivateAddr(a) || a.IsLoopback() || len(routes) == 0 {
		return notHeld()
	}
	if h := d.ourHost(); h != nil {
		for _, ifc := range h.Interfaces {
			for _, pfx := range ifc.Addrs {
				if !ifc.Tailscale && pfx.Masked().Contains(a) {
					return notHeld()
				}
			}
		}
	} else {
		for _, se := range d.self.Endpoints {
			if sp, err := se.Addr().Unmap().Prefix(24); err == nil && se.Addr().Is4() && sp.Contains(a) {
				return notHeld()
			}
		}
	}
	for _, r := range routes {
		if !r.Prefix.Contains(a) || r.Via == d.p.Name {
			continue
		}
		value := a.String() + " in " + r.Prefix.String() + " (" + string(r.Via) + ")"
		if dm := d.self.Daemon; dm != nil && dm.AcceptRoutes != nil && !*dm.AcceptRoutes {
			d.info("Link.Route", value, safetext.New("inside "+r.Prefix.String()+", which "+string(r.Via)+" advertises, but this node does not accept routes (Prefs.RouteAll false): the route is not installed here, so the UDP cannot follow it"))
			return notHeld()
		}
		os := string(d.self.OS)
		variant := ""
		if os == "linux" {
			if h := d.self.Host; h != nil && h.BypassRule != nil && !*h.BypassRule {
				variant = "no-bypass"
			}
		}
		if os != "" && !slices.Contains(unprotectedOSes, os) && variant == "" {
			// net/netns keeps tailscaled's UDP out of the tunnel here.
			d.info("Link.Route", value, safetext.New("inside "+r.Prefix.String()+", which "+string(r.Via)+" advertises; on "+os+" tailscaled's own UDP sockets are kept out of the tunnel (net/netns: a bypass mark on Linux with its ip rule, the default-route interface on macOS and Windows), so this direct path is not WireGuard inside WireGuard"))
			return notHeld()
		}
		note := "a private address on none of this host's networks, inside " + r.Prefix.String() + ", which " + string(r.Via) + " advertises: on " + cmpOr(os, "this OS") + " tailscaled's own UDP is not kept out of the tunnel, so with routes accepted it may travel inside that peer's WireGuard tunnel"
		if variant == "no-bypass" {
			note = "a private address on none of this host's networks, inside " + r.Prefix.String() + ", which " + string(r.Via) + " advertises; `ip rule` shows no rule sending tailscaled's marked UDP to the main table (5210, fwmark 0x80000/0xff0000), so it follows the route in table 52 into the tunnel"
		}
		d.info("Status.CurAddr", d.p.Path.Addr.String(), safetext.New(note))
		return holdsAs(variant, "{addr}", a.String(), "{route}", r.Prefix.String(), "{router}", string(r.Via), "{os}", os)
	}
	return notHeld()
}

// routes are the subnet routes that can carry this node's traffic into
// the tunnel: those other peers advertise (Status.Peer.PrimaryRoutes),
// and those this host's table shows pointing into it (pasted `ip
// route`), by the interface they use.
func (d *diag) routes() []SubnetRoute {
	h := d.self.Host
	if h == nil || len(h.Routes) == 0 {
		return d.self.Routes
	}
	out := slices.Clone(d.self.Routes)
	for _, r := range h.Routes {
		dup := false
		for _, o := range out {
			dup = dup || o.Prefix == r.Prefix
		}
		if !dup {
			out = append(out, SubnetRoute{Prefix: r.Prefix, Via: safetext.New("this host's route via " + cmpOr(string(r.Dev), "the tunnel"))})
		}
	}
	return out
}

// unprotectedOSes are Hostinfo.OS values where net/netns does not keep
// tailscaled's own sockets out of its routes (netns_default.go does
// nothing; netns_openbsd.go binds to a bypass table only with an exit
// node).
var unprotectedOSes = []string{"freebsd", "openbsd", "illumos", "solaris", "plan9"}

// cmpOr is s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ourHost is Self.Host when it describes tailscaled's host: one of its
// interfaces holds one of our endpoint addresses or our Tailscale address.
// (tailpath may run elsewhere than tailscaled: another network namespace,
// a container.)
func (d *diag) ourHost() *HostFacts {
	h := d.self.Host
	if h == nil || len(h.Interfaces) == 0 {
		return nil
	}
	for _, ifc := range h.Interfaces {
		for _, pfx := range ifc.Addrs {
			a := pfx.Addr().Unmap()
			for _, ep := range d.self.Endpoints {
				if ep.Addr().Unmap() == a {
					return h
				}
			}
			for _, ip := range d.self.TailscaleIPs {
				if ip.Unmap() == a {
					return h
				}
			}
		}
	}
	return nil
}

// collisionHow is what a 100.64.0.0/10 address on interface iface
// does to tailscaled on os, and what to do.
func collisionHow(os, iface string) string {
	const pool = "Addresses of that network that equal a tailnet peer's route into the tunnel instead; a custom IP pool for the tailnet (admin console) keeps the tailnet's addresses out of that network's."
	switch os {
	case "linux":
		return "On Linux tailscaled's firewall drops every packet from 100.64.0.0/10 that arrives on an interface other than tailscale0 (util/linuxfw buildExternalCGNATRules, the ts-input chain), so hosts on " + iface + "'s network (a carrier's CGNAT gateway or DNS, another VPN) cannot reach this one, whatever the tailnet's addresses: give this node the attribute disable-linux-cgnat-drop-rule in the tailnet policy's nodeAttrs (tailcfg.NodeAttrDisableLinuxCGNATDropRule, clients of capability 136 and later), which a custom IP pool does not replace, or renumber that network. " + pool
	case "macOS", "android":
		return "With it, tailscaled routes each tailnet peer's address into the tunnel instead of all of 100.64.0.0/10 (ipn/ipnlocal shouldUseOneCGNATRoute, netmon.HasCGNATInterface), so only addresses both use collide. " + pool
	case "":
		return "On Linux tailscaled's firewall also drops packets from that range arriving on " + iface + " (util/linuxfw buildExternalCGNATRules; the node attribute disable-linux-cgnat-drop-rule turns that off). " + pool
	}
	return pool
}

// tailnetRange is 100.64.0.0/10, the range tailnet addresses come from
// (net/tsaddr CGNATRange); chromeOS's 100.115.92.0/23 is left out.
var (
	tailnetRange = netip.MustParsePrefix("100.64.0.0/10")
	chromeOS     = netip.MustParsePrefix("100.115.92.0/23")
)

// checkRangeCollision (self): an interface that is not Tailscale's holds
// an address in 100.64.0.0/10.
func (d *diag) checkRangeCollision() result {
	h := d.self.Host
	if (h == nil || len(h.Interfaces) == 0) && len(d.evidence().Interfaces) > 0 {
		return d.checkLoggedRangeCollision()
	}
	if h == nil || (len(h.Interfaces) == 0 && h.InterfacesErr != "") {
		why := "this host's interfaces were not read"
		if h != nil {
			why = "this host's interfaces could not be read: " + string(h.InterfacesErr)
		}
		d.unknown("Host.Interfaces", safetext.New(why))
		return notHeld()
	}
	ours := func(a netip.Addr) bool {
		for _, ip := range d.self.TailscaleIPs {
			if ip.Unmap() == a {
				return true
			}
		}
		return false
	}
	for _, ifc := range h.Interfaces {
		if ifc.Tailscale {
			continue
		}
		for _, pfx := range ifc.Addrs {
			a := pfx.Addr().Unmap()
			if tailnetRange.Contains(a) && !chromeOS.Contains(a) && !ours(a) {
				d.add("Host.Interfaces", string(ifc.Name)+" "+pfx.String(), true, "an address in 100.64.0.0/10 on an interface that is not Tailscale's: tailscaled treats the range as the tailnet's (it never advertises such an address as an endpoint, and on Linux drops packets from the range arriving elsewhere than tailscale0)")
				return holdsAs("", "{iface}", string(ifc.Name), "{addr}", pfx.String(), "{how}", collisionHow(string(d.self.OS), string(ifc.Name)))
			}
		}
	}
	d.add("Host.Interfaces", strconv.Itoa(len(h.Interfaces))+" interfaces", false, "no address in 100.64.0.0/10 outside Tailscale's own interface")
	return notHeld()
}

// checkLoggedRangeCollision is checkRangeCollision on the interfaces
// tailscaled last logged (a LinkChange's state, net/netmon State.String),
// as a pasted log shows them: an address the poster partly replaced
// counts when its known octets already put it inside 100.64.0.0/10
// (100.95.x.y), never when they could fall either side.
func (d *diag) checkLoggedRangeCollision() result {
	ours := func(a netip.Addr) bool { return slices.Contains(d.self.TailscaleIPs, a) }
	os := string(d.self.OS)
	if os == "" {
		for _, ifc := range d.evidence().Interfaces {
			if strings.HasPrefix(ifc.Name, "rmnet") || strings.HasPrefix(ifc.Name, "v4-rmnet") || strings.HasPrefix(ifc.Name, "ccmni") {
				// Qualcomm's (rmnet) and MediaTek's (ccmni) radio
				// interfaces, and 464XLAT's v4- clat beside them, are
				// Android's mobile data.
				d.info("Log.Interfaces", ifc.Name, "a mobile-data interface of Android (Qualcomm rmnet, MediaTek ccmni): this node is most likely an Android phone")
				os = "android"
				break
			}
		}
	}
	for _, ifc := range d.evidence().Interfaces {
		if hostnetTunnel(ifc.Name) {
			continue
		}
		for _, pfx := range ifc.Prefixes {
			if a := pfx.Addr().Unmap(); tailnetRange.Contains(a) && !chromeOS.Contains(a) && !ours(a) {
				d.add("Log.Interfaces", ifc.Name+" "+pfx.String(), true, "tailscaled logged an address in 100.64.0.0/10 on an interface that is not its own (LinkChange): it treats the range as the tailnet's")
				return holdsAs("", "{iface}", ifc.Name, "{addr}", pfx.String(), "{how}", collisionHow(os, ifc.Name))
			}
		}
		for _, m := range ifc.Masked {
			if tailnetRange.Bits() <= m.Within.Bits() && tailnetRange.Contains(m.Within.Addr()) && !m.Within.Overlaps(chromeOS) {
				d.add("Log.Interfaces", ifc.Name+" "+m.Text, true, safetext.New("tailscaled logged an address on an interface that is not its own (LinkChange) whose known octets put it inside 100.64.0.0/10 ("+m.Within.String()+"), whatever the poster replaced"))
				return holdsAs("", "{iface}", ifc.Name, "{addr}", m.Text, "{how}", collisionHow(os, ifc.Name))
			}
		}
	}
	d.add("Log.Interfaces", strconv.Itoa(len(d.evidence().Interfaces))+" interfaces logged", false, "no address in 100.64.0.0/10 outside Tailscale's own interface in tailscaled's last LinkChange")
	return notHeld()
}

// wgInitiationSize is a WireGuard handshake initiation's size
// (wireguard-go device/noise-protocol.go MessageInitiationSize); the tx
// counter counts every packet sent, handshakes too (device/peer.go
// SendBuffers adds each packet's length to txBytes).
const wgInitiationSize = 148

// initiationsNote says when tx is a whole number of handshake
// initiations (888 bytes: six), as sent to a peer that never answered.
func initiationsNote(tx int64) string {
	if tx <= 0 || tx%wgInitiationSize != 0 || tx/wgInitiationSize > 1000 {
		return ""
	}
	return " (tx " + strconv.FormatInt(tx, 10) + " B is " + strconv.FormatInt(tx/wgInitiationSize, 10) + " handshake initiations of 148 B: only handshakes were sent)"
}

// cmpOrInt is a, or b when a is 0.
func cmpOrInt(a, b int) int {
	if a == 0 {
		return b
	}
	return a
}
