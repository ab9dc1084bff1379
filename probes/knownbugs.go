package probes

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Tailscale's own bugs as evidence: a table of path-affecting bugs in
// Tailscale clients, each confirmed by a maintainer in its thread, matched
// against every client version the input carries (this node's daemon,
// Self.Version; each peer's, PeerSide.ClientVersion). A bug whose versions
// hold one end's client and whose symptom is in the evidence becomes the
// verdict (known-client-bug) ahead of the network reasons it would
// otherwise be mistaken for; with the version unknown, a verdict such a
// bug would also explain says so and asks for the version.
//
// To add a bug: a row below with its version range (first affected, and
// the first fixed release, "" while open), the platforms, how its symptom
// shows in tailpath's evidence (symptom), the reasons it also explains,
// the thread and who confirmed it, and the workaround; a case in
// TestKnownBugs; a row in docs/diagnosis.md's table (TestDocsNameEveryBug).

// KnownBug is one path-affecting bug of Tailscale's clients.
type KnownBug struct {
	// ID names it (stable: it appears in checks and docs).
	ID string
	// From is the first affected client version, FixedIn the first
	// fixed one ("" while it is open); both "major.minor.patch".
	From, FixedIn string
	// OS are the Hostinfo.OS values affected; nil is every OS.
	OS []string
	// Symptom is how it shows in tailpath's evidence, for people.
	Symptom string
	// Explains are the reasons whose evidence the bug produces too: with
	// the version unknown they say so; RefutesClaim is true when the bug
	// makes their claim false (a healthy network read as blocked), not
	// only explains it.
	Explains     []ReasonID
	RefutesClaim bool
	// Issue is the upstream thread ("tailscale/tailscale#14287"),
	// ConfirmedBy who confirmed it there, Source the address that says so.
	Issue, ConfirmedBy, Source string
	// Workaround is what to do.
	Workaround string
	// Mitigated: FixedIn mitigates the bug (the fix commits say
	// "Updates", not "Fixes"); CheckOnly: a match is shown as a check
	// beside the verdict, never as the verdict (the fixed-in version is
	// not confirmed for this platform, or the bug is open and its
	// symptom is also the network's).
	Mitigated, CheckOnly bool
	// symptom reports whether the evidence d judges shows the bug at
	// end side (sideSelf: this node; sidePeer: the peer). nil: only the
	// version is known to match, which is a check, never the verdict.
	symptom func(d *diag, side bugSide) bool
}

// bugSide is which end's client a bug is matched for.
type bugSide uint8

const (
	sideSelf bugSide = iota
	sidePeer
)

// knownBugs is the table (sources: docs/diagnosis.md "Tailscale's own
// bugs").
var knownBugs = []KnownBug{
	{
		ID: "netcheck-stun-port-zero", From: "1.77.157", FixedIn: "1.77.168",
		Symptom:  "netcheck sent STUN to port 0 of DERP nodes whose STUN port the map leaves unset, so it logged \"UDP is blocked\" and reported UDP false on healthy networks (unstable builds only; no stable release had it)",
		Explains: []ReasonID{ReasonLocalUDPBlocked, ReasonPeerUDPBlocked, ReasonSelfSTUNUnanswered}, RefutesClaim: true,
		Issue: "tailscale/tailscale#14287", ConfirmedBy: "irbekrm (fix, PR #14289); bradfitz", Source: "https://github.com/tailscale/tailscale/issues/14287",
		Workaround: "update to 1.77.168 or later (or `tailscale update --track stable`)",
		symptom: func(d *diag, side bugSide) bool {
			if side == sidePeer {
				ps := d.p.PeerSide
				return ps != nil && ps.ClientSupports.UDP != nil && !*ps.ClientSupports.UDP
			}
			n := d.self.NAT
			return (n != nil && n.WorkingUDP != nil && !*n.WorkingUDP) || d.evidence().UDPBlockedLogged != ""
		},
	},
	{
		ID: "windows-receiveipv4-stops", From: "1.48.0", FixedIn: "1.72.0", OS: []string{"windows"}, Mitigated: true,
		Symptom:  "on Windows, tailscaled's IPv4 receive loop stopped (\"ReceiveIPv4 is not running\") after a group-policy or firewall refresh, and paths fell back to DERP until a restart; an ICMP message could fail a read (SIO_UDP_NETRESET, disabled in 1.72.0, whose commits say \"Updates #10976\"); one reporter saw it end in 1.56, and the same loop stopping is still open for other causes (#20616)",
		Explains: []ReasonID{ReasonSelfUDPReceiveStopped},
		Issue:    "tailscale/tailscale#10375, #10976", ConfirmedBy: "catzkorn (the warning); andrew-d (PR #12927); bradfitz", Source: "https://github.com/tailscale/tailscale/issues/10976",
		Workaround: "restart the Tailscale service; update to 1.72.0 or later",
		symptom: func(d *diag, side bugSide) bool {
			if side != sideSelf {
				return false
			}
			for _, h := range d.self.Health {
				if strings.Contains(string(h), "ReceiveIPv4 is not running") {
					return true
				}
			}
			return false
		},
	},
	{
		ID: "android-carrier-cgnat", From: "1.0.0", OS: []string{"android"}, CheckOnly: true,
		Symptom:  "on a mobile network whose carrier hands out 100.64.0.0/10 addresses, the carrier's address collides with the tailnet's range and no data moved on mobile data; which release fixed it on Android is not confirmed (Tailscale said 1.30 of iOS in #302; Android's route choice changed only in 1.100.0)",
		Explains: []ReasonID{ReasonTailnetRangeCollision},
		Issue:    "tailscale/tailscale#4827", ConfirmedBy: "DentonGentry", Source: "https://github.com/tailscale/tailscale/issues/4827",
		Workaround: "update the app; meanwhile use Wi-Fi or an exit node",
		symptom: func(d *diag, side bugSide) bool {
			return side == sideSelf && (d.cgnatInterface() || d.cgnatLogged())
		},
	},
	{
		ID: "portmapper-upnp-internal-port", From: "1.12.0", FixedIn: "1.96.0",
		Symptom:  "when a UPnP mapping was renewed, tailscaled asked the router to map the external port to itself as the internal port, where nothing listens: the mapping advertised from then on passed no traffic",
		Explains: []ReasonID{ReasonLocalPortMapBlocked},
		Issue:    "tailscale/tailscale#18348", ConfirmedBy: "cmol (review of PR #18349)", Source: "https://github.com/tailscale/tailscale/issues/18348",
		Workaround: "update to 1.96.0 or later; meanwhile restart tailscaled (it maps the right port again) or use a static UDP forward",
		symptom: func(d *diag, side bugSide) bool {
			if side != sideSelf {
				return false
			}
			// The renewal asks for the external port as the internal
			// one (upnp.go getUPnPPortMapping: c.localPort =
			// externalAddrPort.Port()): harmless when the router gave
			// tailscaled's own port, fatal when it gave another.
			n := d.self.NAT
			if n == nil || !n.HavePortMap || n.UPnP == nil || !*n.UPnP || !d.relayedPath() {
				return false
			}
			st, ap := d.mappedAddr()
			lp := localPort(d.self.Endpoints, d.self.EndpointTypes)
			return st == mapPublic && ap.IsValid() && lp != 0 && ap.Port() != lp
		},
	},
	{
		ID: "derp-proxy-ignores-derpport", From: "1.12.0", FixedIn: "1.100.0",
		Symptom:  "through an HTTP proxy, tailscaled dialled DERP on port 443 whatever port the DERP map gave the node, so a DERP server on another port failed its TLS handshake behind the proxy",
		Explains: []ReasonID{ReasonDERPUnreachable},
		Issue:    "tailscale/tailscale#19748", ConfirmedBy: "bradfitz (committed the fix, 4c8c0baf2)", Source: "https://github.com/tailscale/tailscale/issues/19748",
		Workaround: "update to 1.100.0 or later; or exempt the DERP host from the proxy (NO_PROXY), or serve DERP on 443",
		symptom: func(d *diag, side bugSide) bool {
			if side != sideSelf || !strings.HasSuffix(string(d.evidence().ProxyConnect), ":443") {
				return false
			}
			_, ok := proxiedTLSFailure(d.evidence(), d.liveDERPErrors(d.evidence().DERPErrors))
			return ok
		},
	},
	{
		ID: "portmapper-upnp-nil-panic", From: "1.58.0", FixedIn: "1.58.2",
		Symptom: "tailscaled crashed in a loop when a UPnP gateway answered with no usable service, dropping every path while it restarted",
		Issue:   "tailscale/tailscale#10911", ConfirmedBy: "DentonGentry; andrew-d (fix)", Source: "https://github.com/tailscale/tailscale/issues/10911",
		Workaround: "update to 1.58.2 or later, or disable UPnP on the gateway",
	},
	{
		ID: "macos-epipe-dead-socket", From: "1.0.0", FixedIn: "1.80.0", OS: []string{"macOS"},
		Symptom: "after sleep, macOS could leave tailscaled's UDP socket broken (sendto: broken pipe) without rebinding it: direct UDP died and paths stayed on DERP until a restart",
		Issue:   "tailscale/tailscale PR #14551", ConfirmedBy: "raggi (author); bradfitz", Source: "https://github.com/tailscale/tailscale/pull/14551",
		Workaround: "update to 1.80.0 or later; meanwhile restart Tailscale after sleep",
	},
	{
		ID: "linux-tun-gro-einval", From: "1.36.0", FixedIn: "1.73.101", OS: []string{"linux"},
		Symptom: "on Linux kernels 5.15.165-166, 6.1.103-106, 6.6.44-45 and 6.10.3-4 the kernel rejected tailscaled's GRO-coalesced TUN writes (EINVAL), and TCP through the tunnel crawled on a direct path (`tailpath tune` reads the kernel)",
		Issue:   "tailscale/tailscale#13041", ConfirmedBy: "jwhited (PR #13376); raggi; bradfitz", Source: "https://github.com/tailscale/tailscale/issues/13041",
		Workaround: "update Tailscale to 1.74.0 or later (it probes GRO and turns it off), or the kernel",
	},
	{
		ID: "linux-vxlan-tun-udp-gro", From: "1.54.0", OS: []string{"linux"},
		Symptom: "vxlan or geneve overlays (Calico, Docker Swarm) run over the tailnet lost large transfers on kernels up to 6.8.4 once tailscaled coalesced UDP on its TUN",
		Issue:   "tailscale/tailscale#11026", ConfirmedBy: "jwhited; raggi", Source: "https://github.com/tailscale/tailscale/issues/11026",
		Workaround: "kernel 6.8.5 or later, or TS_TUN_DISABLE_UDP_GRO=true for tailscaled (1.66.0 and later)",
	},
	{
		ID: "disco-key-stale-overwrite", From: "1.94.0", FixedIn: "1.98.0",
		Symptom: "a node that started without reaching control announced a new disco key over TSMP, and an old key from control overwrote it, resetting the WireGuard session to it again and again",
		Issue:   "tailscale/tailscale PR #18606", ConfirmedBy: "cmol (author)", Source: "https://github.com/tailscale/tailscale/pull/18606",
		Workaround: "update to 1.98.0 or later",
	},
	{
		ID: "receivefunc-exits-permanently", From: "1.0.0", CheckOnly: true,
		Symptom:  "a UDP receive loop exits for good on the first error it takes as permanent, and nothing restarts it: paths stay on DERP until tailscaled restarts (open; its log says `Receive func ReceiveIPv4 exiting with error: …`)",
		Explains: []ReasonID{ReasonSelfUDPReceiveStopped},
		Issue:    "tailscale/tailscale#20616", ConfirmedBy: "bcreane", Source: "https://github.com/tailscale/tailscale/issues/20616",
		Workaround: "restart tailscaled; its log names the error that stopped the loop",
		symptom: func(d *diag, side bugSide) bool {
			return side == sideSelf && d.receiveStopped()
		},
	},
	{
		ID: "zombie-home-derp", From: "1.0.0",
		Symptom: "after a network change a node can keep a home DERP connection that no longer works while telling control its new endpoints; peers behind a hard NAT then cannot reach it (open; \"derp-N does not know about peer\" on the peers)",
		Issue:   "tailscale/tailscale#15776", ConfirmedBy: "raggi (filed); bradfitz", Source: "https://github.com/tailscale/tailscale/issues/15776",
		Workaround: "restart tailscaled on the node after a network change",
	},
}

// affects reports whether version v ("1.77.165-t…", "v1.77.165") on os is
// in b's range; ok false when v does not parse.
func (b *KnownBug) affects(v, os string) (hit, ok bool) {
	ver, ok := parseVersion(v)
	if !ok {
		return false, false
	}
	if len(b.OS) > 0 && !slices.Contains(b.OS, os) {
		return false, true
	}
	from, _ := parseVersion(b.From)
	if cmpVersion(ver, from) < 0 {
		return false, true
	}
	if b.FixedIn == "" {
		return true, true
	}
	fixed, _ := parseVersion(b.FixedIn)
	return cmpVersion(ver, fixed) < 0, true
}

// parseVersion reads "1.77.165" out of a client version ("v1.77.165",
// "1.77.165-tabc-gdef", "1.86.2 (…)").
func parseVersion(v string) ([3]int, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	var out [3]int
	for i := range out {
		n := 0
		for n < len(v) && v[n] >= '0' && v[n] <= '9' {
			n++
		}
		if n == 0 {
			return out, i == 2 && i > 0 // "1.86" reads 1.86.0
		}
		out[i], _ = strconv.Atoi(v[:n])
		v = v[n:]
		if i < 2 {
			if !strings.HasPrefix(v, ".") {
				return out, i == 1
			}
			v = v[1:]
		}
	}
	return out, true
}

func cmpVersion(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// versionOf is one end's client version and OS as the input shows them,
// and the field that names it ("" version when unknown).
func (d *diag) versionOf(side bugSide) (version, os, field string) {
	if side == sideSelf {
		return string(d.self.Version), string(d.self.OS), "Self.Version"
	}
	ps := d.p.PeerSide
	if ps == nil {
		return "", string(d.p.OS), peerField(nil, factVersion)
	}
	return string(ps.ClientVersion), string(d.p.OS), peerField(ps, factVersion)
}

// bugHit is a known bug matched at one end with its symptom in the
// evidence.
type bugHit struct {
	bug     *KnownBug
	side    bugSide
	version string
}

// bugHits are the known bugs whose versions hold an end's client and
// whose symptom the evidence shows, worked out once per verdict.
func (d *diag) bugHits() []bugHit {
	if d.bugsDone {
		return d.bugs
	}
	d.bugsDone = true
	var sideBuf [2]bugSide
	sides := append(sideBuf[:0], sideSelf)
	if !d.selfScope {
		sides = append(sides, sidePeer)
	}
	for _, side := range sides {
		v, os, _ := d.versionOf(side)
		if v == "" {
			continue
		}
		for i := range knownBugs {
			b := &knownBugs[i]
			if hit, _ := b.affects(v, os); hit && !b.CheckOnly && b.symptom != nil && b.symptom(d, side) {
				d.bugs = append(d.bugs, bugHit{bug: b, side: side, version: v})
			}
		}
	}
	return d.bugs
}

// checkKnownBug: a known bug of one end's client version, with its
// symptom in the evidence, explains what the network reasons would
// otherwise claim.
func (d *diag) checkKnownBug() result {
	hits := d.bugHits()
	if len(hits) == 0 {
		return notHeld()
	}
	h := hits[0]
	_, _, field := d.versionOf(h.side)
	d.add(safetext.New(field), h.version, true, safetext.New(bugNote(h.bug)))
	who := "this node's"
	if h.side == sidePeer {
		who = "the peer's"
	}
	return holdsAs("", "{who}", who, "{version}", h.version, "{bug}", h.bug.ID, "{issue}", h.bug.Issue,
		"{symptom}", h.bug.Symptom, "{workaround}", h.bug.Workaround)
}

// bugNote words a bug for a check.
func bugNote(b *KnownBug) string {
	fixed := "open, not fixed"
	switch {
	case b.FixedIn != "" && b.Mitigated:
		fixed = "mitigated in " + b.FixedIn
	case b.FixedIn != "":
		fixed = "fixed in " + b.FixedIn
	case b.CheckOnly:
		fixed = "fixed version not confirmed here"
	}
	return "known bug " + b.ID + " (" + b.Issue + ", " + fixed + "; confirmed by " + b.ConfirmedBy + "): " + b.Symptom
}

// refKnownBug: this end's client version has a known bug that makes the
// rule's claim false (netcheck reporting UDP false on a healthy network).
var refKnownBug = Refuter{
	ID: "known-bug",
	// Whether a bug explains a rule depends on the rule.
	perRule: true, Field: "Self.Version", Source: "localapi, log or tailscale version",
	Claims: []string{"NetInfo.WorkingUDP", "Log.Netcheck", "Peer.NetInfo.WorkingUDP", "API.clientConnectivity.clientSupports.udp", "PeerSnapshot.NetInfo.WorkingUDP"},
	refutes: func(d *diag) (string, string, string, bool) {
		for _, h := range d.bugHits() {
			if h.bug.RefutesClaim && d.judging != "" && slices.Contains(h.bug.Explains, d.judging) && d.sideOf(d.judging) == h.side {
				return h.version + " (" + h.bug.ID + ")", "a known bug of this client version (" + h.bug.ID + ", " + h.bug.Issue + ")", bugNote(h.bug), true
			}
		}
		return "", "", "", false
	},
}

// sideOf is the end a reason's evidence is of.
func (d *diag) sideOf(id ReasonID) bugSide {
	if id == ReasonPeerUDPBlocked {
		return sidePeer
	}
	return sideSelf
}

// askVersion notes, when rule id holds and a known bug would explain it
// too (its symptom is in the evidence, its OS is not ruled out): with
// that end's version unknown, that the version would tell; with it in a
// check-only bug's range, the bug as a check (once per bug).
func (d *diag) askVersion(id ReasonID) {
	if !explained[id] {
		return // no known bug with a symptom explains id: most rules
	}
	for i := range knownBugs {
		b := &knownBugs[i]
		if b.symptom == nil || !slices.Contains(b.Explains, id) {
			continue
		}
		side := d.sideOf(id)
		v, os, field := d.versionOf(side)
		if d.recordedNote(field, b.ID) || (len(b.OS) > 0 && os != "" && !slices.Contains(b.OS, os)) || !b.symptom(d, side) {
			continue
		}
		if v != "" {
			if hit, _ := b.affects(v, os); hit && b.CheckOnly {
				d.info(safetext.New(field), v, safetext.New(bugNote(b)+"; "+b.Workaround))
			}
			continue
		}
		where := "this node"
		if side == sidePeer {
			where = "the peer"
		}
		d.unknown(safetext.New(field), safetext.New("a known bug would explain this too: "+bugNote(b)+"; `tailscale version` on "+where+" rules it in or out"))
	}
}

// explained are the rules a known bug with a symptom explains: those
// askVersion looks for bugs of (every held rule asks).
var explained = func() map[ReasonID]bool {
	m := map[ReasonID]bool{}
	for _, b := range knownBugs {
		if b.symptom == nil {
			continue
		}
		for _, id := range b.Explains {
			m[id] = true
		}
	}
	return m
}()

// recordedNote reports whether a check of field whose note names s is
// recorded already.
func (d *diag) recordedNote(field, s string) bool {
	for i := range d.checks {
		if string(d.checks[i].Field) == field && strings.Contains(string(d.checks[i].Note), s) {
			return true
		}
	}
	return false
}

// relayedPath reports whether the path judged is relayed (DERP or a
// peer relay); false when judging this node itself.
func (d *diag) relayedPath() bool {
	k := d.p.Path.Kind
	return k == PathDERP || k == PathPeerRelay
}

// cgnatInterface reports whether one of this host's interfaces, not
// Tailscale's, holds an address in 100.64.0.0/10 (ChromeOS's range left
// out).
func (d *diag) cgnatInterface() bool {
	h := d.self.Host
	if h == nil {
		return false
	}
	for _, ifc := range h.Interfaces {
		if ifc.Tailscale {
			continue
		}
		for _, p := range ifc.Addrs {
			if a := p.Addr().Unmap(); tailnetRange.Contains(a) && !chromeOS.Contains(a) && !slices.Contains(d.self.TailscaleIPs, a) {
				return true
			}
		}
	}
	return false
}

// cgnatLogged reports whether tailscaled logged an interface, not its
// own, holding an address in 100.64.0.0/10 (a LinkChange's state).
func (d *diag) cgnatLogged() bool {
	for _, ifc := range d.evidence().Interfaces {
		if hostnetTunnel(ifc.Name) {
			continue
		}
		for _, p := range ifc.Prefixes {
			if a := p.Addr().Unmap(); tailnetRange.Contains(a) && !chromeOS.Contains(a) && !slices.Contains(d.self.TailscaleIPs, a) {
				return true
			}
		}
	}
	return false
}

// hostnetTunnel reports whether an interface name is tailscaled's own
// tunnel as its log names it (tailscale0, tun0 on Android, utun on
// Apple platforms).
func hostnetTunnel(name string) bool {
	return strings.HasPrefix(name, "tailscale") || strings.HasPrefix(name, "utun") || name == "tun0" || name == "Tailscale"
}

// receiveStopped reports whether a health warning says a UDP receive
// loop is not running.
func (d *diag) receiveStopped() bool {
	for _, h := range d.self.Health {
		if receiveStoppedRE().MatchString(string(h)) {
			return true
		}
	}
	return false
}
