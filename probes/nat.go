package probes

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// The NAT analysis: what the two ends' NATs, port mappings and firewalls
// say about a relayed path. Several rules read it (same-nat-lan-blocked,
// shared-nat-no-hairpin, local-/peer-inbound-udp-blocked,
// local-/peer-portmap-blocked and the NAT types); it is worked out once
// per verdict, by the first of them.
//
// Tailscale's rules, from wgengine/magicsock:
//   - Every interface address is advertised beside STUN's
//     (determineEndpoints), so an end whose endpoints are public only
//     has a public address on its own interface: no NAT.
//   - A DISCO ping from any source is answered, to that source
//     (handlePingLocked: Pong{Src: src}, addCandidateEndpoint). So an end
//     with no NAT goes direct with anyone whose UDP works, unless inbound
//     UDP is dropped in front of it; easy ↔ easy goes direct; hard ↔ hard
//     and hard ↔ filtering stay relayed.
//   - An advertised port mapping (EndpointPortmapped) is a reachable
//     address; relayed anyway, it passes no traffic.
//   - LAN endpoints are pinged too and private addresses win (endpoint.go
//     betterAddr), so between two hosts on one LAN the NAT does not matter.

// natFacts is what the NAT analysis found.
type natFacts struct {
	// sameLAN: one public address, one LAN (by this host's interfaces);
	// sharedNAT: one public address, different LANs; oneNAT: one public
	// address, LAN addresses that may be one LAN or two (no interfaces
	// read). Vars fill their texts.
	sameLAN, sharedNAT, oneNAT bool
	sharedVars                 []string
	// guest: sameLAN because the peer's LAN address is on this host's
	// own VM or container bridge (links.go guestBridge).
	guest bool
	// self and peer say whether each end has a NAT in front of it, and
	// selfEv how that was found (selfNAT, peerNAT).
	self, peer natState
	selfEv     natEvidence
	peerNote   string
	// The inbound rules: an end with no NAT whose inbound UDP is dropped.
	localInbound, peerInbound bool
	localAlso                 bool // both ends open and this host's firewall accepts: the peer's first
	localVariant              string
	localVars, peerVars       []string
	// Port mappings that exist, on a relayed path: ours (where its
	// external address is, mapped), the peer's.
	mapped                  mapState
	mappedAddr              netip.AddrPort
	localMapped, peerMapped bool
	localMapVariant         string
	peerMapVariant          string
	// doubleNAT: our mapping is behind another NAT and our end needed it.
	doubleNAT bool
	// The NAT-type reason, if any, and its wording.
	reason  ReasonID
	variant string
	vars    []string
}

// natState is whether an end has a NAT in front of it.
type natState uint8

const (
	natUnknown natState = iota
	natBehind           // a NAT (or a port mapping's router) is in front
	natNone             // a public address on the end's own interface
)

// mapState is where our port mapping's external address is.
type mapState uint8

const (
	mapUnknown mapState = iota // which endpoint is the mapping is not known
	mapNone                    // no mapping held
	mapPublic                  // a public address: reachable from outside
	mapBehind                  // private or 100.64.0.0/10: behind another NAT
)

// natEvidence is the check that showed an end's NAT state (nothing to
// record when field is "").
type natEvidence struct {
	field, value, note string
	// lanSamePort: LAN addresses beside a public one that carries their
	// port (a NAT that kept the port, or a host with a public and a
	// private interface).
	lanSamePort bool
}

func (d *diag) checkSameNATLAN() result {
	if nf := d.nat(); nf.sameLAN {
		variant := ""
		if nf.guest {
			variant = "guest"
		}
		return holdsAs(variant, nf.sharedVars...)
	}
	return notHeld()
}

func (d *diag) checkSharedNAT() result {
	if nf := d.nat(); nf.sharedNAT {
		return holdsAs("", nf.sharedVars...)
	}
	return notHeld()
}

func (d *diag) checkLocalInbound() result {
	nf := d.nat()
	if !nf.localInbound {
		return notHeld()
	}
	res := holdsAs(nf.localVariant, nf.localVars...)
	res.alsoOnly = nf.localAlso
	return res
}

func (d *diag) checkPeerInbound() result {
	if nf := d.nat(); nf.peerInbound {
		return holdsAs("", nf.peerVars...)
	}
	return notHeld()
}

func (d *diag) checkLocalPortMap() result {
	nf := d.nat()
	if !nf.localMapped {
		return notHeld()
	}
	return holdsAs(nf.localMapVariant)
}

func (d *diag) checkPeerPortMap() result {
	nf := d.nat()
	if !nf.peerMapped {
		return notHeld()
	}
	return holdsAs(nf.peerMapVariant)
}

func (d *diag) checkDoubleNAT() result {
	nf := d.nat()
	if !nf.doubleNAT {
		return notHeld()
	}
	return holdsAs("", "{mapped}", nf.mappedAddr.Addr().String(), "{mappedport}", strconv.Itoa(int(nf.mappedAddr.Port())), "{port}", d.ourPortOnce())
}

// natRule is the check of the NAT-type rule id.
func natRule(id ReasonID) func(*diag) result {
	return func(d *diag) result {
		if nf := d.nat(); nf.reason == id {
			return result{holds: true, words: d.natWords(id, nf.variant, nf.vars, d.cliSure())}
		}
		return notHeld()
	}
}

// mappingKnown reports whether our NAT type is known as tailscaled's own
// socket sees it: measured, not "hard" by the CLI's netcheck (a socket of
// its own: see cliHard), and not "false" from one STUN server (netcheck
// compares two).
func (d *diag) mappingKnown() bool {
	n := d.self.NAT
	if n == nil || n.MappingVariesByDestIP == nil || (cliHard(n) && d.cliProbable() == "") {
		return false
	}
	return *n.MappingVariesByDestIP || !d.oneSTUN()
}

// cliHard reports a hard NAT measured by the tailscale CLI's own netcheck,
// which tells nothing of tailscaled's port: the CLI binds a socket of its
// own on an OS-assigned port (cmd/tailscale/cli/netcheck.go,
// netcheck.Client.Standalone), and the rules that make a NAT easy for
// tailscaled single its port out (a static-port outbound NAT rule for
// 41641, as on pfSense or OPNsense). The converse does not hold: a NAT
// that keeps one mapping for the CLI's arbitrary port across destinations
// does so for tailscaled's port too, so the CLI's "false" is read as
// tailscaled's (with a note saying who measured it).
func cliHard(n *NATInfo) bool {
	return n.FromCLI && n.MappingVariesByDestIP != nil && *n.MappingVariesByDestIP
}

// oneSTUN reports whether netcheck had one STUN server to compare (the
// DERP map's count, or a pasted report's regions).
func (d *diag) oneSTUN() bool {
	return d.self.STUNServers == 1 || (d.self.NAT != nil && d.self.NAT.STUNRegions == 1)
}

// peerMappingKnown reports whether the peer's NAT type is known.
func (d *diag) peerMappingKnown() bool {
	ps := d.p.PeerSide
	if ps == nil || ps.MappingVariesByDestIP == nil {
		return false
	}
	return *ps.MappingVariesByDestIP || d.self.STUNServers != 1
}

// nat works the NAT analysis out once, recording its evidence.
func (d *diag) nat() *natFacts {
	if d.nfDone {
		return d.nf
	}
	d.nfDone = true
	d.nf = &d.scratchOf().nf
	nf := d.nf
	ep := d.endpoints()
	d.sharedNATFacts(nf)
	nf.self, nf.selfEv = d.selfNATOnce()
	nf.peer, nf.peerNote = d.peerNAT(ep)
	// Between two hosts behind one NAT, the NAT types decide nothing.
	one := nf.sameLAN || nf.sharedNAT || nf.oneNAT
	d.quiet = one
	d.natTypes(nf, ep.v6Both)
	d.quiet = false
	if !one {
		d.openEnds(nf, ep)
	}
	d.checkCGNAT()
	return nf
}

// sharedNATFacts: both ends show the same public address and both have
// LAN addresses. On one LAN (by this host's interface prefixes) the LAN
// path is blocked; on different LANs the shared NAT does not hairpin.
// Without this host's interfaces, addresses in one private block may be
// one LAN or two homes on the same default range (a carrier's NAT in
// front of both): that stays open (oneNAT), never guessed from a /24.
func (d *diag) sharedNATFacts(nf *natFacts) {
	a, ok := sharedPublicAddr(d.self.Endpoints, d.p.Endpoints)
	if !ok {
		return
	}
	var ob, tb [4]netip.Addr
	ours, theirs := appendLAN(ob[:0], d.self.Endpoints), appendLAN(tb[:0], d.p.Endpoints)
	if len(ours) == 0 || len(theirs) == 0 {
		d.info("Self.Endpoints", a.String(), "the same public address on both ends: both are behind one NAT, so the direct path needs their LAN addresses or the router's hairpinning")
		return
	}
	if h := d.ourHost(); h != nil {
		if o, t, pfx, ok := d.oneLAN(ours, theirs); ok {
			nf.sharedVars = []string{"{ours}", o.String(), "{theirs}", t.String()}
			if !slices.Contains(h.Neighbors, t) {
				// Two homes behind one carrier NAT often use the same
				// default range: the prefix alone is not one LAN.
				nf.oneNAT = true
				nf.sharedVars = []string{"{shared}", a.String(), "{ours}", o.String(), "{theirs}", t.String()}
				why := "this host's neighbour table does not hold it"
				if !h.NeighborsRead {
					why = "this host's neighbour table was not read"
				}
				d.unknownV("Self.Endpoints", a.String(), safetext.New("the same public address on both ends, and the peer's LAN address "+t.String()+" falls in this host's network "+pfx.String()+", but "+why+": one LAN, or two homes on the same default range behind a shared NAT (a carrier's), which relay for the shared NAT's missing hairpin"))
				return
			}
			nf.sameLAN = true
			d.add("Self.Endpoints", a.String(), true, safetext.New("the same public address on both ends, LAN addresses in one network of this host's ("+pfx.String()+"), and the peer's "+t.String()+" in this host's neighbour table (a link-layer address: one link): one NAT and one LAN, where magicsock pings the LAN addresses directly and prefers them (endpoint.go betterAddr), so the NAT type does not matter; the LAN path between them is blocked"))
			return
		}
	} else if o, t, ok := sameBlock(ours, theirs); ok {
		nf.oneNAT = true
		nf.sharedVars = []string{"{shared}", a.String(), "{ours}", o.String(), "{theirs}", t.String()}
		d.unknownV("Self.Endpoints", a.String(), safetext.New("the same public address on both ends, and LAN addresses in one private range ("+o.String()+" here, "+t.String()+" there): one LAN, or two LANs on the same default range behind a shared NAT (a carrier's, a building's); this host's interfaces would tell"))
		return
	}
	if ifc, pfx, ours, t, ok := d.guestOf(theirs); ok {
		// The peer sits behind this host's own NAT for its guests (Docker's
		// masquerade, macOS vmnet's, libvirt's), on a bridge this host
		// reaches directly: one link, not a shared NAT to hairpin.
		nf.sameLAN, nf.guest = true, true
		nf.sharedVars = []string{"{ours}", ours.String(), "{theirs}", t.String(), "{bridge}", ifc}
		d.add("Link.GuestBridge", t.String()+" on "+ifc, true, safetext.New("the same public address on both ends, and the peer's LAN address "+t.String()+" is on this host's own bridge "+ifc+" ("+pfx.String()+"): the peer is a VM or container of this host, which magicsock pings there directly and prefers (endpoint.go betterAddr); the path between host and guest is blocked"))
		return
	}
	nf.sharedNAT = true
	nf.sharedVars = []string{"{shared}", a.String()}
	d.add("Self.Endpoints", a.String(), true, safetext.New("the same public address on both ends, from different LANs ("+ours[0].String()+" here, "+theirs[0].String()+" there): a NAT above both (a carrier's CGNAT, a building's) must hairpin between them"))
}

// sameBlock finds a LAN address of each end that may share a network:
// the same family and the same private block (10.0.0.0/8, 172.16.0.0/12,
// 192.168.0.0/16, 100.64.0.0/10, fc00::/7), where one LAN's prefix may be
// any length.
func sameBlock(ours, theirs []netip.Addr) (o, t netip.Addr, ok bool) {
	for _, oa := range ours {
		ob := privateBlock(oa)
		if !ob.IsValid() {
			continue
		}
		for _, ta := range theirs {
			if ob.Contains(ta) {
				return oa, ta, true
			}
		}
	}
	return o, t, false
}

// privateBlocks are the private ranges a LAN's prefix lies in.
var privateBlocks = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("fc00::/7"),
}

// privateBlock is the private range holding a; invalid when none does.
func privateBlock(a netip.Addr) netip.Prefix {
	for _, p := range privateBlocks {
		if p.Contains(a) {
			return p
		}
	}
	return netip.Prefix{}
}

// oneLAN finds a LAN address of each end in one network of this host's
// (its interface prefixes, read by tailpath).
func (d *diag) oneLAN(ours, theirs []netip.Addr) (o, t netip.Addr, pfx netip.Prefix, ok bool) {
	h := d.ourHost()
	if h == nil {
		return o, t, pfx, false
	}
	for _, ifc := range h.Interfaces {
		if ifc.Tailscale || ifc.Bridge {
			continue
		}
		for _, p := range ifc.Addrs {
			if !slices.Contains(ours, p.Addr().Unmap()) {
				continue
			}
			for _, ta := range theirs {
				if p.Masked().Contains(ta) {
					return p.Addr().Unmap(), ta, p.Masked(), true
				}
			}
		}
	}
	return o, t, pfx, false
}

// appendLAN appends eps' LAN addresses to out: private, not loopback,
// link-local or a container bridge's.
func appendLAN(out []netip.Addr, eps []netip.AddrPort) []netip.Addr {
	for _, ep := range eps {
		a := ep.Addr().Unmap()
		if IsPrivateAddr(a) && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !IsBridgeAddr(a) && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// hasLAN reports whether eps hold a LAN address (private, CGNAT, ULA; not
// loopback, which no router sits in front of, nor a container bridge's):
// with no port mapping, a NAT most likely sits between that host and the
// internet.
func hasLAN(eps []netip.AddrPort) bool {
	var buf [4]netip.Addr
	return len(appendLAN(buf[:0], eps)) > 0
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

// tailscaleOSes are Hostinfo.OS values of Tailscale's own clients
// (version.OS), which advertise every interface address.
var tailscaleOSes = []string{"linux", "windows", "macOS", "iOS", "tvOS", "android", "freebsd", "openbsd", "illumos", "solaris", "plan9"}

// phoneOSes are clients that live on carrier networks: a phone on
// cellular sits behind the carrier's NAT, and its 100.64.0.0/10 address
// is never advertised, so public endpoints alone never show it has none.
var phoneOSes = []string{"android", "iOS"}

// openEnds records an end with no NAT (a public address on its own
// interface), which goes direct with any peer whose UDP works unless
// inbound UDP is dropped in front of it; and, where the evidence cannot
// tell whether an end has a NAT, says so.
func (d *diag) openEnds(nf *natFacts, ep *endpointFacts) {
	if !ep.known || ep.none || ep.privateOnly {
		return // an endpoint reason holds; no end's firewall is in question
	}
	peerHasUDP := !d.peerUDPBlocked()
	switch ev := nf.selfEv; {
	case nf.self == natNone && (!d.udpWorksHere() || !peerHasUDP):
		d.info(safetext.New(ev.field), ev.value, safetext.New(ev.note))
	case nf.self == natNone:
		d.add(safetext.New(ev.field), ev.value, true, safetext.New(ev.note+"; the peer's DISCO pings would reach tailscaled here and be answered, yet the path is relayed"))
		nf.localInbound = true
		nf.localVariant, nf.localAlso = d.firewallEvidence(nf.peer == natNone)
		nf.localVars = []string{"{port}", d.ourPortOnce(), "{why}", d.firewallWhy()}
	case nf.self == natUnknown && ev.field != "" && !ev.lanSamePort:
		d.unknownV(safetext.New(ev.field), ev.value, safetext.New(ev.note))
	case nf.self == natBehind && ev.field != "":
		d.info(safetext.New(ev.field), ev.value, safetext.New(ev.note))
	}
	switch {
	case nf.peer == natUnknown && nf.peerNote != "":
		d.unknownV("Peer.Endpoints", d.peerEndpointsText(), safetext.New(nf.peerNote))
	case nf.peer != natNone:
	case !d.udpWorksHere():
		d.info("Peer.Endpoints", d.peerEndpointsText(), safetext.New(nf.peerNote))
	case !factPeerMap.isKnown(d):
		// Held, so that the table's walk says what it lacks.
		d.info("Peer.Endpoints", d.peerEndpointsText(), safetext.New(nf.peerNote+"; whether its NAT maps per destination is not known, which would show a NAT"))
		nf.peerInbound = true
		nf.peerVars = []string{"{port}", publicPort(d.p.Endpoints)}
	default:
		d.add("Peer.Endpoints", d.peerEndpointsText(), true, safetext.New(nf.peerNote+"; DISCO pings from here would reach the peer's tailscaled and be answered, yet the path is relayed"))
		nf.peerInbound = true
		nf.peerVars = []string{"{port}", publicPort(d.p.Endpoints)}
	}
}

// selfNAT reads whether this end has a NAT in front of it, and the check
// that shows it. In order: NetInfo (a port mapping needs a router, a
// mapping that varies is a NAT), this host's interfaces (exact: our
// public endpoint on one of them), tailscaled's endpoint types from its
// log ("local" is an interface address), then the endpoints' ports: a
// public endpoint carrying the port of an address only an interface
// gives (a container bridge, a global IPv6 address) was not rewritten.
// Public endpoints alone prove nothing: tailscaled advertises interface
// addresses from net/netmon LocalAddresses, which skips all of
// 100.64.0.0/10, so a host behind a carrier's NAT advertises only its
// public STUN address, as a host with that address on its interface does.
func (d *diag) selfNAT() (natState, natEvidence) {
	eps := d.self.Endpoints
	if len(eps) == 0 {
		return natUnknown, natEvidence{field: "Self.Endpoints", value: "unknown", note: "our endpoints are unknown, so whether this end has a NAT is not known"}
	}
	if n := d.self.NAT; n != nil && (n.HavePortMap || (n.MappingVariesByDestIP != nil && *n.MappingVariesByDestIP)) {
		return natBehind, natEvidence{} // a NAT measured or mapped
	}
	if h := d.ourHost(); h != nil {
		// Every interface address is advertised (determineEndpoints), so
		// one among the endpoints proves nothing alone: a public IPv4
		// endpoint on no interface (STUN's, a mapping's) is a NAT's
		// address, whatever else the host has.
		if off := offInterface4(eps, h.holds); off.IsValid() {
			return natBehind, natEvidence{field: "Self.Endpoints", value: off.String(), note: d.natAddrNote(off, "on none of this host's interfaces")}
		}
		for _, ifc := range h.Interfaces {
			if ifc.Tailscale || ifc.Bridge {
				continue
			}
			for _, p := range ifc.Addrs {
				a := p.Addr().Unmap()
				if !routable4(a) {
					continue
				}
				for _, ep := range eps {
					if ep.Addr().Unmap() == a {
						return natNone, natEvidence{field: "Host.Interfaces", value: string(ifc.Name) + " " + p.String(), note: "a public address on this host's own interface (" + string(ifc.Name) + "), and no public endpoint on none of them: no NAT in front of it"}
					}
				}
			}
		}
		return natBehind, natEvidence{}
	}
	pub := firstRoutable4(eps)
	if !pub.IsValid() || onlyLoopback4(eps) {
		return natUnknown, natEvidence{}
	}
	if types := d.self.EndpointTypes; len(types) == len(eps) {
		local := func(a netip.Addr) bool {
			for i, ep := range eps {
				if types[i] == "local" && ep.Addr().Unmap() == a {
					return true
				}
			}
			return false
		}
		if off := offInterface4(eps, local); off.IsValid() {
			return natBehind, natEvidence{field: "Self.Endpoints", value: off.String(), note: d.natAddrNote(off, "not one tailscaled logged as local (an interface address)")}
		}
		for i, ep := range eps {
			if a := ep.Addr().Unmap(); types[i] == "local" && routable4(a) {
				return natNone, natEvidence{field: "Self.Endpoints", value: ep.String() + " (local)", note: "tailscaled logged this public address as a local one (an interface address; on AWS also the instance's public address, a 1:1 NAT: magicsock determineEndpoints, EndpointLocal): no NAT in front of it"}
			}
		}
		return natBehind, natEvidence{} // typed, and no public address is local: a NAT maps it
	}
	if ports := publicPorts4(eps); len(ports) > 1 {
		// Public IPv4 endpoints with different ports: one carries
		// tailscaled's own, the others a NAT's rewritten one.
		return natBehind, natEvidence{}
	}
	if hasLAN(eps) {
		if lanPort(eps) != pub.Port() {
			return natBehind, natEvidence{} // the public address maps another port than the interfaces'
		}
		return natUnknown, natEvidence{field: "Self.Endpoints", value: endpointsText(eps), lanSamePort: true,
			note: "a public address beside LAN addresses, carrying their port: a NAT that kept tailscaled's port, or a host with a public interface beside a private one (a cloud VM with a VPC interface); this host's interfaces would tell"}
	}
	if w := portWitness(eps, pub); w.IsValid() {
		return natNone, natEvidence{field: "Self.Endpoints", value: endpointsText(eps),
			note: "only public IPv4 addresses, carrying tailscaled's own port as its interface-only address " + w.String() + " does: the public address is on this host's interface (or a 1:1 NAT's, as a cloud's), no NAT"}
	}
	return natUnknown, natEvidence{field: "Self.Endpoints", value: endpointsText(eps),
		note: "only a public address, which a host behind a carrier's NAT advertises too: its 100.64.0.0/10 interface address is never advertised (net/netmon LocalAddresses skips tsaddr.IsTailscaleIP), so whether this end has a NAT is not known (this host's interfaces would tell)"}
}

// peerNAT reads whether the peer has a NAT in front of it, and says why
// when that cannot be known ("" when there is nothing to say): its own
// snapshot decides; otherwise only a public endpoint carrying the port
// of an address only an interface gives, from a client that advertises
// its interface addresses and is not a phone.
func (d *diag) peerNAT(ep *endpointFacts) (natState, string) {
	p := d.p
	if !ep.known || ep.none || ep.privateOnly {
		return natUnknown, ""
	}
	ps := p.PeerSide
	if ps != nil && ((ps.MappingVariesByDestIP != nil && *ps.MappingVariesByDestIP) || (ps.HavePortMap != nil && *ps.HavePortMap)) {
		return natBehind, ""
	}
	if ps != nil && ps.NoNAT != nil {
		if *ps.NoNAT {
			return natNone, "the peer's own snapshot shows a public address on its interface: no NAT"
		}
		return natBehind, ""
	}
	pub := firstPublic4(p.Endpoints)
	if !pub.IsValid() || onlyLoopback4(p.Endpoints) {
		return natUnknown, ""
	}
	if hasLAN(p.Endpoints) {
		return natBehind, ""
	}
	os := p.OS
	switch {
	case os == "":
		os = "unknown"
		fallthrough
	case !slices.Contains(tailscaleOSes, string(p.OS)):
		return natUnknown, "only public IPv4 addresses, but the peer's client (OS " + string(os) + ") is not known to advertise its interface addresses, so whether it has a NAT is not known"
	case slices.Contains(phoneOSes, string(p.OS)):
		return natUnknown, "only public addresses, as a phone on a cellular network advertises: it sits behind the carrier's NAT, whose 100.64.0.0/10 address on its interface is never advertised (net/netmon LocalAddresses), so this does not show the peer has no NAT"
	}
	if w := portWitness(p.Endpoints, pub); w.IsValid() {
		return natNone, "only public IPv4 addresses, carrying the peer's tailscaled port as its interface-only address " + w.String() + " does: Tailscale advertises every interface address (magicsock determineEndpoints), so the public one is on its interface (or a 1:1 NAT's, as a cloud's), no NAT"
	}
	return natUnknown, "only public addresses, which a host behind a carrier's NAT advertises too: its 100.64.0.0/10 interface address is never advertised (net/netmon LocalAddresses skips tsaddr.IsTailscaleIP), so whether the peer has a NAT is not known (its own snapshot would tell)"
}

// routable4 reports whether a is a public IPv4 address that can prove
// no NAT: not private, not 198.18.0.0/15 (benchmarking, RFC 2544, which
// proxy TUN interfaces such as Clash's or Surge's fake-IP take: nothing
// on the internet routes to it, though IsPrivateAddr counts it public as
// Tailscale does).
func routable4(a netip.Addr) bool {
	return a.Is4() && !IsPrivateAddr(a) && !benchmarkRange.Contains(a)
}

var benchmarkRange = netip.MustParsePrefix("198.18.0.0/15")

// firstRoutable4 is eps' first routable IPv4 endpoint; invalid when none.
func firstRoutable4(eps []netip.AddrPort) netip.AddrPort {
	for _, ep := range eps {
		if routable4(ep.Addr().Unmap()) {
			return ep
		}
	}
	return netip.AddrPort{}
}

// offInterface4 is eps' first routable IPv4 endpoint whose address on
// reports is on no interface (STUN's view, a mapping's): a NAT's.
func offInterface4(eps []netip.AddrPort, on func(netip.Addr) bool) netip.AddrPort {
	for _, ep := range eps {
		if a := ep.Addr().Unmap(); routable4(a) && !on(a) {
			return ep
		}
	}
	return netip.AddrPort{}
}

// publicPorts4 are the distinct ports of eps' routable IPv4 endpoints.
func publicPorts4(eps []netip.AddrPort) []uint16 {
	var out []uint16
	for _, ep := range eps {
		if routable4(ep.Addr().Unmap()) && !slices.Contains(out, ep.Port()) {
			out = append(out, ep.Port())
		}
	}
	return out
}

// natAddrNote says what a public endpoint on no interface shows: a NAT,
// one that rewrote tailscaled's port when its port differs.
func (d *diag) natAddrNote(off netip.AddrPort, where string) string {
	note := "a public endpoint " + where + ": the address a NAT in front of this host maps tailscaled to (magicsock determineEndpoints adds STUN's and a mapping's beside every interface address)"
	if lp := localPort(d.self.Endpoints, d.self.EndpointTypes); lp != 0 && lp != off.Port() {
		note += "; its port " + strconv.Itoa(int(off.Port())) + " is not tailscaled's own (" + strconv.Itoa(int(lp)) + "), so the NAT rewrites ports"
	}
	return note
}

// localPort is tailscaled's own UDP port as its interface endpoints show
// it (every interface address is advertised with pconn4's port:
// determineEndpoints): the port of a LAN, bridge or local-typed endpoint;
// 0 when none shows it.
func localPort(eps []netip.AddrPort, types []string) uint16 {
	if len(types) == len(eps) {
		for i, ep := range eps {
			if types[i] == "local" {
				return ep.Port()
			}
		}
		return 0
	}
	// Untyped: determineEndpoints lists the port mapping and STUN's
	// first and the interface addresses last, and a mapping's address
	// may be private too (a router behind another NAT): the last private
	// endpoint is an interface's.
	for i := len(eps) - 1; i >= 0; i-- {
		if a := eps[i].Addr().Unmap(); a.Is4() && IsPrivateAddr(a) && !a.IsLoopback() && !a.IsLinkLocalUnicast() {
			return eps[i].Port()
		}
	}
	return 0
}

// firstPublic4 is eps' first public IPv4 endpoint; invalid when none.
func firstPublic4(eps []netip.AddrPort) netip.AddrPort {
	for _, ep := range eps {
		if a := ep.Addr().Unmap(); a.Is4() && !IsPrivateAddr(a) {
			return ep
		}
	}
	return netip.AddrPort{}
}

// portWitness is an endpoint only an interface gives (a container
// bridge's address, a global IPv6 address) whose port is pub's: all
// interface endpoints carry tailscaled's own port (magicsock
// determineEndpoints: LocalAddresses with pconn4's port; pconn6 binds the
// same --port), so pub's port was not rewritten. Invalid when none.
func portWitness(eps []netip.AddrPort, pub netip.AddrPort) netip.AddrPort {
	for _, ep := range eps {
		a := ep.Addr().Unmap()
		if ep.Port() == pub.Port() && (IsBridgeAddr(a) || (a.Is6() && !IsPrivateAddr(a))) {
			return ep
		}
	}
	return netip.AddrPort{}
}

// lanPort is the port of eps' first LAN endpoint (tailscaled's own).
func lanPort(eps []netip.AddrPort) uint16 {
	for _, ep := range eps {
		a := ep.Addr().Unmap()
		if IsPrivateAddr(a) && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !IsBridgeAddr(a) {
			return ep.Port()
		}
	}
	return 0
}

// onlyLoopback4 reports whether eps' IPv4 addresses include loopback.
func onlyLoopback4(eps []netip.AddrPort) bool {
	for _, ep := range eps {
		if a := ep.Addr().Unmap(); a.Is4() && a.IsLoopback() {
			return true
		}
	}
	return false
}

// publicPort is the port of eps' first public endpoint, as text.
func publicPort(eps []netip.AddrPort) string {
	for _, ep := range eps {
		if !IsPrivateAddr(ep.Addr()) {
			return "UDP " + strconv.Itoa(int(ep.Port()))
		}
	}
	return "UDP 41641 or its --port"
}

// ourPort is tailscaled's UDP port here, as text: the one the firewall
// was judged for, else the one its interface endpoints carry, never a
// NAT's rewritten port (a public endpoint's only when nothing else
// shows one).
func (d *diag) ourPort() string {
	if h := d.self.Host; h != nil && h.Firewall != nil && h.Firewall.Port != 0 {
		return "UDP " + strconv.Itoa(int(h.Firewall.Port))
	}
	if lp := localPort(d.self.Endpoints, d.self.EndpointTypes); lp != 0 {
		return "UDP " + strconv.Itoa(int(lp))
	}
	return publicPort(d.self.Endpoints)
}

// firewallWhy is how the firewall verdict was reached.
func (d *diag) firewallWhy() string {
	if h := d.self.Host; h != nil && h.Firewall != nil && h.Firewall.Why != "" {
		return string(h.Firewall.Why)
	}
	return "its rules"
}

// firewallEvidence records this host's firewall as evidence for
// local-inbound-udp-blocked and picks the fix's wording; also is true
// when both ends are open and this host accepts (the peer's firewall
// then comes first).
func (d *diag) firewallEvidence(peerOpen bool) (variant string, also bool) {
	h := d.ourHost()
	if h == nil || h.Firewall == nil {
		why := "not read: tailpath reads this host's nftables ruleset on Linux, as root"
		if h != nil && h.Firewall == nil {
			why = "not read (not Linux, or not asked)"
		}
		d.unknown("Host.Firewall", safetext.New(why))
		return "", false
	}
	fw := h.Firewall
	port := strconv.Itoa(int(fw.Port))
	switch fw.Verdict {
	case FirewallDrop:
		if fw.Stateful {
			d.add("Host.Firewall", "drop new UDP "+port+", replies accepted", true, "this host's nftables ruleset admits replies to what it sent but drops a peer's unsolicited DISCO ping ("+fw.Why+")")
			return "stateful", false
		}
		d.add("Host.Firewall", "drop UDP "+port, true, "this host's nftables ruleset drops inbound UDP to tailscaled's port ("+fw.Why+")")
		return "drop", false
	case FirewallAccept:
		d.add("Host.Firewall", "accept UDP "+port, false, "this host's nftables ruleset accepts inbound UDP to tailscaled's port ("+fw.Why+"); a firewall in front of the host may still drop it")
		return "host-accepts", peerOpen
	}
	d.unknownV("Host.Firewall", FirewallUnknown, fw.Why)
	return "", false
}

// natTypes records both ends' NAT types and port mappings and decides
// the NAT-type reason, if any. netcheck measures the mapping on IPv4
// only (net/netcheck: "TODO: track MappingVariesByDestIP for IPv6"), so
// with v6Both the facts are shown but decide nothing; with one STUN
// server a "false" cannot rule a hard NAT out; the CLI's own netcheck
// measured another socket than tailscaled's.
//
// Long on purpose: a decision table: each NAT case and its wording, in the
// order the cases are tried.
func (d *diag) natTypes(nf *natFacts, v6Both bool) {
	const v6Note = "IPv4 only: both ends have global IPv6 endpoints, which no NAT maps"
	const oneSTUN = "netcheck compares the mappings two STUN servers see (addNodeLatency sets false on a second reply, which may come from the same server), and the DERP map, or the report, has one: a hard NAT reads false too; the NAT type is not known"
	const cliNote = "hard as measured by the tailscale CLI's own netcheck, from a socket of its own on an OS-assigned port (cmd/tailscale/cli/netcheck.go, netcheck.Client.Standalone), not tailscaled's: a static-port outbound NAT rule for tailscaled's port makes it easy while other ports stay hard; tailscaled's `netcheck: report:` log line or its NetInfo decides"
	nat := d.self.NAT
	var ourHard, ourEasy, ourNoMap bool
	const field = "NetInfo.MappingVariesByDestIP"
	switch {
	case nat == nil || nat.MappingVariesByDestIP == nil:
		d.unknown(field, "the daemon has not measured our NAT type")
	case cliHard(nat) && d.cliProbable() == "":
		d.unknownV(field, "true", cliNote)
		if nat.PortMapUnknown {
			d.unknown("NetInfo.HavePortMap", "the source does not say whether UPnP, NAT-PMP or PCP answered (netcheck: \"not checked\")")
		}
	case *nat.MappingVariesByDestIP && v6Both:
		d.info(field, "true", v6Note)
	case !*nat.MappingVariesByDestIP && d.oneSTUN():
		d.unknownV(field, "false", oneSTUN)
	case *nat.MappingVariesByDestIP && nat.PortMapUnknown && !nat.HavePortMap:
		d.info(field, "true", "our NAT picks a new port per destination (hard NAT); whether a port mapping rescues it is not known")
		d.unknown("NetInfo.HavePortMap", "the source does not say whether UPnP, NAT-PMP or PCP answered (netcheck: \"not checked\")")
	case *nat.MappingVariesByDestIP:
		ourHard, ourNoMap = true, !nat.HavePortMap
	default:
		ourEasy, ourNoMap = true, !nat.HavePortMap && !nat.PortMapUnknown
	}
	nf.mapped = mapNone
	if nat != nil && nat.HavePortMap {
		nf.mapped, nf.mappedAddr = d.mappedAddr()
		if nf.mapped == mapBehind {
			ourNoMap = true // nothing outside reaches it
		}
	}
	if ourHard {
		ourHard = ourNoMap
		note := "our NAT picks a new port per destination (hard NAT)"
		if why := d.cliProbable(); why != "" {
			note = "hard as the tailscale CLI's own netcheck measured it, from a socket of its own (cmd/tailscale/cli/netcheck.go, netcheck.Client.Standalone): " + why
		}
		d.add(field, "true", ourHard, safetext.New(note))
	} else if ourEasy {
		note := "our NAT is easy or absent"
		if nat.FromCLI {
			note += " (measured by the tailscale CLI's own netcheck from a port of its own: a NAT that keeps one mapping for an arbitrary port keeps one for tailscaled's too)"
		}
		d.add(field, "false", false, safetext.New(note))
	}
	if nat != nil && !nat.PortMapUnknown {
		switch {
		case nat.HavePortMap && nf.mapped != mapBehind:
			nf.localMapped = d.udpWorksHere()
			note := "this host holds a port mapping and advertises it (magicsock determineEndpoints adds the mapped address), yet the path is relayed: nothing comes through it"
			value := "true"
			switch {
			case nf.mapped == mapPublic && nf.mappedAddr.IsValid():
				value += ", mapped at " + nf.mappedAddr.String()
			case nf.mapped == mapUnknown:
				note += "; which of our endpoints is the mapping is not known here, so whether the router that mapped sits behind another NAT is not either"
				nf.localMapVariant = "addr-unknown"
			}
			d.add("NetInfo.HavePortMap", value, nf.localMapped, safetext.New(note))
		case ourHard:
			d.add("NetInfo.HavePortMap", "false", true, safetext.New(d.portServicesNote(nat)))
		}
	}
	ps := d.p.PeerSide
	var peerHard, peerEasy bool
	peerMap := ps.mapping()
	if peerMap != nil && *peerMap && d.peerMappedBehind() {
		peerMap = &falseVal // a mapping behind a carrier's NAT reaches nothing
	}
	switch {
	case ps == nil || ps.MappingVariesByDestIP == nil:
		d.unknown(safetext.New(peerField(ps, factMapping)), d.peerNATUnknown())
	case *ps.MappingVariesByDestIP && v6Both:
		d.info(safetext.New(peerField(ps, factMapping)), "true", v6Note)
	case !*ps.MappingVariesByDestIP && d.self.STUNServers == 1:
		d.unknownV(safetext.New(peerField(ps, factMapping)), "false", oneSTUN)
	case *ps.MappingVariesByDestIP:
		switch {
		case peerMap == nil:
			// Hard, but a port mapping might rescue it: no verdict.
			d.info(safetext.New(peerField(ps, factMapping)), "true", safetext.New("the peer's NAT picks a new port per destination (hard NAT); whether it holds a port mapping is not known"+portServicesPeer(ps)))
		case *peerMap:
			d.add(safetext.New(peerField(ps, factMapping)), "true", false, "the peer's NAT is hard, but it holds a port mapping")
		default:
			peerHard = true
			d.add(safetext.New(peerField(ps, factMapping)), "true", true, "the peer's NAT picks a new port per destination (hard NAT) and it holds no port mapping")
		}
	default:
		peerEasy = true
		d.add(safetext.New(peerField(ps, factMapping)), "false", false, "the peer's NAT is easy or absent")
	}
	switch {
	case peerMap != nil && *peerMap:
		nf.peerMapped = d.udpWorksHere() && !d.peerUDPBlocked()
		note := "the peer holds a port mapping and advertises it, yet the path is relayed: nothing comes through it"
		if !d.peerMappedPublic() {
			note += "; which of its endpoints is the mapping is not known here (a private one would be a router behind another NAT)"
			nf.peerMapVariant = "addr-unknown"
		}
		d.add(safetext.New(peerField(ps, factPortMap)), "true", nf.peerMapped, safetext.New(note))
	case ps.mapping() != nil && *ps.mapping():
		d.info(safetext.New(peerField(ps, factPortMap)), "true", "the peer holds a port mapping, but it advertises an endpoint in 100.64.0.0/10, which only a mapping made behind a carrier's NAT gives (net/netmon LocalAddresses never advertises that range): nothing outside reaches it")
	}
	d.otherSide(ps)
	if d.stale != "" {
		d.info(safetext.New(d.staleField), "too old", safetext.New(d.stale))
	}
	if nf.localMapped || nf.peerMapped || d.quiet {
		// A mapping should have carried the path: its own rule explains.
		return
	}
	switch {
	case ourHard && peerHard:
		nf.reason = ReasonBothHardNAT
	case ourHard && peerEasy && d.peerFilters(ps, peerMap):
		nf.reason = ReasonHardAndFilteringNAT
	case ourHard:
		nf.reason = ReasonLocalHardNAT
		pod, inPod := d.inPod()
		switch {
		case inPod:
			// The NAT in front is the cluster's, not a router's.
			nf.variant, nf.vars = "pod", []string{"{pod}", pod}
		case answered(nat.UPnP, nat.PMP, nat.PCP) != "":
			// "Enable UPnP" cannot be the fix: it answered and mapped nothing.
			nf.variant, nf.vars = "answered", []string{"{services}", answered(nat.UPnP, nat.PMP, nat.PCP)}
		case !peerEasy:
			// The peer's end unknown: an easy NAT, a stateful firewall
			// or a drop-all there look alike from here; name both halves.
			nf.variant = "two-halves"
		}
	case peerHard && ourEasy && ourNoMap:
		if v, ok := d.weFilter(nf); ok {
			nf.reason, nf.variant, nf.vars = ReasonHardAndFilteringNAT, v, []string{"{port}", d.ourPortOnce()}
			if pod, inPod := d.inPod(); inPod {
				nf.variant, nf.vars = "here-pod", []string{"{pod}", pod}
			}
			break
		}
		nf.reason = ReasonPeerHardNAT
		cs := ps.ClientSupports
		switch {
		case d.peerOnMobile():
			nf.variant, nf.vars = "mobile", []string{"{os}", string(d.p.OS)}
		case answered(cs.UPnP, cs.PMP, cs.PCP) != "":
			nf.variant, nf.vars = "answered", []string{"{services}", answered(cs.UPnP, cs.PMP, cs.PCP)}
		case nf.self != natBehind && !d.firewallRead():
			// A public end (or one not known) whose firewall was not
			// read: an easy NAT, a stateful firewall or a drop-all here
			// look alike; name both halves.
			nf.variant, nf.vars = "two-halves", []string{"{port}", d.ourPortOnce()}
		}
	}
	// The peer's hard NAT with our NAT type unknown: shown (failed above),
	// but not a verdict, since a hard NAT here would make it both-hard-nat.
	if nf.mapped == mapBehind {
		// Our mapping sits behind another NAT: when our end needed one
		// (our NAT is hard, or it filters a hard peer), that is why none
		// rescued the path.
		nf.doubleNAT = d.udpWorksHere() && (ourHard || nf.reason == ReasonHardAndFilteringNAT && nf.variant != "")
		note := "this host holds a port mapping, but its external address is " + behindWhat(nf.mappedAddr.Addr()) + ": the router that mapped sits behind another NAT (net/portmapper selectBestService takes such a device, \"ext-private\"), so nothing outside reaches the mapping"
		if nf.doubleNAT {
			d.add("NetInfo.HavePortMap", "true, mapped at "+nf.mappedAddr.String(), true, safetext.New(note))
		} else {
			d.info("NetInfo.HavePortMap", "true, mapped at "+nf.mappedAddr.String(), safetext.New(note+"; whether this end needed one is not known (the peer's NAT type, or ours)"))
		}
	}
}

// answered names the port-mapping services that answered ("UPnP, PCP");
// "" when none did. An answer is not a mapping (HavePortMap is).
func answered(upnp, pmp, pcp *bool) string {
	var out []string
	for _, s := range []struct {
		name string
		b    *bool
	}{{"UPnP", upnp}, {"NAT-PMP", pmp}, {"PCP", pcp}} {
		if s.b != nil && *s.b {
			out = append(out, s.name)
		}
	}
	return strings.Join(out, ", ")
}

// peerOnMobile reports whether the peer is a phone on a mobile network
// (its NetInfo's LinkType "mobile"): its NAT is the carrier's, with no
// router or command line its owner could change.
func (d *diag) peerOnMobile() bool {
	n := d.p.NAT
	return slices.Contains(phoneOSes, string(d.p.OS)) && n != nil && n.LinkType == "mobile"
}

// firewallRead reports whether this host's firewall verdict is known.
func (d *diag) firewallRead() bool {
	h := d.ourHost()
	return h != nil && h.Firewall != nil && h.Firewall.Verdict != FirewallUnknown
}

// behindWhat words where an address behind another NAT lies.
func behindWhat(a netip.Addr) string {
	if tailnetRange.Contains(a.Unmap()) {
		return "in 100.64.0.0/10, a carrier's NAT range"
	}
	return "private"
}

// mappedAddr finds where our port mapping's external address is: the
// endpoint tailscaled logged as "portmap", else one in 100.64.0.0/10
// (never an interface address: net/netmon LocalAddresses skips the
// range), else, by this host's interfaces, a private endpoint on none of
// them. The mapping is public when no endpoint can be a private one;
// otherwise which endpoint it is stays unknown.
func (d *diag) mappedAddr() (mapState, netip.AddrPort) {
	eps := d.self.Endpoints
	if ap := d.typedEndpoint("portmap"); ap.IsValid() {
		if a := ap.Addr().Unmap(); a.Is4() && IsPrivateAddr(a) {
			return mapBehind, ap
		}
		return mapPublic, ap
	}
	for _, ep := range eps {
		if a := ep.Addr().Unmap(); tailnetRange.Contains(a) && !chromeOS.Contains(a) {
			return mapBehind, ep
		}
	}
	private := func(a netip.Addr) bool {
		return a.Is4() && IsPrivateAddr(a) && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !IsBridgeAddr(a)
	}
	if h := d.ourHost(); h != nil {
		for _, ep := range eps {
			if a := ep.Addr().Unmap(); private(a) && !h.holds(a) {
				return mapBehind, ep
			}
		}
		return mapPublic, netip.AddrPort{}
	}
	for _, ep := range eps {
		if private(ep.Addr().Unmap()) {
			return mapUnknown, netip.AddrPort{}
		}
	}
	return mapPublic, netip.AddrPort{}
}

// holds reports whether one of h's interfaces has address a.
func (h *HostFacts) holds(a netip.Addr) bool {
	for _, ifc := range h.Interfaces {
		for _, p := range ifc.Addrs {
			if p.Addr().Unmap() == a {
				return true
			}
		}
	}
	return false
}

// peerMappedBehind reports whether the peer advertises an endpoint in
// 100.64.0.0/10: never an interface address (LocalAddresses skips the
// range), so a port mapping made on a router behind a carrier's NAT.
func (d *diag) peerMappedBehind() bool {
	for _, ep := range d.p.Endpoints {
		if a := ep.Addr().Unmap(); tailnetRange.Contains(a) && !chromeOS.Contains(a) {
			return true
		}
	}
	return false
}

// peerMappedPublic reports whether the peer's mapping must be one of its
// public endpoints: it advertises no private IPv4 address but container
// bridges (its own snapshot could tell more).
func (d *diag) peerMappedPublic() bool {
	for _, ep := range d.p.Endpoints {
		if a := ep.Addr().Unmap(); a.Is4() && IsPrivateAddr(a) && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !IsBridgeAddr(a) {
			return false
		}
	}
	return true
}

// portServicesNote is our HavePortMap false, read with what answered:
// NetInfo's UPnP/PMP/PCP list the services that answered, which is not a
// mapping (HavePortMap is).
func (d *diag) portServicesNote(n *NATInfo) string {
	var answered []string
	for _, s := range []struct {
		name string
		b    *bool
	}{{"UPnP", n.UPnP}, {"NAT-PMP", n.PMP}, {"PCP", n.PCP}} {
		if s.b != nil && *s.b {
			answered = append(answered, s.name)
		}
	}
	note := "no UPnP, NAT-PMP or PCP port mapping"
	if len(answered) > 0 {
		note = "the router answers " + strings.Join(answered, ", ") + " but gave no mapping"
	}
	if ev := d.evidence(); ev.UPnPFrom.IsValid() {
		note += "; tailscaled logged a UPnP answer from " + ev.UPnPFrom.String() + ", not the gateway " + ev.UPnPGateway.String() + ", and asked the gateway instead (net/portmapper getUPnPRootDevice), which did not map"
	}
	return note
}

// portServicesPeer says which of the peer's port-mapping services answered.
func portServicesPeer(ps *PeerSide) string {
	cs := ps.ClientSupports
	for _, b := range []*bool{cs.UPnP, cs.PMP, cs.PCP} {
		if b != nil && *b {
			return "; a port-mapping service answers on its network, which is not a mapping"
		}
	}
	return ""
}

// peerFilters records whether the peer's easy NAT filters unsolicited
// packets: it has no port mapping (known) and has LAN addresses among its
// endpoints, so a NAT most likely sits in front of it.
func (d *diag) peerFilters(ps *PeerSide, pm *bool) bool {
	if pm == nil {
		d.unknown(safetext.New(peerField(ps, factPortMap)), safetext.New("whether the peer holds a port mapping is not known"+d.apiHint()))
		return false
	}
	if ps.NoNAT != nil && *ps.NoNAT {
		// Its own snapshot read a public address on its interface: no
		// NAT to filter (a firewall that does is peer-inbound-udp-blocked's).
		d.info(safetext.New(peerField(ps, factPortMap)), "false", "no port mapping, and no NAT in front of the peer by its own snapshot (a public address on its interface): nothing there to filter but a firewall")
		return false
	}
	behind := hasLAN(ps.Endpoints) || hasLAN(d.p.Endpoints)
	note := "no UPnP, NAT-PMP or PCP on the peer's network"
	if behind {
		note += ", and it has LAN addresses, so a NAT most likely sits in front of it, dropping what it did not ask for"
	}
	d.add(safetext.New(peerField(ps, factPortMap)), "false", behind, safetext.New(note))
	return behind
}

// weFilter reports whether our easy end drops a hard peer's unsolicited
// pings, and the fix's wording: a NAT in front of it ("here": LAN
// addresses and no port mapping, or a mapping behind another NAT), or,
// when LAN addresses sit beside a public one carrying their port, a NAT
// or this host's firewall, unknown which ("here-either": both fixes). A
// public address alone says nothing (selfNAT), so no verdict rests on it.
func (d *diag) weFilter(nf *natFacts) (string, bool) {
	switch ev := nf.selfEv; {
	case nf.self == natBehind && nf.mapped == mapBehind:
		return "here", true
	case nf.self == natBehind && hasLAN(d.self.Endpoints):
		d.add("NetInfo.HavePortMap", "false", true, "no port mapping here, and this host has LAN addresses, so a NAT sits in front of it, dropping what it did not ask for")
		return "here", true
	case nf.self == natUnknown && ev.lanSamePort:
		d.add(safetext.New(ev.field), ev.value, true, safetext.New(ev.note+"; either way, with no port mapping, this end drops what it did not ask for"))
		return "here-either", true
	}
	return "", false
}

// otherSide shows what the older source said of the peer's NAT when two
// sources disagree (the newer one decided).
func (d *diag) otherSide(ps *PeerSide) {
	if ps == nil || ps.Other == nil || ps.Other.MappingVariesByDestIP == nil || ps.MappingVariesByDestIP == nil ||
		*ps.Other.MappingVariesByDestIP == *ps.MappingVariesByDestIP {
		return
	}
	d.info(safetext.New(peerField(ps.Other, factMapping)), strconv.FormatBool(*ps.Other.MappingVariesByDestIP),
		safetext.New("older than "+ps.Source+"'s answer, which decides"))
}

// apiHint is what a person can do about an unknown peer-side fact.
func (d *diag) apiHint() string {
	if ps := d.p.PeerSide; ps != nil && ps.Source != SourceLocalAPI {
		return ""
	}
	return apiHintText
}

const apiHintText = "; control does not pass it on: the control API (a read-only API key, TAILSCALE_API_KEY) can fill it"

// peerNATUnknown is the note of an unknown peer NAT type, with apiHint's
// words when they apply: a constant either way, not a string built per
// peer (BenchmarkJudge10k).
func (d *diag) peerNATUnknown() safetext.Text {
	const note = "the peer's NAT type is not known"
	if d.apiHint() == "" {
		return note
	}
	return note + apiHintText
}

// checkCGNAT records, as evidence only, an endpoint in 100.64.0.0/10 on
// either end. tailscaled never advertises such an interface address
// (net/netmon LocalAddresses skips the tailnet's range), so one among the
// endpoints is an external address a router reported for a port mapping:
// the router sits behind a carrier-grade NAT, which the mapping does not
// reach through. ChromeOS's 100.115.92.0/23 is left out.
func (d *diag) checkCGNAT() {
	for _, side := range [2]struct {
		field string
		eps   []netip.AddrPort
	}{{"Self.Endpoints", d.self.Endpoints}, {"WhoIs.Node.Endpoints", d.p.Endpoints}} {
		for _, ep := range side.eps {
			if a := ep.Addr().Unmap(); tailnetRange.Contains(a) && !chromeOS.Contains(a) {
				who := "our"
				if side.field != "Self.Endpoints" {
					who = "the peer's"
				}
				d.info(safetext.New(side.field), a.String(), safetext.New("in 100.64.0.0/10: "+who+" traffic crosses a carrier-grade NAT (the ISP's), which no port mapping on a home router reaches"))
				break
			}
		}
	}
}

// NoNAT says whether self's end has no NAT in front of it, as the
// diagnosis reads it (its interfaces, tailscaled's endpoint types, or a
// public endpoint carrying the port of an interface-only one); nil when
// that is not known. A peer's snapshot fills the peer's PeerSide.NoNAT
// with it (snapshot.PeerSideOf).
func NoNAT(self Self) *bool {
	d := newDiag(self, Peer{}, nil, time.Time{})
	defer d.free()
	switch st, _ := d.selfNAT(); st {
	case natNone:
		return boolp(true)
	case natBehind:
		return boolp(false)
	}
	return nil
}
