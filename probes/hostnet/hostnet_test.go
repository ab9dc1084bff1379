package hostnet

import (
	"context"
	"net/netip"
	"testing"

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

// TestRead reads this host's real interfaces: loopback is among them, up,
// with its address.
func TestRead(t *testing.T) {
	h := Read(context.Background(), probes.Self{})
	if h.InterfacesErr != "" {
		t.Fatalf("interfaces: %s", h.InterfacesErr)
	}
	found := false
	for _, ifc := range h.Interfaces {
		for _, p := range ifc.Addrs {
			if p.Addr() == netip.MustParseAddr("127.0.0.1") {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no interface holds 127.0.0.1: %+v", h.Interfaces)
	}
	if h.Firewall != nil {
		t.Errorf("firewall read with no port known: %+v", h.Firewall)
	}
}
