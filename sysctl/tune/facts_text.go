package tune

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/sysctl"
)

// How tune words the facts issue 35 added (the limit, the CPU and its
// crypto ceiling, the path, forwarding, offloads, kernel regressions), for
// `tailpath tune` and the Tuning pane alike. The files and the daemon's
// answers they quote are outside text: cleaned here.

// LimitLines are what goes first: the verdict with its evidence and fix,
// then each further limit on a line of its own ("Also: …"); nil when no
// limit holds.
func (r Report) LimitLines() []safetext.Text {
	if len(r.Limits) == 0 {
		return nil
	}
	out := r.Limits[0].Lines()
	for _, l := range r.Limits[1:] {
		out = append(out, safetext.New("Also: "+string(l.Kind)+": "+l.Says))
	}
	return out
}

// CPULines word the CPU and its crypto ceiling: "CPU: …", "crypto
// ceiling: …", the estimate, and notes.
func (r Report) CPULines() []safetext.Text {
	var out []safetext.Text
	switch {
	case r.CPU != nil:
		out = append(out, safetext.New("CPU: "+cpuLine(*r.CPU)))
	case r.CPUErr != "":
		out = append(out, safetext.New("CPU: unknown ("+r.CPUErr+")"))
	}
	c := r.Crypto
	if c == nil {
		return out
	}
	if m := c.Measured; m != nil {
		how := fmt.Sprintf("measured here in %.1f s by tailpath's %s build", m.Took.Seconds(), m.GOARCH)
		if m.Fixed {
			how = "given, not measured (" + m.GOARCH + ")"
		}
		s := fmt.Sprintf("crypto ceiling (ChaCha20-Poly1305, %d-byte packets, %s): %s on %d core(s), %s on one",
			m.Packet, how, sysctl.FormatBandwidth(m.AllCores), m.Cores, sysctl.FormatBandwidth(m.OneCore))
		if !c.Here {
			if r.Sandbox {
				s += "; this machine's, not the root's CPU"
			} else {
				s += "; not what tailscaled runs here (see below)"
			}
		}
		out = append(out, safetext.New(s))
	} else if c.Err != "" {
		out = append(out, safetext.New("crypto ceiling: not measured: "+c.Err))
	}
	if e := c.Estimate; e != nil {
		cores := max(e.Cores, 1)
		out = append(out, safetext.New(fmt.Sprintf("  estimated for %s: %s per core, %s on %d core(s): %s (%s)",
			e.For, bandwidthRange(e.PerCoreLow, e.PerCoreHigh), bandwidthRange(e.PerCoreLow*float64(cores), e.PerCoreHigh*float64(cores)), cores, e.Why, e.Source)))
	} else if r.Sandbox && c.Measured != nil && !c.Here && r.CPU != nil {
		out = append(out, safetext.New("  no published benchmark matches the root's CPU, so its ceiling is unknown"))
	}
	for _, n := range c.Notes {
		out = append(out, safetext.New("  note: "+n))
	}
	if r.Tailscale != "" {
		out = append(out, safetext.New("tailscaled "+r.Tailscale+" ("+r.TailscaleFrom+")"))
	}
	return out
}

// PathLines word the path to the chosen peer, forwarding, the offloads
// and the kernel regressions, one fact a line.
func (r Report) PathLines() []safetext.Text {
	var out []safetext.Text
	switch p := r.Path; {
	case p != nil:
		s := fmt.Sprintf("path: %s (%s): %s", p.Peer, p.Chosen, p.Text)
		if p.Summary != "" {
			s += " — " + p.Summary.String()
		}
		out = append(out, safetext.New(s))
	case r.PathErr != "":
		out = append(out, safetext.New("path: not known: "+r.PathErr.String()))
	}
	if f := r.Forwarding; f != nil {
		fw := fmt.Sprintf("ip_forward %s, IPv6 forwarding %s", orUnknown(f.IPv4), orUnknown(f.IPv6))
		switch {
		case f.Forwards():
			out = append(out, safetext.New(fmt.Sprintf("forwarding: %s (%s; %s)", f.Role(), f.From, fw)))
		case f.From != "":
			out = append(out, safetext.New(fmt.Sprintf("forwarding: none advertised (%s; %s)", f.From, fw)))
		default:
			out = append(out, safetext.New(fmt.Sprintf("forwarding: %s (%s)", f.Err, fw)))
		}
	}
	if o := r.Offloads; o != nil {
		for _, i := range o.Ifaces {
			out = append(out, safetext.New("offloads: "+ifaceLine(i)))
		}
		if g := o.UDPGRO; g != nil {
			s := "UDP GRO forwarding (" + o.TUN + " → " + o.WAN + "): "
			switch {
			case g.Err != "":
				s += "not checked: " + g.Err
			case g.Suboptimal:
				s += "suboptimal (" + strings.ReplaceAll(g.Warning, "\n", " ") + ")"
			case g.NotApplicable != "":
				s += "not applicable: " + g.NotApplicable
			default:
				s += "as Tailscale recommends"
			}
			out = append(out, safetext.New(s))
		}
	}
	for _, n := range r.OffloadNotes {
		out = append(out, safetext.New("note: "+n))
	}
	for _, h := range r.Kernel {
		s := fmt.Sprintf("kernel regression %s: %s", h.Bug.ID, h.Why)
		switch {
		case h.Mitigated != "":
			s += "; mitigated: " + h.Mitigated
		case !h.Sure:
			s += "; fixed in " + strings.Join(h.Bug.FixedIn, ", ")
		}
		out = append(out, safetext.New(s))
	}
	if len(r.Kernel) == 0 && r.BBR.Kernel != "" {
		out = append(out, safetext.New(fmt.Sprintf("kernel regressions: none of the %d known match %s", len(sysctl.KernelBugs), r.BBR.Kernel)))
	}
	return out
}

// ifaceLine words one interface: name, roles, bridge, the features that
// matter to tailnet traffic.
func ifaceLine(i Iface) string {
	s := i.Name + " (" + strings.Join(i.Roles, ", ")
	if i.Bridge {
		s += ", a bridge"
		if len(i.Ports) > 0 {
			s += " of " + strings.Join(i.Ports, ", ")
		}
	}
	s += "): "
	if i.Features == nil {
		return s + "features unknown: " + i.FeaturesErr
	}
	var parts []string
	for _, f := range []string{FeatTSO, FeatGSO, FeatGRO, FeatUDPGROForwarding, FeatGROList, FeatTUNUDPSeg} {
		if on, ok := i.Features[f]; ok {
			w := "off"
			if on {
				w = "on"
			}
			parts = append(parts, f+" "+w)
		}
	}
	if len(parts) == 0 {
		keys := make([]string, 0, len(i.Features))
		for k := range i.Features {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return s + fmt.Sprintf("none of the features that matter here among %d read", len(keys))
	}
	return s + strings.Join(parts, ", ")
}
