package tailscaled

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

// userMetrics is tailscaled v1.102.5's /localapi/v0/usermetrics in the
// form its expvar handler writes it (util/usermetric, tsweb/varz), with
// other families around the traffic counters.
const userMetrics = `# TYPE tailscaled_advertised_routes gauge
# HELP tailscaled_advertised_routes Number of advertised network routes (e.g. by a subnet router)
tailscaled_advertised_routes 0
# TYPE tailscaled_home_derp_region_id gauge
tailscaled_home_derp_region_id 901
# TYPE tailscaled_inbound_bytes_total counter
# HELP tailscaled_inbound_bytes_total Counts the number of bytes received from other peers
tailscaled_inbound_bytes_total{path="derp"} 5000
tailscaled_inbound_bytes_total{path="direct_ipv4"} 20000
tailscaled_inbound_bytes_total{path="direct_ipv6"} 1000
tailscaled_inbound_bytes_total{path="peer_relay_ipv4"} 300
tailscaled_inbound_bytes_total{path="peer_relay_ipv6"} 0
# TYPE tailscaled_inbound_packets_total counter
tailscaled_inbound_packets_total{path="derp"} 50
tailscaled_inbound_packets_total{path="direct_ipv4"} 200
# TYPE tailscaled_outbound_bytes_total counter
tailscaled_outbound_bytes_total{path="derp"} 7000
tailscaled_outbound_bytes_total{path="direct_ipv4"} 9000
# TYPE tailscaled_outbound_packets_total counter
tailscaled_outbound_packets_total{path="derp"} 70
tailscaled_outbound_packets_total{path="direct_ipv4"} 90
tailscaled_inbound_dropped_packets_total{reason="error"} 3
`

// clientMetrics is the same as /localapi/v0/metrics writes it
// (clientmetric.WritePrometheusExpositionFormat): no labels, the path in
// the name.
const clientMetrics = `# TYPE derp_home_change counter
derp_home_change 2
# TYPE magicsock_recv_data_bytes_derp counter
magicsock_recv_data_bytes_derp 5000
# TYPE magicsock_recv_data_bytes_ipv4 counter
magicsock_recv_data_bytes_ipv4 20000
# TYPE magicsock_recv_data_derp counter
magicsock_recv_data_derp 50
# TYPE magicsock_send_data counter
magicsock_send_data 999
# TYPE magicsock_send_data_network_down counter
magicsock_send_data_network_down 4
# TYPE magicsock_send_data_bytes_derp counter
magicsock_send_data_bytes_derp 7000
# TYPE magicsock_send_data_peer_relay_ipv4 counter
magicsock_send_data_peer_relay_ipv4 8
`

// TestParseTraffic: both forms give the same counters by path; the
// clientmetrics carry home changes; other families and malformed lines
// are skipped.
func TestParseTraffic(t *testing.T) {
	got, ok := ParseTraffic([]byte(userMetrics))
	want := probes.Traffic{
		BytesIn:    probes.PathCounts{Direct: 21000, DERP: 5000, PeerRelay: 300},
		BytesOut:   probes.PathCounts{Direct: 9000, DERP: 7000},
		PacketsIn:  probes.PathCounts{Direct: 200, DERP: 50},
		PacketsOut: probes.PathCounts{Direct: 90, DERP: 70},
	}
	if !ok {
		t.Fatal("usermetrics: no counters found")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("usermetrics (-want +got):\n%s", d)
	}
	got, ok = ParseTraffic([]byte(clientMetrics))
	two := int64(2)
	want = probes.Traffic{
		BytesIn:     probes.PathCounts{Direct: 20000, DERP: 5000},
		BytesOut:    probes.PathCounts{DERP: 7000},
		PacketsIn:   probes.PathCounts{DERP: 50},
		PacketsOut:  probes.PathCounts{PeerRelay: 8},
		HomeChanges: &two,
	}
	if !ok {
		t.Fatal("clientmetrics: no counters found")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("clientmetrics (-want +got):\n%s", d)
	}
	for _, bad := range []string{"", "# only comments\n", "tailscaled_inbound_bytes_total{path=\"derp\" 5\n",
		"tailscaled_inbound_bytes_total{path=\"derp\"} -5\n", "tailscaled_inbound_bytes_total{path=\"derp\"} NaN\n",
		"tailscaled_inbound_bytes_total{path=\"moon\"} 5\n", "magicsock_recv_data_bytes_derp{x=\"y\"} 5\n"} {
		if got, ok := ParseTraffic([]byte(bad)); ok {
			t.Errorf("ParseTraffic(%q) = %+v, want nothing", bad, got)
		}
	}
	// Escaped quotes and braces inside a label value.
	if got, ok := ParseTraffic([]byte(`tailscaled_inbound_bytes_total{x="a\"}b",path="derp"} 12 1700000000` + "\n")); !ok || got.BytesIn.DERP != 12 {
		t.Errorf("escaped label: %+v %v", got, ok)
	}
}

// FuzzParseTraffic: metrics text from a daemon never panics and never
// yields a negative counter.
func FuzzParseTraffic(f *testing.F) {
	f.Add([]byte(userMetrics))
	f.Add([]byte(clientMetrics))
	f.Add([]byte(`tailscaled_inbound_bytes_total{path="derp\\"} 1`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, _ := ParseTraffic(b)
		for _, c := range []probes.PathCounts{tr.BytesIn, tr.BytesOut, tr.PacketsIn, tr.PacketsOut} {
			if c.Direct < 0 || c.DERP < 0 || c.PeerRelay < 0 {
				t.Fatalf("negative counter from %q: %+v", b, tr)
			}
		}
	})
}

// TestGatherTraffic: the user metrics first; the clientmetrics when the
// daemon serves none; a refusal or neither says why, and an endpoint not
// served is not asked again on the next poll; rates come with the second
// poll.
func TestGatherTraffic(t *testing.T) {
	fix := loadFixture(t, "both-hard-nat")
	ctx := context.Background()

	fix.UserMetrics = userMetrics
	srv := probestest.New(t, fix)
	c := NewClient(srv.Socket)
	s1, err := gatherAt(ctx, c, nil, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr := s1.Self.Traffic; !tr.Known() || tr.Source != "usermetrics" || tr.BytesIn.DERP != 5000 || tr.Rates != nil {
		t.Fatalf("first poll: %+v", tr)
	}
	more := *fix
	more.UserMetrics = strings.Replace(userMetrics, `{path="derp"} 5000`, `{path="derp"} 9000`, 1)
	srv.SetFixture(&more)
	s2, err := gatherAt(ctx, c, s1, fixtureNow.Add(2*time.Second), GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := s2.Self.Traffic.Rates; r == nil || r.BytesIn.DERP != 2000 || r.BytesIn.Direct != 0 {
		t.Errorf("second poll's rates: %+v", r)
	}
	if n := srv.Requests("metrics"); n != 0 {
		t.Errorf("asked /metrics %d times while usermetrics answer", n)
	}

	// No usermetrics: the clientmetrics, by an operator.
	old := *fix
	old.UserMetrics, old.Metrics = "", clientMetrics
	srv2 := probestest.New(t, &old)
	c2 := NewClient(srv2.Socket)
	s, err := gatherAt(ctx, c2, nil, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr := s.Self.Traffic; tr.Source != "clientmetrics" || tr.HomeChanges == nil || *tr.HomeChanges != 2 {
		t.Errorf("clientmetrics: %+v", tr)
	}
	// Not by anyone else: why, and neither is asked again.
	srv2.SetForbidden("metrics", true)
	s, err = gatherAt(ctx, c2, nil, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Self.Traffic
	if tr.Known() || !strings.Contains(string(tr.Err), "need write permission") || !strings.Contains(string(tr.Err), "serves no /localapi/v0/usermetrics") {
		t.Errorf("refused: %+v", tr)
	}
	u, m := srv2.Requests("usermetrics"), srv2.Requests("metrics")
	s, err = gatherAt(ctx, c2, s, fixtureNow.Add(2*time.Second), GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if srv2.Requests("usermetrics") != u || srv2.Requests("metrics") != m {
		t.Errorf("asked again after a 404 and a 403: usermetrics %d→%d, metrics %d→%d", u, srv2.Requests("usermetrics"), m, srv2.Requests("metrics"))
	}
	if s.Self.Traffic.Err != tr.Err {
		t.Errorf("the reason changed on the next poll: %q, was %q", s.Self.Traffic.Err, tr.Err)
	}
}

// ParseTraffic reads tailscaled's traffic counters from metrics text (the
// user metrics' or the clientmetrics' Prometheus exposition) into a
// Traffic; ok is false when the text holds none. Lines it does not know
// are skipped; a malformed line is skipped, never an error.
func ParseTraffic(text []byte) (t probes.Traffic, ok bool) {
	ok = parseTraffic(&t, text)
	return t, ok
}
