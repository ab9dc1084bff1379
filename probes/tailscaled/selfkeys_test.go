package tailscaled

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/tscompat"
)

// TestPingDERP: d's HTTPS round trip reaches the region's DERP server at
// the map's address and port, asks /derp/latency-check, and names the
// region; a region not in the map, a STUN-only one and a failing server
// are errors a person can read.
func TestPingDERP(t *testing.T) {
	var paths []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if r.URL.Path != "/derp/latency-check" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	dm := &tailcfg.DERPMap{Regions: map[tscompat.RegionID]*tailcfg.DERPRegion{
		900: {RegionID: 900, RegionCode: "lab", Nodes: []*tailcfg.DERPNode{
			{Name: "900a", RegionID: 900, HostName: "derp.example", IPv4: ap.Addr().String(), DERPPort: int(ap.Port()), InsecureForTests: true}}},
		901: {RegionID: 901, RegionCode: "stun", Nodes: []*tailcfg.DERPNode{{Name: "901a", STUNOnly: true}}},
	}}
	d, code, err := PingDERP(context.Background(), dm, 900)
	if err != nil || d <= 0 || code != "lab" {
		t.Fatalf("PingDERP = %v, %q, %v; want a round trip to lab", d, code, err)
	}
	if len(paths) != 1 || paths[0] != "/derp/latency-check" {
		t.Errorf("asked %v, want /derp/latency-check once", paths)
	}
	for id, want := range map[int]string{7: "not in the DERP map", 901: "STUN only"} {
		if _, _, err := PingDERP(context.Background(), dm, id); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("region %d: %v, want %q", id, err, want)
		}
	}
	srv.Close()
	if _, _, err := PingDERP(context.Background(), dm, 900); err == nil || !strings.Contains(err.Error(), "HTTPS to lab") {
		t.Errorf("a server that is gone: %v", err)
	}
}
