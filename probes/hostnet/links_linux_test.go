//go:build linux

package hostnet

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// linksChild marks the re-executed test binary that runs inside its own
// network namespace.
const linksChild = "TAILPATH_LINKS_CHILD"

// TestReadLinks reads a real host's links and neighbour table in a
// private network namespace: a veth link with 192.168.1.20/24, a
// point-to-point address 10.9.0.1 with peer 10.9.0.2, an IPv6 address,
// and a link that is down; a permanent neighbour entry for 192.168.1.77
// (as a host that answered ARP) and a failed one for 192.168.1.99
// (nothing answered): only the first is on the link. The interfaces and
// their addresses are the standard library's (net.Interfaces, each
// interface's Addrs), read in the same namespace.
func TestReadLinks(t *testing.T) {
	if os.Getenv(linksChild) != "" {
		for _, args := range [][]string{
			{"link", "add", "lan0", "type", "veth", "peer", "name", "lan1"},
			{"link", "set", "lan0", "up"},
			{"addr", "add", "192.168.1.20/24", "dev", "lan0"},
			{"neigh", "add", "192.168.1.77", "lladdr", "02:00:00:00:00:77", "dev", "lan0", "nud", "permanent"},
			{"neigh", "add", "192.168.1.99", "dev", "lan0", "nud", "failed"},
			{"addr", "add", "10.9.0.1", "peer", "10.9.0.2/32", "dev", "lan0"},
			{"addr", "add", "fd00:9::1/64", "dev", "lan0", "nodad"},
			{"link", "set", "lo", "up"},
			{"link", "add", "docker0", "type", "bridge"},
		} {
			if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				t.Fatalf("ip %v: %v: %s", args, err, out)
			}
		}
		var h probes.HostFacts
		readLinks(&h)
		if h.InterfacesErr != "" || !h.NeighborsRead {
			t.Fatal(h.InterfacesErr, h.NeighborsErr)
		}
		ifs, got := h.Interfaces, h.Neighbors
		if want := stdInterfaces(t); !slices.EqualFunc(ifs, want, func(a, b probes.Interface) bool {
			return a.Name == b.Name && slices.Equal(a.Addrs, b.Addrs) && a.Bridge == b.Bridge && a.Tailscale == b.Tailscale
		}) {
			t.Fatalf("interfaces\n%+v\nthe standard library's\n%+v", ifs, want)
		}
		var lan0 *probes.Interface
		for i := range ifs {
			if ifs[i].Name == "lan0" {
				lan0 = &ifs[i]
			}
			if ifs[i].Name == "docker0" {
				t.Errorf("docker0 is down, listed: %+v", ifs[i])
			}
		}
		for _, p := range []string{"192.168.1.20/24", "10.9.0.1/32", "fd00:9::1/64"} {
			if lan0 == nil || !slices.Contains(lan0.Addrs, netip.MustParsePrefix(p)) {
				t.Errorf("lan0 %+v lacks %s", lan0, p)
			}
		}
		if !slices.Contains(got, netip.MustParseAddr("192.168.1.77")) || slices.Contains(got, netip.MustParseAddr("192.168.1.99")) {
			t.Fatalf("neighbours %v, want 192.168.1.77 and not 192.168.1.99", got)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skipf("skipping: a network namespace needs root (euid %d)", os.Geteuid())
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipping: needs ip (Debian: iproute2)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadLinks$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), linksChild+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("in a network namespace: %v\n%s", err, out)
	}
}

// stdInterfaces is what the standard library says of the interfaces that
// are up, as probes.Interface.
func stdInterfaces(t *testing.T) []probes.Interface {
	t.Helper()
	nifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var out []probes.Interface
	for _, ni := range nifs {
		if ni.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ni.Addrs()
		if err != nil {
			t.Fatal(err)
		}
		ifc := probes.Interface{Name: safetext.New(ni.Name), Tailscale: IsTailscaleName(ni.Name), Bridge: IsBridgeName(ni.Name)}
		for _, a := range addrs {
			ipn := a.(*net.IPNet)
			ip, _ := netip.AddrFromSlice(ipn.IP)
			ones, _ := ipn.Mask.Size()
			ifc.Addrs = append(ifc.Addrs, netip.PrefixFrom(ip.Unmap(), ones))
		}
		out = append(out, ifc)
	}
	return out
}
