package labtest

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// BusDelivery checks that a peer change reaches a probes Source through
// the IPN bus: it runs a Source on c (the LocalAPI of a member of l, or of
// a real tailscaled joined to it) with an hour-long poll, waits until the
// bus watch is up, changes the offline peer's endpoints in control
// (SetPeerEndpoints), and returns how long the new endpoints took to
// appear in a snapshot. Only the bus can bring them that fast.
//
// Errors: the Source warns that the bus watch failed, or the change does
// not arrive within limit, or ctx ends. It changes the offline peer's
// endpoints for good; call it last.
func BusDelivery(ctx context.Context, l *lab.Lab, c tailscaled.LocalClient, limit time.Duration) (time.Duration, error) {
	sctx, stop := context.WithCancel(ctx)
	events := tailscaled.NewSource(c, tailscaled.SourceOptions{Interval: time.Hour}).Run(sctx)
	defer func() {
		stop()
		for range events {
		}
	}()
	// The first snapshot, then the one the bus's initial state causes.
	for seen := 0; seen < 2; {
		select {
		case ev := <-events:
			snap, ok := ev.(*probes.Snapshot)
			if !ok {
				continue
			}
			for _, w := range snap.Warnings {
				if strings.HasPrefix(string(w), "IPN bus") {
					return 0, fmt.Errorf("lab: %s", w)
				}
			}
			seen++
		case <-ctx.Done():
			return 0, fmt.Errorf("lab: waiting for the Source's first snapshots: %w", ctx.Err())
		}
	}
	want := netip.MustParseAddrPort("203.0.113.77:41641")
	if err := SetPeerEndpoints(l, lab.OfflineName, []netip.AddrPort{want}); err != nil {
		return 0, err
	}
	changed := time.Now()
	deadline := time.After(limit)
	for {
		select {
		case ev := <-events:
			snap, ok := ev.(*probes.Snapshot)
			if !ok {
				continue
			}
			for _, p := range snap.Peers {
				if p.Name == lab.OfflineName && slices.Contains(p.Endpoints, want) {
					return time.Since(changed), nil
				}
			}
		case <-deadline:
			return 0, fmt.Errorf("lab: %s's new endpoint %v did not reach the Source within %v (its poll is 1h: only the IPN bus could bring it)", lab.OfflineName, want, limit)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}
