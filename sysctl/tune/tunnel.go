package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
)

// TunnelMode says whether this host's tailnet TCP goes through the kernel.
type TunnelMode string

const (
	// TunnelKernel: tailscaled runs with a kernel TUN (tailscale0, utunN on
	// macOS); tailnet TCP is the kernel's, and its sysctls govern it.
	TunnelKernel TunnelMode = "kernel"
	// TunnelUserspace: tailscaled runs with --tun=userspace-networking.
	// Tailnet TCP ends inside tailscaled's own TCP/IP stack (gVisor's
	// netstack), which proxies it to local sockets on 127.0.0.1: the
	// kernel's buffers and congestion control never see it.
	TunnelUserspace TunnelMode = "userspace"
	// TunnelUnknown: nothing here says which.
	TunnelUnknown TunnelMode = "unknown"
)

// Words tailpath says about userspace networking, first, wherever it
// shows the tuning.
const (
	UserspaceSays  = "userspace networking: tailnet TCP runs in tailscaled's own stack; kernel buffers and congestion control do not apply to it"
	UserspaceScope = "kernel tuning here applies only to traffic outside the tailnet; the fix is a TUN for tailscaled:"
)

// Tunnel is how tailscaled carries this host's tailnet traffic, and why
// tailpath thinks so.
type Tunnel struct {
	Mode TunnelMode `json:"mode"`
	// Evidence are the facts checked: the one that decided first, then
	// the others in the order they were weighed.
	Evidence []string `json:"evidence"`
	// Fix is what turns a TUN on, for this platform; set for TunnelUserspace.
	Fix []string `json:"fix,omitempty"`
}

// DSM paths: the Tailscale package's start script and tailscale binary, as
// Tailscale builds the package (release/dist/synology/pkgs.go installs
// scripts/start-stop-status; cmd/tailscale/cli/configure-synology.go names
// /var/packages/Tailscale/target/bin).
const (
	DSMStartScript = "/var/packages/Tailscale/scripts/start-stop-status"
	DSMTailscale   = "/var/packages/Tailscale/target/bin/tailscale"
	devNetTun      = "/dev/net/tun"
)

// daemonTimeout bounds the LocalAPI question, so a wedged tailscaled
// cannot stall a gathering.
const daemonTimeout = 2 * time.Second

// tunnel decides r.Tunnel from, in order: tailscaled's own answer
// (LocalAPI Status.TUN, which tailscaled sets to !IsNetstack in
// ipnlocal.LocalBackend.updateStatusLocked), the TUN interface, and on
// Synology DSM the package's start script with /dev/net/tun. A fact that is
// missing leaves the mode unknown; nothing is guessed.
func (r *Report) tunnel(ctx context.Context, in Inputs) {
	t := Tunnel{Mode: TunnelUnknown}
	defer func() { r.Tunnel = t }()
	decide := func(m TunnelMode, why string) { // the deciding fact goes first
		t.Mode = m
		t.Evidence = append([]string{why}, t.Evidence...)
	}
	if in.DaemonTUN != nil {
		dctx, cancel := context.WithTimeout(ctx, daemonTimeout)
		tun, err := in.DaemonTUN(dctx)
		cancel()
		at := "tailscaled"
		if in.Daemon != "" {
			at += " (" + in.Daemon + ")"
		}
		switch {
		case err != nil:
			t.Evidence = append(t.Evidence, at+" did not answer: "+err.Error())
		case tun:
			decide(TunnelKernel, at+" reports Status.TUN true: a kernel TUN carries the tailnet")
		default:
			decide(TunnelUserspace, at+" reports Status.TUN false: it runs with --tun=userspace-networking")
		}
	}
	iface := r.interfaceEvidence(in)
	if t.Mode == TunnelUnknown && r.Link != nil {
		decide(TunnelKernel, iface)
	} else if iface != "" {
		t.Evidence = append(t.Evidence, iface)
	}
	if t.Mode == TunnelUnknown && r.Platform.Kind == sysctl.PlatformDSM {
		if why, userspace := dsmEvidence(in.Host, r.Platform); userspace {
			decide(TunnelUserspace, why)
		} else if why != "" {
			t.Evidence = append(t.Evidence, why)
		}
	}
	if t.Mode == TunnelUserspace {
		t.Fix = tunFix(r.Platform)
	}
}

// interfaceEvidence words what the TUN interface says: present (r.Link),
// absent (r.LinkErr), or nothing known.
func (r *Report) interfaceEvidence(in Inputs) string {
	switch {
	case r.Link != nil:
		return fmt.Sprintf("%s exists, a kernel TUN (mtu %d)", r.Link.Name, r.Link.MTU)
	case r.LinkErr != "":
		return "no " + sockdiag.TailscaleInterface + " interface: tailscaled is not running here, or runs in userspace-networking mode"
	}
	return ""
}

// dsmEvidence reads what Synology's Tailscale package does at start: on DSM
// 7 its start script adds --tun=userspace-networking whenever
// /dev/net/tun does not exist (release/dist/synology/files/scripts/
// start-stop-status in Tailscale's tree), and DSM 7 has no /dev/net/tun
// until `tailscale configure-host` creates it. userspace is true when the
// script is there with that clause and /dev/net/tun is missing.
func dsmEvidence(h sysctl.Host, p sysctl.Platform) (why string, userspace bool) {
	at := func(p string) string { return filepath.Join(rootOf(h), filepath.FromSlash(p)) }
	major, _ := strconv.Atoi(strings.SplitN(p.Version, ".", 2)[0])
	if major != 0 && major < 7 {
		return "DSM " + p.Version + ": the Tailscale package creates /dev/net/tun itself before DSM 7", false
	}
	b, err := os.ReadFile(at(DSMStartScript))
	if err != nil {
		return "the Tailscale package's start script (" + DSMStartScript + ") is not there: the package is not installed, or tailscaled was started otherwise", false
	}
	if !bytes.Contains(b, []byte("userspace-networking")) || !bytes.Contains(b, []byte(devNetTun)) {
		return DSMStartScript + " does not choose userspace networking by /dev/net/tun", false
	}
	if _, err := os.Stat(at(devNetTun)); err == nil {
		return "/dev/net/tun exists, so the package's start script does not force userspace networking (whether tailscaled got its TUN shows as tailscale0)", false
	}
	return "DSM 7 without /dev/net/tun: the Tailscale package's start script (" + DSMStartScript + ") then starts tailscaled with --tun=userspace-networking", true
}

// tunFix is what gives tailscaled a TUN on platform p.
func tunFix(p sysctl.Platform) []string {
	if p.Kind == sysctl.PlatformDSM {
		// Tailscale's KB 1131 (Synology: enable outbound connections) and
		// cmd/tailscale/cli/configure-synology.go: configure-host creates
		// /dev/net/tun and grants tailscaled CAP_NET_ADMIN; DSM 7 forgets
		// both at reboot, hence the boot-up task.
		return []string{
			"In DSM: Control Panel › Task Scheduler › Create › Triggered Task › User-defined script; user root, event Boot-up, script: " + DSMTailscale + " configure-host",
			"Run it once now (sudo " + DSMTailscale + " configure-host), then restart the package: sudo synosystemctl restart pkgctl-Tailscale.service (or stop and run Tailscale in Package Center)",
			"Run tailpath tune again: with a tailscale0 interface, tailnet TCP is the kernel's and these numbers apply to it",
		}
	}
	return []string{
		"Start tailscaled without --tun=userspace-networking: the default --tun=tailscale0 needs /dev/net/tun and root (or CAP_NET_ADMIN); in Tailscale's container image set TS_USERSPACE=false and pass the device /dev/net/tun with NET_ADMIN",
		"Run tailpath tune again: with a tailscale0 interface, tailnet TCP is the kernel's and these numbers apply to it",
	}
}

// rootOf is the directory h treats as "/".
func rootOf(h sysctl.Host) string {
	if h.Root == "" {
		return "/"
	}
	return h.Root
}

// sysfsLink reads tailscale0 from a sandbox root's /sys/class/net: the
// link when it is there, ErrNoLink when the directory lists interfaces but
// not that one, and ok false when the root has no /sys/class/net at all
// (then nothing is known).
func sysfsLink(h sysctl.Host, name string) (l sockdiag.Link, ok bool, err error) {
	dir := filepath.Join(rootOf(h), "sys", "class", "net")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return l, false, nil
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return l, true, fmt.Errorf("%s: %w under %s (tailscaled not running, or running in userspace-networking mode)", name, sockdiag.ErrNoLink, dir)
		}
		return l, true, err
	}
	l.Name = name
	if b, err := os.ReadFile(filepath.Join(p, "mtu")); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32); err == nil {
			l.MTU = uint32(n)
		}
	}
	if b, err := os.ReadFile(filepath.Join(p, "operstate")); err == nil {
		s := strings.TrimSpace(string(b))
		l.Up = s == "up" || s == "unknown" // a TUN without carrier reports unknown
	}
	return l, true, nil
}

// tailnetInterface finds an interface holding a Tailscale address on this
// machine when tailscale0 is not there: a TUN named otherwise (--tun=NAME),
// or macOS's utunN. A 100.64.0.0/10 address alone counts only on a utun or
// tailscale* interface, because carrier-grade NAT hands out that range too;
// an fd7a:115c:a1e0::/48 address is Tailscale's anywhere.
func tailnetInterface() (string, bool) {
	ifs, err := net.Interfaces()
	if err != nil {
		return "", false
	}
	tsV6 := netip.MustParsePrefix("fd7a:115c:a1e0::/48")
	for _, ifi := range ifs {
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		named := strings.HasPrefix(ifi.Name, "tailscale") || runtime.GOOS == "darwin" && strings.HasPrefix(ifi.Name, "utun")
		for _, a := range addrs {
			pfx, err := netip.ParsePrefix(a.String())
			if err != nil {
				continue
			}
			ip := pfx.Addr().Unmap()
			if tsV6.Contains(ip) || named && sockdiag.IsTailnet(ip) {
				return ifi.Name, true
			}
		}
	}
	return "", false
}
