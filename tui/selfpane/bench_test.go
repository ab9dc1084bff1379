package selfpane

import (
	"net/netip"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

// manySelf is a 1,000-peer tailnet judged by the joiner, with this node's
// NAT, latencies to every region, a health warning, a version with known
// bugs and tailscaled's traffic counters, as a live poll has them.
func manySelf(n int, at time.Time) *join.Snapshot {
	t, f := true, false
	s := peerstest.Many(n)
	s.Time = at
	s.Self.Version = "1.96.0"
	s.Self.NAT = &probes.NATInfo{WorkingUDP: &t, WorkingIPv6: &f, MappingVariesByDestIP: &t,
		DERPLatency: map[int]time.Duration{1: 182 * time.Millisecond, 2: 24 * time.Millisecond, 9: 140 * time.Millisecond}}
	s.Self.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.20:61022")}
	s.Self.Health = []safetext.Text{"Tailscale could not connect to the 'tok' relay server."}
	s.Self.Traffic = &probes.Traffic{At: at, Source: "usermetrics", BytesIn: probes.PathCounts{Direct: 1 << 30, DERP: 2 << 30},
		Rates: &probes.TrafficRates{Seconds: 5, BytesIn: probes.PathRates{DERP: 1e6}}}
	var l join.Joiner
	return l.SetSnapshot(&s)
}

// BenchmarkSelfView is the Self tab's cost per poll on a 1,000-peer
// tailnet: what Judge adds for it (probes.DescribeSelf: the home DERP
// rule, every region, the health warnings read by the self rows, the
// known bugs), the pane taking the new snapshot, and its frame at 120×40.
// The budget is 1 ms per poll (issue 33; docs/perf.md has the figure).
func BenchmarkSelfView(b *testing.B) {
	at := peerstest.Time
	ls := manySelf(1000, at)
	p := New(common.DefaultStyles(), Options{Now: peerstest.Now, Netcheck: nil})
	p.SetSize(120, 40)
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; b.Loop(); i++ {
		ls.Self.View = probes.DescribeSelf(ls.Snapshot, &ls.Tailnet)
		ls.Self.Traffic.At = at.Add(time.Duration(i) * time.Second)
		p.Update(ls)
		if p.View() == "" {
			b.Fatal("empty frame")
		}
	}
}
