package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui/tuning"
)

// dashboardTuningInterval is how often the dashboard re-reads the host's
// tuning and tailnet TCP connections.
const dashboardTuningInterval = 5 * time.Second

func init() {
	tunePeerRTT = func(ctx context.Context, peer string) (time.Duration, error) {
		return peerRTT(ctx, probes.NewClient(""), peer)
	}
	demoHooks = append(demoHooks, func(ctx context.Context, d *dashboard, l *lab.Lab) error {
		dir := filepath.Join(l.Dir(), "tuning-sandbox")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("demo: tuning sandbox: %w", err)
		}
		// The NAS case: a 400 Mbit/s target at a 20 ms tailnet RTT, against
		// a copy of this host's /proc/sys that apply and revert really write.
		opts, _, err := tuning.Sandbox(dir, tune.Inputs{
			Bandwidth: 400e6, BandwidthSource: "demo: the NAS case",
			RTT: 20 * time.Millisecond, RTTSource: "demo: the NAS case",
		})
		if err != nil {
			return fmt.Errorf("demo: tuning sandbox: %w", err)
		}
		addTuningPane(d, opts)
		return nil
	})
}

// addTuningPane adds the Tuning pane and its source to the dashboard.
func addTuningPane(d *dashboard, opts tuning.Options) {
	if opts.Interval == 0 {
		opts.Interval = dashboardTuningInterval
	}
	d.panes = append(d.panes, tuning.New(opts))
	d.feeds = append(d.feeds, func(ctx context.Context, send func(tea.Msg)) {
		tuning.Source(ctx, opts, send)
	})
}

// peerRTT measures the tunnel round trip to the peer named name (host name,
// MagicDNS name or Tailscale IP) with TSMP pings through tailscaled, and
// returns the lowest of three.
func peerRTT(ctx context.Context, c probes.LocalClient, name string) (time.Duration, error) {
	snap, err := probes.Gather(ctx, c, nil)
	if err != nil {
		return 0, err
	}
	peer := findPeer(snap, name)
	if peer == nil {
		return 0, fmt.Errorf("no peer named %q in this tailnet (see tailpath status)", name)
	}
	var best time.Duration
	var lastErr error
	for range 3 {
		err := probes.Ping(ctx, c, *peer, probes.PingTSMP, 1, 5*time.Second, func(r probes.PingResult) {
			if r.Err == "" && r.Latency > 0 && (best == 0 || r.Latency < best) {
				best = r.Latency
			}
		})
		if err != nil {
			lastErr = err
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("ping %s: %w", peer.Name, lastErr)
	}
	return best, nil
}

// findPeer returns the peer whose host name, MagicDNS name or Tailscale IP
// is name (names case-insensitively), or nil.
func findPeer(snap *probes.Snapshot, name string) *probes.Peer {
	for i := range snap.Peers {
		p := &snap.Peers[i]
		if strings.EqualFold(p.Name, name) || strings.EqualFold(p.DNSName, strings.TrimSuffix(name, ".")) {
			return p
		}
		for _, ip := range p.TailscaleIPs {
			if ip.String() == name {
				return p
			}
		}
	}
	return nil
}
