package tune

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tailpath/tailpath/sysctl"
)

// Forwarding: whether this box forwards tailnet traffic (an exit node, a
// subnet router). Forwarded flows are TCP between two other hosts: this
// box's tcp_rmem, tcp_wmem and congestion control never see them.

// Sysctl keys the kernel forwards by (what tailscaled's
// net/netutil.CheckIPForwarding reads).
const (
	KeyIPv4Forward = "net.ipv4.ip_forward"
	KeyIPv6Forward = "net.ipv6.conf.all.forwarding"
)

// DaemonPrefs is what tune asks a running tailscaled beside Status.TUN:
// its version (Status.Version) and the routes it advertises (LocalAPI
// prefs, AdvertiseRoutes; 0.0.0.0/0 and ::/0 make an exit node).
type DaemonPrefs struct {
	Version         string         `json:"version,omitempty"`
	AdvertiseRoutes []netip.Prefix `json:"advertise_routes,omitempty"`
}

// Forwarding is what tune knows about this box forwarding traffic.
type Forwarding struct {
	// IPv4 and IPv6 are net.ipv4.ip_forward and
	// net.ipv6.conf.all.forwarding as read ("1", "0"); "" when unreadable.
	IPv4 string `json:"ipv4_forward,omitempty"`
	IPv6 string `json:"ipv6_forward,omitempty"`
	// Routes are the subnet routes advertised (the exit routes left out);
	// ExitNode is true when 0.0.0.0/0 and ::/0 are advertised.
	Routes   []netip.Prefix `json:"advertised_routes,omitempty"`
	ExitNode bool           `json:"exit_node,omitempty"`
	// From names where the routes came from (tailscaled's LocalAPI prefs,
	// or a root's tailscaled.state); "" when nothing said (Err says why).
	From string `json:"from,omitempty"`
	Err  string `json:"error,omitempty"`
}

// Forwards reports whether the box advertises routes or an exit node.
func (f *Forwarding) Forwards() bool { return f != nil && (f.ExitNode || len(f.Routes) > 0) }

// Role words what the box is: "an exit node and a subnet router for
// 192.168.1.0/24", "a subnet router for …", "an exit node".
func (f *Forwarding) Role() string {
	var routes []string
	for _, r := range f.Routes {
		routes = append(routes, r.String())
	}
	switch {
	case f.ExitNode && len(routes) > 0:
		return "an exit node and a subnet router for " + strings.Join(routes, ", ")
	case f.ExitNode:
		return "an exit node"
	case len(routes) > 0:
		return "a subnet router for " + strings.Join(routes, ", ")
	}
	return ""
}

// setRoutes splits advertised routes into subnet routes and the exit node
// (tailscale's exit node advertises both 0.0.0.0/0 and ::/0:
// tsaddr.ContainsExitRoutes).
func (f *Forwarding) setRoutes(adv []netip.Prefix) {
	var v4, v6 bool
	for _, p := range adv {
		switch {
		case p.Bits() == 0 && p.Addr().Is4():
			v4 = true
		case p.Bits() == 0:
			v6 = true
		default:
			f.Routes = append(f.Routes, p.Masked())
		}
	}
	f.ExitNode = v4 && v6
	sort.Slice(f.Routes, func(i, j int) bool { return f.Routes[i].String() < f.Routes[j].String() })
}

// StateFiles are where tailscaled keeps its state (prefs included), as
// each system's package starts it: Linux packages' --state default
// (paths.DefaultTailscaledStateFile), Synology's package, OpenWrt's
// package, SierraSoftworks/tailscale-unifi (--state /data/tailscale/…)
// and jamesog/tailscale-edgeos (/config/tailscale).
var StateFiles = []string{
	"/var/lib/tailscale/tailscaled.state",
	"/var/packages/Tailscale/var/tailscaled.state",
	"/etc/tailscale/tailscaled.state",
	"/data/tailscale/tailscaled.state",
	"/config/tailscale/tailscaled.state",
}

// maxStateFile bounds how much of a state file is read.
const maxStateFile = 4 << 20

// ReadStatePrefs reads the current profile's advertised routes from a
// tailscaled state file: a JSON object of base64 values
// (ipn/store.FileStore), whose "_current-profile" names the key holding
// that profile's prefs (ipn.Prefs JSON); "_daemon" holds them on
// tailscaled from before profiles (ipn.LegacyGlobalDaemonStateKey). Only
// AdvertiseRoutes is decoded: the file also holds private keys, which
// tailpath neither decodes nor prints.
func ReadStatePrefs(b []byte) ([]netip.Prefix, error) {
	var store map[string][]byte
	if err := json.Unmarshal(b, &store); err != nil {
		return nil, fmt.Errorf("not a tailscaled state file: %v", err)
	}
	key := "_daemon"
	if cur, ok := store["_current-profile"]; ok && len(cur) > 0 && len(cur) < 256 {
		key = string(cur)
	}
	raw, ok := store[key]
	if !ok {
		return nil, fmt.Errorf("no prefs under %q", safeName(key))
	}
	var prefs struct {
		AdvertiseRoutes []netip.Prefix
	}
	if err := json.Unmarshal(raw, &prefs); err != nil {
		return nil, fmt.Errorf("prefs under %q: %v", safeName(key), err)
	}
	return prefs.AdvertiseRoutes, nil
}

// forwarding gathers r.Forwarding: ip_forward from the root's /proc/sys,
// the routes from tailscaled's prefs (in.Prefs, asked beside Status.TUN)
// or, for a root, its state file.
func (r *Report) forwarding(ctx context.Context, in Inputs, dp *DaemonPrefs, dpErr error) {
	f := &Forwarding{}
	if v, err := in.Host.ReadRaw(KeyIPv4Forward); err == nil {
		f.IPv4 = sysctl.Normalize(v)
	}
	if v, err := in.Host.ReadRaw(KeyIPv6Forward); err == nil {
		f.IPv6 = sysctl.Normalize(v)
	}
	switch {
	case dp != nil:
		f.setRoutes(dp.AdvertiseRoutes)
		f.From = "tailscaled's prefs (LocalAPI)"
		if in.Daemon != "" {
			f.From = "tailscaled's prefs (LocalAPI at " + in.Daemon + ")"
		}
	case in.Sandbox:
		// A root's own state file, even when a tailscaled was asked (a
		// test's fake LocalAPI need not know prefs).
		for _, p := range StateFiles {
			b, err := readLimited(filepath.Join(rootOf(in.Host), filepath.FromSlash(p)), maxStateFile)
			if err != nil {
				continue
			}
			routes, err := ReadStatePrefs(b)
			if err != nil {
				f.Err = p + ": " + err.Error()
				break
			}
			f.setRoutes(routes)
			f.From = "the root's " + p
			break
		}
		if f.From == "" && f.Err == "" {
			f.Err = "advertised routes unknown: no tailscaled state file in the root"
		}
	case dpErr != nil:
		f.Err = "tailscaled's prefs: " + dpErr.Error()
	default:
		f.Err = "tailscaled was not asked, so the advertised routes are unknown"
	}
	r.Forwarding = f
}

// readLimited reads at most limit bytes of a regular file.
func readLimited(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// Package databases that record tailscale's version on a root: dpkg
// (Debian, Raspberry Pi OS, UniFi OS, EdgeOS), opkg and apk (OpenWrt),
// Synology's package INFO.
var versionFiles = []struct {
	path  string
	parse func([]byte) string
}{
	{"/var/lib/dpkg/status", func(b []byte) string { return stanzaVersion(b, "Package: tailscale", "Version: ") }},
	{"/usr/lib/opkg/status", func(b []byte) string { return stanzaVersion(b, "Package: tailscale", "Version: ") }},
	{"/lib/apk/db/installed", func(b []byte) string { return stanzaVersion(b, "P:tailscale", "V:") }},
	{"/var/packages/Tailscale/INFO", func(b []byte) string { return sysctl.ParseShellVars(b)["version"] }},
}

// stanzaVersion finds the version line of the stanza whose line is head.
func stanzaVersion(b []byte, head, prefix string) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 4096), 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			in = false
		case line == head:
			in = true
		case in && strings.HasPrefix(line, prefix):
			return strings.TrimSpace(strings.TrimPrefix(line, prefix))
		}
	}
	return ""
}

// rootTailscaleVersion is tailscale's version from a root's package
// database, and the file it came from; "" when none says.
func rootTailscaleVersion(h sysctl.Host) (string, string) {
	for _, vf := range versionFiles {
		b, err := readLimited(filepath.Join(rootOf(h), filepath.FromSlash(vf.path)), 16<<20)
		if err != nil {
			continue
		}
		if v := cleanVersion(vf.parse(b)); v != "" {
			return v, vf.path
		}
	}
	return "", ""
}

// cleanVersion keeps a version string to the characters versions use.
func cleanVersion(v string) string {
	v = strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '+' || r == '~' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, v)
	if len(v) > 40 {
		v = v[:40]
	}
	return v
}
