package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jsimonetti/rtnetlink/v2"
	"github.com/jsimonetti/rtnetlink/v2/driver"
	"golang.org/x/sys/unix"

	"github.com/tailpath/tailpath/sysctl/internal/netnstest"
)

// The path of the field report: a WAN that carries 1324 bytes while the
// host sends up to its 1500-byte MTU, dropping the rest without a word.
var (
	probeHost = netip.MustParseAddr("198.51.100.1")
	probePeer = netip.MustParseAddr("198.51.100.2")
)

const pathCarries = 1324

// TestMTUProbeNetns: --mtu-probe over a real kernel path that carries 1324
// bytes says it carries exactly that, that this is below what Tailscale
// supports, and advises the WAN MTU, tcp_mtu_probing=1 and an MSS clamp
// whose nft and iptables rules the kernel accepts as printed.
func TestMTUProbeNetns(t *testing.T) {
	if netnstest.Scenario() != "" {
		t.Skip("running as a namespace child")
	}
	out := netnstest.Run(t, "TestMTUProbeChild", "mtu-probe", false)
	if !strings.Contains(out, "OK mtu-probe") {
		t.Fatalf("child output:\n%s", out)
	}
	t.Logf("child:\n%s", out)
}

func TestMTUProbeChild(t *testing.T) {
	if netnstest.Scenario() != "mtu-probe" {
		t.Skip("helper for TestMTUProbeNetns; runs only in its re-executed child")
	}
	echo := startPathPeer(t)
	// The pinger: a UDP socket in this namespace sending DISCO-sized
	// datagrams (a ping of size bytes is a UDP payload of size bytes, as
	// magicsock pads it) to the peer, which answers each with a small one,
	// as a pong. Lost means no answer before the try's deadline. It stands
	// in for tailscaled's sized DISCO ping, which needs two tailscaled on
	// either side of this path; TestTuneMTUProbeAgainstLab runs the
	// DISCO side against real tailscaled code.
	c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(echo))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seq := byte(0)
	ping := func(ctx context.Context, size int) (Pong, error) {
		seq++
		msg := make([]byte, max(size, 16))
		msg[0] = seq
		start := time.Now()
		if _, err := c.Write(msg); err != nil {
			return Pong{}, err
		}
		dl, _ := ctx.Deadline()
		c.SetReadDeadline(dl)
		buf := make([]byte, 64)
		for {
			n, err := c.Read(buf)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return Pong{}, context.DeadlineExceeded
			}
			if err != nil {
				return Pong{}, err
			}
			if n > 0 && buf[0] == seq { // a late answer to an earlier ping is not this one's
				return Pong{Path: PongDirect, Via: echo.String(), Latency: time.Since(start)}, nil
			}
		}
	}
	// Wait for the path (the veth's carrier, the first ARP exchange)
	// before measuring, so a slow start cannot read as a lost size.
	for deadline := time.Now().Add(time.Minute); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := ping(ctx, 0)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the path never answered a small ping: %v", err)
		}
	}
	// A size that fits is answered in microseconds; a second per try
	// keeps a busy machine's delay from reading as a lost size.
	r, err := ProbeMTU(context.Background(), "nas", ping, MTUProbeOptions{Tries: 2, TryTimeout: time.Second,
		Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	t.Logf("\n%s", text.String())
	if r.LargestWire != pathCarries || !r.Trouble || !r.BelowSupported || r.Clamp == nil || r.Clamp.MSS4 != pathCarries-40 || r.Clamp.MSS6 != pathCarries-60 {
		t.Fatalf("probe %+v; want %d bytes, below supported, clamp MSS %d", r, pathCarries, pathCarries-40)
	}
	for _, want := range []string{
		"largest packet through the direct path: 1324 bytes",
		"MTU trouble: the direct path carries 1324 bytes, below what Tailscale supports",
		"correct the WAN MTU of the router on this path to what its link really carries (a WAN MTU of 1324 matches what this path carries)",
		"clamp TCP MSS on that router",
		"set net.ipv4.tcp_mtu_probing=1 on this host",
		"MSS clamp for a path of 1324 bytes (MSS 1284 over IPv4, 1264 over IPv6), on the router, with nftables:",
		"  iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1284\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	checkMTUAdvice(t, "--mtu-probe over the netns path", r.Fix)

	// The rules as printed, run in this private namespace: the kernel
	// takes them (nftables and iptables come from .ci/run).
	for _, set := range [][]string{r.Clamp.NFT, r.Clamp.IPTables} {
		tool := strings.Fields(set[0])[0]
		if _, err := exec.LookPath(tool); err != nil {
			t.Logf("skipping the %s rules: %v (install nftables and iptables to run them)", tool, err)
			continue
		}
		for _, rule := range set {
			if out, err := exec.Command("sh", "-c", rule).CombinedOutput(); err != nil {
				t.Errorf("%s: %v\n%s", rule, err, out)
			}
		}
	}
	if out, err := exec.Command("nft", "list", "table", "inet", "tailpath_mss").CombinedOutput(); err == nil &&
		!strings.Contains(string(out), "tcp option maxseg size > 1284 tcp option maxseg size set 1284") {
		t.Errorf("nft ruleset:\n%s", out)
	}
	fmt.Println("OK mtu-probe")
}

// startPathPeer builds the path and its far end: a veth pair from this
// namespace (198.51.100.1, MTU 1500) to a second one held by a locked
// thread (198.51.100.2), whose end drops any frame longer than the path
// carries, silently, as a WAN whose MTU is set too high does; and there a
// UDP responder that answers each datagram with its first 16 bytes. A
// veth accepts frames up to its MTU plus VLAN_HLEN (4 bytes; the kernel's
// is_skb_forwardable), so the far end's MTU is the path's minus 4.
func startPathPeer(t *testing.T) netip.AddrPort {
	t.Helper()
	type farEnd struct {
		addr netip.AddrPort
		err  error
	}
	ready := make(chan farEnd)
	// This namespace, by a handle taken before any thread leaves it (the
	// thread that does may be the process's main one, so its pid would
	// not do).
	here, err := os.Open("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	defer here.Close()
	go func() {
		// This thread moves to a new network namespace and never comes
		// back: it stays locked, and the runtime retires it on exit.
		runtime.LockOSThread()
		fail := func(err error) { ready <- farEnd{err: err} }
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			fail(fmt.Errorf("unshare: %w", err))
			return
		}
		c, err := rtnetlink.Dial(nil)
		if err != nil {
			fail(err)
			return
		}
		defer c.Close()
		// tpb0 here, its peer tpa0 in the process's namespace.
		err = c.Link.New(&rtnetlink.LinkMessage{Family: unix.AF_UNSPEC, Attributes: &rtnetlink.LinkAttributes{
			Name: "tpb0", MTU: pathCarries - 4,
			Info: &rtnetlink.LinkInfo{Kind: "veth", Data: &driver.Veth{PeerInfo: &rtnetlink.LinkMessage{Family: unix.AF_UNSPEC,
				Attributes: &rtnetlink.LinkAttributes{Name: "tpa0", MTU: 1500, NetNS: rtnetlink.NetNSForFD(uint32(here.Fd()))}}}},
		}})
		if err != nil {
			err = fmt.Errorf("veth: %w", err)
		} else {
			err = upWithAddr(c, "tpb0", probePeer)
		}
		if err != nil {
			fail(err)
			return
		}
		pc, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(probePeer, 0)))
		if err != nil {
			fail(err)
			return
		}
		ready <- farEnd{addr: pc.LocalAddr().(*net.UDPAddr).AddrPort()}
		buf := make([]byte, 65536)
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			pc.WriteToUDPAddrPort(buf[:min(n, 16)], from)
		}
	}()
	fe := <-ready
	if fe.err != nil {
		t.Fatal(fe.err)
	}
	c, err := rtnetlink.Dial(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := upWithAddr(c, "tpa0", probeHost); err != nil {
		t.Fatal(err)
	}
	return fe.addr
}

// upWithAddr brings name up with addr/24 through c.
func upWithAddr(c *rtnetlink.Conn, name string, addr netip.Addr) error {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := c.Link.Set(&rtnetlink.LinkMessage{Family: unix.AF_UNSPEC, Index: uint32(ifi.Index), Flags: unix.IFF_UP, Change: unix.IFF_UP}); err != nil {
		return fmt.Errorf("set %s up: %w", name, err)
	}
	return c.Address.New(&rtnetlink.AddressMessage{Family: unix.AF_INET, PrefixLength: 24, Index: uint32(ifi.Index),
		Attributes: &rtnetlink.AddressAttributes{Local: net.IP(addr.AsSlice()), Address: net.IP(addr.AsSlice())}})
}
