package tailscaled

import (
	"context"
	"net/netip"
	"time"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/views"
)

// status is what Gather reads of Status (ipnstate.Status): the daemon's
// version and state, our own node, the health warnings and the peers, in
// a list (Status.Peer is a map keyed by node key, which Gather never
// reads).
type status struct {
	Version      string
	BackendState string
	// Self is our own node: the fields Gather reads when readStatusRaw
	// read it (selfLite), all of them from a LocalClient's Status.
	Self   *ipnstate.PeerStatus
	Health []string
	Peer   peerList
}

// selfLite is the part of Status.Self's JSON that Gather reads (gather.go
// and early.go: names, addresses, home DERP, endpoints, capabilities),
// with PeerStatus's names and types; TestReadStatusMatchesClient compares
// it with local.Client's. decodeStatus reads these and skips the rest of
// PeerStatus (keys, views, peer API URLs).
type selfLite struct {
	ID           tailcfg.StableNodeID
	NodeID       tailcfg.NodeID
	HostName     string
	DNSName      string
	OS           string
	TailscaleIPs []netip.Addr
	Relay        string
	Addrs        []string
	CapMap       tailcfg.NodeCapMap
}

// to is s as a PeerStatus.
func (s *selfLite) to() *ipnstate.PeerStatus {
	return &ipnstate.PeerStatus{ID: s.ID, NodeID: s.NodeID, HostName: s.HostName, DNSName: s.DNSName, OS: s.OS,
		TailscaleIPs: s.TailscaleIPs, Relay: s.Relay, Addrs: s.Addrs, CapMap: s.CapMap}
}

// statusOf is st as Gather reads it (a LocalClient's own Status); nil for
// nil.
func statusOf(st *ipnstate.Status) *status {
	if st == nil {
		return nil
	}
	out := &status{Version: st.Version, BackendState: st.BackendState, Self: st.Self, Health: st.Health,
		Peer: make(peerList, 0, len(st.Peer))}
	for _, ps := range st.Peer {
		if ps != nil {
			out.Peer = append(out.Peer, ps)
		}
	}
	return out
}

// readStatus is c.Status(ctx), decoded faster for a client that makes
// raw LocalAPI requests (*local.Client): the same request (GET
// /localapi/v0/status) read by hand (decodeStatus) into only what Gather
// reads: each peer's fields that Gather and probes.Classify read
// (peerLite), and not its node key, keys, capabilities, peer API URLs or
// SSH host keys, nor the map they come in (docs/perf.md, issues 8 and
// 31). When that request or its decoding fails, c.Status is asked, so
// errors are Status's own (access denied, not running, a reply that does
// not parse) and a reply only encoding/json reads as it does (a member
// named without case, a node key given twice) is read by encoding/json.
func readStatus(ctx context.Context, c LocalClient) (*status, error) {
	if raw, ok := c.(rawLocalAPI); ok {
		if st, err := readStatusRaw(ctx, raw); err == nil {
			return st, nil
		}
	}
	st, err := c.Status(ctx)
	return statusOf(st), err
}

func readStatusRaw(ctx context.Context, c rawLocalAPI) (*status, error) {
	res, err := localGetOK(ctx, c, "/localapi/v0/status")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return decodeStatus(res.Body)
}

// peerList is Status.Peer's values in the order they come.
type peerList []*ipnstate.PeerStatus

// peerBlock is how many PeerStatus peerList allocates at a time.
const peerBlock = 64

// peerLite is the part of a PeerStatus's JSON that Gather and
// probes.Classify read (the fields probes/snapshot's prunePeer keeps),
// with the same names and types. A field Gather starts reading must be
// added here and in to; TestReadStatusMatchesClient compares both ways of
// reading.
type peerLite struct {
	ID             tailcfg.StableNodeID
	NodeID         tailcfg.NodeID
	HostName       string
	DNSName        string
	OS             string
	TailscaleIPs   []netip.Addr
	PrimaryRoutes  []netip.Prefix
	CurAddr        string
	Relay          string
	PeerRelay      string
	RxBytes        int64
	TxBytes        int64
	LastSeen       time.Time
	LastHandshake  time.Time
	Online         bool
	ExitNode       bool
	ExitNodeOption bool
	Active         bool
	ShareeNode     bool
	Expired        bool
	KeyExpiry      *time.Time
}

// to sets ps's fields from p.
func (p *peerLite) to(ps *ipnstate.PeerStatus) {
	*ps = ipnstate.PeerStatus{
		ID: p.ID, NodeID: p.NodeID, HostName: p.HostName, DNSName: p.DNSName, OS: p.OS,
		TailscaleIPs: p.TailscaleIPs, CurAddr: p.CurAddr, Relay: p.Relay, PeerRelay: p.PeerRelay,
		RxBytes: p.RxBytes, TxBytes: p.TxBytes, LastSeen: p.LastSeen, LastHandshake: p.LastHandshake,
		Online: p.Online, ExitNode: p.ExitNode, ExitNodeOption: p.ExitNodeOption, Active: p.Active,
		ShareeNode: p.ShareeNode, Expired: p.Expired, KeyExpiry: p.KeyExpiry,
	}
	if p.PrimaryRoutes != nil {
		v := views.SliceOf(p.PrimaryRoutes)
		ps.PrimaryRoutes = &v
	}
}
