package tailscaled

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
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
	Self   *ipnstate.PeerStatus `json:"-"`
	Health []string
	Peer   peerList
	// SelfLite is Self as readStatusRaw decodes it; it then moves it to
	// Self.
	SelfLite *selfLite `json:"Self,omitempty"`
}

// selfLite is the part of Status.Self's JSON that Gather reads (gather.go
// and early.go: names, addresses, home DERP, endpoints, capabilities),
// with PeerStatus's names and types; TestReadStatusMatchesClient compares
// it with local.Client's. Decoding only these, json v2 never builds the
// decoders of the rest of PeerStatus (keys, views, peer API URLs).
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
// /localapi/v0/status) decoded by the json v2 decoder with encoding/json's
// semantics (jsonv1.DefaultOptionsV1) into only what Gather reads: each
// peer's fields that Gather and probes.Classify read (peerLite), and not
// its node key, keys, capabilities, peer API URLs or SSH host keys, nor
// the map they come in (docs/perf.md, issues 8 and 31). When that request
// or its decoding fails, c.Status is asked, so errors are Status's own
// (access denied, not running, a reply that does not parse) and a reply
// only encoding/json accepts is still read. A reply naming one node key
// twice (which tailscaled's encoding of a map cannot send) lists both,
// where encoding/json keeps the last.
func readStatus(ctx context.Context, c LocalClient) (*status, error) {
	if raw, ok := c.(rawLocalAPI); ok {
		if st, err := readStatusRaw(ctx, raw); err == nil {
			return st, nil
		}
	}
	st, err := c.Status(ctx)
	return statusOf(st), err
}

// statusDecodeOptions decode Status as encoding/json does.
var statusDecodeOptions = jsonv1.DefaultOptionsV1()

func readStatusRaw(ctx context.Context, c rawLocalAPI) (*status, error) {
	res, err := localGetOK(ctx, c, "/localapi/v0/status")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var st *status
	if err := jsonv2.UnmarshalRead(res.Body, &st, statusDecodeOptions); err != nil {
		return nil, err
	}
	if st != nil && st.SelfLite != nil {
		st.Self, st.SelfLite = st.SelfLite.to(), nil
	}
	return st, nil
}

// peerList is Status.Peer's values in the order they come.
type peerList []*ipnstate.PeerStatus

// UnmarshalJSONFrom reads Status.Peer, an object of PeerStatus by node
// key, into the peers' fields Gather reads (peerLite), skipping the keys;
// a null peer is left out, as Gather leaves out a nil one.
func (l *peerList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case 'n':
		*l = nil
		_, err := dec.ReadToken()
		return err
	case '{':
	default:
		return fmt.Errorf("Status.Peer: a JSON %v, want an object", k)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	// Each peer is decoded into one peerLite, then copied into a
	// PeerStatus from a block of them: no list of peerLite growing, no
	// PeerStatus allocated one by one.
	var out peerList
	var block []ipnstate.PeerStatus
	var lite peerLite // one, reused: decoding into it makes it escape
	for dec.PeekKind() != '}' {
		if _, err := dec.ReadToken(); err != nil { // the node key
			return err
		}
		if dec.PeekKind() == 'n' {
			if _, err := dec.ReadToken(); err != nil {
				return err
			}
			continue
		}
		lite = peerLite{}
		if err := jsonv2.UnmarshalDecode(dec, &lite); err != nil {
			return err
		}
		if len(block) == cap(block) {
			block = make([]ipnstate.PeerStatus, 0, peerBlock)
		}
		block = block[:len(block)+1]
		ps := &block[len(block)-1]
		lite.to(ps)
		out = append(out, ps)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*l = out
	return nil
}

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
