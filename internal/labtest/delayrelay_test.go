package labtest

import (
	"bytes"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"tailscale.com/net/stun"

	"github.com/tailpath/tailpath/probes/lab"
)

// TestDelayRelay: the relay forwards TCP both ways, in order, and UDP;
// each round trip takes at least the delay it adds (a lower bound only:
// a busy machine makes it slower, never faster); a STUN answer through
// it names the asker's own address, not the relay's; SetDelay holds from
// the next datagram on.
func TestDelayRelay(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	echo, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	// A STUN server as the lab's regions run them (a STUN-only region).
	stunOnly, err := lab.StartDERP([]lab.Region{{ID: 903, Code: "stun", STUNOnly: true}}, "127.0.0.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stunOnly.Close()
	stunPort := stunOnly.Map.Regions[903].Nodes[0].STUNPort
	free := func(udp bool) uint16 {
		if udp {
			pc, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			defer pc.Close()
			return uint16(pc.LocalAddr().(*net.UDPAddr).Port)
		}
		ln, _ := net.Listen("tcp4", "127.0.0.1:0")
		defer ln.Close()
		return uint16(ln.Addr().(*net.TCPAddr).Port)
	}
	a := RegionAddrs{DERP: netip.MustParseAddrPort(echo.Addr().String()), STUN: netip.AddrPortFrom(lo, uint16(stunPort))}
	routes := []RelayRoute{
		{Listen: netip.AddrPortFrom(lo, free(false)), Target: a.DERP},
		{UDP: true, Listen: netip.AddrPortFrom(lo, free(true)), Target: a.STUN},
	}
	const delay = 80 * time.Millisecond
	r, err := StartDelayRelay(routes, delay, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	c, err := net.Dial("tcp4", routes[0].Listen.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := bytes.Repeat([]byte("0123456789"), 10000) // several chunks
	start := time.Now()
	go c.Write(msg)
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < delay {
		t.Errorf("TCP round trip %v through a relay adding %v", rtt, delay)
	}
	if !bytes.Equal(got, msg) {
		t.Error("TCP bytes came back changed or out of order")
	}

	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	stunRTT := func() (time.Duration, netip.AddrPort) {
		t.Helper()
		tx := stun.NewTxID()
		start := time.Now()
		if _, err := pc.WriteToUDPAddrPort(stun.Request(tx), routes[1].Listen); err != nil {
			t.Fatal(err)
		}
		pc.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 1500)
		n, _, err := pc.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatal(err)
		}
		rtt := time.Since(start)
		gotTx, mapped, err := stun.ParseResponse(buf[:n])
		if err != nil || gotTx != tx {
			t.Fatalf("STUN answer: %v (tx %v, want %v)", err, gotTx, tx)
		}
		return rtt, mapped
	}
	rtt, mapped := stunRTT()
	if rtt < delay {
		t.Errorf("STUN round trip %v through a relay adding %v", rtt, delay)
	}
	if want := netip.MustParseAddrPort(pc.LocalAddr().String()); mapped != want {
		t.Errorf("STUN answer maps %v, want the asker's %v (not the relay's)", mapped, want)
	}
	r.SetDelay(400 * time.Millisecond)
	if rtt, _ := stunRTT(); rtt < 400*time.Millisecond {
		t.Errorf("after SetDelay(400ms), STUN round trip %v", rtt)
	}
}
