package tune

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const ethtoolBridge = `Features for br0:
rx-checksumming: off [fixed]
tx-checksumming: on
	tx-checksum-ip-generic: on
scatter-gather: on
tcp-segmentation-offload: on
	tx-tcp-segmentation: on
	tx-tcp6-segmentation: on
generic-segmentation-offload: on
generic-receive-offload: on
large-receive-offload: off [fixed]
rx-gro-list: off
rx-udp-gro-forwarding: on [requested off]
tx-udp-segmentation: on
`

func TestParseEthtoolK(t *testing.T) {
	want := map[string]bool{
		"rx-checksum": false, "tx-checksum-ip-generic": true, FeatTSO: true, FeatTSO6: true, FeatGSO: true, FeatGRO: true, "rx-lro": false,
		FeatGROList: false, FeatUDPGROForwarding: true, FeatTUNUDPSeg: true,
	}
	if diff := cmp.Diff(want, ParseEthtoolK([]byte(ethtoolBridge))); diff != "" {
		t.Errorf("ParseEthtoolK (-want +got):\n%s", diff)
	}
}

// TestJudgeUDPGRO: netkernelconf.CheckUDPGROForwarding's rules on
// features read from a root: no verdict without TUN UDP segmentation or
// the WAN feature; suboptimal unless forwarding is on and GRO list off.
func TestJudgeUDPGRO(t *testing.T) {
	tun := func(useg bool) Iface {
		return Iface{Name: "tailscale0", Features: map[string]bool{FeatTUNUDPSeg: useg}}
	}
	wan := func(f map[string]bool) Iface { return Iface{Name: "eth0", Features: f} }
	tests := []struct {
		name       string
		tun, wan   Iface
		suboptimal bool
		na         string
	}{
		{"recommended", tun(true), wan(map[string]bool{FeatUDPGROForwarding: true, FeatGROList: false}), false, ""},
		{"forwarding off", tun(true), wan(map[string]bool{FeatUDPGROForwarding: false, FeatGROList: false}), true, ""},
		{"gro list on", tun(true), wan(map[string]bool{FeatUDPGROForwarding: true, FeatGROList: true}), true, ""},
		{"TUN without UDP segmentation (before 6.2)", tun(false), wan(map[string]bool{FeatUDPGROForwarding: false}), false, "tailscale0 has tx-udp-segmentation off"},
		{"TUN features unknown", Iface{Name: "tailscale0", FeaturesErr: "not in the root"}, wan(nil), false, "tailscale0's features are unknown"},
		{"WAN without the feature (before 5.12)", tun(true), wan(map[string]bool{FeatGRO: true}), false, "eth0 has no rx-udp-gro-forwarding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := JudgeUDPGRO(tt.tun, tt.wan)
			if g.Suboptimal != tt.suboptimal || !strings.HasPrefix(g.NotApplicable, tt.na) || (tt.na == "") != (g.NotApplicable == "") {
				t.Errorf("JudgeUDPGRO = %+v, want suboptimal %v, not applicable %q", g, tt.suboptimal, tt.na)
			}
			if g.Suboptimal && g.Warning != udpGROWarning("eth0") {
				t.Errorf("warning %q is not Tailscale's", g.Warning)
			}
		})
	}
}

// A /proc/net/route as a little-endian machine prints it, and the same
// table from a big-endian one (a MIPS router).
const (
	routeLE = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"eth4\t00000000\t017100CB\t0003\t0\t0\t0\t00000000\t0\t0\t0\n" +
		"eth4\t007100CB\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n" +
		"br0\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n" +
		"br1\t0000100A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n" +
		"down\t0002A8C0\t00000000\t0000\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
	routeBE = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"wan\t00000000\tCB007101\t0003\t0\t0\t0\t00000000\t0\t0\t0\n" +
		"br-lan\tC0A80100\t00000000\t0001\t0\t0\t0\tFFFFFF00\t0\t0\t0\n"
	routeV6 = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth4\n" +
		"fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 br0\n" +
		"00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 00200001 lo\n"
)

func TestRoutes(t *testing.T) {
	v4 := ParseRouteV4([]byte(routeLE))
	want := []Route{
		{Iface: "eth4", Prefix: netip.MustParsePrefix("0.0.0.0/0")},
		{Iface: "eth4", Prefix: netip.MustParsePrefix("203.0.113.0/24")},
		{Iface: "br0", Prefix: netip.MustParsePrefix("192.168.1.0/24")},
		{Iface: "br1", Prefix: netip.MustParsePrefix("10.16.0.0/16")},
	}
	if diff := cmp.Diff(want, v4, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("little-endian routes (-want +got):\n%s", diff)
	}
	be := ParseRouteV4([]byte(routeBE))
	if len(be) != 2 || be[1].Prefix != netip.MustParsePrefix("192.168.1.0/24") || be[1].Iface != "br-lan" {
		t.Errorf("big-endian routes = %+v", be)
	}
	if w := DefaultRoute(v4); w != "eth4" {
		t.Errorf("DefaultRoute = %q", w)
	}
	for _, tt := range []struct{ p, iface string }{
		{"192.168.1.0/24", "br0"}, {"192.168.1.128/25", "br0"}, {"10.16.4.0/24", "br1"}, {"172.16.0.0/12", ""}, {"0.0.0.0/0", ""},
	} {
		if got := RouteFor(v4, netip.MustParsePrefix(tt.p)); got != tt.iface {
			t.Errorf("RouteFor(%s) = %q, want %q", tt.p, got, tt.iface)
		}
	}
	v6 := ParseRouteV6([]byte(routeV6))
	if DefaultRoute(v6) != "eth4" || RouteFor(v6, netip.MustParsePrefix("fd00::/64")) != "br0" || len(v6) != 2 {
		t.Errorf("IPv6 routes = %+v", v6)
	}
}

func FuzzParseRoutes(f *testing.F) {
	f.Add([]byte(routeLE))
	f.Add([]byte(routeBE))
	f.Add([]byte(routeV6))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, r := range append(ParseRouteV4(b), ParseRouteV6(b)...) {
			if !r.Prefix.IsValid() || strings.ContainsAny(r.Iface, "/ \t\n\x1b") || len(r.Iface) > 15 {
				t.Fatalf("bad route %+v", r)
			}
		}
	})
}

func FuzzParseEthtoolK(f *testing.F) {
	f.Add([]byte(ethtoolBridge))
	f.Add([]byte("Features for x:\nrx-\x1b[2J: on\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for k := range ParseEthtoolK(b) {
			if strings.Trim(k, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
				t.Fatalf("feature name %q", k)
			}
		}
	})
}
