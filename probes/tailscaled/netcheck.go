package tailscaled

import (
	"context"
	"errors"
	"time"

	"tailscale.com/net/netcheck"
	"tailscale.com/net/netmon"
	"tailscale.com/tailcfg"
	"tailscale.com/types/logger"
	"tailscale.com/util/eventbus"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
)

// LatencyRefresh is how often the Source measures DERP latencies afresh.
const LatencyRefresh = 10 * time.Minute

// MeasureDERPLatency measures this host's STUN round trip to every region of
// dm, as `tailscale netcheck` does (tailscale.com/net/netcheck, STUN only,
// every region), from this process's own UDP sockets. It sends a few UDP
// packets to each DERP node's STUN port and takes up to netcheck's report
// timeout (5 s). The result can differ from the daemon's view on hosts
// whose firewall treats the two processes differently.
//
// Errors: dm nil or empty, no UDP socket, or no region answering (UDP
// blocked) return an error; ctx bounds the whole measurement.
func MeasureDERPLatency(ctx context.Context, dm *tailcfg.DERPMap) (*probes.DERPLatencyReport, error) {
	if dm == nil || len(dm.Regions) == 0 {
		return nil, errors.New("netcheck: no DERP map")
	}
	bus := eventbus.New()
	defer bus.Close()
	nm, err := netmon.New(bus, logger.Discard)
	if err != nil {
		return nil, err
	}
	defer nm.Close()
	c := &netcheck.Client{
		NetMon: nm,
		Logf:   logger.Discard,
		// Verbose makes netcheck probe every region instead of stopping at
		// the first three, which the far-home-derp check needs.
		Verbose: true,
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := c.Standalone(ctx, ""); err != nil {
		return nil, err
	}
	rep, err := c.GetReport(ctx, dm, &netcheck.GetReportOpts{OnlySTUN: true})
	if err != nil {
		return nil, err
	}
	if len(rep.RegionLatency) == 0 {
		return nil, errors.New("netcheck: no DERP region answered STUN (UDP blocked?)")
	}
	out := &probes.DERPLatencyReport{At: time.Now(), ByRegion: make(map[int]time.Duration, len(rep.RegionLatency))}
	for rid, d := range rep.RegionLatency {
		if id := tscompat.IntRegionID(rid); d > 0 && id != 0 {
			out.ByRegion[id] = d
		}
	}
	return out, nil
}
