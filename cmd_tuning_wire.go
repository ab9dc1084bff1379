package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"tailscale.com/client/local"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/safetext"
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
	tuneMTUProbe = func(ctx context.Context, peer string, o tune.MTUProbeOptions) (tune.MTUProbe, error) {
		return mtuProbe(ctx, probes.NewClient(""), peer, o)
	}
	demoHooks = append(demoHooks, func(ctx context.Context, d *dashboard, l *lab.Lab) error {
		dir := filepath.Join(l.Dir(), "tuning-sandbox")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("demo: tuning sandbox: %w", err)
		}
		// The seed NAS (DSM on Linux 4.4, no BBR, 20 ms to its peer), its
		// tailnet connections replayed from recorded tcp_info; apply and
		// revert really write its sandbox copy.
		opts, err := tuning.SeedNAS(dir)
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

// sizedPinger is the LocalAPI call behind `tailscale ping --size`;
// *local.Client has it.
type sizedPinger interface {
	PingWithOpts(ctx context.Context, ip netip.Addr, pingtype tailcfg.PingType, opts local.PingOpts) (*ipnstate.PingResult, error)
}

// mtuProbe finds the largest packet the direct path to the peer named
// name carries, with DISCO pings of growing size (tune.ProbeMTU).
func mtuProbe(ctx context.Context, c probes.LocalClient, name string, o tune.MTUProbeOptions) (tune.MTUProbe, error) {
	sp, ok := c.(sizedPinger)
	if !ok {
		return tune.MTUProbe{}, fmt.Errorf("this LocalAPI client cannot send sized pings")
	}
	snap, err := probes.Gather(ctx, c, nil)
	if err != nil {
		return tune.MTUProbe{}, err
	}
	peer := findPeer(snap, name)
	if peer == nil {
		return tune.MTUProbe{}, fmt.Errorf("no peer named %q in this tailnet (see tailpath status)", name)
	}
	var ip netip.Addr
	for _, a := range peer.TailscaleIPs {
		if !ip.IsValid() || a.Is4() && !ip.Is4() {
			ip = a
		}
	}
	if !ip.IsValid() {
		return tune.MTUProbe{}, fmt.Errorf("peer %s has no Tailscale IP", peer.Name)
	}
	ping := func(ctx context.Context, size int) (tune.Pong, error) {
		pr, err := sp.PingWithOpts(ctx, ip, tailcfg.PingDisco, local.PingOpts{Size: size})
		if err != nil {
			if ctx.Err() != nil {
				return tune.Pong{}, ctx.Err()
			}
			return tune.Pong{}, probes.ConnectError(err, "")
		}
		if pr.Err != "" {
			return tune.Pong{}, fmt.Errorf("%s", safetext.Clean(pr.Err))
		}
		via, path := probes.ViaText(pr, tailcfg.PingDisco)
		p := tune.Pong{Via: via, Latency: time.Duration(pr.LatencySeconds * float64(time.Second))}
		switch path {
		case probes.PathDirect:
			p.Path = tune.PongDirect
		case probes.PathPeerRelay:
			p.Path = tune.PongPeerRelay
		default:
			p.Path = tune.PongDERP
		}
		return p, nil
	}
	return tune.ProbeMTU(ctx, peer.Name, ping, o)
}
