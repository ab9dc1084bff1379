package probes

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
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
	// The inbound rules: an end with no NAT whose inbound UDP is dropped.
	localInbound, peerInbound bool
	localAlso                 bool // both ends open and this host's firewall accepts: the peer's first
	localVariant              string
	localVars, peerVars       []string
	// Port mappings that exist, on a relayed path.
	localMapped, peerMapped bool
	// The NAT-type reason, if any, and its wording.
	reason  ReasonID
	variant string
}

func (d *diag) checkSameNATLAN() result {
	if nf := d.nat(); nf.sameLAN {
		return holdsAs("", nf.sharedVars...)
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

func (d *diag) checkLocalPortMap() result { return resultIf(d.nat().localMapped) }
func (d *diag) checkPeerPortMap() result  { return resultIf(d.nat().peerMapped) }

// natRule is the check of the NAT-type rule id.
func natRule(id ReasonID) func(*diag) result {
	return func(d *diag) result {
		if nf := d.nat(); nf.reason == id {
			return holdsAs(nf.variant)
		}
		return notHeld()
	}
}

// oneSTUN reports whether netcheck had one STUN server to compare (the
// DERP map's count, or a pasted report's regions).
func (d *diag) oneSTUN() bool {
	return d.self.STUNServers == 1 || (d.self.NAT != nil && d.self.NAT.STUNRegions == 1)
}

// nat works the NAT analysis out once, recording its evidence.
func (d *diag) nat() *natFacts {
	if d.nfDone {
		return &d.nf
	}
	d.nfDone = true
	nf := &d.nf
	ep := d.endpoints()
	d.sharedNATFacts(nf)
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
	if d.ourHost() != nil {
		if o, t, pfx, ok := d.oneLAN(ours, theirs); ok {
			nf.sameLAN = true
			nf.sharedVars = []string{"{ours}", o.String(), "{theirs}", t.String()}
			d.add("Self.Endpoints", a.String(), true, "the same public address on both ends, and LAN addresses in one network of this host's ("+pfx.String()+"): one NAT and one LAN, where magicsock pings the LAN addresses directly and prefers them (endpoint.go betterAddr), so the NAT type does not matter; the LAN path between them is blocked")
			return
		}
	} else if o, t, ok := sameBlock(ours, theirs); ok {
		nf.oneNAT = true
		nf.sharedVars = []string{"{shared}", a.String(), "{ours}", o.String(), "{theirs}", t.String()}
		d.unknownV("Self.Endpoints", a.String(), "the same public address on both ends, and LAN addresses in one private range ("+o.String()+" here, "+t.String()+" there): one LAN, or two LANs on the same default range behind a shared NAT (a carrier's, a building's); this host's interfaces would tell")
		return
	}
	nf.sharedNAT = true
	nf.sharedVars = []string{"{shared}", a.String()}
	d.add("Self.Endpoints", a.String(), true, "the same public address on both ends, from different LANs ("+ours[0].String()+" here, "+theirs[0].String()+" there): a NAT above both (a carrier's CGNAT, a building's) must hairpin between them")
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

// openEnds: an end with no NAT (a public address on its own interface)
// goes direct with any peer whose UDP works, unless inbound UDP is
// dropped in front of it. Judged for our end on this host's interfaces
// when read (exact), else on our endpoints; for the peer's end on its
// endpoints, when its client is Tailscale's own.
func (d *diag) openEnds(nf *natFacts, ep *endpointFacts) {
	if !ep.known || ep.none || ep.privateOnly {
		return // an endpoint reason holds; no end's firewall is in question
	}
	peerHasUDP := !d.peerUDPBlocked()
	ourOpen, ourField, ourValue, ourNote := d.selfOpen()
	peerOpen, peerNote := d.peerOpen(ep)
	if ourOpen {
		if !d.udpWorksHere() || !peerHasUDP {
			d.info(ourField, ourValue, ourNote)
		} else {
			d.add(ourField, ourValue, true, ourNote+"; the peer's DISCO pings would reach tailscaled here and be answered, yet the path is relayed")
			nf.localInbound = true
			nf.localVariant, nf.localAlso = d.firewallEvidence(peerOpen)
			nf.localVars = []string{"{port}", d.ourPort(), "{why}", d.firewallWhy()}
		}
	}
	if peerOpen {
		value := endpointsText(d.p.Endpoints)
		if !d.udpWorksHere() {
			d.info("Peer.Endpoints", value, peerNote)
			return
		}
		d.add("Peer.Endpoints", value, true, peerNote+"; DISCO pings from here would reach the peer's tailscaled and be answered, yet the path is relayed")
		nf.peerInbound = true
		nf.peerVars = []string{"{port}", publicPort(d.p.Endpoints)}
	}
}

// selfOpen reports whether this end has no NAT: one of our public IPv4
// endpoint addresses is on one of this host's interfaces, or (without
// host facts) our endpoints are public only. It returns the check
// showing it.
func (d *diag) selfOpen() (open bool, field, value, note string) {
	eps := d.self.Endpoints
	if len(eps) == 0 {
		d.unknown("Self.Endpoints", "our endpoints are unknown, so whether this end has a NAT is not known")
		return false, "", "", ""
	}
	if n := d.self.NAT; n != nil && (n.HavePortMap || (n.MappingVariesByDestIP != nil && *n.MappingVariesByDestIP)) {
		return false, "", "", "" // a NAT measured or mapped
	}
	if h := d.ourHost(); h != nil {
		for _, ifc := range h.Interfaces {
			if ifc.Tailscale || ifc.Bridge {
				continue
			}
			for _, p := range ifc.Addrs {
				a := p.Addr().Unmap()
				if !a.Is4() || IsPrivateAddr(a) {
					continue
				}
				for _, ep := range eps {
					if ep.Addr().Unmap() == a {
						return true, "Host.Interfaces", ifc.Name + " " + p.String(), "a public address on this host's own interface (" + ifc.Name + "): no NAT in front of it"
					}
				}
			}
		}
		return false, "", "", ""
	}
	pub4 := false
	for _, ep := range eps {
		if a := ep.Addr().Unmap(); a.Is4() && !IsPrivateAddr(a) {
			pub4 = true
		}
	}
	if !pub4 || hasLAN(eps) || onlyLoopback4(eps) {
		return false, "", "", ""
	}
	return true, "Self.Endpoints", endpointsText(eps), "only public IPv4 addresses (beside container bridges): tailscaled advertises every interface address (magicsock determineEndpoints), so this host has a public address on its own interface, no NAT"
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

// peerOpen reports whether the peer has no NAT: its endpoints are public
// IPv4 only (beside container bridges), its client is Tailscale's own
// (which advertises every interface address), and none of its facts shows
// a NAT (a mapping that varies by destination, a port mapping).
func (d *diag) peerOpen(ep *endpointFacts) (bool, string) {
	p := &d.p
	if !ep.known || ep.none || ep.privateOnly {
		return false, ""
	}
	pub4 := false
	for _, e := range p.Endpoints {
		if a := e.Addr().Unmap(); a.Is4() && !IsPrivateAddr(a) {
			pub4 = true
		}
	}
	if !pub4 || hasLAN(p.Endpoints) || onlyLoopback4(p.Endpoints) {
		return false, ""
	}
	if ps := p.PeerSide; ps != nil && ((ps.MappingVariesByDestIP != nil && *ps.MappingVariesByDestIP) || (ps.HavePortMap != nil && *ps.HavePortMap)) {
		return false, ""
	}
	if !slices.Contains(tailscaleOSes, p.OS) {
		os := p.OS
		if os == "" {
			os = "unknown"
		}
		d.unknownV("Peer.Endpoints", endpointsText(p.Endpoints), "only public IPv4 addresses, but the peer's client (OS "+os+") is not known to advertise its interface addresses, so whether it has a NAT is not known")
		return false, ""
	}
	return true, "only public IPv4 addresses (beside container bridges): Tailscale advertises every interface address (magicsock determineEndpoints), so the peer has a public address on its own interface, no NAT"
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

// ourPort is tailscaled's UDP port here, as text.
func (d *diag) ourPort() string {
	if h := d.self.Host; h != nil && h.Firewall != nil && h.Firewall.Port != 0 {
		return "UDP " + strconv.Itoa(int(h.Firewall.Port))
	}
	return publicPort(d.self.Endpoints)
}

// firewallWhy is how the firewall verdict was reached.
func (d *diag) firewallWhy() string {
	if h := d.self.Host; h != nil && h.Firewall != nil && h.Firewall.Why != "" {
		return h.Firewall.Why
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
		d.unknown("Host.Firewall", why)
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
// server in the DERP map a "false" cannot rule a hard NAT out.
func (d *diag) natTypes(nf *natFacts, v6Both bool) {
	const v6Note = "IPv4 only: both ends have global IPv6 endpoints, which no NAT maps"
	const oneSTUN = "netcheck compares the mappings two STUN servers see (addNodeLatency sets false on a second reply, which may come from the same server), and the DERP map, or the report, has one: a hard NAT reads false too; the NAT type is not known"
	const cliNote = "measured by the tailscale CLI's own netcheck, from a socket of its own on an OS-assigned port (cmd/tailscale/cli/netcheck.go, netcheck.Client.Standalone), not tailscaled's: a static-port rule, or several nodes contending for one port, give tailscaled's port another mapping; tailscaled's `netcheck: report:` log line or its NetInfo decides"
	nat := d.self.NAT
	var ourHard, ourEasy, ourNoMap bool
	switch {
	case nat == nil || nat.MappingVariesByDestIP == nil:
		d.unknown("NetInfo.MappingVariesByDestIP", "the daemon has not measured our NAT type")
	case nat.FromCLI:
		d.unknownV("NetInfo.MappingVariesByDestIP", strconv.FormatBool(*nat.MappingVariesByDestIP), cliNote)
		if nat.PortMapUnknown {
			d.unknown("NetInfo.HavePortMap", "the source does not say whether UPnP, NAT-PMP or PCP answered (netcheck: \"not checked\")")
		}
	case *nat.MappingVariesByDestIP && v6Both:
		d.info("NetInfo.MappingVariesByDestIP", "true", v6Note)
	case !*nat.MappingVariesByDestIP && d.oneSTUN():
		d.unknownV("NetInfo.MappingVariesByDestIP", "false", oneSTUN)
	case *nat.MappingVariesByDestIP && nat.PortMapUnknown && !nat.HavePortMap:
		d.info("NetInfo.MappingVariesByDestIP", "true", "our NAT picks a new port per destination (hard NAT); whether a port mapping rescues it is not known")
		d.unknown("NetInfo.HavePortMap", "the source does not say whether UPnP, NAT-PMP or PCP answered (netcheck: \"not checked\")")
	case *nat.MappingVariesByDestIP:
		ourHard, ourNoMap = !nat.HavePortMap, !nat.HavePortMap
		d.add("NetInfo.MappingVariesByDestIP", "true", ourHard, "our NAT picks a new port per destination (hard NAT)")
	default:
		ourEasy, ourNoMap = true, !nat.HavePortMap && !nat.PortMapUnknown
		d.add("NetInfo.MappingVariesByDestIP", "false", false, "our NAT is easy or absent")
	}
	if nat != nil && !nat.PortMapUnknown {
		switch {
		case nat.HavePortMap:
			nf.localMapped = d.udpWorksHere()
			d.add("NetInfo.HavePortMap", "true", nf.localMapped, "this host holds a port mapping and advertises it (magicsock determineEndpoints adds the mapped address), yet the path is relayed: nothing comes through it")
		case ourHard:
			d.add("NetInfo.HavePortMap", "false", true, portServicesNote(nat))
		}
	}
	ps := d.p.PeerSide
	var peerHard, peerEasy bool
	peerMap := ps.mapping()
	switch {
	case ps == nil || ps.MappingVariesByDestIP == nil:
		d.unknown(peerField(ps, factMapping), "the peer's NAT type is not known"+d.apiHint())
	case *ps.MappingVariesByDestIP && v6Both:
		d.info(peerField(ps, factMapping), "true", v6Note)
	case !*ps.MappingVariesByDestIP && d.self.STUNServers == 1:
		d.unknownV(peerField(ps, factMapping), "false", oneSTUN)
	case *ps.MappingVariesByDestIP:
		switch {
		case peerMap == nil:
			// Hard, but a port mapping might rescue it: no verdict.
			d.info(peerField(ps, factMapping), "true", "the peer's NAT picks a new port per destination (hard NAT); whether it holds a port mapping is not known"+portServicesPeer(ps))
		case *peerMap:
			d.add(peerField(ps, factMapping), "true", false, "the peer's NAT is hard, but it holds a port mapping")
		default:
			peerHard = true
			d.add(peerField(ps, factMapping), "true", true, "the peer's NAT picks a new port per destination (hard NAT) and it holds no port mapping")
		}
	default:
		peerEasy = true
		d.add(peerField(ps, factMapping), "false", false, "the peer's NAT is easy or absent")
	}
	if peerMap != nil && *peerMap {
		nf.peerMapped = d.udpWorksHere() && !d.peerUDPBlocked()
		d.add(peerField(ps, factPortMap), "true", nf.peerMapped, "the peer holds a port mapping and advertises it, yet the path is relayed: nothing comes through it")
	}
	d.otherSide(ps)
	if d.stale != "" {
		d.info(d.staleField, "too old", d.stale)
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
	case peerHard && ourEasy && ourNoMap && d.weFilter():
		nf.reason, nf.variant = ReasonHardAndFilteringNAT, "here"
	case peerHard && ourEasy && ourNoMap:
		nf.reason = ReasonPeerHardNAT
	}
	// The peer's hard NAT with our NAT type unknown: shown (failed above),
	// but not a verdict, since a hard NAT here would make it both-hard-nat.
}

// portServicesNote is our HavePortMap false, read with what answered:
// NetInfo's UPnP/PMP/PCP list the services that answered, which is not a
// mapping (HavePortMap is).
func portServicesNote(n *NATInfo) string {
	var answered []string
	for _, s := range []struct {
		name string
		b    *bool
	}{{"UPnP", n.UPnP}, {"NAT-PMP", n.PMP}, {"PCP", n.PCP}} {
		if s.b != nil && *s.b {
			answered = append(answered, s.name)
		}
	}
	if len(answered) == 0 {
		return "no UPnP, NAT-PMP or PCP port mapping"
	}
	return "the router answers " + strings.Join(answered, ", ") + " but gave no mapping (one answering from an address that is not the gateway, a side router or a double NAT, maps nothing)"
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
		d.unknown(peerField(ps, factPortMap), "whether the peer holds a port mapping is not known"+d.apiHint())
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
func (d *diag) weFilter() bool {
	if !hasLAN(d.self.Endpoints) {
		return false
	}
	d.add("NetInfo.HavePortMap", "false", true, "no port mapping here, and this host has LAN addresses, so a NAT most likely sits in front of it, dropping what it did not ask for")
	return true
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
				d.info(side.field, a.String(), "in 100.64.0.0/10: "+who+" traffic crosses a carrier-grade NAT (the ISP's), which no port mapping on a home router reaches")
				break
			}
		}
	}
}
