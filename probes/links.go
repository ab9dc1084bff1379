package probes

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Links: facts of one input tied to one another, each recorded as a check
// in the verdict it bears on, and read by the rules: a region id in a log
// line and the code a peer relays through, a peer's address and the
// subnet routes others advertise, a peer on this host's own VM or
// container bridge, the bytes sent against the bytes received, an ICMP
// ping against a DISCO one, the DERP map's regions against the latencies
// measured, the order of ping runs, and a pod's address with its NAT.

// Reasons the links gave the table.
const (
	// ReasonOneWayTraffic: far more was sent to the peer than came back.
	ReasonOneWayTraffic ReasonID = "one-way-traffic"
	// ReasonPeerICMPBlocked: the peer answers DISCO pings but not ICMP
	// echo through the tunnel: its host firewall, not the path.
	ReasonPeerICMPBlocked ReasonID = "peer-icmp-blocked"
	// ReasonDERPRegionUnmeasured: a region of the DERP map can never get
	// a latency (a node without its RegionID, STUN off or unanswered), so
	// it can never be anyone's home.
	ReasonDERPRegionUnmeasured ReasonID = "derp-region-unmeasured"
)

// One-way traffic: the peer's counters show at least OneWayMinTx sent
// and at most one byte back for every OneWayRatio sent.
const (
	OneWayMinTx = 512 << 10
	OneWayRatio = 100
)

// UnmeasurableRegion says why netcheck can never measure region r from
// its DERP map entry alone ("" when it can): a node whose RegionID is not
// the region's (net/netcheck/netcheck.go addNodeLatency files a node's
// STUN reply under node.RegionID, so the region itself never gets one; a
// DERP map written by hand, as headscale's YAML, often leaves it 0), or
// STUN off on every node (STUNPort -1: makeProbePlan sends none). A
// region of STUN-only nodes can be measured. A region with no nodes says
// nothing: a map pasted text implies holds only ids and codes.
func UnmeasurableRegion(r *tailcfg.DERPRegion) string {
	if r == nil || len(r.Nodes) == 0 {
		return ""
	}
	var bad []string
	stun := false
	for _, n := range r.Nodes {
		if n == nil {
			continue
		}
		if n.RegionID != r.RegionID {
			bad = append(bad, strconv.Quote(n.Name)+" has RegionID "+strconv.Itoa(int(n.RegionID)))
		} else if n.STUNPort >= 0 {
			stun = true
		}
	}
	switch {
	case len(bad) > 0 && !stun:
		return "its node " + strings.Join(bad, ", ") + ", not " + strconv.Itoa(int(r.RegionID)) + ": netcheck files its STUN replies under that id (net/netcheck addNodeLatency), never this region's"
	case !stun:
		return "STUN is off on every node (STUNPort -1): netcheck sends it no STUN probe (net/netcheck makeProbePlan)"
	}
	return ""
}

// RegionOf is the Region a DERP map entry gives, with why it cannot be
// measured.
func RegionOf(id int, r *tailcfg.DERPRegion) Region {
	return Region{ID: id, Code: safetext.New(r.RegionCode), Name: safetext.New(r.RegionName), Unmeasurable: safetext.New(UnmeasurableRegion(r))}
}

// thread is this node's thread facts (the zero value when none).
func (d *diag) thread() *ThreadFacts {
	if t := d.evidence().Thread; t != nil {
		return t
	}
	return &noThread
}

var noThread ThreadFacts

// linkChecks records the links that bear on this peer's path and that no
// rule's check records: the region a relayed path goes through as the
// daemon's lines name it, DERP servers' notices that a peer is gone,
// peer-relay attempts, and a direct path to this host's own guest.
func (d *diag) linkChecks() {
	switch d.p.Path.Kind {
	case PathDERP:
		d.linkRegion()
	case PathDirect:
		a := d.p.Path.Addr.Addr().Unmap()
		if ifc, pfx, ok := d.guestBridge(a); ok {
			d.info("Link.GuestBridge", a.String()+" on "+ifc, safetext.New("the direct address is on this host's own bridge "+ifc+" ("+pfx.String()+"): the peer is a VM or container of this host, and its path never leaves it"))
		}
	}
}

// linkRegion ties the region the path is relayed through (Status.Relay,
// a code) to the id the daemon's lines use ("derp-1"), through the DERP
// map, `tailscale debug derp`, or Tailscale's default map when the input
// holds no map, and says what the lines show of it.
func (d *diag) linkRegion() {
	code := d.p.Path.DERPCode
	if code == "" {
		return
	}
	// The input's own ties (its DERP map, debug derp, a log line naming
	// both) first, then Tailscale's default map; a region known only by
	// its code (an id the paste made up) ties to nothing.
	t := d.thread()
	id, how := 0, ""
	for _, l := range t.RegionLinks {
		if l.Code == code && (how == "" || how == "default map") {
			id, how = l.ID, l.From
		}
	}
	if id == 0 {
		return // the input named both together (a live DERP map): nothing to tie
	}
	ev := d.evidence()
	var said []string
	if slices.Contains(ev.DERPConnected, id) {
		said = append(said, "tailscaled logged derp-"+strconv.Itoa(id)+" connected")
	}
	for _, e := range ev.DERPErrors {
		if e.Region == id {
			said = append(said, "tailscaled logged "+strconv.Itoa(e.Count)+" failed connections to it")
		}
	}
	if d.self.HomeDERP == id {
		said = append(said, "it is our home region")
	}
	for _, g := range t.PeersGone {
		if g.Region == id {
			said = append(said, "its server told us "+string(g.Node)+" is not connected to it (\"derp-"+strconv.Itoa(id)+" does not know about peer\")")
		}
	}
	if len(said) == 0 {
		return
	}
	note := "derp-" + strconv.Itoa(id) + " is " + strconv.Quote(string(code)) + ", the region peer " + string(d.p.Name) + " relays through: " + strings.Join(said, "; ")
	switch how {
	case "default map":
		note += " (region " + strconv.Itoa(id) + " is " + strconv.Quote(string(code)) + " in Tailscale's own DERP map, derp/derpmap/derpmap.go; the input holds no DERP map, and a custom one may number regions otherwise)"
	default:
		note += " (tied by " + how + ")"
	}
	d.info("Link.Region", "derp-"+strconv.Itoa(id)+" = "+strconv.Quote(string(code)), safetext.New(note))
	for _, g := range t.PeersGone {
		if g.Region == id {
			d.info("Log.PeersGone", "derp-"+strconv.Itoa(id)+" does not know about peer "+string(g.Node), "a DERP server says the peer it was asked to relay to is not connected to it (wgengine/magicsock/derp.go, PeerGoneReasonNotHere): relayed packets to that peer are dropped until it connects to its home region again; if it is this peer, its home registration is dead (restart tailscaled on it)")
		}
	}
	if pr := t.PeerRelay; pr != nil && pr.AllocSent > 0 && pr.AllocOK == 0 {
		d.info("Log.PeerRelay", strconv.Itoa(pr.AllocSent)+" alloc requests, "+strconv.Itoa(pr.AllocTimedOut)+" timed out", "magicsock asked a peer relay for an endpoint and got none (wgengine/magicsock/relaymanager.go \"alloc request timed out\"): the relay server did not answer over DERP, so the path stays on DERP")
	}
}

// guestBridge finds this host's bridge interface (docker0, virbr0, macOS's
// vmnet bridge100, WSL's vEthernet) whose network holds a, a VM or
// container of this host: the bridge's name, its network and this host's
// own address on it.
func (d *diag) guestBridge(a netip.Addr) (string, netip.Prefix, bool) {
	ifc, pfx, _, ok := d.bridgeOf(a)
	return ifc, pfx, ok
}

func (d *diag) bridgeOf(a netip.Addr) (string, netip.Prefix, netip.Addr, bool) {
	h := d.self.Host
	if h == nil || !a.IsValid() {
		return "", netip.Prefix{}, netip.Addr{}, false
	}
	a = a.Unmap()
	for _, ifc := range h.Interfaces {
		if !ifc.Bridge {
			continue
		}
		for _, p := range ifc.Addrs {
			if pm := p.Masked(); pm.Bits() > 0 && pm.Contains(a) && p.Addr().Unmap() != a {
				return string(ifc.Name), pm, p.Addr().Unmap(), true
			}
		}
	}
	return "", netip.Prefix{}, netip.Addr{}, false
}

// guestOf finds one of addrs (the peer's LAN endpoints) on this host's
// own bridge: the bridge, its network, this host's address on it and the
// peer's.
func (d *diag) guestOf(addrs []netip.Addr) (ifc string, pfx netip.Prefix, ours, theirs netip.Addr, ok bool) {
	for _, a := range addrs {
		if ifc, pfx, ours, ok := d.bridgeOf(a); ok {
			return ifc, pfx, ours, a, true
		}
	}
	return "", netip.Prefix{}, netip.Addr{}, netip.Addr{}, false
}

// checkOneWay: far more was sent to the peer than came back, by the
// rates over the last poll when known, else the counters since
// tailscaled started (pasted text). A TCP transfer returns
// acknowledgements (one per one or two segments, or per receive-offload
// batch of up to 64 KiB), and WireGuard keepalives and handshakes come
// back too, so a ratio beyond OneWayRatio is one-way traffic by nature (a
// UDP stream, logs) or a path that carries the peer little of it: large
// packets lost where small ones pass (a path MTU below what WireGuard
// needs, WireGuard inside another tunnel).
func (d *diag) checkOneWay() result {
	p := d.p
	tx, rx, what := float64(p.TxBytes), float64(p.RxBytes), "since tailscaled started"
	if p.RatesKnown {
		tx, rx, what = p.TxRate, p.RxRate, "per second over the last poll"
		if tx*60 < OneWayMinTx { // under a minute's worth of the total bound
			return notHeld()
		}
	} else if tx < OneWayMinTx {
		return notHeld()
	}
	if rx == 0 || tx < rx*OneWayRatio {
		return notHeld() // nothing back is no-handshake's; a fair share back is a working path
	}
	ratio := strconv.FormatFloat(tx/rx, 'f', 0, 64)
	val := "tx " + bytesText(int64(tx)) + " rx " + bytesText(int64(rx)) + " (" + ratio + ":1, " + what + ")"
	d.info("Link.TxRx", val, safetext.New("about one byte back for every "+ratio+" sent: a TCP transfer returns its acknowledgements and WireGuard its keepalives, so either the traffic is one-way by nature (a UDP stream, logs, a backup's upload with receive offload's sparse ACKs) or the peer receives little of what is sent"))
	return holdsAs("", "{tx}", bytesText(int64(tx)), "{rx}", bytesText(int64(rx)), "{ratio}", ratio)
}

// checkICMPBlocked: an ICMP ping through the tunnel got no reply while
// the peer's tailscaled answers (a DISCO pong, a trusted direct address,
// a TSMP pong). tailscaled answers DISCO and TSMP itself; an ICMP echo
// it hands to the peer's OS, whose firewall may drop it (Windows' does
// by default), and the peer's packet filter admits it only when the
// tailnet policy lets this node reach some port of the peer
// (wgengine/filter/filter.go runIn4, matchIPsOnly).
func (d *diag) checkICMPBlocked() result {
	p := d.p
	if p.ICMPReply == nil || *p.ICMPReply {
		return notHeld()
	}
	answer := ""
	switch r := p.PingRun; {
	case r != nil && r.Pongs > 0:
		answer = "DISCO pings were answered (" + pingRunText(r) + ")"
	case p.Path.Kind == PathDirect:
		answer = "the direct address is trusted, which takes a DISCO pong within 6.5 s (magicsock endpoint.go trustUDPAddrDuration)"
	case r != nil && r.TSMPReply != nil && *r.TSMPReply:
		answer = "a TSMP ping was answered through WireGuard"
	default:
		d.info("Ping.ICMP", "no reply", "an ICMP ping got no reply, and nothing shows the peer's tailscaled answering: the tunnel itself may be down")
		return notHeld()
	}
	d.info("Ping.ICMP", "no reply", safetext.New("an ICMP echo through the tunnel got no reply while "+answer+": tailscaled answers DISCO and TSMP itself, while an ICMP echo goes on to the peer's OS"))
	return holdsAs("", "{answer}", answer)
}

// checkRegionUnmeasured (self): a region of the DERP map can never get a
// latency, by its map entry (UnmeasurableRegion) or because `tailscale
// debug derp` found its STUN silent and no report measured it. netcheck
// picks the home region from latencies alone (addReportHistoryAndSet
// PreferredDERP), so no node can make it home.
func (d *diag) checkRegionUnmeasured() result {
	if len(d.regions) == 0 {
		return notHeld()
	}
	var lat map[int]bool
	if n := d.self.NAT; n != nil && len(n.DERPLatency) > 0 {
		lat = map[int]bool{}
		for id := range n.DERPLatency {
			lat[id] = true
		}
	}
	t := d.thread()
	ids := make([]int, 0, len(d.regions))
	for id := range d.regions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		r := d.regions[id]
		why := string(r.Unmeasurable)
		if why == "" && slices.Contains(t.STUNSilent, id) && !slices.Contains(t.STUNAnswered, id) && lat != nil && !lat[id] {
			why = "`tailscale debug derp` got no STUN reply from its node (UDP 3478 closed, or derper run without -stun) and no report measured it"
		}
		if why == "" {
			continue
		}
		if lat[id] {
			d.info("DERPMap.Regions", d.regionName(id), "measured all the same: the map seen is not the one measured")
			continue
		}
		d.add("DERPMap.Regions", d.regionName(id)+" ("+strconv.Itoa(id)+")", true, safetext.New("never measured: "+why))
		only := ""
		if len(d.regions) == 1 {
			only = "; it is the map's only region, so no node has a home region and nothing is relayed"
		}
		return holdsAs("", "{region}", d.regionName(id), "{why}", why, "{only}", only)
	}
	return notHeld()
}

// cliProbable says why a hard NAT the tailscale CLI's own netcheck
// measured is probably tailscaled's too ("" when nothing says so). The
// CLI measures from a socket of its own on an OS-assigned port
// (cmd/tailscale/cli/netcheck.go, netcheck.Client.Standalone); the two
// differ only where a static-port rule on the NAT covers tailscaled's
// port and not the CLI's. Such a rule names a fixed port, and tailscaled
// has none where it binds port 0 (cmd/tailscaled/tailscaled.go
// defaultPort: 0 on every OS but Windows unless --port or the package's
// PORT sets one; the macOS, iOS and Android apps and cmd/containerboot
// pass none), so there the CLI's reading is tailscaled's. Windows'
// tailscaled binds 41641, which a rule could name: probably, not surely.
func (d *diag) cliProbable() string {
	n := d.self.NAT
	if n == nil || !cliHard(n) {
		return ""
	}
	dm := d.self.Daemon
	switch {
	case dm != nil && dm.PortKnown && dm.Port != 0:
		return "" // a fixed port a static-port rule can name
	case dm != nil && dm.PortKnown:
		return "tailscaled here binds an OS-assigned port (no --port), as the CLI's netcheck does: a static-port rule names one port and cannot single either out, so the CLI's reading is tailscaled's"
	case dm != nil && (dm.Kubernetes || dm.Container):
		return "tailscaled here runs in a container started with no --port (cmd/containerboot passes none), so it binds an OS-assigned port as the CLI does: the CLI's reading is tailscaled's"
	}
	switch d.self.OS {
	case "macOS", "iOS", "tvOS", "android":
		return "on " + string(d.self.OS) + " Tailscale's app sets no fixed port (cmd/tailscaled binds 0 unless --port is given, and the app passes none), so tailscaled's port is OS-assigned as the CLI's: the CLI's reading is most likely tailscaled's"
	case "windows":
		return "on Windows tailscaled binds 41641 (cmd/tailscaled/tailscaled.go defaultPort), so only a static-port rule for 41641 on the router (as pfSense or OPNsense can set, rare elsewhere) would make its NAT easy while the CLI's port stays hard: probably tailscaled's too"
	}
	return ""
}

// cliSure is the {cli} words of a NAT reason's summary: how sure our hard
// NAT is when only the CLI measured it.
func (d *diag) cliSure() string {
	if d.cliProbable() == "" {
		return ""
	}
	return " (probably: the tailscale CLI measured it from its own port)"
}

// inPod reports whether this node runs in a Kubernetes pod, and the
// pod's address where known.
func (d *diag) inPod() (string, bool) {
	dm := d.self.Daemon
	if dm == nil || !dm.Kubernetes {
		return "", false
	}
	what := "a Kubernetes pod"
	if dm.PodAddr.IsValid() {
		what += " (" + dm.PodAddr.String() + ")"
	}
	if dm.Userspace != nil && *dm.Userspace {
		what += " with userspace networking"
	}
	return what, true
}

// markProse marks the checks of fields whose value came from the
// poster's words (Self.Prose): their source is "prose", and their note
// says so, so that a verdict resting on them says how sure it is.
func markProse(cs []Check, prose []string) {
	if len(prose) == 0 {
		return
	}
	for i := range cs {
		c := &cs[i]
		if slices.Contains(prose, string(c.Field)) && c.Source != "prose" {
			c.Source = "prose"
			c.Note += " (read from the poster's words, not a tool's output)"
		}
	}
}

// bytesText words a byte count as the CLI's humans read it: "793 KiB".
func bytesText(n int64) string {
	switch {
	case n >= 10<<20:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 10<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
