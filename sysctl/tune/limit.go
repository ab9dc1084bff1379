package tune

import (
	"fmt"
	"strings"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/sysctl"
)

// The limit: what, other than this host's TCP buffers, holds tailnet
// throughput down here. tune says the first one before anything else, and
// no buffer change is prescribed on the arithmetic alone while one holds
// (sysctl.Target.Elsewhere); the CPU's ceiling caps the target instead.

// LimitKind names a limit.
type LimitKind string

// Limits, in the order they outrank each other.
const (
	// LimitPath: the peer's path is relayed through DERP.
	LimitPath LimitKind = "path"
	// LimitKernel: the kernel is in a known regression's range.
	LimitKernel LimitKind = "kernel"
	// LimitCPU: the CPU cannot encrypt the target (or within 1.5× of it).
	LimitCPU LimitKind = "cpu"
	// LimitOffload: an offload in the forwarded path (TSO on a bridge with
	// throughput far below the ceiling; UDP GRO forwarding off on a
	// forwarding box).
	LimitOffload LimitKind = "offload"
	// LimitForwarding: the box forwards; its own TCP sysctls do not
	// govern forwarded flows.
	LimitForwarding LimitKind = "forwarding"
)

// Limit is one limit with its evidence and fix.
type Limit struct {
	Kind LimitKind `json:"kind"`
	// Says is the verdict in one line, as tune's first line prints it
	// after "Limit: <kind>: ".
	Says string `json:"says"`
	// Evidence are the facts behind it; Fix the steps, in order.
	Evidence []string `json:"evidence,omitempty"`
	Fix      []string `json:"fix,omitempty"`
}

// CPUMargin is how close to the target the crypto ceiling may come before
// the CPU is the verdict: within 1.5× of it, the tunnel has no headroom.
const CPUMargin = 1.5

// FarBelow is how far below the crypto ceiling observed throughput must
// be before an offload is blamed: under a tenth.
const FarBelow = 10.0

// Line is the limit's first line: "Limit: cpu: this CPU can …".
func (l Limit) Line() safetext.Text {
	return safetext.New("Limit: " + string(l.Kind) + ": " + l.Says)
}

// Lines are the limit as text lines: its line, its evidence and its fix.
func (l Limit) Lines() []safetext.Text {
	out := []safetext.Text{l.Line()}
	for _, e := range l.Evidence {
		out = append(out, safetext.New("  evidence: "+e))
	}
	for i, f := range l.Fix {
		out = append(out, safetext.Format("  fix %d. %s", i+1, f))
	}
	return out
}

// judgeLimits fills r.Limits from what Gather read, in rank order. target
// is the bandwidth the tuning is for (bits/s) and targetSrc where it came
// from; observed is the throughput seen (bits/s, 0 unknown) and its source.
func (r *Report) judgeLimits(target float64, observed float64, observedSrc string) {
	var ls []Limit
	if l, ok := r.pathLimit(); ok {
		ls = append(ls, l)
	}
	ls = append(ls, r.kernelLimits()...)
	if l, ok := r.cpuLimit(target); ok {
		ls = append(ls, l)
	}
	ls = append(ls, r.offloadLimits(observed, observedSrc)...)
	if l, ok := r.forwardingLimit(); ok {
		ls = append(ls, l)
	}
	r.Limits = ls
}

func (r *Report) pathLimit() (Limit, bool) {
	p := r.Path
	if !p.Relayed() {
		return Limit{}, false
	}
	l := Limit{Kind: LimitPath,
		Says: fmt.Sprintf("%s is relayed through DERP (%s): relayed traffic goes over TCP through a DERP server, whose pace no buffer on this host changes", p.Peer, p.Text)}
	l.Evidence = append(l.Evidence, p.Peer.String()+" is "+p.Chosen)
	if p.Reason != "" {
		l.Evidence = append(l.Evidence, "verdict "+p.Reason.String()+": "+p.Summary.String())
	}
	if p.Fix != "" {
		l.Fix = append(l.Fix, p.Fix.String())
	}
	l.Fix = append(l.Fix, "tailpath status shows every check behind the verdict; run tailpath tune again once the path is direct")
	return l, true
}

func (r *Report) kernelLimits() []Limit {
	var out []Limit
	for _, h := range r.Kernel {
		if !h.Sure || h.Mitigated != "" {
			continue
		}
		b := h.Bug
		l := Limit{Kind: LimitKernel,
			Says: fmt.Sprintf("kernel %s has a known regression (%s): %s", orUnknown(r.BBR.Kernel), b.ID, b.Symptom)}
		l.Evidence = append(l.Evidence, h.Why, b.Upstream, "source: "+b.Source)
		l.Fix = append(l.Fix, "a kernel with the fix: "+strings.Join(b.FixedIn, ", ")+" or later in its series"+kernelUpdateHow(r.Platform))
		if b.Workaround != "" {
			l.Fix = append(l.Fix, "until then: "+b.Workaround)
		}
		out = append(out, l)
	}
	return out
}

// kernelUpdateHow says how this platform gets another kernel.
func kernelUpdateHow(p sysctl.Platform) string {
	switch p.Kind {
	case sysctl.PlatformUnraid:
		return " (Unraid's kernel comes with the Unraid release: update Unraid)"
	case sysctl.PlatformDSM, sysctl.PlatformQNAP, sysctl.PlatformUniFi, sysctl.PlatformEdgeOS, sysctl.PlatformHAOS:
		return " (this system's kernel comes with its firmware: update it)"
	case sysctl.PlatformTrueNAS:
		return " (TrueNAS SCALE's kernel comes with the release: update TrueNAS)"
	case sysctl.PlatformOpenWrt:
		return " (OpenWrt's kernel comes with the release: sysupgrade)"
	}
	return ""
}

func (r *Report) cpuLimit(target float64) (Limit, bool) {
	c := r.Crypto
	if c == nil || target <= 0 {
		return Limit{}, false
	}
	ceil, how := c.Ceiling()
	if ceil <= 0 || ceil > CPUMargin*target {
		return Limit{}, false
	}
	rel := "below"
	if ceil >= target {
		rel = fmt.Sprintf("within %g× of", CPUMargin)
	}
	l := Limit{Kind: LimitCPU,
		Says: fmt.Sprintf("this CPU can encrypt about %s (%s), %s the %s target: buffers cannot go faster",
			sysctl.FormatBandwidth(ceil), how, rel, sysctl.FormatBandwidth(target))}
	if e := c.Estimate; e != nil {
		l.Evidence = append(l.Evidence, e.Why+" ("+e.Source+")")
		if e.PerCoreLow != e.PerCoreHigh {
			l.Says = fmt.Sprintf("this CPU can encrypt at most about %s (%s; from %s per core), %s the %s target: buffers cannot go faster",
				sysctl.FormatBandwidth(ceil), how, bandwidthRange(e.PerCoreLow, e.PerCoreHigh), rel, sysctl.FormatBandwidth(target))
		}
	}
	if cpu := r.CPU; cpu != nil {
		l.Evidence = append(l.Evidence, "CPU: "+cpuLine(*cpu))
	}
	l.Fix = cpuFix(r.Platform, r.CPU, c, r.Forwarding)
	return l, true
}

// bandwidthRange words a range of rates ("24 to 72 Mbit/s").
func bandwidthRange(lo, hi float64) string {
	if lo == hi {
		return sysctl.FormatBandwidth(hi)
	}
	return sysctl.FormatBandwidth(lo) + " to " + sysctl.FormatBandwidth(hi)
}

// cpuFix is what lifts a CPU's crypto ceiling, per platform.
func cpuFix(p sysctl.Platform, cpu *sysctl.CPU, c *Crypto, fwd *Forwarding) []string {
	var fix []string
	if cpu != nil {
		switch w := cpu.Wasted64(); {
		case w == "":
		case p.Kind == sysctl.PlatformUnknown || p.Kind == sysctl.PlatformSystemd:
			more := ""
			if e := c.Estimate; e != nil && e.Better > 0 {
				more = fmt.Sprintf(" (a 64-bit build does %s per core on the same board)", sysctl.FormatBandwidth(e.Better))
			}
			fix = append(fix, "a 64-bit OS image: "+w+" run 32-bit code on a CPU that has AArch64, and the 64-bit ChaCha20-Poly1305 is faster"+more+"; on a Raspberry Pi, Raspberry Pi OS (64-bit)")
		default:
			fix = append(fix, "a 64-bit build: "+w+" run 32-bit code on a CPU that has AArch64")
		}
	}
	if e := c.Estimate; e != nil && e.Newer > 0 {
		fix = append(fix, fmt.Sprintf("Tailscale 1.100 or later: wireguard-go's 32-bit Arm assembly does %s per core on this board (tailscale/wireguard-go#58)", sysctl.FormatBandwidth(e.Newer)))
	}
	fix = append(fix, "fewer trips through userspace on this box: a kernel TUN rather than --tun=userspace-networking, and no second VPN or proxy on the same packets")
	switch p.Kind {
	case sysctl.PlatformOpenWrt, sysctl.PlatformUniFi, sysctl.PlatformEdgeOS:
		role := "Tailscale"
		if fwd.Forwards() {
			role = "the " + strings.TrimPrefix(strings.TrimPrefix(fwd.Role(), "an "), "a ")
		}
		fix = append(fix, "another box: run "+role+" on a faster machine on the LAN (a Raspberry Pi 4 or 5 with a 64-bit OS, a NAS, a mini PC) and let this router route")
	default:
		fix = append(fix, "another box: move the transfers (or the exit node or subnet router) to a machine with a faster CPU")
	}
	return fix
}

// cpuLine words a CPU's facts on one line.
func cpuLine(c sysctl.CPU) string {
	s := c.Name()
	if c.Cores > 0 {
		s += fmt.Sprintf(", %d core(s)", c.Cores)
	}
	switch {
	case c.Arch != "" && c.KernelBits != 0:
		s += fmt.Sprintf(", kernel %s (%d-bit: %s)", c.Arch, c.KernelBits, c.KernelWhy)
	case c.Arch != "":
		s += ", kernel " + c.Arch
	case c.KernelBits != 0:
		s += fmt.Sprintf(", a %d-bit kernel (%s)", c.KernelBits, c.KernelWhy)
	}
	if c.CPUBits == 64 {
		s += "; the CPU is 64-bit capable (" + c.CPUWhy + ")"
	} else if c.CPUBits == 32 {
		s += "; a 32-bit CPU (" + c.CPUWhy + ")"
	}
	if b := c.Tailscaled; b != nil {
		s += fmt.Sprintf("; tailscaled at %s is a %d-bit %s build", b.Path, b.Bits, b.Arch)
	}
	return s
}

func (r *Report) offloadLimits(observed float64, observedSrc string) []Limit {
	o := r.Offloads
	if o == nil || !r.Forwarding.Forwards() {
		return nil
	}
	var out []Limit
	ceil := r.ceilingLow()
	for _, i := range o.Ifaces {
		if !i.Bridge || !hasLANRole(i) {
			continue
		}
		tso, known := i.On(FeatTSO)
		if !known || !tso {
			continue
		}
		switch {
		case observed > 0 && ceil > 0 && observed*FarBelow < ceil:
			l := Limit{Kind: LimitOffload,
				Says: fmt.Sprintf("%s, a bridge in the forwarded path, has TSO on, and throughput (%s, %s) is far below this CPU's ceiling (%s): bridges are known to mishandle the large coalesced packets", i.Name, sysctl.FormatBandwidth(observed), observedSrc, sysctl.FormatBandwidth(ceil))}
			l.Evidence = append(l.Evidence, fmt.Sprintf("%s is a bridge (ports %s) carrying %s; %s is on (%s)", i.Name, orNone(strings.Join(i.Ports, ", ")), strings.Join(i.Roles, ", "), FeatTSO, o.From),
				"a UniFi gateway as a subnet router moved under 0.5 Mbit/s until TSO was turned off on its LAN bridge (tailscale/tailscale#21117, SierraSoftworks/tailscale-unifi#205)")
			l.Fix = append(l.Fix, "ethtool -K "+i.Name+" tso off (as root; measure again before keeping it)")
			l.Fix = append(l.Fix, persistEthtool(r.Platform, "ethtool -K "+i.Name+" tso off")...)
			out = append(out, l)
		default:
			why := "no throughput was given or measured (--observed RATE)"
			if observed > 0 {
				why = fmt.Sprintf("%s is not far below the ceiling, or the ceiling is unknown", sysctl.FormatBandwidth(observed))
			}
			r.OffloadNotes = append(r.OffloadNotes, fmt.Sprintf("%s, a bridge in the forwarded path (%s), has TSO on; if forwarded throughput is far below this CPU's ceiling, try ethtool -K %s tso off (%s)", i.Name, strings.Join(i.Roles, ", "), i.Name, why))
		}
	}
	if g := o.UDPGRO; g != nil && g.Suboptimal {
		cmd := UDPGROCommand(o.WAN)
		l := Limit{Kind: LimitOffload,
			Says: fmt.Sprintf("UDP GRO forwarding is off on %s, the default-route interface of %s: Tailscale's check warns (\"UDP GRO forwarding is suboptimally configured\")", o.WAN, r.Forwarding.Role())}
		l.Evidence = append(l.Evidence, wanFeatures(o), "checked by "+g.By)
		l.Fix = append(l.Fix, cmd+" (Tailscale's KB 1320: "+KBUDPGRO+")")
		l.Fix = append(l.Fix, persistEthtool(r.Platform, cmd)...)
		out = append(out, l)
	}
	return out
}

// wanFeatures words the WAN's UDP GRO features.
func wanFeatures(o *Offloads) string {
	w := o.Iface(o.WAN)
	if w == nil {
		return o.WAN + ": features unknown"
	}
	word := func(f string) string {
		on, known := w.On(f)
		switch {
		case !known:
			return "absent"
		case on:
			return "on"
		}
		return "off"
	}
	return fmt.Sprintf("%s: %s %s, %s %s (%s)", o.WAN, FeatUDPGROForwarding, word(FeatUDPGROForwarding), FeatGROList, word(FeatGROList), o.From)
}

// hasLANRole reports whether the interface carries an advertised route
// or, on an exit node, the default route.
func hasLANRole(i Iface) bool {
	for _, r := range i.Roles {
		if strings.HasPrefix(r, "lan ") || r == "wan" {
			return true
		}
	}
	return false
}

// ceilingLow is the lowest ceiling the CPU is judged to reach (the
// estimate's low bound over all cores, else the measurement here); 0 when
// unknown.
func (r *Report) ceilingLow() float64 {
	c := r.Crypto
	if c == nil {
		return 0
	}
	if e := c.Estimate; e != nil {
		return e.PerCoreLow * float64(max(e.Cores, 1))
	}
	if c.Here && c.Measured != nil {
		return c.Measured.AllCores
	}
	return 0
}

// persistEthtool says how to keep an ethtool setting across reboots on
// platform p: ethtool settings live in the driver and are gone after a
// reboot or a link reset.
func persistEthtool(p sysctl.Platform, cmd string) []string {
	switch p.Kind {
	case sysctl.PlatformDSM:
		return []string{"to keep it: DSM Control Panel › Task Scheduler › Create › Triggered Task › User-defined script, user root, event Boot-up: " + cmd}
	case sysctl.PlatformUnraid:
		return []string{"to keep it: add the line to /boot/config/go (Unraid runs it at every boot): " + cmd}
	case sysctl.PlatformTrueNAS:
		return []string{"to keep it: System › Advanced Settings › Init/Shutdown Scripts › Add, type Command, when Post Init: " + cmd}
	case sysctl.PlatformQNAP:
		return []string{"to keep it: QNAP runs no boot script without the autorun.sh option; with it, add: " + cmd}
	case sysctl.PlatformOpenWrt:
		return []string{"to keep it: add the line to /etc/rc.local (before exit 0), which OpenWrt runs at boot and sysupgrade keeps: " + cmd}
	case sysctl.PlatformUniFi:
		return []string{"to keep it: UniFi OS replaces /etc at firmware updates; run it at every boot from a script kept under /data (as for the sysctls): " + cmd}
	case sysctl.PlatformEdgeOS:
		return []string{"to keep it: an executable script in /config/scripts/post-config.d/ (EdgeOS runs them after every boot): " + cmd}
	case sysctl.PlatformHAOS:
		return []string{"Home Assistant OS keeps no boot script for the host: the setting lasts until the next reboot"}
	}
	return []string{"to keep it (Tailscale's KB 1320, with networkd-dispatcher): printf '#!/bin/sh\\n\\n" + cmd + "\\n' | sudo tee /etc/networkd-dispatcher/routable.d/50-tailscale && sudo chmod 755 /etc/networkd-dispatcher/routable.d/50-tailscale"}
}

func (r *Report) forwardingLimit() (Limit, bool) {
	f := r.Forwarding
	if !f.Forwards() {
		return Limit{}, false
	}
	l := Limit{Kind: LimitForwarding,
		Says: fmt.Sprintf("this box is %s: forwarded flows are TCP between other hosts, so its own TCP sysctls (tcp_rmem, tcp_wmem, congestion control) do not govern them", f.Role())}
	l.Evidence = append(l.Evidence, "advertised routes from "+f.From)
	l.Evidence = append(l.Evidence, fmt.Sprintf("%s = %s, %s = %s", KeyIPv4Forward, orUnknown(f.IPv4), KeyIPv6Forward, orUnknown(f.IPv6)))
	what := "what governs them: the TCP of the hosts at both ends, this box's CPU (the crypto ceiling)"
	if o := r.Offloads; o != nil && o.WAN != "" {
		what += ", UDP GRO forwarding and the offloads on " + o.WAN
	}
	what += ", the egress qdisc, and conntrack and the firewall"
	l.Evidence = append(l.Evidence, what)
	if f.IPv4 == "0" && (f.ExitNode || hasV4(f)) {
		l.Fix = append(l.Fix, "IP forwarding is off, so forwarded traffic is dropped: sysctl -w "+KeyIPv4Forward+"=1 (and keep it where this system keeps sysctls)")
	}
	if r.BBR.KernelBefore(6, 2) {
		l.Evidence = append(l.Evidence, fmt.Sprintf("kernel %s predates TUN UDP segmentation (Linux 6.2): tailscaled cannot use UDP GRO forwarding here (Tailscale's KB 1320)", r.BBR.Kernel))
		l.Fix = append(l.Fix, "a kernel ≥ 6.2"+kernelUpdateHow(r.Platform)+", then "+UDPGROCommand(orUnknown(r.wan())))
	}
	if g := r.Offloads.udpGRO(); g != nil && !g.Suboptimal && g.NotApplicable == "" && g.Err == "" {
		l.Evidence = append(l.Evidence, "UDP GRO forwarding is on where Tailscale checks it ("+g.By+")")
	}
	l.Fix = append(l.Fix, "tune the hosts at the ends of the forwarded flows (run tailpath tune there), and measure the forwarding path with a transfer through this box")
	return l, true
}

func hasV4(f *Forwarding) bool {
	for _, p := range f.Routes {
		if p.Addr().Is4() {
			return true
		}
	}
	return false
}

func (r *Report) wan() string {
	if r.Offloads == nil {
		return ""
	}
	return r.Offloads.WAN
}

func (o *Offloads) udpGRO() *GROCheck {
	if o == nil {
		return nil
	}
	return o.UDPGRO
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
