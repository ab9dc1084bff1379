package tune

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/internal/netnstest"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
)

// TestOffloadsNetns: the offloads tune reads of real kernel interfaces in
// a private network namespace (and a private /sys): a subnet router whose
// route leaves by a bridge, a default route by another link, and a TUN
// opened with the offloads wireguard-go asks for. The bridge, its ports
// and its TSO are read as the kernel has them (turned on and off through
// ethtool and read back), and tailpath's copy of Tailscale's UDP GRO
// forwarding rules (JudgeUDPGRO, used on roots) gives netkernelconf's own
// answer in every state: not applicable without TUN UDP segmentation,
// suboptimal, and as recommended.
func TestOffloadsNetns(t *testing.T) {
	if netnstest.Scenario() != "" {
		t.Skip("running as a namespace child")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipping: needs the ip command (iproute2) to build the interfaces")
	}
	out := netnstest.Run(t, "TestOffloadsChild", "offloads", true)
	if !strings.Contains(out, "OK offloads") {
		t.Fatalf("child output:\n%s", out)
	}
	t.Logf("child:\n%s", out)
}

// TUN offload flags (linux/if_tun.h), as wireguard-go's tun_linux.go sets
// them on tailscaled's TUN.
const (
	tunFCSUM = 0x01
	tunFTSO4 = 0x02
	tunFTSO6 = 0x04
	tunFUSO4 = 0x20
	tunFUSO6 = 0x40
)

// openTUN creates a TUN named name with a virtio_net_hdr and the given
// offloads, up, and returns its file (the device lives while it is open).
func openTUN(t *testing.T, name string, offloads int) *os.File {
	t.Helper()
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("skipping: no /dev/net/tun: %v", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		t.Fatal(err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI | unix.IFF_VNET_HDR)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		t.Fatalf("TUNSETIFF: %v", err)
	}
	if err := unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, offloads); err != nil {
		t.Fatalf("TUNSETOFFLOAD %#x: %v (this kernel may predate TUN UDP segmentation, Linux 6.2)", offloads, err)
	}
	run(t, "ip link set "+name+" up")
	return os.NewFile(uintptr(fd), "/dev/net/tun")
}

func run(t *testing.T, cmd string) {
	t.Helper()
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
}

func TestOffloadsChild(t *testing.T) {
	if netnstest.Scenario() != "offloads" {
		t.Skip("helper for TestOffloadsNetns; runs only in its re-executed child")
	}
	// A /sys of this network namespace: sysfs shows the namespace of the
	// process that mounts it.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		t.Fatalf("make / private: %v", err)
	}
	if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
		t.Fatalf("mount sysfs: %v", err)
	}
	run(t, "ip link set lo up")
	run(t, "ip link add br0 type bridge && ip link add lan0 type veth peer name lan1 && ip link set lan0 master br0")
	run(t, "ip link set lan0 up && ip link set lan1 up && ip link set br0 up && ip addr add 192.168.77.1/24 dev br0")
	run(t, "ip link add wan0 type veth peer name wan1 && ip link set wan0 up && ip link set wan1 up")
	run(t, "ip addr add 198.51.100.2/24 dev wan0 && ip route add default via 198.51.100.1 dev wan0")

	e, err := ethtool.NewEthtool()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	set := func(iface string, f map[string]bool) {
		t.Helper()
		if err := e.Change(iface, f); err != nil {
			t.Fatalf("ethtool change %s %v: %v", iface, f, err)
		}
	}

	gather := func() *Offloads {
		r := Report{Forwarding: &Forwarding{Routes: []netip.Prefix{netip.MustParsePrefix("192.168.77.0/24")}, From: "test"},
			Link: &sockdiag.Link{Name: "tailscale0"}}
		r.offloads(Inputs{Host: sysctl.Host{}})
		if r.Offloads == nil {
			t.Fatal("no offloads read")
		}
		return r.Offloads
	}
	// agree holds JudgeUDPGRO on the features read to netkernelconf's own
	// answer, and returns it.
	agree := func(o *Offloads, state string) GROCheck {
		t.Helper()
		live := *o.UDPGRO
		if live.Err != "" {
			t.Fatalf("%s: netkernelconf: %s", state, live.Err)
		}
		judged := JudgeUDPGRO(*o.Iface("tailscale0"), *o.Iface("wan0"))
		if judged.Suboptimal != live.Suboptimal || judged.Warning != live.Warning || (judged.NotApplicable == "") != (live.NotApplicable == "") {
			t.Errorf("%s: JudgeUDPGRO %+v, netkernelconf %+v", state, judged, live)
		}
		return live
	}

	// A TUN with TCP segmentation only (a kernel before 6.2 could give no
	// more): the check does not apply.
	tun := openTUN(t, "tailscale0", tunFCSUM|tunFTSO4|tunFTSO6)
	o := gather()
	if o.WAN != "wan0" || o.WANFrom != "/proc/net/route" || o.TUN != "tailscale0" {
		t.Errorf("WAN %q from %q, TUN %q", o.WAN, o.WANFrom, o.TUN)
	}
	br := o.Iface("br0")
	if br == nil || !br.Bridge || fmt.Sprint(br.Ports) != "[lan0]" || fmt.Sprint(br.Roles) != "[lan 192.168.77.0/24]" {
		t.Fatalf("br0 = %+v", br)
	}
	if g := agree(o, "TUN without UDP segmentation"); g.NotApplicable == "" {
		t.Errorf("TUN without UDP segmentation: %+v, want not applicable", g)
	}
	tun.Close()

	// The TUN tailscaled has on Linux ≥ 6.2: UDP segmentation too.
	tun = openTUN(t, "tailscale0", tunFCSUM|tunFTSO4|tunFTSO6|tunFUSO4|tunFUSO6)
	defer tun.Close()
	set("wan0", map[string]bool{FeatUDPGROForwarding: false, FeatGROList: false})
	if g := agree(gather(), "forwarding off"); !g.Suboptimal {
		t.Errorf("forwarding off: %+v, want suboptimal", g)
	}
	set("wan0", map[string]bool{FeatUDPGROForwarding: true, FeatGROList: true})
	if g := agree(gather(), "gro list on"); !g.Suboptimal {
		t.Errorf("gro list on: %+v, want suboptimal", g)
	}
	set("wan0", map[string]bool{FeatUDPGROForwarding: true, FeatGROList: false})
	if g := agree(gather(), "as recommended"); g.Suboptimal || g.NotApplicable != "" {
		t.Errorf("as recommended: %+v, want it to pass", g)
	}

	// TSO on the bridge, as ethtool turns it off and on.
	for _, on := range []bool{false, true} {
		set("br0", map[string]bool{FeatTSO: on})
		got, known := gather().Iface("br0").On(FeatTSO)
		if !known || got != on {
			t.Errorf("br0 tso set %v, read %v (known %v)", on, got, known)
		}
	}
	fmt.Println("OK offloads")
}
