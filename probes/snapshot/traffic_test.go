package snapshot

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/probes/probestest"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// TestTrafficRoundTrip: a capture keeps tailscaled's traffic counters by
// path, with the rates a long-running source had, and the file read back
// shows them as they were; the home DERP view is worked out again alike.
func TestTrafficRoundTrip(t *testing.T) {
	fix, err := probestest.LoadFixture(filepath.Join("..", "testdata", "both-hard-nat.json"))
	if err != nil {
		t.Fatal(err)
	}
	fix.UserMetrics = "tailscaled_inbound_bytes_total{path=\"derp\"} 100\ntailscaled_outbound_bytes_total{path=\"direct_ipv4\"} 50\n"
	srv := probestest.New(t, fix)
	c := tailscaled.NewClient(srv.Socket)
	ctx := context.Background()
	prev, err := tailscaled.GatherWith(ctx, c, nil, tailscaled.GatherOptions{Now: fixtureNow.Add(-2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	more := *fix
	more.UserMetrics = "tailscaled_inbound_bytes_total{path=\"derp\"} 300\ntailscaled_outbound_bytes_total{path=\"direct_ipv4\"} 50\n"
	srv.SetFixture(&more)
	f, live, err := Capture(ctx, c, Options{Prev: prev, Gather: tailscaled.GatherOptions{Now: fixtureNow}})
	if err != nil {
		t.Fatal(err)
	}
	if r := live.Self.Traffic.Rates; r == nil || r.BytesIn.DERP != 100 {
		t.Fatalf("live rates %+v", live.Self.Traffic)
	}
	back, err := roundTrip(t, f).Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(live.Self.Traffic, back.Self.Traffic); d != "" {
		t.Errorf("traffic (-live +read back):\n%s", d)
	}
	if d := cmp.Diff(live.Self.View, back.Self.View); d != "" {
		t.Errorf("self view (-live +read back):\n%s", d)
	}
}
