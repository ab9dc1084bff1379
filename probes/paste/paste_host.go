package paste

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// The host's own tools, as people paste them: Linux `ip addr`, `ip link`
// and their `-br` forms, `ip route` (table 52: the subnet routes
// tailscaled accepted) and `ip rule` (tailscaled's policy rules), BSD,
// macOS and net-tools `ifconfig`, Windows `ipconfig` and PowerShell's
// `Get-NetAdapter`. They fill probes.HostFacts as probes/hostnet does
// live: the interfaces that are up with their addresses (tailscaled's
// tunnel and VM or container bridges marked), the ones that are down,
// routes into the tunnel and whether tailscaled's bypass rule is there.

// Host block kinds (blockState.kind).
const (
	kindIPAddr   = "ip addr"
	kindIfconfig = "ifconfig"
	kindIPConfig = "ipconfig"
	kindNetAdapt = "Get-NetAdapter"
	kindIPRule   = "ip rule"
)

var (
	// ipAddrHeadRE is `ip addr`/`ip link`'s interface line:
	// "2: eth0@if5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 … state UP …".
	ipAddrHeadRE = lazyRE(`^(\d+): ([^:\s@]+)(?:@\S+)?: <([A-Z0-9_,-]*)> mtu \d+(.*)$`)
	// ipAddrInetRE is one of its address lines: "inet 192.168.1.20/24 brd … scope global eth0".
	ipAddrInetRE = lazyRE(`^inet6? (\S+/\d+)(?: |$)`)
	// ipBriefRE is `ip -br addr` and `ip -br link`: "eth0 UP 192.168.1.20/24 fe80::1/64",
	// "tun0 DOWN <POINTOPOINT,MULTICAST,NOARP>".
	ipBriefRE = lazyRE(`^([\w.:-]+)(?:@\S+)? (UP|DOWN|UNKNOWN|LOWERLAYERDOWN|DORMANT|NOTPRESENT)(?: (.*))?$`)
	// ifconfigHeadRE is ifconfig's interface line (BSD, macOS, net-tools
	// 2.x): "en0: flags=8863<UP,BROADCAST,…> mtu 1500"; ifconfigOldRE
	// net-tools 1.x's "eth0 Link encap:Ethernet HWaddr …".
	ifconfigHeadRE = lazyRE(`^([\w.:-]+): flags=[0-9a-fx]+<([A-Z0-9_,]*)> (?:metric \d+ )?mtu \d+`)
	ifconfigOldRE  = lazyRE(`^([\w.:-]+) Link encap:`)
	// ifconfigInetRE is an IPv4 line: "inet 192.168.1.5 netmask 0xffffff00 …",
	// "inet 100.64.0.1 --> 100.64.0.1 netmask 0xffffffff",
	// "inet 192.168.1.20 netmask 255.255.255.0 broadcast …", "inet addr:192.168.1.20 Bcast:… Mask:255.255.255.0".
	ifconfigInetRE = lazyRE(`^inet (?:addr:)?([\d.]+)(?: --> [\d.]+)?.*?(?:netmask |Mask:)(0x[0-9a-fA-F]{8}|[\d.]+)`)
	// ifconfigInet6RE: "inet6 fe80::1%en0 prefixlen 64 …", "inet6 addr: fe80::1/64 Scope:Link".
	ifconfigInet6RE = lazyRE(`^inet6 (?:addr: )?([0-9a-fA-F:.]+)(?:%\S+)?(?:/(\d+)| prefixlen (\d+))`)
	// ipconfigHeadRE is ipconfig's adapter line: "Ethernet adapter vEthernet (WSL):".
	ipconfigHeadRE = lazyRE(`^(?:Ethernet|Wireless LAN|Unknown|PPP|Tunnel) adapter (.+):$`)
	// ipconfigItemRE is one of its items: "IPv4 Address. . . . . : 192.168.1.30(Preferred)".
	ipconfigItemRE = lazyRE(`^(IPv4 Address|IPv6 Address|Link-local IPv6 Address|Autoconfiguration IPv4 Address|Subnet Mask|Media State)[ .]*: ?(.*)$`)
	// netAdapterRowRE is a Get-NetAdapter row, its columns' padding
	// collapsed: "Tailscale Tailscale Tunnel 12 Up 100 Gbps".
	netAdapterRowRE = lazyRE(`^(.+?) (\d+) (Up|Disconnected|Disabled|Not Present|Down)(?: .*)?$`)
	// ipRouteRE is an `ip route` line with a device: "192.168.10.0/24 dev tailscale0 table 52".
	ipRouteRE = lazyRE(`^(?:unicast |throw )?(default|[0-9a-fA-F.:]+(?:/\d+)?) (?:via \S+ )?dev (\S+)(.*)$`)
	// ipRuleRE is an `ip rule` line: "5210: from all fwmark 0x80000/0xff0000 lookup main".
	ipRuleRE = lazyRE(`^(\d+):\s+((?:not )?from \S+.*)$`)
)

// hostAcc is the interfaces one block of a host tool listed.
type hostAcc struct {
	ifs  []probes.Interface
	down []string
	cur  int // index in ifs of the interface being read; -1 none
	// curDown: the interface being read is down (its addresses are kept
	// out of ifs).
	curDown bool
	curName string
	// ipconfig's IPv4 address waits for its subnet mask.
	pend4 netip.Addr
	kind  string
}

func (h *hostAcc) clone() *hostAcc {
	if h == nil {
		return nil
	}
	c := *h
	c.ifs = make([]probes.Interface, len(h.ifs))
	for i, ifc := range h.ifs {
		ifc.Addrs = append([]netip.Prefix(nil), ifc.Addrs...)
		c.ifs[i] = ifc
	}
	c.down = append([]string(nil), h.down...)
	return &c
}

// begin starts interface name, up or down.
func (h *hostAcc) begin(name string, up bool) {
	h.flush()
	h.curName, h.curDown, h.cur = name, !up, -1
	if up {
		h.ifs = append(h.ifs, probes.Interface{Name: safetext.New(name), Bridge: isBridgeName(name)})
		h.cur = len(h.ifs) - 1
	}
}

// flush ends the interface being read.
func (h *hostAcc) flush() {
	if h.curDown && h.curName != "" {
		h.down = append(h.down, h.curName)
	}
	if h.pend4.IsValid() && h.cur >= 0 {
		// An address with no mask said: a host route.
		h.add(netip.PrefixFrom(h.pend4, 32))
	}
	h.pend4 = netip.Addr{}
	h.curName, h.curDown, h.cur = "", false, -1
}

// add adds an address of the interface being read.
func (h *hostAcc) add(p netip.Prefix) {
	if h.cur < 0 || !p.IsValid() || len(h.ifs[h.cur].Addrs) >= 64 {
		return
	}
	h.ifs[h.cur].Addrs = append(h.ifs[h.cur].Addrs, p)
}

// isBridgeName reports interface names of VM and container bridges on
// Linux (as probes/hostnet names them), macOS (vmnet's bridge100…) and
// Windows (Hyper-V's and WSL's vEthernet, VMware's and VirtualBox's
// host-only adapters).
func isBridgeName(name string) bool {
	for _, p := range []string{"docker", "br-", "virbr", "cni", "podman", "lxdbr", "lxcbr", "incusbr", "flannel", "vmnet", "vboxnet",
		"vEthernet", "VMware Network Adapter", "VirtualBox Host-Only"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(name, "bridge"); ok && rest != "" {
		// macOS's vmnet and Internet Sharing bridges are bridge100 and
		// up; bridge0 is its Thunderbolt bridge, a LAN.
		n, err := strconv.Atoi(rest)
		return err == nil && n >= 100
	}
	return false
}

// hostStart reads a line that begins a host tool's block; "" when it is
// none.
func (p *paste) hostStart(name string, no int, trim string, block **blockState) string {
	c := trim[0]
	switch {
	case c >= '0' && c <= '9':
		if m := ipAddrHeadRE().FindStringSubmatch(trim); m != nil {
			b := p.openHost(name, no, kindIPAddr, block)
			b.host.begin(m[2], ipLinkUp(m[3], m[4]))
			return kindIPAddr
		}
		if m := ipRuleRE().FindStringSubmatch(trim); m != nil {
			b := p.openHost(name, no, kindIPRule, block)
			p.ruleLine(b, m[2])
			return kindIPRule
		}
	}
	if strings.Contains(trim, " adapter ") {
		if m := ipconfigHeadRE().FindStringSubmatch(trim); m != nil {
			b := p.openHost(name, no, kindIPConfig, block)
			b.host.begin(m[1], true)
			return kindIPConfig
		}
	}
	if strings.Contains(trim, "flags=") || strings.Contains(trim, "Link encap:") {
		if m := ifconfigHeadRE().FindStringSubmatch(trim); m != nil {
			b := p.openHost(name, no, kindIfconfig, block)
			b.host.begin(m[1], strings.Contains(","+m[2]+",", ",UP,"))
			return kindIfconfig
		}
		if m := ifconfigOldRE().FindStringSubmatch(trim); m != nil {
			b := p.openHost(name, no, kindIfconfig, block)
			// net-tools 1.x says UP on a later line; until then, down.
			b.host.begin(m[1], false)
			return kindIfconfig
		}
	}
	if strings.HasPrefix(trim, "Name InterfaceDescription ifIndex Status") {
		p.openHost(name, no, kindNetAdapt, block)
		return kindNetAdapt
	}
	if strings.Contains(trim, " dev ") {
		if k := p.routeLine(name, no, trim); k != "" {
			return k
		}
	}
	if m := ipBriefRE().FindStringSubmatch(trim); m != nil && briefRest(m[3]) {
		b := p.openHost(name, no, kindIPAddr, block)
		b.host.begin(m[1], m[2] != "DOWN" && m[2] != "LOWERLAYERDOWN" && m[2] != "NOTPRESENT")
		for _, f := range strings.Fields(m[3]) {
			if pf, err := netip.ParsePrefix(f); err == nil {
				b.host.add(pf)
			}
		}
		b.host.flush()
		return kindIPAddr
	}
	return ""
}

// briefRest reports whether the rest of an `ip -br` line is what it
// prints: addresses with their prefix lengths, or a link address and
// flags.
func briefRest(s string) bool {
	if s == "" {
		return false
	}
	for _, f := range strings.Fields(s) {
		_, err := netip.ParsePrefix(f)
		mac := len(f) == 17 && strings.Count(f, ":") == 5
		flags := strings.HasPrefix(f, "<") && strings.HasSuffix(f, ">")
		if err != nil && !mac && !flags {
			return false
		}
	}
	return true
}

// ipLinkUp reads `ip link`'s flags and state: up when the UP flag is set
// and the state is not DOWN (a tunnel's state is UNKNOWN).
func ipLinkUp(flags, rest string) bool {
	if !strings.Contains(","+flags+",", ",UP,") {
		return false
	}
	return !strings.Contains(rest, " state DOWN") && !strings.Contains(rest, " state LOWERLAYERDOWN")
}

// openHost opens (or continues) a host block of kind.
func (p *paste) openHost(name string, no int, kind string, block **blockState) *blockState {
	if b := *block; b != nil && b.kind == kind && b.host != nil {
		b.last = no
		return b
	}
	p.closeBlock(block)
	b := &blockState{kind: kind, name: name, first: no, last: no, host: &hostAcc{cur: -1, kind: kind}}
	*block = b
	return b
}

// hostLine reads a line inside a host block; false ends the block.
//
// Long on purpose: a switch with one case per host tool's output (ip, ifconfig,
// ipconfig, Get-NetAdapter, ip rule).
func (p *paste) hostLine(name string, no int, b *blockState, trim string) bool {
	h := b.host
	switch b.kind {
	case kindIPAddr:
		if m := ipAddrHeadRE().FindStringSubmatch(trim); m != nil {
			h.begin(m[2], ipLinkUp(m[3], m[4]))
			return true
		}
		if m := ipAddrInetRE().FindStringSubmatch(trim); m != nil && h.curName != "" {
			if pf, err := netip.ParsePrefix(m[1]); err == nil {
				h.add(pf)
			}
			return true
		}
		if h.curName != "" && (strings.HasPrefix(trim, "link/") || strings.HasPrefix(trim, "valid_lft") || strings.HasPrefix(trim, "altname ")) {
			return true
		}
		if m := ipBriefRE().FindStringSubmatch(trim); m != nil && briefRest(m[3]) {
			h.begin(m[1], m[2] != "DOWN" && m[2] != "LOWERLAYERDOWN" && m[2] != "NOTPRESENT")
			for _, f := range strings.Fields(m[3]) {
				if pf, err := netip.ParsePrefix(f); err == nil {
					h.add(pf)
				}
			}
			h.flush()
			return true
		}
	case kindIfconfig:
		if m := ifconfigHeadRE().FindStringSubmatch(trim); m != nil {
			h.begin(m[1], strings.Contains(","+m[2]+",", ",UP,"))
			return true
		}
		if m := ifconfigOldRE().FindStringSubmatch(trim); m != nil {
			h.begin(m[1], false)
			return true
		}
		if h.curName == "" {
			return false
		}
		if m := ifconfigInetRE().FindStringSubmatch(trim); m != nil {
			if a, err := netip.ParseAddr(m[1]); err == nil {
				h.add(netip.PrefixFrom(a, maskBits(m[2])))
			}
			return true
		}
		if m := ifconfigInet6RE().FindStringSubmatch(trim); m != nil {
			bits, _ := strconv.Atoi(m[2] + m[3])
			if a, err := netip.ParseAddr(m[1]); err == nil && bits > 0 && bits <= 128 {
				h.add(netip.PrefixFrom(a, bits))
			}
			return true
		}
		if strings.HasPrefix(trim, "UP ") && h.curDown && h.cur < 0 {
			// net-tools 1.x: the interface is up after all.
			h.curDown = false
			h.ifs = append(h.ifs, probes.Interface{Name: safetext.New(h.curName), Bridge: isBridgeName(h.curName)})
			h.cur = len(h.ifs) - 1
			return true
		}
		if trim == "status: inactive" && h.cur >= 0 {
			// macOS: no link; its addresses carry nothing.
			h.ifs = h.ifs[:h.cur]
			h.cur, h.curDown = -1, true
			return true
		}
		for _, w := range []string{"options=", "ether ", "nd6 ", "media:", "status:", "groups:", "member:", "id ", "Interface:", "ifmaxaddr", "RX ", "TX ", "loop ", "unspec ", "tunnel ", "inet6 addr", "inet addr", "Interrupt:", "collisions", "txqueuelen", "scopeid"} {
			if strings.HasPrefix(trim, w) {
				return true
			}
		}
	case kindIPConfig:
		if trim == "" {
			return true // ipconfig puts a blank line after each adapter's name and between adapters
		}
		if m := ipconfigHeadRE().FindStringSubmatch(trim); m != nil {
			h.begin(m[1], true)
			return true
		}
		if m := ipconfigItemRE().FindStringSubmatch(trim); m != nil && h.curName != "" {
			v := strings.TrimSuffix(strings.TrimSuffix(m[2], "(Preferred)"), "(Deprecated)")
			switch m[1] {
			case "Media State":
				if strings.Contains(v, "disconnected") && h.cur >= 0 {
					h.ifs = h.ifs[:h.cur]
					h.cur, h.curDown = -1, true
				}
			case "Subnet Mask":
				if h.pend4.IsValid() {
					h.add(netip.PrefixFrom(h.pend4, maskBits(v)))
					h.pend4 = netip.Addr{}
				}
			case "IPv4 Address", "Autoconfiguration IPv4 Address":
				if a, err := netip.ParseAddr(v); err == nil && a.Is4() {
					h.pend4 = a
				}
			default:
				v, _, _ = strings.Cut(v, "%")
				if a, err := netip.ParseAddr(v); err == nil {
					h.add(netip.PrefixFrom(a, 64))
				}
			}
			return true
		}
		if h.curName != "" && (strings.Contains(trim, ". :") || strings.Contains(trim, " . . ")) {
			return true // ipconfig's other items (DNS suffix, gateway)
		}
		if trim == "Windows IP Configuration" {
			return true
		}
	case kindNetAdapt:
		if strings.HasPrefix(trim, "----") {
			return true
		}
		if m := netAdapterRowRE().FindStringSubmatch(trim); m != nil {
			name := adapterName(m[1])
			h.begin(name, m[3] == "Up")
			h.flush()
			return true
		}
	case kindIPRule:
		if m := ipRuleRE().FindStringSubmatch(trim); m != nil {
			p.ruleLine(b, m[2])
			return true
		}
	}
	return false
}

// adapterName is the adapter's name in a Get-NetAdapter row whose column
// padding was collapsed (its name and description run together): the
// first word, or a Hyper-V name up to its ")", or "Tailscale".
func adapterName(s string) string {
	if strings.HasPrefix(s, "vEthernet (") {
		if i := strings.IndexByte(s, ')'); i > 0 {
			return s[:i+1]
		}
	}
	w, _, _ := strings.Cut(s, " ")
	return w
}

// maskBits reads a netmask (0xffffff00 or 255.255.255.0) as a prefix
// length; 32 when it does not read.
func maskBits(m string) int {
	var v uint32
	if h, ok := strings.CutPrefix(m, "0x"); ok {
		x, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			return 32
		}
		v = uint32(x)
	} else {
		a, err := netip.ParseAddr(m)
		if err != nil || !a.Is4() {
			return 32
		}
		b := a.As4()
		v = uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	}
	n := 0
	for v&(1<<31) != 0 {
		n++
		v <<= 1
	}
	return n
}

// ruleLine reads one `ip rule` line's selector and action: tailscaled's
// bypass (its marked packets to the main table, before table 52:
// wgengine/router/osrouter/router_linux.go baseIPRules, or on Ubiquiti
// devices table 52 only for unmarked packets, ubntIPRules) and table 52.
func (p *paste) ruleLine(b *blockState, rest string) {
	h := b.host
	switch {
	case strings.Contains(rest, "fwmark 0x80000/0xff0000") && (strings.HasSuffix(rest, "lookup main") || strings.HasSuffix(rest, "table main")):
		h.kind = kindIPRule + " bypass"
	case strings.HasPrefix(rest, "not from") && strings.Contains(rest, "fwmark 0x80000/0xff0000") && (strings.HasSuffix(rest, "lookup 52") || strings.HasSuffix(rest, "table 52")):
		h.kind = kindIPRule + " bypass"
	case strings.HasSuffix(rest, "lookup 52") || strings.HasSuffix(rest, "table 52"):
		if h.kind == kindIPRule {
			h.kind = kindIPRule + " 52"
		}
	}
}

// routeLine reads an `ip route` line into tailscaled's tunnel: a subnet
// route (not a tailnet address) on the Tailscale interface, in table 52
// or printed from it. Other routes say nothing here and are recognised
// as the host's routes.
func (p *paste) routeLine(name string, no int, trim string) string {
	m := ipRouteRE().FindStringSubmatch(trim)
	if m == nil {
		return ""
	}
	dev := m[2]
	if !strings.HasPrefix(dev, "tailscale") && !strings.Contains(m[3], "table 52") {
		p.addInput(snapshot.Input{Name: name, Kind: "ip route", First: no, Last: no, Note: "this host's routes"})
		return "ip route"
	}
	pf, err := netip.ParsePrefix(m[1])
	if err != nil {
		if a, err2 := netip.ParseAddr(m[1]); err2 == nil {
			pf = netip.PrefixFrom(a, a.BitLen())
		} else {
			p.addInput(snapshot.Input{Name: name, Kind: "ip route", First: no, Last: no, Note: "this host's routes"})
			return "ip route"
		}
	}
	t := &p.th
	if !tailnetPrefix(pf) && len(t.routes) < 1024 && !containsRoute(t.routes, pf) {
		t.routes = append(t.routes, probes.HostRoute{Prefix: pf.Masked(), Dev: safetext.New(dev)})
	}
	p.addInput(snapshot.Input{Name: name, Kind: "ip route", First: no, Last: no, Note: "routes into tailscaled's tunnel (table 52: the subnet routes it accepted)"})
	return "ip route"
}

func containsRoute(rs []probes.HostRoute, pf netip.Prefix) bool {
	for _, r := range rs {
		if r.Prefix == pf.Masked() {
			return true
		}
	}
	return false
}

// tailnetPrefix reports a prefix inside the tailnet's own ranges
// (100.64.0.0/10, fd7a:115c:a1e0::/48): a peer's address, not a subnet
// route.
func tailnetPrefix(pf netip.Prefix) bool {
	for _, r := range []netip.Prefix{netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("fd7a:115c:a1e0::/48")} {
		if r.Bits() <= pf.Bits() && r.Contains(pf.Addr()) {
			return true
		}
	}
	return false
}

// closeHost ends a host block: its interfaces become a group of this
// input (one machine's, as far as the text shows), its rules a finding.
func (p *paste) closeHost(b *blockState) {
	h := b.host
	h.flush()
	t := &p.th
	note := ""
	switch {
	case b.kind == kindIPRule:
		switch h.kind {
		case kindIPRule + " bypass":
			t.bypass = boolp(true)
			note = "tailscaled's policy rules: its own marked packets skip table 52"
		case kindIPRule + " 52":
			t.bypass = boolp(false)
			note = "tailscaled's table 52 is looked up, but no rule sends its own marked packets to the main table first"
		default:
			note = "no rule of tailscaled's"
		}
	default:
		if len(h.ifs) == 0 && len(h.down) == 0 {
			return
		}
		if len(t.hosts) < 16 {
			t.hosts = append(t.hosts, h)
		}
		var up []string
		for _, ifc := range h.ifs {
			up = append(up, string(ifc.Name))
		}
		note = "interfaces up: " + strings.Join(up, ", ")
		if len(h.down) > 0 {
			note += "; down: " + strings.Join(h.down, ", ")
		}
	}
	p.addInput(snapshot.Input{Name: b.name, Kind: b.kind, First: b.first, Last: b.last, Note: safetext.Clean(clip(note))})
}
