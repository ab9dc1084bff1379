package tune

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/sysctl"
)

// Offloads: the interface features that decide how a forwarding box
// carries tailnet traffic. The UDP GRO forwarding check is Tailscale's own
// (tailscale.com/net/netkernelconf.CheckUDPGROForwarding, behind
// tailscaled's "UDP GRO forwarding is suboptimally configured" warning that
// `tailscale up`/`set` prints when routes are advertised); TSO on a bridge
// in the forwarded path is the UniFi subnet-router case
// (tailscale/tailscale#21117).

// Feature names as the kernel's ethtool string set spells them (what
// `ethtool -k` prints, and safchain/ethtool's Features keys).
const (
	FeatUDPGROForwarding = "rx-udp-gro-forwarding" // netkernelconf's rxWantFeature
	FeatGROList          = "rx-gro-list"           // netkernelconf's rxDoNotWantFeature
	FeatTUNUDPSeg        = "tx-udp-segmentation"   // netkernelconf's txFeature
	FeatTSO              = "tx-tcp-segmentation"
	FeatTSO6             = "tx-tcp6-segmentation"
	FeatGRO              = "rx-gro"
	FeatGSO              = "tx-generic-segmentation"
)

// KBUDPGRO is Tailscale's guide to the setting (KB 1320, "Linux
// optimizations for subnet routers and exit nodes"); netkernelconf's
// warning links it as https://tailscale.com/s/ethtool-config-udp-gro.
const KBUDPGRO = "https://tailscale.com/kb/1320/performance-best-practices#linux-optimizations-for-subnet-routers-and-exit-nodes"

// EthtoolFile is where a --root copy keeps an interface's features: the
// output of `ethtool -k IF` saved as ROOT/sys/class/net/IF/ethtool-k (no
// real sysfs has this file; it stands in for the ethtool read).
const EthtoolFile = "ethtool-k"

// Iface is one interface tune looked at: its role in the path, whether it
// is a bridge, and its offload features.
type Iface struct {
	Name string `json:"name"`
	// Role: "wan" (the default route), "tun" (tailscaled's TUN), or
	// "lan PREFIX" (where an advertised route leaves this box).
	Roles []string `json:"roles"`
	// Bridge is true for a Linux bridge (sysfs IF/bridge); Ports are its
	// ports (IF/brif), sorted.
	Bridge bool     `json:"bridge,omitempty"`
	Ports  []string `json:"ports,omitempty"`
	// Features are the offloads read (on/off), by kernel name; nil when
	// they could not be read (FeaturesErr says why).
	Features    map[string]bool `json:"features,omitempty"`
	FeaturesErr string          `json:"features_error,omitempty"`
}

// On reports a feature's state; known is false when it was not read or
// the interface does not have it.
func (i Iface) On(feature string) (on, known bool) {
	if i.Features == nil {
		return false, false
	}
	on, known = i.Features[feature]
	return on, known
}

// Offloads is what tune read of the interfaces that carry tailnet traffic.
type Offloads struct {
	// WAN is the default-route interface ("" unknown), WANFrom where that
	// came from (/proc/net/route or /proc/net/ipv6_route).
	WAN     string `json:"wan,omitempty"`
	WANFrom string `json:"wan_from,omitempty"`
	// TUN is tailscaled's TUN interface ("" when there is none).
	TUN string `json:"tun,omitempty"`
	// Ifaces are the interfaces read, WAN and TUN first.
	Ifaces []Iface `json:"interfaces,omitempty"`
	// From names how features were read: "ethtool (SIOCETHTOOL)" or the
	// root's ethtool-k files.
	From string `json:"from,omitempty"`
	// UDPGRO is Tailscale's UDP GRO forwarding check on (TUN, WAN); nil
	// when there is no TUN or WAN to check.
	UDPGRO *GROCheck `json:"udp_gro_forwarding,omitempty"`
}

// Iface returns the interface named name, or nil.
func (o *Offloads) Iface(name string) *Iface {
	if o == nil {
		return nil
	}
	for i := range o.Ifaces {
		if o.Ifaces[i].Name == name {
			return &o.Ifaces[i]
		}
	}
	return nil
}

// GROCheck is the outcome of Tailscale's UDP GRO forwarding check.
type GROCheck struct {
	// Suboptimal is true when the check warns; Warning is its text.
	Suboptimal bool   `json:"suboptimal"`
	Warning    string `json:"warning,omitempty"`
	// Err is the check's own error (it could not read the features).
	Err string `json:"error,omitempty"`
	// NotApplicable says why the check passes without judging (the TUN
	// lacks tx-udp-segmentation, which Linux ≥ 6.2 offers, or the WAN
	// lacks rx-udp-gro-forwarding), as netkernelconf does.
	NotApplicable string `json:"not_applicable,omitempty"`
	// By names who judged: "netkernelconf.CheckUDPGROForwarding" on the
	// real machine, or tailpath's copy of its rules on a root's files.
	By string `json:"by"`
}

// JudgeUDPGRO applies netkernelconf.CheckUDPGROForwarding's rules
// (net/netkernelconf/netkernelconf_linux.go, tailscale.com v1.102.5) to
// features already read: no verdict unless the TUN has
// tx-udp-segmentation on and the WAN has rx-udp-gro-forwarding at all;
// then suboptimal unless rx-udp-gro-forwarding is on and rx-gro-list off.
// Its warning text is Tailscale's. On the real machine tune calls
// netkernelconf itself; this judges a root's files the same way (a netns
// test holds the two to the same answer).
func JudgeUDPGRO(tun, wan Iface) GROCheck {
	g := GROCheck{By: "tailpath's copy of netkernelconf.CheckUDPGROForwarding's rules"}
	if on, known := tun.On(FeatTUNUDPSeg); !on {
		g.NotApplicable = noTUNUDPSeg(tun.Name, known)
		if tun.Features == nil {
			g.NotApplicable = tun.Name + "'s features are unknown: " + orUnknown(tun.FeaturesErr)
		}
		return g
	}
	want, ok := wan.On(FeatUDPGROForwarding)
	if !ok {
		g.NotApplicable = wan.Name + " has no " + FeatUDPGROForwarding + " feature to turn on"
		return g
	}
	if list, _ := wan.On(FeatGROList); !want || list {
		g.Suboptimal = true
		g.Warning = udpGROWarning(wan.Name)
	}
	return g
}

// noTUNUDPSeg says why the UDP GRO forwarding check does not apply: the
// TUN has no UDP segmentation (known: the feature is there but off).
func noTUNUDPSeg(tun string, known bool) string {
	state := "has no " + FeatTUNUDPSeg
	if known {
		state = "has " + FeatTUNUDPSeg + " off"
	}
	return tun + " " + state + " (TUN UDP segmentation: Linux ≥ 6.2): UDP GRO forwarding would gain nothing, so Tailscale does not check it"
}

// udpGROWarning is netkernelconf's warning text for interface name.
func udpGROWarning(name string) string {
	return fmt.Sprintf("UDP GRO forwarding is suboptimally configured on %s, UDP forwarding throughput capability will increase with a configuration change.\nSee https://tailscale.com/s/ethtool-config-udp-gro", name)
}

// UDPGROCommand is the command Tailscale's KB 1320 gives for wan.
func UDPGROCommand(wan string) string {
	return "ethtool -K " + wan + " rx-udp-gro-forwarding on rx-gro-list off"
}

// ParseEthtoolK reads `ethtool -k IF` output into kernel feature names:
// "name: on|off [fixed|requested on]" lines, ethtool's own aliases for
// kernel strings (generic-receive-offload is rx-gro) mapped back, group
// lines (tcp-segmentation-offload) dropped. Lines it does not know are
// skipped.
func ParseEthtoolK(b []byte) map[string]bool {
	alias := map[string]string{
		"generic-receive-offload":      FeatGRO,
		"generic-segmentation-offload": FeatGSO,
		"large-receive-offload":        "rx-lro",
		"rx-checksumming":              "rx-checksum",
		"scatter-gather":               "",
		"tcp-segmentation-offload":     "",
		"tx-checksumming":              "",
		"udp-fragmentation-offload":    "tx-udp-fragmentation",
		"rx-vlan-offload":              "rx-vlan-hw-parse",
		"tx-vlan-offload":              "tx-vlan-hw-insert",
		"ntuple-filters":               "rx-ntuple-filter",
		"receive-hashing":              "rx-hashing",
	}
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, rest, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "Features for") || strings.ContainsAny(name, " \t") {
			continue
		}
		state := strings.Fields(rest)
		if len(state) == 0 || state[0] != "on" && state[0] != "off" {
			continue
		}
		if a, ok := alias[name]; ok {
			if a == "" {
				continue
			}
			name = a
		}
		out[safeName(name)] = state[0] == "on"
	}
	return out
}

// safeName keeps a feature name to the characters feature names use.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// Route is one IPv4 or IPv6 route from /proc/net/route or ipv6_route.
type Route struct {
	Iface  string
	Prefix netip.Prefix
	Metric uint32
}

// ParseRouteV4 reads /proc/net/route (the kernel's main table), keeping
// routes that are up. The kernel prints each address as a host-order
// 32-bit number, so the bytes read in network order on a big-endian
// machine (MIPS routers) and reversed on a little-endian one; the order is
// the one in which every netmask is a prefix (little-endian when nothing
// tells them apart: the default route reads the same either way).
func ParseRouteV4(b []byte) []Route {
	type row struct {
		iface     string
		dst, mask [4]byte
		metric    uint32
	}
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(b))
	first := true
	for sc.Scan() {
		if first {
			first = false // header
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) < 8 {
			continue
		}
		dst, err1 := hex.DecodeString(f[1])
		mask, err2 := hex.DecodeString(f[7])
		flags, err3 := strconv.ParseUint(f[3], 16, 32)
		metric, err4 := strconv.ParseUint(f[6], 10, 32)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(dst) != 4 || len(mask) != 4 || flags&1 == 0 {
			continue
		}
		rows = append(rows, row{safeIface(f[0]), [4]byte(dst), [4]byte(mask), uint32(metric)})
	}
	rev := func(a [4]byte) [4]byte { return [4]byte{a[3], a[2], a[1], a[0]} }
	little, big := true, true
	for _, r := range rows {
		little = little && prefixLen(rev(r.mask)) >= 0
		big = big && prefixLen(r.mask) >= 0
	}
	order := func(a [4]byte) [4]byte { return rev(a) }
	if big && !little {
		order = func(a [4]byte) [4]byte { return a }
	}
	var out []Route
	for _, r := range rows {
		bits := prefixLen(order(r.mask))
		if bits < 0 {
			continue
		}
		p, err := netip.AddrFrom4(order(r.dst)).Prefix(bits)
		if err != nil {
			continue
		}
		out = append(out, Route{Iface: r.iface, Prefix: p, Metric: r.metric})
	}
	return out
}

// prefixLen is a network-order netmask's prefix length; -1 when it is not
// a prefix.
func prefixLen(mask [4]byte) int {
	n, done := 0, false
	for _, b := range mask {
		for i := 7; i >= 0; i-- {
			switch bit := b&(1<<i) != 0; {
			case bit && done:
				return -1
			case bit:
				n++
			default:
				done = true
			}
		}
	}
	return n
}

// ParseRouteV6 reads /proc/net/ipv6_route: destination, prefix length,
// source, source length, next hop, metric, refcount, use, flags, device.
func ParseRouteV6(b []byte) []Route {
	var out []Route
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || len(f[0]) != 32 {
			continue
		}
		dst, err := hex.DecodeString(f[0])
		bits, err2 := strconv.ParseUint(f[1], 16, 8)
		metric, err3 := strconv.ParseUint(f[5], 16, 32)
		flags, err4 := strconv.ParseUint(f[8], 16, 32)
		if err != nil || err2 != nil || err3 != nil || err4 != nil || bits > 128 || flags&1 == 0 || f[9] == "lo" {
			continue
		}
		p, err := netip.AddrFrom16([16]byte(dst)).Prefix(int(bits))
		if err != nil {
			continue
		}
		out = append(out, Route{Iface: safeIface(f[9]), Prefix: p, Metric: uint32(metric)})
	}
	return out
}

// safeIface keeps an interface name to what Linux allows in one (no '/'
// or whitespace; IFNAMSIZ 16 with its NUL).
func safeIface(s string) string {
	s = strings.Map(func(r rune) rune {
		if r <= ' ' || r == '/' || r == 0x7f || r > 0x7e {
			return -1
		}
		return r
	}, s)
	if len(s) > 15 {
		s = s[:15]
	}
	if s == "." || s == ".." {
		return ""
	}
	return s
}

// DefaultRoute is the interface of the lowest-metric default route.
func DefaultRoute(routes []Route) string {
	best, name := uint32(0), ""
	for _, r := range routes {
		if r.Prefix.Bits() == 0 && (name == "" || r.Metric < best) {
			best, name = r.Metric, r.Iface
		}
	}
	return name
}

// RouteFor is the interface the most specific route covering p leaves by
// (a longest-prefix match that is not the default route); "" when only
// the default route or nothing covers it.
func RouteFor(routes []Route, p netip.Prefix) string {
	best, name := -1, ""
	for _, r := range routes {
		if r.Prefix.Bits() == 0 || r.Prefix.Addr().Is4() != p.Addr().Is4() || r.Prefix.Bits() > p.Bits() || !r.Prefix.Contains(p.Addr()) {
			continue
		}
		if r.Prefix.Bits() > best {
			best, name = r.Prefix.Bits(), r.Iface
		}
	}
	return name
}

// maxProcNet bounds how much of /proc/net/route and ipv6_route is read.
const maxProcNet = 4 << 20

// readRoutes reads the IPv4 and IPv6 routes under h's /proc.
func readRoutes(h sysctl.Host) (v4, v6 []Route) {
	proc := h.Proc
	if proc == "" {
		proc = "/proc"
	}
	read := func(name string) []byte {
		f, err := os.Open(filepath.Join(proc, "net", name))
		if err != nil {
			return nil
		}
		defer f.Close()
		b, _ := io.ReadAll(io.LimitReader(f, maxProcNet))
		return b
	}
	return ParseRouteV4(read("route")), ParseRouteV6(read("ipv6_route"))
}

// sysClassNet is the sysfs directory of h's interfaces.
func sysClassNet(h sysctl.Host) string {
	return filepath.Join(rootOf(h), "sys", "class", "net")
}

// bridgeOf reads whether name is a bridge and its ports from sysfs.
func bridgeOf(h sysctl.Host, name string) (bool, []string) {
	dir := filepath.Join(sysClassNet(h), name)
	if fi, err := os.Stat(filepath.Join(dir, "bridge")); err != nil || !fi.IsDir() {
		return false, nil
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "brif"))
	var ports []string
	for _, e := range ents {
		if n := safeIface(e.Name()); n != "" {
			ports = append(ports, n)
		}
	}
	sort.Strings(ports)
	return true, ports
}

// readEthtoolFile reads a root's stand-in for the ethtool read.
func readEthtoolFile(h sysctl.Host, name string) (map[string]bool, error) {
	p := filepath.Join(sysClassNet(h), name, EthtoolFile)
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("no `ethtool -k %s` saved in the root (sys/class/net/%s/%s)", name, name, EthtoolFile)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, err
	}
	return ParseEthtoolK(b), nil
}

// offloads reads the interfaces that carry tailnet traffic: the default
// route, the TUN, and where each advertised route leaves; their bridges
// and features (ethtool on the real machine, ROOT/sys/class/net/IF/ethtool-k
// in a root); and Tailscale's UDP GRO forwarding check on (TUN, WAN).
func (r *Report) offloads(in Inputs) {
	o := &Offloads{}
	v4, v6 := readRoutes(in.Host)
	if o.WAN = DefaultRoute(v4); o.WAN != "" {
		o.WANFrom = "/proc/net/route"
	} else if o.WAN = DefaultRoute(v6); o.WAN != "" {
		o.WANFrom = "/proc/net/ipv6_route"
	}
	if r.Link != nil {
		o.TUN = r.Link.Name
	}
	roles := map[string][]string{}
	var order []string
	add := func(name, role string) {
		if name == "" {
			return
		}
		if _, ok := roles[name]; !ok {
			order = append(order, name)
		}
		roles[name] = append(roles[name], role)
	}
	add(o.WAN, "wan")
	add(o.TUN, "tun")
	if f := r.Forwarding; f != nil {
		for _, p := range f.Routes {
			routes := v4
			if p.Addr().Is6() {
				routes = v6
			}
			add(RouteFor(routes, p), "lan "+p.String())
		}
	}
	if len(order) == 0 {
		return
	}
	live := !in.Sandbox
	o.From = "the root's sys/class/net/IF/" + EthtoolFile
	if live {
		o.From = "ethtool (SIOCETHTOOL)"
	}
	for _, name := range order {
		i := Iface{Name: name, Roles: roles[name]}
		i.Bridge, i.Ports = bridgeOf(in.Host, name)
		var err error
		if live {
			i.Features, err = liveFeatures(name)
		} else {
			i.Features, err = readEthtoolFile(in.Host, name)
		}
		if err != nil {
			i.Features, i.FeaturesErr = nil, err.Error()
		}
		o.Ifaces = append(o.Ifaces, i)
	}
	if o.TUN != "" && o.WAN != "" {
		var g GROCheck
		if live {
			g = liveUDPGRO(o.TUN, o.WAN)
		} else {
			g = JudgeUDPGRO(*o.Iface(o.TUN), *o.Iface(o.WAN))
		}
		o.UDPGRO = &g
	}
	r.Offloads = o
}
