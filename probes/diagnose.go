package probes

import (
	"net/netip"
	"strconv"
	"time"
)

// Far-home-DERP threshold: the region relaying to the peer (the peer's home
// region) is "far" when our measured latency to it is at least
// FarDERPFactor times, and at least FarDERPMargin more than, our best
// region's latency. Both must hold so that 2 ms vs 5 ms is not flagged.
const (
	FarDERPFactor = 2
	FarDERPMargin = 30 * time.Millisecond
)

// privatePrefixes are the ranges netip's IsPrivate/IsLoopback/IsLinkLocal*
// do not cover but that a peer on another network cannot reach either.
var privatePrefixes = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"), // CGNAT (RFC 6598), also Tailscale IPs
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking (RFC 2544), used by some VPN stacks
	netip.MustParsePrefix("fd7a:115c:a1e0::/48"),
}

// IsPrivateAddr reports whether a is an address a peer on another network
// cannot send to: RFC 1918 (which includes container bridges such as
// Docker's 172.17.0.0/16 and Podman's 10.88.0.0/16), CGNAT 100.64.0.0/10,
// link-local, ULA fc00::/7, loopback, unspecified, or 198.18.0.0/15.
// Documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24) count
// as public so fixtures can use them.
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

// Diagnose explains p's current path. It is pure: evidence in, verdict out,
// no I/O, safe for concurrent use. self carries our NetInfo (self.NAT may be
// nil: then local checks read "unknown" and never fail); regions maps DERP
// region ids to codes (may be nil).
//
// Order: direct and peer-relay paths are healthy (a peer-relay verdict lists
// in Also why it is not direct, when evidence says). offline and idle come
// from the path kind. For a DERP-relayed path the causes are checked in this
// order and the first that holds is the Reason, the rest go to Also:
// local-udp-blocked, no-endpoints, private-endpoints-only, both-hard-nat,
// local-hard-nat, disco-unanswered (only with a PingRun), lost-direct (seen
// direct within LostDirectWindow); far-home-derp is always added to Also when it holds (it
// explains slowness, not relaying). With no cause it is unexplained, and
// Checks list everything looked at.
func Diagnose(self Self, p Peer, regions map[int]Region) Verdict {
	d := diag{self: self, p: p, regions: regions}
	return d.run()
}

type diag struct {
	self    Self
	p       Peer
	regions map[int]Region
	checks  []Check
}

// add records a check that either explains relaying (failed) or rules
// that cause out.
func (d *diag) add(field, value string, failed bool, note string) {
	st := CheckOK
	if failed {
		st = CheckFail
	}
	d.checks = append(d.checks, Check{Field: field, Value: value, Failed: failed, State: st, Note: note})
}

// info records a fact that neither explains nor rules out relaying.
func (d *diag) info(field, value, note string) {
	d.checks = append(d.checks, Check{Field: field, Value: value, State: CheckInfo, Note: note})
}

// unknown records a check whose value was not available.
func (d *diag) unknown(field, note string) {
	d.checks = append(d.checks, Check{Field: field, Value: "unknown", State: CheckUnknown, Note: note})
}

func (d *diag) run() Verdict {
	p := &d.p
	switch p.Path.Kind {
	case PathDirect:
		d.checks = make([]Check, 0, 1)
		d.add("Status.CurAddr", p.Path.Addr.String(), false, "a direct UDP path is in use")
		return Verdict{Reason: ReasonDirect, Summary: "direct", Checks: d.checks}
	case PathOffline:
		d.checks = make([]Check, 0, 3)
		d.add("WhoIs.Node.Online", "false", true, "the control server says the peer is offline")
		d.add("Status.LastHandshake", timeText(p.LastHandshake), true, "no WireGuard handshake in the last "+RecentHandshake.String())
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
			d.unknown("WhoIs.Node.Online", "the control server did not say (test control servers never do)")
		} else {
			d.add("WhoIs.Node.Online", strconv.FormatBool(*p.Online), false, "")
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
	var causeBuf [5]ReasonID
	causes := causeBuf[:0]
	var firstFix string
	addCause := func(r ReasonID, fix string) {
		if len(causes) == 0 {
			firstFix = fix
		}
		causes = append(causes, r)
	}
	if c, fix := d.checkLocalUDP(); c {
		addCause(ReasonLocalUDPBlocked, fix)
	}
	noEP, privOnly, epFix := d.checkEndpoints()
	if noEP {
		addCause(ReasonNoEndpoints, epFix)
	}
	if privOnly {
		addCause(ReasonPrivateEndpointsOnly, epFix)
	}
	if r, fix := d.checkNAT(); r != "" {
		addCause(r, fix)
	}
	if d.checkPingRun() {
		addCause(ReasonDiscoUnanswered, "allow inbound UDP on the peer (41641 or its --port) through its host and network firewalls; its DISCO pings are answered over DERP but never directly")
	}
	if !p.LastDirect.IsZero() {
		buf := make([]byte, 0, 48)
		buf = p.LastDirect.UTC().AppendFormat(buf, "15:04:05Z")
		if p.LastDirectAddr.IsValid() {
			buf = append(buf, " via "...)
			buf = p.LastDirectAddr.AppendTo(buf)
		}
		d.add("Peer.LastDirect", string(buf), true, "the path was direct and fell back")
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
	if p.Path.Kind == PathDERP {
		far, farInfo = d.checkFarDERP()
	}

	v := Verdict{Checks: d.checks}
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
			"`); if it never goes direct, look for an inbound UDP firewall on the peer"
	}
	if far {
		v.Also = append(v.Also, ReasonFarHomeDERP)
		if v.Reason == ReasonUnexplained {
			farSummary, farFix := d.farTexts(farInfo)
			v.Summary = "relayed; " + farSummary
			v.Fix += "; meanwhile " + farFix
		}
	}
	if len(v.Also) == 0 {
		v.Also = nil
	}
	return v
}

// relayedChecks is how many checks a relayed path gets, so the slice is
// allocated once at its size (an underestimate only costs a regrowth).
func (d *diag) relayedChecks() int {
	p := &d.p
	n := 2 + 1 + 1 + 1 // CurAddr+PeerRelay, WorkingUDP, Endpoints, peer NAT
	if p.Path.Kind == PathPeerRelay {
		n-- // PeerRelay only; no DERP latency check
	} else {
		n++ // DERPLatency
	}
	if nat := d.self.NAT; nat != nil && nat.MappingVariesByDestIP != nil && *nat.MappingVariesByDestIP {
		n += 2
	} else {
		n++
	}
	if p.EndpointsKnown && len(p.Endpoints) > 0 && !hasPublic(p.Endpoints) {
		n++ // Self.Endpoints
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
	}
	return string(r)
}

// checkPingRun: the last DISCO "ping until direct" run got pongs, but only
// through DERP or a peer relay, although the peer advertises endpoints.
// Only checked when a run exists (the Source records them).
func (d *diag) checkPingRun() bool {
	r := d.p.PingRun
	if r == nil {
		return false
	}
	failed := !r.Direct && r.Pongs > 0 && len(d.p.Endpoints) > 0
	buf := make([]byte, 0, 48)
	buf = strconv.AppendInt(buf, int64(r.Tries), 10)
	buf = append(buf, " tries, "...)
	buf = strconv.AppendInt(buf, int64(r.Pongs), 10)
	buf = append(buf, " pongs"...)
	if r.Via != "" {
		buf = append(buf, ", last via "...)
		buf = append(buf, r.Via...)
	}
	note := "no pong came over a direct UDP path"
	switch {
	case r.Direct:
		buf = append(buf, ", direct"...)
		note = "a pong came directly; the path may go direct again soon"
	case r.Pongs == 0:
		note = "no pong at all: the peer is not answering even through DERP"
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

// checkLocalUDP: our netcheck says UDP does not work.
func (d *diag) checkLocalUDP() (bool, string) {
	nat := d.self.NAT
	if nat == nil || nat.WorkingUDP == nil {
		d.unknown("NetInfo.WorkingUDP", "the daemon has not reported a netcheck")
		return false, ""
	}
	if !*nat.WorkingUDP {
		d.add("NetInfo.WorkingUDP", "false", true, "our STUN probes got no UDP reply")
		return true, "allow outbound UDP from this host (UDP 3478 for STUN and UDP to peers, 41641 by default)"
	}
	d.add("NetInfo.WorkingUDP", "true", false, "")
	return false, ""
}

// checkEndpoints: the peer advertises none, or only private ones while it is
// on another network.
func (d *diag) checkEndpoints() (noEP, privOnly bool, fix string) {
	p := &d.p
	if !p.EndpointsKnown {
		d.unknown("WhoIs.Node.Endpoints", "WhoIs was not available")
		return false, false, ""
	}
	if len(p.Endpoints) == 0 {
		d.add("WhoIs.Node.Endpoints", "[]", true, "the peer cannot be reached over UDP at any address")
		return true, false, "make the peer advertise a UDP endpoint: allow UDP on it (it may be blocked or disabled), or, for an embedded client, make it learn and advertise its public (STUN) endpoint"
	}
	if hasPublic(p.Endpoints) {
		d.add("WhoIs.Node.Endpoints", endpointsText(p.Endpoints), false, "at least one public endpoint")
		return false, false, ""
	}
	sameNet, why := d.sameNetwork()
	d.add("WhoIs.Node.Endpoints", endpointsText(p.Endpoints), !sameNet, "all private, CGNAT, link-local or container-bridge addresses")
	d.add("Self.Endpoints", endpointsText(d.self.Endpoints), !sameNet, why)
	if sameNet {
		return false, false, ""
	}
	return false, true, "give the peer a reachable endpoint: enable UPnP/NAT-PMP/PCP on its router or forward UDP 41641 to it"
}

// sameNetwork guesses whether the peer's private endpoints are on one of our
// own networks: the peer is on this host (a loopback endpoint while we have
// one too, or an endpoint address equal to one of ours), or it shares an
// IPv4 /24 or IPv6 /64 with one of our private endpoints (CGNAT and
// Tailscale ranges excluded).
func (d *diag) sameNetwork() (bool, string) {
	if len(d.self.Endpoints) == 0 {
		return false, "our endpoints are unknown; assuming the peer is on another network"
	}
	for _, pe := range d.p.Endpoints {
		pa := pe.Addr().Unmap()
		for _, se := range d.self.Endpoints {
			sa := se.Addr().Unmap()
			if pa == sa || (pa.IsLoopback() && sa.IsLoopback()) {
				return true, "the peer is on this host (" + pa.String() + "), so its endpoints are reachable from here"
			}
		}
	}
	for _, pe := range d.p.Endpoints {
		pa := pe.Addr().Unmap()
		if !lanComparable(pa) {
			continue
		}
		for _, se := range d.self.Endpoints {
			sa := se.Addr().Unmap()
			if !lanComparable(sa) || sa.Is4() != pa.Is4() {
				continue
			}
			bits := 64
			if sa.Is4() {
				bits = 24
			}
			sp, _ := sa.Prefix(bits)
			if sp.Contains(pa) {
				return true, "we have an endpoint on the same LAN (" + sp.String() + "), so the private endpoints should work"
			}
		}
	}
	return false, "no endpoint of ours shares a LAN prefix with the peer's: it is on another network"
}

func lanComparable(a netip.Addr) bool {
	if a.IsLoopback() || !a.IsValid() {
		return false
	}
	for _, p := range privatePrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return a.IsPrivate() || a.IsLinkLocalUnicast()
}

// checkNAT: hard NAT (mapping varies by destination) without port mapping,
// here and, where the peer shares its NetInfo, there.
func (d *diag) checkNAT() (ReasonID, string) {
	nat := d.self.NAT
	localHard := false
	switch {
	case nat == nil || nat.MappingVariesByDestIP == nil:
		d.unknown("NetInfo.MappingVariesByDestIP", "the daemon has not measured our NAT type")
	case *nat.MappingVariesByDestIP:
		localHard = !nat.HavePortMap
		d.add("NetInfo.MappingVariesByDestIP", "true", localHard, "our NAT picks a new port per destination (hard NAT)")
		d.add("NetInfo.HavePortMap", strconv.FormatBool(nat.HavePortMap), localHard, portMapNote(nat))
	default:
		d.add("NetInfo.MappingVariesByDestIP", "false", false, "our NAT is easy or absent")
	}
	peerHard := false
	pn := d.p.NAT
	switch {
	case pn == nil || pn.MappingVariesByDestIP == nil:
		d.unknown("Peer.NetInfo.MappingVariesByDestIP", "the peer's NAT type is not shared")
	case *pn.MappingVariesByDestIP:
		peerHard = !pn.HavePortMap
		d.add("Peer.NetInfo.MappingVariesByDestIP", "true", peerHard, "the peer's NAT is hard too")
	default:
		d.add("Peer.NetInfo.MappingVariesByDestIP", "false", false, "the peer's NAT is easy or absent")
	}
	switch {
	case localHard && peerHard:
		return ReasonBothHardNAT, "enable UPnP, NAT-PMP or PCP on either router, or add a static UDP port-forward (e.g. 41641 with `tailscaled --port=41641`) on one side; a granted peer relay also avoids DERP"
	case localHard:
		return ReasonLocalHardNAT, "enable UPnP, NAT-PMP or PCP on this network's router, or add a static UDP port-forward (e.g. 41641 with `tailscaled --port=41641`); several nodes behind one firewall make NAT hard"
	}
	return "", ""
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

// checkFarDERP: the relaying region (the peer's home) is much slower from
// here than our best region (see FarDERPFactor and FarDERPMargin).
func (d *diag) checkFarDERP() (bool, farDERP) {
	nat := d.self.NAT
	region := d.p.HomeDERP
	if nat == nil || len(nat.DERPLatency) == 0 || region == 0 {
		d.unknown("NetInfo.DERPLatency", "no DERP latencies or the peer's home region is unknown")
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
	buf := make([]byte, 0, 48)
	buf = d.appendRegion(buf, region)
	buf = append(buf, '=')
	buf = appendMs(buf, relayLat)
	buf = append(buf, ", best "...)
	buf = d.appendRegion(buf, bestID)
	buf = append(buf, '=')
	buf = appendMs(buf, bestLat)
	note := "the relay region is about as close as the best one"
	if far {
		note = farNote
	}
	d.add("NetInfo.DERPLatency", string(buf), far, note)
	return far, farDERP{region: region, best: bestID, relayLat: relayLat, bestLat: bestLat}
}

// farTexts are the summary and fix for a far relay region.
func (d *diag) farTexts(f farDERP) (summary, fix string) {
	rn, bn := d.regionName(f.region), d.regionName(f.best)
	rl, bl := msText(f.relayLat), msText(f.bestLat)
	return "relay " + rn + " is far (" + rl + " vs " + bl + ")",
		"the relay " + rn + " is " + rl + " away while " + bn + " is " + bl + ": check the peer's home DERP choice (its netcheck) or the DERP map"
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

func timeText(t time.Time) string {
	if t.IsZero() {
		return "never"
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
