package tailscaled

import (
	"io"
	"net/netip"

	"github.com/go-json-experiment/json/jsontext"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
)

// decodeStatus reads a Status reply (ipnstate.Status's JSON) into what
// Gather reads of it, field by field from jsontext's tokens: the version
// and state, the health warnings, our own node's selfLite fields and each
// peer's peerLite fields; every other member is skipped unread.
//
// A decoder built from the types by reflection (json v2, as readStatus
// used until issue 31's round 6) spends most of a small tailnet's decode
// building itself: 1.1 ms for a 4-peer Status in a new process, 0.05 ms
// once built, and a one-shot status is always a new process. Read by
// hand, the same Status costs the decode alone.
//
// It reads what encoding/json reads (local.Client's decoding of the same
// reply), value for value: FuzzDecodeStatus holds the two to one answer.
// Where the two could differ it does not guess: a member whose name
// matches a field's only without case, a name given twice, invalid UTF-8,
// a value of the wrong kind or a number that is no int64 are errors
// (errNotByHand), and readStatus asks local.Client's Status instead.
func decodeStatus(r io.Reader) (*status, error) {
	// Names given twice are let through as encoding/json lets them
	// (the last one's value stands, as it does here for every field of a
	// peer); where encoding/json would merge them instead (Self, Peer,
	// Self's CapMap) or keep one of two peers under one node key, the
	// reply is left to it. Tracking every name of every object cost a
	// fifth of a 1,000-peer decode.
	d := handDecoder{jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true))}
	var st *status
	switch k := d.dec.PeekKind(); k {
	case 'n':
		if _, err := d.dec.ReadToken(); err != nil {
			return nil, err
		}
	case '{':
		st = &status{}
		if err := d.fields("Status", statusNames, func(name []byte) (int, error) {
			switch string(name) {
			case "Version":
				return 0, d.str(&st.Version)
			case "BackendState":
				return 1, d.str(&st.BackendState)
			case "Health":
				return 2, d.strs(&st.Health)
			case "Self":
				return 3, d.self(&st.Self)
			case "Peer":
				return 4, d.peers(&st.Peer)
			}
			return 0, errUnknownMember
		}); err != nil {
			return nil, err
		}
	default:
		return nil, d.unread("Status", k)
	}
	// One value: encoding/json refuses what follows it.
	if err := d.end("the Status object"); err != nil {
		return nil, err
	}
	return st, nil
}

// The names decodeStatus reads, per object: a member that matches one of
// them only without case (which encoding/json would read into it) is left
// to encoding/json.
var (
	statusNames = []string{"Version", "BackendState", "Health", "Self", "Peer"}
	selfNames   = []string{"ID", "NodeID", "HostName", "DNSName", "OS", "TailscaleIPs", "Relay", "Addrs", "CapMap"}
	peerNames   = []string{"ID", "NodeID", "HostName", "DNSName", "OS", "TailscaleIPs", "PrimaryRoutes", "CurAddr",
		"Relay", "PeerRelay", "RxBytes", "TxBytes", "LastSeen", "LastHandshake", "Online", "ExitNode",
		"ExitNodeOption", "Active", "ShareeNode", "Expired", "KeyExpiry"}
)

func (d handDecoder) addrs(dst *[]netip.Addr) error {
	return list(d, "a list of addresses", dst, func(a *netip.Addr) error { return d.text("an address", a) })
}

func (d handDecoder) prefixes(dst *[]netip.Prefix) error {
	return list(d, "a list of prefixes", dst, func(p *netip.Prefix) error { return d.text("a prefix", p) })
}

// capMap reads a tailcfg.NodeCapMap: each capability's values kept as
// they stand (tailcfg.RawMessage's UnmarshalJSON).
func (d handDecoder) capMap(dst *tailcfg.NodeCapMap) error {
	m := tailcfg.NodeCapMap{}
	ok, err := d.mapOf("CapMap", func(key string) error {
		var vals []tailcfg.RawMessage
		err := list(d, "a capability's values", &vals, func(v *tailcfg.RawMessage) error {
			raw, err := d.dec.ReadValue()
			*v = tailcfg.RawMessage(raw)
			return err
		})
		m[tailcfg.NodeCapability(key)] = vals
		return err
	})
	*dst = nil
	if ok {
		*dst = m
	}
	return err
}

// self reads Status.Self: selfLite's fields, into a PeerStatus.
func (d handDecoder) self(dst **ipnstate.PeerStatus) error {
	var s *selfLite
	err := ptrTo(d, "Self", &s, selfNames, func(s *selfLite, name []byte) (int, error) {
		switch string(name) {
		case "ID":
			return 0, d.str((*string)(&s.ID))
		case "NodeID":
			return 1, d.int64((*int64)(&s.NodeID))
		case "HostName":
			return 2, d.str(&s.HostName)
		case "DNSName":
			return 3, d.str(&s.DNSName)
		case "OS":
			return 4, d.str(&s.OS)
		case "TailscaleIPs":
			return 5, d.addrs(&s.TailscaleIPs)
		case "Relay":
			return 6, d.str(&s.Relay)
		case "Addrs":
			return 7, d.strs(&s.Addrs)
		case "CapMap":
			return 8, d.capMap(&s.CapMap)
		}
		return 0, errUnknownMember
	})
	*dst = nil
	if s != nil {
		*dst = s.to()
	}
	return err
}

// peers reads Status.Peer, an object of PeerStatus by node key, into a
// list in the order they come (the keys are not read); a null peer is
// left out, as Gather leaves out a nil one.
func (d handDecoder) peers(dst *peerList) error {
	// Each peer is read into one peerLite, then copied into a PeerStatus
	// from a block of them: no PeerStatus allocated one by one.
	out := peerList{}
	var block []ipnstate.PeerStatus
	var p peerLite
	ok, err := d.mapOf("Status.Peer", func(string) error {
		if null, err := d.null(); null || err != nil {
			return err
		}
		switch k := d.dec.PeekKind(); k {
		case '{':
		default:
			return d.unread("a peer", k)
		}
		p = peerLite{}
		if err := d.peer(&p); err != nil {
			return err
		}
		if len(block) == cap(block) {
			block = make([]ipnstate.PeerStatus, 0, peerBlock)
		}
		block = block[:len(block)+1]
		ps := &block[len(block)-1]
		p.to(ps)
		out = append(out, ps)
		return nil
	})
	*dst = nil
	if ok {
		*dst = out
	}
	return err
}

// peer reads one PeerStatus's peerLite fields.
func (d handDecoder) peer(p *peerLite) error {
	return d.object(peerNames, func(name []byte) error {
		switch string(name) {
		case "ID":
			return d.str((*string)(&p.ID))
		case "NodeID":
			return d.int64((*int64)(&p.NodeID))
		case "HostName":
			return d.str(&p.HostName)
		case "DNSName":
			return d.str(&p.DNSName)
		case "OS":
			return d.str(&p.OS)
		case "TailscaleIPs":
			return d.addrs(&p.TailscaleIPs)
		case "PrimaryRoutes":
			return d.prefixes(&p.PrimaryRoutes)
		case "CurAddr":
			return d.str(&p.CurAddr)
		case "Relay":
			return d.str(&p.Relay)
		case "PeerRelay":
			return d.str(&p.PeerRelay)
		case "RxBytes":
			return d.int64(&p.RxBytes)
		case "TxBytes":
			return d.int64(&p.TxBytes)
		case "LastSeen":
			return d.time(&p.LastSeen)
		case "LastHandshake":
			return d.time(&p.LastHandshake)
		case "Online":
			return d.boolean(&p.Online)
		case "ExitNode":
			return d.boolean(&p.ExitNode)
		case "ExitNodeOption":
			return d.boolean(&p.ExitNodeOption)
		case "Active":
			return d.boolean(&p.Active)
		case "ShareeNode":
			return d.boolean(&p.ShareeNode)
		case "Expired":
			return d.boolean(&p.Expired)
		case "KeyExpiry":
			return d.timePtr(&p.KeyExpiry)
		}
		return errUnknownMember
	})
}
