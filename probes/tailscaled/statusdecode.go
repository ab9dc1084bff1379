package tailscaled

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

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
		var seen uint8
		if err := d.object(statusNames, func(name []byte) error {
			if i := slices.Index(statusNames, string(name)); i >= 0 {
				if seen&(1<<i) != 0 {
					return d.twice("Status", name)
				}
				seen |= 1 << i
			}
			switch string(name) {
			case "Version":
				return d.str(&st.Version)
			case "BackendState":
				return d.str(&st.BackendState)
			case "Health":
				return d.strs(&st.Health)
			case "Self":
				return d.self(&st.Self)
			case "Peer":
				return d.peers(&st.Peer)
			}
			return errUnknownMember
		}); err != nil {
			return nil, err
		}
	default:
		return nil, d.unread("Status", k)
	}
	// One value: encoding/json refuses what follows it.
	if _, err := d.dec.ReadToken(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the Status object", errNotByHand)
	}
	return st, nil
}

// errNotByHand is what a hand decoder (decodeStatus, decodeBusFirst)
// leaves to a decoder built by reflection.
var errNotByHand = errors.New("not read by hand")

// twice is the error for a member name given twice in one object.
func (d handDecoder) twice(what string, name []byte) error {
	return fmt.Errorf("%w: %s names %q twice", errNotByHand, what, name)
}

// errUnknownMember is what a member function returns for a name that is
// none of its fields: object skips the value.
var errUnknownMember = errors.New("unknown member")

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

// handDecoder reads tokens as the hand decoders need them.
type handDecoder struct{ dec *jsontext.Decoder }

// unread is the error for a value of kind k where what is read wants
// another.
func (d handDecoder) unread(what string, k jsontext.Kind) error {
	return fmt.Errorf("%w: %s is a JSON %v", errNotByHand, what, k)
}

// object reads an object, calling member for each name with the decoder
// at its value; a name member does not know (errUnknownMember) has its
// value skipped, unless it matches one of names without case. The name
// is valid until member reads the value.
func (d handDecoder) object(names []string, member func(name []byte) error) error {
	if _, err := d.dec.ReadToken(); err != nil { // '{'
		return err
	}
	var buf []byte
	for d.dec.PeekKind() != '}' {
		raw, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		if len(raw) < 2 || raw[0] != '"' {
			return d.unread("a member name", raw.Kind())
		}
		name := raw[1 : len(raw)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			if buf, err = jsontext.AppendUnquote(buf[:0], raw); err != nil {
				return err
			}
			name = buf
		}
		err = member(name)
		if err == errUnknownMember {
			if foldsToOne(name, names) {
				return fmt.Errorf("%w: member %q matches a field only without case", errNotByHand, name)
			}
			err = d.dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := d.dec.ReadToken() // '}'
	return err
}

// fields reads an object of a struct's members, as object does: member
// reads the value of a field it knows and returns the field's number in
// names (below 64). A field given twice is left to reflection, which
// would merge the two or keep one, depending on its kind.
func (d handDecoder) fields(what string, names []string, member func(name []byte) (int, error)) error {
	var seen uint64
	return d.object(names, func(name []byte) error {
		f, err := member(name)
		if err != nil {
			return err
		}
		if seen&(1<<f) != 0 {
			return fmt.Errorf("%w: %s names %q twice", errNotByHand, what, names[f])
		}
		seen |= 1 << f
		return nil
	})
}

// foldsToOne reports whether name equals one of names without case, as
// encoding/json matches a member to a field, or also without '_' and '-',
// as json v2 matches one without case (MatchCaseInsensitiveNames).
func foldsToOne(name []byte, names []string) bool {
	if bytes.ContainsAny(name, "_-") {
		name = bytes.Map(func(r rune) rune {
			if r == '_' || r == '-' {
				return -1
			}
			return r
		}, name)
	}
	// Folding keeps an ASCII name's length: most names are ruled out
	// without comparing them.
	ascii := isASCII(name)
	for _, n := range names {
		if (len(n) == len(name) || !ascii) && bytes.EqualFold([]byte(n), name) {
			return true
		}
	}
	return false
}

func isASCII(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// null reads a null if one comes: encoding/json leaves a value as it is
// for null (and sets a pointer, slice or map to nil, which it is here).
func (d handDecoder) null() (bool, error) {
	if d.dec.PeekKind() != 'n' {
		return false, nil
	}
	_, err := d.dec.ReadToken()
	return true, err
}

func (d handDecoder) str(dst *string) error {
	switch k := d.dec.PeekKind(); k {
	case 'n':
		_, err := d.dec.ReadToken()
		return err
	case '"':
		tok, err := d.dec.ReadToken()
		if err != nil {
			return err
		}
		*dst = tok.String()
		return nil
	default:
		return d.unread("a string", k)
	}
}

func (d handDecoder) boolean(dst *bool) error {
	switch k := d.dec.PeekKind(); k {
	case 'n':
		_, err := d.dec.ReadToken()
		return err
	case 't', 'f':
		tok, err := d.dec.ReadToken()
		if err != nil {
			return err
		}
		*dst = tok.Bool()
		return nil
	default:
		return d.unread("a bool", k)
	}
}

// int64 reads a number as encoding/json reads one into an int64: its
// literal parsed by strconv.ParseInt, so a fraction, an exponent or an
// overflow is refused.
func (d handDecoder) int64(dst *int64) error {
	switch k := d.dec.PeekKind(); k {
	case 'n':
		_, err := d.dec.ReadToken()
		return err
	case '0':
		raw, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return fmt.Errorf("%w: %s is no int64", errNotByHand, raw)
		}
		*dst = n
		return nil
	default:
		return d.unread("an integer", k)
	}
}

// time reads a time.Time as encoding/json does: its UnmarshalJSON, given
// the value as it stands (null leaves it be).
func (d handDecoder) time(dst *time.Time) error {
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	return dst.UnmarshalJSON(raw)
}

// timePtr reads a *time.Time: nil for null.
func (d handDecoder) timePtr(dst **time.Time) error {
	if null, err := d.null(); null || err != nil {
		*dst = nil
		return err
	}
	t := new(time.Time)
	if err := d.time(t); err != nil {
		return err
	}
	*dst = t
	return nil
}

// array reads null (nil, returned as false) or an array, calling elem
// for each value; an empty array is true with no call, for a non-nil
// empty slice as encoding/json makes.
func (d handDecoder) array(what string, elem func() error) (bool, error) {
	switch k := d.dec.PeekKind(); k {
	case 'n':
		_, err := d.dec.ReadToken()
		return false, err
	case '[':
	default:
		return false, d.unread(what, k)
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return false, err
	}
	for d.dec.PeekKind() != ']' {
		if err := elem(); err != nil {
			return false, err
		}
	}
	_, err := d.dec.ReadToken()
	return true, err
}

func (d handDecoder) strs(dst *[]string) error {
	return list(d, "a list of strings", dst, d.str)
}

// list reads null (nil) or an array into dst, each value by read; an
// empty array is a non-nil empty slice, as encoding/json makes.
func list[T any](d handDecoder, what string, dst *[]T, read func(*T) error) error {
	out := []T{}
	ok, err := d.array(what, func() error {
		var v T
		err := read(&v)
		out = append(out, v)
		return err
	})
	*dst = nil
	if ok {
		*dst = out
	}
	return err
}

// ptrTo reads null (nil) or an object into a new T by fields: member reads
// the value of each field of T it knows (errUnknownMember for the rest).
func ptrTo[T any](d handDecoder, what string, dst **T, names []string, member func(v *T, name []byte) (int, error)) error {
	if null, err := d.null(); null || err != nil {
		*dst = nil
		return err
	}
	if k := d.dec.PeekKind(); k != '{' {
		return d.unread(what, k)
	}
	v := new(T)
	*dst = v
	return d.fields(what, names, func(name []byte) (int, error) { return member(v, name) })
}

// text reads a string into a TextUnmarshaler (netip.Addr, netip.Prefix)
// as encoding/json does: unescaped, then UnmarshalText. Anything but a
// string, null too, is left to encoding/json.
func (d handDecoder) text(what string, dst interface{ UnmarshalText([]byte) error }) error {
	if k := d.dec.PeekKind(); k != '"' {
		return d.unread(what, k)
	}
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	// The string's bytes as they stand, when it has no escape: no copy.
	b := raw[1 : len(raw)-1]
	if bytes.IndexByte(b, '\\') >= 0 {
		if b, err = jsontext.AppendUnquote(nil, raw); err != nil {
			return err
		}
	}
	return dst.UnmarshalText(b)
}

func (d handDecoder) addrs(dst *[]netip.Addr) error {
	return list(d, "a list of addresses", dst, func(a *netip.Addr) error { return d.text("an address", a) })
}

func (d handDecoder) prefixes(dst *[]netip.Prefix) error {
	return list(d, "a list of prefixes", dst, func(p *netip.Prefix) error { return d.text("a prefix", p) })
}

// capMap reads a tailcfg.NodeCapMap: each capability's values kept as
// they stand (tailcfg.RawMessage's UnmarshalJSON).
func (d handDecoder) capMap(dst *tailcfg.NodeCapMap) error {
	switch k := d.dec.PeekKind(); k {
	case 'n':
		*dst = nil
		_, err := d.dec.ReadToken()
		return err
	case '{':
	default:
		return d.unread("CapMap", k)
	}
	m := tailcfg.NodeCapMap{}
	err := d.object(nil, func(name []byte) error {
		key := tailcfg.NodeCapability(name)
		var vals []tailcfg.RawMessage
		ok, err := d.array("a capability's values", func() error {
			raw, err := d.dec.ReadValue()
			vals = append(vals, tailcfg.RawMessage(raw))
			return err
		})
		if ok && vals == nil {
			vals = []tailcfg.RawMessage{}
		}
		m[key] = vals
		return err
	})
	*dst = m
	return err
}

// self reads Status.Self: selfLite's fields, into a PeerStatus.
func (d handDecoder) self(dst **ipnstate.PeerStatus) error {
	if null, err := d.null(); null || err != nil {
		*dst = nil
		return err
	}
	if k := d.dec.PeekKind(); k != '{' {
		return d.unread("Self", k)
	}
	var s selfLite
	var seen uint16
	if err := d.object(selfNames, func(name []byte) error {
		if i := slices.Index(selfNames, string(name)); i >= 0 {
			if seen&(1<<i) != 0 {
				return d.twice("Self", name)
			}
			seen |= 1 << i
		}
		switch string(name) {
		case "ID":
			return d.str((*string)(&s.ID))
		case "NodeID":
			return d.int64((*int64)(&s.NodeID))
		case "HostName":
			return d.str(&s.HostName)
		case "DNSName":
			return d.str(&s.DNSName)
		case "OS":
			return d.str(&s.OS)
		case "TailscaleIPs":
			return d.addrs(&s.TailscaleIPs)
		case "Relay":
			return d.str(&s.Relay)
		case "Addrs":
			return d.strs(&s.Addrs)
		case "CapMap":
			return d.capMap(&s.CapMap)
		}
		return errUnknownMember
	}); err != nil {
		return err
	}
	*dst = s.to()
	return nil
}

// peers reads Status.Peer, an object of PeerStatus by node key, into a
// list in the order they come (the keys are not read); a null peer is
// left out, as Gather leaves out a nil one.
func (d handDecoder) peers(dst *peerList) error {
	switch k := d.dec.PeekKind(); k {
	case 'n':
		*dst = nil
		_, err := d.dec.ReadToken()
		return err
	case '{':
	default:
		return d.unread("Status.Peer", k)
	}
	// Each peer is read into one peerLite, then copied into a PeerStatus
	// from a block of them: no PeerStatus allocated one by one.
	out := peerList{}
	var block []ipnstate.PeerStatus
	var p peerLite
	keys := map[string]bool{}
	err := d.object(nil, func(key []byte) error {
		if keys[string(key)] {
			return d.twice("Status.Peer", key)
		}
		keys[string(key)] = true
		switch k := d.dec.PeekKind(); k {
		case 'n':
			_, err := d.dec.ReadToken()
			return err
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
	*dst = out
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
