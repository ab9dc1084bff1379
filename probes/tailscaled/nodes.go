package tailscaled

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"time"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
)

// A peer's node (its tailcfg.Node: endpoints, home DERP, the tri-state
// Online, NetInfo, client version) is a request of its own when the IPN
// bus carries no netmap: a tailscaled v1.104 refuses it, and a warm
// gather's cached answers age (WhoIsMaxAge). Only some verdicts read a
// node; Gather asks for those peers' nodes and, unless
// GatherOptions.AllNodes, leaves the others to what it already holds (the
// netmap when it came, answers cached in prev) and to
// GatherOptions.FillNodes.

// needsNode reports whether a verdict on ps may read a fact only its node
// holds, so Gather must have the node before the joiner judges:
//
//   - a peer Status does not call online (PeerStatus.Online is the node's
//     Online flattened, nil and false alike): whether it is offline or its
//     online state unknown is the node's (probes.OnlineState), and so is
//     whether an Active peer's path is DERP or offline (probes.Classify);
//   - a peer Active with no direct address: a DERP or peer-relay path,
//     whose causes read its endpoints, NetInfo, home DERP and client
//     version.
//
// Every other peer is online by Status and direct or idle: its verdict
// (direct, idle, key-expired, the direct-in-tunnel warning) reads Status
// alone (probes/reasons.go: those rules' Needs), and so do the
// tailnet-wide facts (probes.DeriveTailnet). A board's peer is the
// exception (its evidence is judged against control's endpoints on any
// path): a gather for a board sets GatherOptions.AllNodes.
// TestNodesNeededVerdictsIdentical holds the verdicts to those of a
// gather with every node.
func needsNode(ps *ipnstate.PeerStatus) bool {
	return !ps.Online || (ps.Active && ps.CurAddr == "")
}

// errWhoIsDenied is whoisLite's answer to a 403 (tailscaled's "whois
// access denied"): the same as local.Client's AccessDeniedError to Gather.
var errWhoIsDenied = errors.New("whois: permission denied")

// whoisLite is WhoIs(ip) for a client that makes raw LocalAPI requests: the
// same request (GET /localapi/v0/whois?addr=), its node decoded into
// nodeLite alone (not the whole tailcfg.Node, its Hostinfo and the user's
// profile), by hand where it can be (whoisNodeOf). A 403 is errWhoIsDenied. ok is false when the request failed,
// answered another status or did not decode: the caller asks c.WhoIs,
// whose errors are the client's own (not found, not running).
func whoisLite(ctx context.Context, c rawLocalAPI, ip netip.Addr) (n *nodeLite, err error, ok bool) {
	res, err := localGet(ctx, c, "/localapi/v0/whois?addr="+url.QueryEscape(ip.String()))
	if err != nil {
		return nil, nil, false
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusForbidden:
		return nil, errWhoIsDenied, true
	default:
		return nil, nil, false
	}
	buf := replyBufs.Get().(*bytes.Buffer)
	defer replyBufs.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(res.Body); err != nil {
		return nil, nil, false
	}
	n, ok = whoisNodeOf(buf.Bytes())
	return n, nil, ok
}

// replyBufs hold WhoIs replies while they are read (a thousand a gather
// on a large tailnet whose daemon sends no netmap); nothing read from
// one keeps its bytes.
var replyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// FillMaxAge is how old a node that no verdict reads may grow before
// GatherOptions.FillNodes asks it again. The IPN bus's peer patches drop
// a changed peer's node from a Source's cache at once, so this only
// bounds how long a missed change could show.
const FillMaxAge = 10 * WhoIsMaxAge

// askNodes says, for each of pss (the gather's peers, in order), whether
// Gather asks its node when no fresh one is held: every peer with
// opts.AllNodes; else those needsNode names, and up to opts.FillNodes
// others whose node is missing (first) or older than FillMaxAge (oldest
// first). Neither the netmap's nodes (bulk) nor fresh cached ones are
// asked again.
func askNodes(pss []*ipnstate.PeerStatus, opts GatherOptions, prevNodes map[string]cachedNode, bulk netmapNodes, now time.Time) []bool {
	ask := make([]bool, len(pss))
	type cand struct {
		i  int
		at time.Time // zero: none held
	}
	var fill []cand
	for i, ps := range pss {
		if opts.AllNodes || needsNode(ps) {
			ask[i] = true
			continue
		}
		if opts.FillNodes <= 0 {
			continue
		}
		key := "peer:" + string(ps.ID)
		if bulk[key] != nil {
			continue
		}
		var at time.Time
		if cn, ok := prevNodes[key]; ok && cn.node != nil && !opts.NoCache {
			if age := now.Sub(cn.at); age < FillMaxAge && age >= 0 {
				continue
			}
			at = cn.at
		}
		fill = append(fill, cand{i, at})
	}
	if len(fill) > opts.FillNodes {
		slices.SortStableFunc(fill, func(a, b cand) int { return a.at.Compare(b.at) })
		fill = fill[:opts.FillNodes]
	}
	for _, c := range fill {
		ask[c.i] = true
	}
	return ask
}

// onlineState is probes.OnlineState of ps with node n (nil: none held).
func onlineState(ps *ipnstate.PeerStatus, n *nodeLite) (*bool, string) {
	if n == nil {
		return probes.OnlineState(ps, nil)
	}
	return probes.OnlineState(ps, &tailcfg.Node{Online: n.Online})
}

// peerSideOf is probes.PeerSideLocal of p with node n's facts.
func peerSideOf(p *probes.Peer, n *nodeLite, regions map[int]probes.Region) *probes.PeerSide {
	var version string
	var home int
	if h := n.Hostinfo; h != nil {
		version = h.IPNVersion
		if h.NetInfo != nil {
			home = tscompat.IntRegionID(h.NetInfo.PreferredDERP)
		}
	}
	return probes.PeerSideLocal(p, int(n.Cap), n.Hostinfo != nil, version, home, regions)
}
