package probes

import (
	"context"
	"errors"

	"tailscale.com/ipn"
	"tailscale.com/tailcfg"
)

// netmapNodes is every node of the netmap at once, from the IPN bus's
// initial message: one LocalAPI request where WhoIs takes one per peer
// (1,000 peers: one request instead of 1,000). Keyed like Gather's WhoIs
// cache: "" for ourselves, "peer:<stable id>" for peers.
type netmapNodes map[string]*tailcfg.Node

// readNetmapNodes watches the IPN bus for its first message with
// NotifyInitialNetMap and returns the nodes it carries. Errors: the watch
// fails or is refused, or the first message has no netmap (a daemon not
// logged in, or one that no longer sends it: the initial netmap is
// tailscaled's legacy field, Notify.NetMap, kept for the initial message
// on every platform in v1.102). Callers fall back to WhoIs.
func readNetmapNodes(ctx context.Context, c LocalClient) (netmapNodes, error) {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.WatchIPNBus(bctx, ipn.NotifyInitialNetMap|ipn.NotifyNoNetMap)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	n, err := w.Next()
	if err != nil {
		return nil, err
	}
	//lint:ignore SA1019 the initial netmap is the one message that carries every peer's node at once; it is sent on every platform when NotifyInitialNetMap is asked for (ipnlocal WatchNotificationsAs), and without it Gather asks WhoIs per peer.
	nm := n.NetMap
	if nm == nil {
		return nil, errors.New("the IPN bus's first message carries no netmap")
	}
	out := make(netmapNodes, len(nm.Peers)+1)
	if nm.SelfNode.Valid() {
		out[""] = nm.SelfNode.AsStruct()
	}
	for _, p := range nm.Peers {
		if p.Valid() {
			out["peer:"+string(p.StableID())] = p.AsStruct()
		}
	}
	return out, nil
}
