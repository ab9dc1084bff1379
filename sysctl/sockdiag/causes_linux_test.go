package sockdiag

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tailpath/tailpath/sysctl/internal/netnstest"
)

// recordDir, when TAILPATH_RECORD_TCPINFO names a directory, receives the
// raw sock_diag messages of the causes test as hex files (how the recorded
// samples in testdata/ were made).
var recordDir = os.Getenv("TAILPATH_RECORD_TCPINFO")

// TestCausesNetns drives real connections into the causes tuning must tell
// apart, in a private network namespace, and classifies them through
// sock_diag: a sender whose program pinned a small SO_SNDBUF, and a path
// that silently drops full-size segments (an MTU black hole, made with a
// socket filter on the receiver).
func TestCausesNetns(t *testing.T) {
	if netnstest.Scenario() != "" {
		t.Skip("running as a namespace child")
	}
	out := netnstest.Run(t, "TestCausesChild", "causes", false)
	if !strings.Contains(out, "OK causes") {
		t.Fatalf("child output:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "causes:") {
			t.Log(l)
		}
	}
}

// dropBigSegments attaches a classic BPF filter to a socket that drops TCP
// segments longer than n bytes (TCP header included), as a path with a
// small MTU and no ICMP "fragmentation needed" does.
func dropBigSegments(fd uintptr, n uint32) error {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_LEN},
		{Code: unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K, Jt: 0, Jf: 1, K: n},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0xffffffff},
	}
	return unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]})
}

// rawByLocal dumps AF_INET sockets and returns the raw inet_diag message
// whose local address is local.
func rawByLocal(t *testing.T, local netip.AddrPort) []byte {
	t.Helper()
	cl, err := Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var raw []byte
	err = cl.dumpFamily(unix.AF_INET, TailnetFilter(), func(b []byte) error {
		if c, err := ParseMessage(b); err == nil && c.Local == local {
			raw = append([]byte(nil), b...)
		}
		return nil
	})
	if err != nil || raw == nil {
		t.Fatalf("dump: %v; %v not found", err, local)
	}
	return raw
}

func record(t *testing.T, name string, raw []byte) {
	if recordDir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(recordDir, name+".hex"), []byte(hex.EncodeToString(raw)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readSysInt(t *testing.T, p string) int64 {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	var n int64
	fmt.Sscan(f[len(f)-1], &n)
	return n
}

func TestCausesChild(t *testing.T) {
	if netnstest.Scenario() != "causes" {
		t.Skip("helper for TestCausesNetns; runs only in its re-executed child")
	}
	addr := netip.MustParseAddr("100.100.7.1")
	tailnetLoopback(t, addr)
	lim := Limits{TCPWmemMax: readSysInt(t, "/proc/sys/net/ipv4/tcp_wmem"), WmemMax: readSysInt(t, "/proc/sys/net/core/wmem_max")}
	// check samples a connection, up to 10 times 20 ms apart while the
	// verdict is not yet the one wanted: on loopback a sender's queue
	// drains in microseconds, so one look can land on an empty queue.
	check := func(name string, local netip.AddrPort, want, not VerdictKind) {
		var raw []byte
		var c Conn
		var v Verdict
		for try := 0; try < 10; try++ {
			raw = rawByLocal(t, local)
			var err error
			if c, err = ParseMessage(raw); err != nil {
				t.Fatal(err)
			}
			if v = Classify(c, lim); want == "" || v.Kind == want {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		record(t, name, raw)
		if v.Kind == VerdictAppSndbuf || v.Kind == VerdictMTU {
			if v.SysctlsHelp || !strings.Contains(v.Text, "will not help") {
				t.Errorf("%s: %+v must say sysctls will not help", name, v)
			}
		}
		i := c.Info
		sb, _ := i.SndbufShare()
		fmt.Printf("causes: %s: acked=%v sent=%v ca_state=%d retransmits=%d backoff=%d unacked=%v snd_mss=%v advmss=%v pmtu=%v sndbuf-limited=%.0f%% skmem=%+v verdict=%s (%s)\n",
			name, *i.BytesAcked, *i.BytesSent, i.CAState, i.Retransmits, i.Backoff, deref(i.Unacked), deref(i.SndMSS), deref(i.AdvMSS), deref(i.PMTU), sb*100, *c.Mem, v.Kind, v.Detail)
		if want != "" && v.Kind != want {
			t.Errorf("%s: verdict %s (%s), want %s", name, v.Kind, v.Detail, want)
		}
		if not != "" && v.Kind == not {
			t.Errorf("%s: verdict %s (%s)", name, v.Kind, v.Detail)
		}
	}

	// A fast reader for the two senders.
	ln, err := net.Listen("tcp4", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c)
		}
	}()
	send := func(name string, sndbuf int) (netip.AddrPort, func()) {
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			if sndbuf == 0 {
				return nil
			}
			var serr error
			rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, sndbuf) })
			return serr
		}}
		c, err := d.Dial("tcp4", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		go func() {
			buf := make([]byte, 64<<10)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Write(buf); err != nil {
					fmt.Printf("causes: %s: write: %v\n", name, err)
					return
				}
			}
		}()
		return netip.MustParseAddrPort(c.LocalAddr().String()), func() { close(stop); c.Close() }
	}
	pinned, stopPinned := send("pinned", 4096)
	defer stopPinned()
	auto, stopAuto := send("auto", 0)
	defer stopAuto()

	// The black hole: the receiver drops segments over 1200 bytes, so the
	// handshake and small writes pass and bulk data never does.
	holeLn, err := (&net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		rc.Control(func(fd uintptr) { serr = dropBigSegments(fd, 1200) })
		return serr
	}}).Listen(context.Background(), "tcp4", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	defer holeLn.Close()
	go func() {
		c, err := holeLn.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
		}
	}()
	hc, err := net.Dial("tcp4", holeLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	if _, err := hc.Write([]byte("small request\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	go hc.Write(make([]byte, 256<<10))
	// RTO starts at 200 ms and doubles: after ~2 s the oldest segment has
	// timed out several times.
	time.Sleep(2 * time.Second)
	check("pinned-sndbuf", pinned, VerdictAppSndbuf, "")
	check("autotuned", auto, "", VerdictAppSndbuf)
	check("mtu-blackhole", netip.MustParseAddrPort(hc.LocalAddr().String()), VerdictMTU, "")

	// The same black hole with tcp_mtu_probing=1 (this namespace's own
	// value): after the first timeouts TCP lowers its MSS to what passes.
	// tcp_retries1=1 makes the kernel call it a black hole after two
	// timeouts instead of three, so the test waits 2 s rather than 7.
	for k, v := range map[string]string{"tcp_mtu_probing": "1", "tcp_retries1": "1"} {
		if err := os.WriteFile("/proc/sys/net/ipv4/"+k, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		c, err := holeLn.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
		}
	}()
	pc, err := net.Dial("tcp4", holeLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	pc.Write([]byte("small request\n"))
	time.Sleep(50 * time.Millisecond)
	go pc.Write(make([]byte, 256<<10))
	time.Sleep(2 * time.Second)
	check("mtu-blackhole-probing", netip.MustParseAddrPort(pc.LocalAddr().String()), "", VerdictMTU)

	if recordDir != "" {
		os.WriteFile(filepath.Join(recordDir, "limits.txt"), []byte(fmt.Sprintf("tcp_wmem_max %d\nwmem_max %d\n", lim.TCPWmemMax, lim.WmemMax)), 0o644)
	}
	fmt.Println("OK causes")
}

func deref(p *uint32) any {
	if p == nil {
		return "unknown"
	}
	return *p
}
