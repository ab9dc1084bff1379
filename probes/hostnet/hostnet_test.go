package hostnet

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes"
)

func TestPort(t *testing.T) {
	ifs := []probes.Interface{
		{Name: "lo", Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}},
		{Name: "tailscale0", Tailscale: true, Addrs: []netip.Prefix{netip.MustParsePrefix("100.64.0.1/32")}},
		{Name: "eth0", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.1.20/24")}},
	}
	for _, tt := range []struct {
		eps  []string
		want uint16
	}{
		// The STUN mapping's port differs behind a NAT: the local one wins.
		{[]string{"198.51.100.10:61000", "192.168.1.20:41641"}, 41641},
		{[]string{"198.51.100.10:41641"}, 41641},
		{[]string{"10.9.9.9:1234"}, 0},
		{nil, 0},
	} {
		var eps []netip.AddrPort
		for _, e := range tt.eps {
			eps = append(eps, netip.MustParseAddrPort(e))
		}
		if got := Port(eps, ifs); got != tt.want {
			t.Errorf("Port(%v) = %d, want %d", tt.eps, got, tt.want)
		}
	}
}

func TestNames(t *testing.T) {
	for name, want := range map[string][2]bool{
		"tailscale0": {true, false}, "utun4": {true, false}, "docker0": {false, true}, "br-3f1c0a9e2b7d": {false, true},
		"virbr0": {false, true}, "eth0": {false, false}, "wlan0": {false, false}, "wwan0": {false, false},
	} {
		if got := [2]bool{IsTailscaleName(name), IsBridgeName(name)}; got != want {
			t.Errorf("%s: tailscale, bridge = %v, want %v", name, got, want)
		}
	}
}

// TestStart reads this host's real interfaces: loopback is among them, up,
// with its address, and is marked as tailscaled's tunnel only when self
// names its address (the mark is made after the read, once self is known).
func TestStart(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	loOf := func(h *probes.HostFacts) *probes.Interface {
		t.Helper()
		if h.InterfacesErr != "" {
			t.Fatalf("interfaces: %s", h.InterfacesErr)
		}
		for i, ifc := range h.Interfaces {
			for _, p := range ifc.Addrs {
				if p.Addr() == lo {
					return &h.Interfaces[i]
				}
			}
		}
		t.Fatalf("no interface holds 127.0.0.1: %+v", h.Interfaces)
		return nil
	}
	h := Start(context.Background())(probes.Self{})
	if loOf(h).Tailscale {
		t.Errorf("loopback marked as tailscaled's tunnel with no tailnet address: %+v", loOf(h))
	}
	if h.Firewall != nil {
		t.Errorf("firewall read with no port known: %+v", h.Firewall)
	}
	h = Start(context.Background())(probes.Self{TailscaleIPs: []netip.Addr{lo}})
	if !loOf(h).Tailscale {
		t.Errorf("the interface holding self's tailnet address is not marked: %+v", loOf(h))
	}
}

// TestReader: facts younger than maxAge are reused while self's addresses
// and port stay; a new endpoint reads them again at once.
func TestReader(t *testing.T) {
	read := Reader(time.Hour)
	self := probes.Self{Endpoints: []netip.AddrPort{netip.MustParseAddrPort("192.0.2.1:41641")}}
	first := read(context.Background())(self)
	if again := read(context.Background())(self); again != first {
		t.Errorf("fresh facts read again for the same self")
	}
	self.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("192.0.2.1:41642")}
	if moved := read(context.Background())(self); moved == first {
		t.Errorf("a new port reused the facts read for the old one")
	}
	short := Reader(time.Nanosecond)
	a := short(context.Background())(self)
	time.Sleep(time.Millisecond)
	if b := short(context.Background())(self); b == a || !b.At.After(a.At) {
		t.Errorf("facts older than maxAge reused: %v then %v", a.At, b.At)
	}
}
