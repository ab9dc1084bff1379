package paste

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// The readers of a whole thread beyond the CLI's own outputs (prose and
// Markdown, the host's tools, the daemon's flags and prefs, DERP maps,
// JSON parts) keep what they read here, and put it where the live path's
// evidence goes when the file is assembled: this node's interfaces and
// routes (File.Host), how tailscaled runs (Self.Daemon), the DERP map,
// WhoIs replies and status entries, the region ids tied to codes, and
// which facts came from prose.

// threadState is what the thread readers read (paste.th).
type threadState struct {
	depth int // proseLine's recursion guard

	prose      *netcheckFacts    // netcheck fields read from prose
	proseSeen  map[string]string // field → value ("!" given twice, unknown)
	proseNotes []string
	prosePrefs bool // RouteAll read from prose

	hosts  []*hostAcc // the interfaces of each host block
	routes []probes.HostRoute
	bypass *bool // `ip rule`: tailscaled's bypass rule seen

	daemon    probes.Daemon
	daemonSet bool
	kubectl   bool // a kubectl command line: a pod's output

	derpMap  *tailcfg.DERPMap
	linkFrom map[int]string // region id → how the input tied it to its code

	thread probes.ThreadFacts

	frags    []*ipnstate.PeerStatus
	selfFrag *ipnstate.PeerStatus
	whois    []snapshot.WhoIs
}

// moreLine reads a line none of paste.go's readers took: the host's
// tools, the daemon's lines, then prose; "" when it is none.
func (p *paste) moreLine(name string, no int, trim string, block **blockState) string {
	if trim == "" {
		return ""
	}
	if k := p.hostStart(name, no, trim, block); k != "" {
		return k
	}
	if k := p.daemonLine(name, no, trim); k != "" {
		return k
	}
	return p.proseLine(name, no, trim, block)
}

// moreBlockLine reads a line inside a block of the thread readers; false
// ends the block.
func (p *paste) moreBlockLine(name string, no int, b *blockState, trim string) bool {
	if b.host == nil {
		return false
	}
	if p.hostLine(name, no, b, trim) {
		b.last = no
		return true
	}
	return false
}

// closeMore ends a block of the thread readers.
func (p *paste) closeMore(b *blockState) {
	if b.host != nil {
		p.closeHost(b)
	}
}

// linkRegions ties the region codes the input's paths name (a status
// line's relay "nyc", a pong's DERP(nyc), netcheck's region list) to the
// ids its daemon lines use (derp-1): a region code known only by code
// gets its id from the input's DERP map or `tailscale debug derp` (tied
// as they were read), or, when the input holds no DERP map, from
// Tailscale's own map (probes.DefaultRegions) where that id has no other
// code. Each tie of a code the paths name is recorded with how it was
// made.
func (p *paste) linkRegions() {
	t := &p.th
	var defaults []probes.RegionLink
	if t.derpMap == nil {
		for _, code := range slices.Sorted(maps.Keys(p.codes)) {
			id := p.codes[code]
			if id < syntheticRegion {
				continue
			}
			did := probes.DefaultRegionID(code)
			if did == 0 {
				continue
			}
			if r, ok := p.regions[did]; ok && r.RegionCode != "" && r.RegionCode != code {
				continue // the input gives that id another code
			}
			// A tie to Tailscale's own map is a link only, never a fact
			// the rules read: a custom DERP map (headscale's) may number
			// regions otherwise, so no region's state is taken from it.
			defaults = append(defaults, probes.RegionLink{ID: did, Code: safetext.New(code), From: "default map"})
		}
	}
	var links []probes.RegionLink
	for _, code := range slices.Sorted(maps.Keys(p.codes)) {
		id := p.codes[code]
		if id >= syntheticRegion {
			continue
		}
		from := t.linkFrom[id]
		if from == "" {
			from = "a log line naming both"
		}
		if len(links) < 256 {
			links = append(links, probes.RegionLink{ID: id, Code: safetext.New(code), From: from})
		}
	}
	for _, l := range defaults {
		if len(links) < 256 {
			links = append(links, l)
		}
	}
	t.thread.RegionLinks = links
}

// finishThread puts what the thread readers read into f: the host's
// facts, the DERP map, WhoIs replies, how tailscaled runs, the thread
// facts and which of our facts came from prose; hist gets each peer's
// ICMP ping and, for peers whose handshake a status entry shows, that
// it is known.
func (p *paste) finishThread(f *snapshot.File, st *ipnstate.Status, prose *netcheckFacts, handshakes map[string]bool, hist map[string]snapshot.PeerHistory) {
	t := &p.th
	p.finishHost(f, st)
	if dm := t.derpMap; dm != nil {
		out := &tailcfg.DERPMap{Regions: maps.Clone(dm.Regions), OmitDefaultRegions: dm.OmitDefaultRegions}
		if f.DERPMap != nil {
			for id, r := range f.DERPMap.Regions {
				if _, ok := out.Regions[id]; !ok && tscompat.IntRegionID(id) < syntheticRegion {
					out.Regions[id] = r
				}
			}
		}
		f.DERPMap = out
	}
	if len(t.whois) > 0 {
		f.WhoIs = append(f.WhoIs, t.whois...)
	}
	for id := range handshakes {
		h := hist[id]
		h.HandshakeUnknown = false
		hist[id] = h
	}
	// How tailscaled runs.
	if t.kubectl && p.ev.LogLines > 0 {
		d := p.daemon("a kubectl command line")
		d.Kubernetes, d.Container = true, true
	}
	if t.daemonSet {
		d := t.daemon
		if d.Kubernetes && !d.PodAddr.IsValid() {
			d.PodAddr = p.podAddr()
		}
		selfFactsOf(f).Daemon = &d
	}
	marks := p.proseMarks(prose)
	if len(marks) > 0 {
		selfFactsOf(f).Prose = marks
		p.inputs = append(p.inputs, snapshot.Input{Kind: KindProse, Note: p.proseNote(prose)})
	}
	th := t.thread
	if th.PortmapRefused != "" || th.PeerRelay != nil || len(th.PeersGone) > 0 || len(th.STUNSilent) > 0 || len(th.STUNAnswered) > 0 || len(th.RegionLinks) > 0 {
		sf := selfFactsOf(f)
		if sf.Evidence == nil {
			sf.Evidence = &probes.SelfEvidence{}
		}
		sf.Evidence.Thread = &th
	}
}

// selfFactsOf is f.Self, made when nil.
func selfFactsOf(f *snapshot.File) *snapshot.SelfFacts {
	if f.Self == nil {
		f.Self = &snapshot.SelfFacts{}
	}
	return f.Self
}

// finishHost picks this node's interfaces among the host blocks read: the
// block holding one of our addresses (a Tailscale address, an endpoint),
// else the only block when it holds no peer's address; a block holding a
// peer's Tailscale address is that peer's, and set aside.
func (p *paste) finishHost(f *snapshot.File, st *ipnstate.Status) {
	t := &p.th
	if len(t.hosts) == 0 && len(t.routes) == 0 && t.bypass == nil {
		return
	}
	ours := map[netip.Addr]bool{}
	if st.Self != nil {
		for _, a := range st.Self.TailscaleIPs {
			ours[a] = true
		}
	}
	if p.selfIP.IsValid() {
		ours[p.selfIP] = true
	}
	for _, ep := range p.endpoints {
		ours[ep.Addr()] = true
	}
	peers := map[netip.Addr]string{}
	for _, ps := range allPeers(st) {
		if ps == st.Self {
			continue
		}
		for _, a := range ps.TailscaleIPs {
			peers[a] = shortHost(ps)
		}
	}
	var hf *probes.HostFacts
	var mine, other []*hostAcc
	for _, h := range t.hosts {
		holdsOurs, peer := false, ""
		for _, ifc := range h.ifs {
			for _, pf := range ifc.Addrs {
				if ours[pf.Addr()] {
					holdsOurs = true
				}
				if n, ok := peers[pf.Addr()]; ok {
					peer = n
				}
			}
		}
		switch {
		case holdsOurs:
			mine = append(mine, h)
		case peer != "":
			f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("a host's interfaces hold the Tailscale address of peer %s: they are that machine's, not this node's, and are not used", peer)))
		default:
			other = append(other, h)
		}
	}
	if len(mine) == 0 && len(other) == 1 {
		mine = other
		if len(ours) > 0 {
			f.Warnings = append(f.Warnings, "the host interfaces in the input hold none of this node's addresses: taken as this node's")
		}
	} else if len(mine) == 0 && len(other) > 1 {
		f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("%d hosts' interfaces, none holding this node's addresses: none is used", len(other))))
	}
	hf = &probes.HostFacts{At: f.Taken, Routes: t.routes, BypassRule: t.bypass}
	for _, h := range mine {
		for _, ifc := range h.ifs {
			for _, pf := range ifc.Addrs {
				if ours[pf.Addr()] && tailnetPrefix(netip.PrefixFrom(pf.Addr(), pf.Addr().BitLen())) {
					ifc.Tailscale = true
				}
			}
			n := string(ifc.Name)
			ifc.Tailscale = ifc.Tailscale || strings.HasPrefix(n, "tailscale") || n == "Tailscale"
			hf.Interfaces = append(hf.Interfaces, ifc)
		}
		for _, d := range h.down {
			hf.Down = append(hf.Down, safetext.New(d))
			if strings.HasPrefix(d, "tailscale") || d == "Tailscale" {
				f.Warnings = append(f.Warnings, safetext.New("the host's tools list "+d+" as down: tailscaled's tunnel carries nothing while it is (is tailscaled running? `ip link set "+d+" up` is tailscaled's own job)"))
			}
		}
	}
	if len(hf.Interfaces) == 0 && len(hf.Down) == 0 && len(hf.Routes) == 0 && hf.BypassRule == nil {
		return
	}
	f.Host = hf
}
