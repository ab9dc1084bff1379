package app

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"tailscale.com/client/local"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// sizedPinger is the LocalAPI call behind `tailscale ping --size`;
// *local.Client has it.
type sizedPinger interface {
	PingWithOpts(ctx context.Context, ip netip.Addr, pingtype tailcfg.PingType, opts local.PingOpts) (*ipnstate.PingResult, error)
}

// MTUProbe finds the largest packet the direct path to the peer named name
// carries, with DISCO pings of growing size through tailscaled
// (tune.ProbeMTU). It is what `tailpath tune --mtu-probe` uses.
func MTUProbe(ctx context.Context, c tailscaled.LocalClient, name string, o tune.MTUProbeOptions) (tune.MTUProbe, error) {
	return mtuProbe(ctx, c, name, o)
}

func mtuProbe(ctx context.Context, c tailscaled.LocalClient, name string, o tune.MTUProbeOptions) (tune.MTUProbe, error) {
	sp, ok := c.(sizedPinger)
	if !ok {
		return tune.MTUProbe{}, fmt.Errorf("this LocalAPI client cannot send sized pings")
	}
	snap, err := tailscaled.Gather(ctx, c, nil)
	if err != nil {
		return tune.MTUProbe{}, err
	}
	peer := findPeer(snap, name)
	if peer == nil {
		return tune.MTUProbe{}, noSuchPeer(name)
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
			return tune.Pong{}, tailscaled.ConnectError(err, "")
		}
		if pr.Err != "" {
			return tune.Pong{}, fmt.Errorf("%s", safetext.Clean(pr.Err))
		}
		via, path := probes.ViaText(pr, tailcfg.PingDisco)
		p := tune.Pong{Via: string(via), Latency: time.Duration(pr.LatencySeconds * float64(time.Second))}
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
	return tune.ProbeMTU(ctx, string(peer.Name), ping, o)
}
