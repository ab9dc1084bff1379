package probes

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"tailscale.com/ipn"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/tscompat"
)

// netmapNodes is every node of the netmap at once, from the IPN bus's
// initial message: one LocalAPI request where WhoIs takes one per peer
// (1,000 peers: one request instead of 1,000). Keyed like Gather's WhoIs
// cache: "" for ourselves, "peer:<stable id>" for peers.
type netmapNodes map[string]*tailcfg.Node

// netmapMask is what readNetmapNodes asks the IPN bus for: the initial
// netmap, and no netmap in later messages. A v1.104 daemon refuses it
// (errNetmapRefused; internal/tscompat).
const netmapMask = tscompat.NotifyInitialNetMap | ipn.NotifyNoNetMap

// readNetmapNodes watches the IPN bus for its first message with
// NotifyInitialNetMap and returns the nodes it carries, decoded into only
// the node fields Gather reads (nodeLite). Errors: the watch fails, the
// daemon refuses the mask (errNetmapRefused: v1.104 and later, where
// ipn.ValidateNotifyWatchOpt rejects the bit), or the first message has no
// netmap (a daemon not logged in; the initial netmap is tailscaled's
// legacy field, Notify.NetMap, kept for the initial message on every
// platform in v1.102 and gone in v1.104). Callers fall back to WhoIs.
//
// It needs a client that makes raw LocalAPI requests (*local.Client, as
// tsnet.Server.LocalClient is too); any other gets errNoNetmap. (Reading
// the message through WatchIPNBus would decode every node whole, and
// needs ipn.Notify.NetMap, which v1.104's ipn package no longer has.)
func readNetmapNodes(ctx context.Context, c LocalClient) (netmapNodes, error) {
	if raw, ok := c.(rawLocalAPI); ok {
		return readNetmapNodesRaw(ctx, raw)
	}
	return nil, errNoNetmap
}

var errNoNetmap = errors.New("the IPN bus's first message carries no netmap")

// errNetmapRefused is what readNetmapNodes returns (wrapped in a
// *netmapRefusedError with the daemon's words) when tailscaled refuses a
// watch asking for the initial netmap: 400 from the LocalAPI, as v1.104's
// serveWatchIPNBus answers ipn.ValidateNotifyWatchOpt's "the
// NotifyInitialNetMap IPN bus subscription bit is no longer supported",
// or a first message carrying only ErrMessage. Such a daemon will not
// send it on the same connection, so Gather stops asking
// (Snapshot.netmapRefused) and reads nodes by WhoIs.
var errNetmapRefused = errors.New("tailscaled refuses to send the initial netmap")

type netmapRefusedError struct{ why string }

func (e *netmapRefusedError) Error() string {
	return errNetmapRefused.Error() + ": " + cutText(cleanString(e.why), 160)
}
func (e *netmapRefusedError) Unwrap() error { return errNetmapRefused }

// busFirstLite is the IPN bus's first message (ipn.Notify) as far as
// Gather reads it: the netmap's nodes (netmap.NetworkMap's SelfNode and
// Peers, each a tailcfg.Node).
type busFirstLite struct {
	ErrMessage *string
	NetMap     *struct {
		SelfNode *nodeLite
		Peers    []*nodeLite
	}
}

// nodeLite is the part of a tailcfg.Node's JSON that is read of a cached
// node: by Gather (buildPeer, OnlineState, peerSideFromLocal, the self
// NetInfo) and by Source (the ID, to drop what the IPN bus made stale).
// The same field names and types, so the JSON decodes to the same values.
// A field Gather starts reading from a node must be added here and in
// node; TestNetmapLiteMatchesBus compares both ways of reading.
type nodeLite struct {
	ID        tailcfg.NodeID
	StableID  tailcfg.StableNodeID
	Endpoints []netip.AddrPort
	HomeDERP  tscompat.RegionID
	LastSeen  *time.Time
	Online    *bool
	Cap       tailcfg.CapabilityVersion
	Hostinfo  *struct {
		IPNVersion string
		NetInfo    *tailcfg.NetInfo
	}
}

// node is n as a tailcfg.Node with only nodeLite's fields set.
func (n *nodeLite) node() *tailcfg.Node {
	out := &tailcfg.Node{
		ID:        n.ID,
		StableID:  n.StableID,
		Endpoints: n.Endpoints,
		HomeDERP:  n.HomeDERP,
		LastSeen:  n.LastSeen,
		Online:    n.Online,
		Cap:       n.Cap,
	}
	if h := n.Hostinfo; h != nil {
		out.Hostinfo = (&tailcfg.Hostinfo{IPNVersion: h.IPNVersion, NetInfo: h.NetInfo}).View()
	}
	return out
}

// readNetmapNodesRaw asks for the IPN bus itself (GET
// /localapi/v0/watch-ipn-bus, as local.Client.WatchIPNBus does) and
// decodes only the first message's nodes, and of each only nodeLite's
// fields: a thousand peers' whole nodes (Hostinfo, keys, addresses,
// capabilities) cost more to decode than the Status they complement
// (docs/perf.md, issue 8).
func readNetmapNodesRaw(ctx context.Context, c rawLocalAPI) (netmapNodes, error) {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mask, err := netmapMask.MarshalText()
	if err != nil {
		return nil, err
	}
	res, err := localGet(bctx, c, "/localapi/v0/watch-ipn-bus?mask="+string(mask))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest:
		// The reason, as text (http.Error); a line at most.
		why, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return nil, &netmapRefusedError{res.Status + ": " + string(why)}
	default:
		return nil, errors.New(res.Status)
	}
	// Decoded as encoding/json decodes ipn.Notify: names matched without
	// case, duplicate names and invalid UTF-8 let through. The decoder
	// reads one value: the stream stays open after it.
	dec := jsontext.NewDecoder(res.Body, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var first busFirstLite
	if err := jsonv2.UnmarshalDecode(dec, &first, jsonv2.MatchCaseInsensitiveNames(true)); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if first.ErrMessage != nil {
		return nil, &netmapRefusedError{*first.ErrMessage}
	}
	nm := first.NetMap
	if nm == nil {
		return nil, errNoNetmap
	}
	out := make(netmapNodes, len(nm.Peers)+1)
	if nm.SelfNode != nil {
		out[""] = nm.SelfNode.node()
	}
	for _, p := range nm.Peers {
		if p != nil {
			out["peer:"+string(p.StableID)] = p.node()
		}
	}
	return out, nil
}
