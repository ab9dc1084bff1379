package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// PeerRTT measures the tunnel round trip to the peer named name (host name,
// MagicDNS name or Tailscale IP) with TSMP pings through tailscaled, and
// returns the lowest of three. It is what `tailpath tune --peer` uses.
func PeerRTT(ctx context.Context, c tailscaled.LocalClient, name string) (time.Duration, error) {
	snap, err := tailscaled.Gather(ctx, c, nil)
	if err != nil {
		return 0, err
	}
	peer := findPeer(snap, name)
	if peer == nil {
		return 0, noSuchPeer(name)
	}
	var best time.Duration
	var lastErr error
	for range 3 {
		err := tailscaled.Ping(ctx, c, *peer, probes.PingTSMP, 1, 5*time.Second, func(r probes.PingResult) {
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

// noSuchPeer is the error for a peer name the tailnet does not have: the
// user's input (InputError, exit 2), not a failure of tailscaled.
func noSuchPeer(name string) error {
	return InputError{fmt.Errorf("no peer named %q in this tailnet (see tailpath status)", name)}
}

// findPeer returns the peer whose host name, MagicDNS name or Tailscale IP
// is name (names case-insensitively), or nil.
func findPeer(snap *probes.Snapshot, name string) *probes.Peer {
	for i := range snap.Peers {
		p := &snap.Peers[i]
		if strings.EqualFold(string(p.Name), name) || strings.EqualFold(string(p.DNSName), strings.TrimSuffix(name, ".")) {
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
