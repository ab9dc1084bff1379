//go:build linux

package hostnet

import (
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

// neighChild marks the re-executed test binary that runs inside its own
// network namespace.
const neighChild = "TAILPATH_NEIGH_CHILD"

// TestNeighbors reads a real neighbour table in a private network
// namespace: a veth link with 192.168.1.20/24, a permanent entry for
// 192.168.1.77 (as a host that answered ARP) and a failed one for
// 192.168.1.99 (nothing answered): only the first is on the link.
func TestNeighbors(t *testing.T) {
	if os.Getenv(neighChild) != "" {
		for _, args := range [][]string{
			{"link", "add", "lan0", "type", "veth", "peer", "name", "lan1"},
			{"link", "set", "lan0", "up"},
			{"addr", "add", "192.168.1.20/24", "dev", "lan0"},
			{"neigh", "add", "192.168.1.77", "lladdr", "02:00:00:00:00:77", "dev", "lan0", "nud", "permanent"},
			{"neigh", "add", "192.168.1.99", "dev", "lan0", "nud", "failed"},
		} {
			if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				t.Fatalf("ip %v: %v: %s", args, err, out)
			}
		}
		got, err := neighbors()
		if err != nil {
			t.Fatal(err)
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
	cmd := exec.Command(os.Args[0], "-test.run=^TestNeighbors$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), neighChild+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("in a network namespace: %v\n%s", err, out)
	}
}
