package tailscaled

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

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
)

// netmapNodes is every node of the netmap at once, from the IPN bus's
// initial message: one LocalAPI request where WhoIs takes one per peer
// (1,000 peers: one request instead of 1,000). Keyed like Gather's WhoIs
// cache: "" for ourselves, "peer:<stable id>" for peers.
type netmapNodes map[string]*nodeLite

// netmapMask is what readNetmapNodes asks the IPN bus for: the initial
// netmap, every peer's WireGuard session state (a daemon that knows the
// bit sends its current states in the same first message;
// ipnlocal WatchNotificationsAs), and no netmap in later messages. A
// v1.104 daemon refuses it for the netmap bit (errNetmapRefused;
// internal/tscompat); Gather then reads the states alone (wgMask).
const netmapMask = tscompat.NotifyInitialNetMap | ipn.NotifyNoNetMap | ipn.NotifyPeerWireGuardState

// busFirst is what Gather reads of the IPN bus's first message: every
// node, and every peer's WireGuard session state by stable node id
// (wgKnown when the daemon reports states at all: it sent some, or it is
// new enough to have the bit, ipn.NotifyPeerWireGuardState, v1.102).
type busFirst struct {
	nodes   netmapNodes
	wg      map[string]WireGuardState
	wgKnown bool
	// derpMap is the netmap's DERP map (NetworkMap.DERPMap); nil when
	// the message has no netmap or the netmap none.
	derpMap *tailcfg.DERPMap
}

// wgStatesKnown reports whether a daemon of version v (Notify.Version)
// reports WireGuard states when asked: it sent some, or it is 1.102 or
// later, whose empty answer means no peer has a session.
func wgStatesKnown(version string, sent int) bool {
	if sent > 0 {
		return true
	}
	ok, parsed := probes.ClientVersionAtLeast(version, 1, 102)
	return ok && parsed
}

// readNetmapNodes watches the IPN bus for its first message with
// NotifyInitialNetMap and returns the nodes it carries, decoded into only
// the node fields Gather reads (nodeLite), and the peers' WireGuard
// states. Errors: the watch fails, the daemon refuses the mask
// (errNetmapRefused: v1.104 and later, where ipn.ValidateNotifyWatchOpt
// rejects the bit), or the first message has no netmap (a daemon not
// logged in; the initial netmap is tailscaled's legacy field,
// Notify.NetMap, kept for the initial message on every platform in v1.102
// and gone in v1.104). Callers fall back to WhoIs.
//
// Nodes need a client that makes raw LocalAPI requests (*local.Client, as
// tsnet.Server.LocalClient is too); any other gets the WireGuard states
// only, and errNoNetmap. (Reading the netmap through WatchIPNBus would
// decode every node whole, and needs ipn.Notify.NetMap, which v1.104's ipn
// package no longer has.)
func readNetmapNodes(ctx context.Context, c LocalClient) (busFirst, error) {
	return readBusFirst(ctx, c, netmapMask)
}

// wgMask asks the IPN bus for the WireGuard session states only; every
// daemon since v1.102 accepts it.
const wgMask = ipn.NotifyNoNetMap | ipn.NotifyPeerWireGuardState

// readWGStates reads every peer's WireGuard session state from the bus's
// first message, without the netmap (a Gather that has its nodes, or a
// daemon that refuses the netmap).
func readWGStates(ctx context.Context, c LocalClient) (busFirst, error) {
	first, err := readBusFirst(ctx, c, wgMask)
	if errors.Is(err, errNoNetmap) {
		err = nil
	}
	return first, err
}

// readBusFirst reads the bus's first message for mask.
func readBusFirst(ctx context.Context, c LocalClient, mask ipn.NotifyWatchOpt) (busFirst, error) {
	if raw, ok := c.(rawLocalAPI); ok {
		return readNetmapNodesRaw(ctx, raw, mask)
	}
	return readWGStatesBus(ctx, c, mask&^tscompat.NotifyInitialNetMap)
}

// readWGStatesBus reads the WireGuard states of the first message through
// WatchIPNBus (a client that makes no raw requests); never nodes.
func readWGStatesBus(ctx context.Context, c LocalClient, mask ipn.NotifyWatchOpt) (busFirst, error) {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.WatchIPNBus(bctx, mask)
	if err != nil {
		return busFirst{}, err
	}
	defer w.Close()
	n, err := w.Next()
	if err != nil {
		return busFirst{}, err
	}
	first := busFirst{wgKnown: wgStatesKnown(n.Version, len(n.PeerState))}
	for id, ps := range n.PeerState {
		if first.wg == nil {
			first.wg = map[string]WireGuardState{}
		}
		first.wg[string(id)] = WireGuardState{State: ps.PeerWireGuardState.String(), Since: ps.PeerWireGuardStateAt}
	}
	return first, errNoNetmap
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
	return errNetmapRefused.Error() + ": " + safetext.Cut(cleanString(e.why), 160)
}
func (e *netmapRefusedError) Unwrap() error { return errNetmapRefused }

// busFirstLite is the IPN bus's first message (ipn.Notify) as far as
// Gather reads it: the netmap's nodes (netmap.NetworkMap's SelfNode and
// Peers, each a tailcfg.Node) and its DERP map, the peers' WireGuard
// states, and the error a refusing daemon sends instead.
type busFirstLite struct {
	Version    string
	ErrMessage *string
	NetMap     *struct {
		SelfNode *nodeLite
		Peers    []*nodeLite
		DERPMap  *tailcfg.DERPMap
	}
	// PeerState is ipn.Notify.PeerState (NotifyPeerWireGuardState).
	PeerState map[string]struct {
		PeerWireGuardState   ipn.PeerWireGuardState
		PeerWireGuardStateAt time.Time
	}
}

// nodeLite is the part of a tailcfg.Node's JSON that is read of a node:
// by Gather (buildPeer, onlineState, peerSide, the self NetInfo) and by
// Source (the ID, to drop what the IPN bus made stale). The same field
// names and types, so the JSON decodes to the same values. It is what
// Gather keeps of a node (its WhoIs cache): the netmap's nodes and WhoIs
// answers decode straight into it, with nothing else of a node (keys,
// addresses, capabilities, the rest of Hostinfo) decoded or kept. A field
// Gather starts reading from a node must be added here, in liteOf and in
// node; TestNetmapLiteMatchesBus compares both ways of reading.
type nodeLite struct {
	ID        tailcfg.NodeID
	StableID  tailcfg.StableNodeID
	Endpoints []netip.AddrPort
	HomeDERP  tscompat.RegionID
	LastSeen  *time.Time
	Online    *bool
	Cap       tailcfg.CapabilityVersion
	// IsWireGuardOnly: a node that speaks WireGuard only (a Mullvad
	// exit node): no DISCO, so its CurAddr is set without a pong.
	IsWireGuardOnly bool
	Hostinfo        *hostinfoLite
}

// hostinfoLite is what Gather reads of a node's Hostinfo.
type hostinfoLite struct {
	IPNVersion string
	NetInfo    *tailcfg.NetInfo
}

// liteOf is what Gather reads of a whole node (a LocalClient's WhoIs
// answer); nil for nil.
func liteOf(n *tailcfg.Node) *nodeLite {
	if n == nil {
		return nil
	}
	l := &nodeLite{ID: n.ID, StableID: n.StableID, Endpoints: n.Endpoints, HomeDERP: n.HomeDERP,
		LastSeen: n.LastSeen, Online: n.Online, Cap: n.Cap, IsWireGuardOnly: n.IsWireGuardOnly}
	if h := n.Hostinfo; h.Valid() {
		l.Hostinfo = &hostinfoLite{IPNVersion: h.IPNVersion()}
		if ni := h.NetInfo(); ni.Valid() {
			l.Hostinfo.NetInfo = ni.AsStruct()
		}
	}
	return l
}

// node is n as a tailcfg.Node with only nodeLite's fields set (for
// NodeOf: a snapshot records what Gather read).
func (n *nodeLite) node() *tailcfg.Node {
	out := &tailcfg.Node{
		ID:        n.ID,
		StableID:  n.StableID,
		Endpoints: n.Endpoints,
		HomeDERP:  n.HomeDERP,
		LastSeen:  n.LastSeen,
		Online:    n.Online,
		Cap:       n.Cap,

		IsWireGuardOnly: n.IsWireGuardOnly,
	}
	if h := n.Hostinfo; h != nil {
		out.Hostinfo = (&tailcfg.Hostinfo{IPNVersion: h.IPNVersion, NetInfo: h.NetInfo}).View()
	}
	return out
}

// netInfo is n's NetInfo, nil when it has none.
func (n *nodeLite) netInfo() *tailcfg.NetInfo {
	if n == nil || n.Hostinfo == nil {
		return nil
	}
	return n.Hostinfo.NetInfo
}

// liteDecode are the options every lite decoding uses: names matched
// without case, duplicate names and invalid UTF-8 let through, as
// encoding/json decodes (local.Client's decoding of the same replies).
var liteDecode = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// readNetmapNodesRaw asks for the IPN bus itself (GET
// /localapi/v0/watch-ipn-bus, as local.Client.WatchIPNBus does) and
// decodes only the first message's nodes, and of each only nodeLite's
// fields: a thousand peers' whole nodes (Hostinfo, keys, addresses,
// capabilities) cost more to decode than the Status they complement
// (docs/perf.md, issue 8). It reads the WireGuard states too.
func readNetmapNodesRaw(ctx context.Context, c rawLocalAPI, m ipn.NotifyWatchOpt) (busFirst, error) {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mask, err := m.MarshalText()
	if err != nil {
		return busFirst{}, err
	}
	res, err := localGet(bctx, c, "/localapi/v0/watch-ipn-bus?mask="+string(mask))
	if err != nil {
		return busFirst{}, err
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest:
		// The reason, as text (http.Error); a line at most.
		why, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return busFirst{}, &netmapRefusedError{res.Status + ": " + string(why)}
	default:
		return busFirst{}, errors.New(res.Status)
	}
	// Decoded as encoding/json decodes ipn.Notify: names matched without
	// case, duplicate names and invalid UTF-8 let through. One value is
	// read: the stream stays open after it.
	lite, err := readBusFirstLite(res.Body)
	if err != nil {
		if ctx.Err() != nil {
			return busFirst{}, ctx.Err()
		}
		return busFirst{}, err
	}
	if lite.ErrMessage != nil {
		return busFirst{}, &netmapRefusedError{*lite.ErrMessage}
	}
	first := busFirst{wgKnown: wgStatesKnown(lite.Version, len(lite.PeerState))}
	for id, ps := range lite.PeerState {
		if first.wg == nil {
			first.wg = map[string]WireGuardState{}
		}
		first.wg[id] = WireGuardState{State: ps.PeerWireGuardState.String(), Since: ps.PeerWireGuardStateAt}
	}
	nm := lite.NetMap
	if nm == nil {
		return first, errNoNetmap
	}
	out := make(netmapNodes, len(nm.Peers)+1)
	if nm.SelfNode != nil {
		out[""] = nm.SelfNode
	}
	for _, p := range nm.Peers {
		if p != nil {
			out["peer:"+string(p.StableID)] = p
		}
	}
	first.nodes, first.derpMap = out, nm.DERPMap
	return first, nil
}
