package peers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/columns"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/tui/common"
)

// bothEnds renders the two ends of the path side by side: our NAT facts
// (our tailscaled's NetInfo) and the peer's own (PeerSide, named by its
// source), each row cut to width w. When the peer's side is unknown it
// says, once, what would fill it.
func (d *Detail) bothEnds(w int) []string {
	p := &d.peer
	self := d.snap.Self
	ps := p.PeerSide
	regions := d.regions()

	peerHead := "peer's end: unknown"
	if ps != nil {
		peerHead = "peer's end (" + ps.Source
		if !ps.At.IsZero() {
			peerHead += ", " + units.Ago(d.now(), ps.At)
		}
		peerHead += ")"
	}
	rows := [][]string{
		{"", "our end", peerHead},
		{"NAT", ourNAT(self.NAT), peerNAT(ps)},
		{"UDP", boolWord(natBool(self.NAT, func(n *probes.NATInfo) *bool { return n.WorkingUDP }), "works", "blocked"), peerBool(ps, func(s *probes.PeerSide) *bool { return s.ClientSupports.UDP }, "works", "blocked")},
		{"IPv6", boolWord(natBool(self.NAT, func(n *probes.NATInfo) *bool { return n.WorkingIPv6 }), "works", "no"), peerBool(ps, func(s *probes.PeerSide) *bool { return s.ClientSupports.IPv6 }, "works", "no")},
		{"port map", ourPortMap(self.NAT), peerPortMap(ps)},
		{"home DERP", ourHome(self, regions), peerHome(ps, regions)},
		{"endpoints", endpointsWord(self.Endpoints, len(self.Endpoints) > 0), peerEndpoints(p)},
	}
	// Cut the two value columns to fit side by side.
	colW := max((w-labelWidth-2*columns.Gap)/2, 8)
	for _, r := range rows {
		for i := 1; i < len(r); i++ {
			r[i] = common.Truncate(r[i], colW, "…")
		}
	}
	var out []string
	out = append(out, d.st.Title.Render("both ends"))
	for i, l := range columns.Lines(rows, "  ") {
		if i == 0 {
			l = d.st.Muted.Render(l)
		}
		out = append(out, common.Truncate(l, w, "…"))
	}
	if (ps == nil || ps.Source == probes.SourceLocalAPI) && d.snap.ControlAPI == nil && peerUnknown(ps) {
		out = append(out, d.wrapped("the peer's NAT, UDP and port mapping are unknown: control does not pass them on; a read-only Tailscale API key (TAILSCALE_API_KEY, scope devices:core:read) would fill them", w, false)...)
	}
	if st := d.snap.ControlAPI; st != nil && st.Err != "" {
		out = append(out, d.wrapped(string(st.Err), w, true)...)
	}
	return out
}

func natBool(n *probes.NATInfo, f func(*probes.NATInfo) *bool) *bool {
	if n == nil {
		return nil
	}
	return f(n)
}

func boolWord(b *bool, yes, no string) string {
	switch {
	case b == nil:
		return "unknown"
	case *b:
		return yes
	}
	return no
}

func peerBool(ps *probes.PeerSide, f func(*probes.PeerSide) *bool, yes, no string) string {
	if ps == nil {
		return "unknown"
	}
	return boolWord(f(ps), yes, no)
}

func natWord(hard *bool) string {
	return boolWord(hard, "hard (new port per destination)", "easy or none")
}

func ourNAT(n *probes.NATInfo) string {
	if n == nil {
		return "unknown"
	}
	return natWord(n.MappingVariesByDestIP)
}

func peerNAT(ps *probes.PeerSide) string {
	if ps == nil {
		return "unknown"
	}
	return natWord(ps.MappingVariesByDestIP)
}

// mapWord names which port-mapping services answered.
func mapWord(upnp, pmp, pcp *bool) string {
	var on []string
	for _, s := range []struct {
		name string
		b    *bool
	}{{"UPnP", upnp}, {"NAT-PMP", pmp}, {"PCP", pcp}} {
		if s.b != nil && *s.b {
			on = append(on, s.name)
		}
	}
	if len(on) == 0 {
		return ""
	}
	return strings.Join(on, ", ")
}

func ourPortMap(n *probes.NATInfo) string {
	if n == nil {
		return "unknown"
	}
	if w := mapWord(n.UPnP, n.PMP, n.PCP); w != "" {
		if n.HavePortMap {
			return "mapped (" + w + ")"
		}
		return "available (" + w + ")"
	}
	if n.HavePortMap {
		return "mapped"
	}
	if n.UPnP == nil && n.PMP == nil && n.PCP == nil {
		return "unknown"
	}
	return "none"
}

func peerPortMap(ps *probes.PeerSide) string {
	if ps == nil {
		return "unknown"
	}
	cs := ps.ClientSupports
	if w := mapWord(cs.UPnP, cs.PMP, cs.PCP); w != "" {
		return "available (" + w + ")"
	}
	return boolWord(ps.ClientSupports.PortMap(), "available", "none")
}

func ourHome(self probes.Self, regions map[int]probes.Region) string {
	if self.HomeDERP == 0 && self.HomeDERPCode == "" {
		return "unknown"
	}
	s := string(self.HomeDERPCode)
	if s == "" {
		s = "region " + strconv.Itoa(self.HomeDERP)
	}
	if n := self.NAT; n != nil {
		if d, ok := n.DERPLatency[self.HomeDERP]; ok {
			s += " " + units.Latency(d)
		}
	}
	return s
}

func peerHome(ps *probes.PeerSide, regions map[int]probes.Region) string {
	if ps == nil || ps.HomeDERP == 0 {
		return "unknown"
	}
	code := "region " + strconv.Itoa(ps.HomeDERP)
	if r, ok := regions[ps.HomeDERP]; ok && r.Code != "" {
		code = string(r.Code)
	}
	s := code
	if ms, ok := ps.DERPLatencyMs[code]; ok {
		s += " " + units.Latency(time.Duration(ms*float64(time.Millisecond)))
	}
	return s
}

func peerEndpoints(p *probes.Peer) string {
	if ps := p.PeerSide; ps != nil && len(ps.Endpoints) > 0 {
		return endpointsWord(ps.Endpoints, true)
	}
	return endpointsWord(p.Endpoints, p.EndpointsKnown)
}

func endpointsWord[T fmt.Stringer](eps []T, known bool) string {
	switch {
	case !known:
		return "unknown"
	case len(eps) == 0:
		return "none"
	}
	return joinAddrs(eps)
}

// peerUnknown reports whether the peer's NAT facts are all unknown.
func peerUnknown(ps *probes.PeerSide) bool {
	return ps == nil || (ps.MappingVariesByDestIP == nil && ps.ClientSupports.UDP == nil && ps.ClientSupports.PortMap() == nil)
}

// wrapped word-wraps text two cells in, muted or as a warning.
func (d *Detail) wrapped(text string, w int, warn bool) []string {
	var out []string
	for _, l := range strings.Split(common.WrapText(text, max(w-2, 8)), "\n") {
		if warn {
			out = append(out, "  "+d.st.Warn.Render(l))
		} else {
			out = append(out, "  "+d.st.Muted.Render(l))
		}
	}
	return out
}
