package tailscaled

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"tailscale.com/types/opt"
)

// The readers the hand decoders (decodeStatus, decodeBusFirst) are made
// of: objects member by member, arrays, maps, and the values of the
// fields they read, each read as the reflective decoder would or left to
// it (errNotByHand).

// errNotByHand is what a hand decoder (decodeStatus, decodeBusFirst)
// leaves to a decoder built by reflection.
var errNotByHand = errors.New("not read by hand")

// twice is the error for a member name given twice in one object.
func (d handDecoder) twice(what, name string) error {
	return fmt.Errorf("%w: %s names %q twice", errNotByHand, what, name)
}

// errUnknownMember is what a member function returns for a name that is
// none of its fields: object skips the value.
var errUnknownMember = errors.New("unknown member")

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
			return d.twice(what, names[f])
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

// end is nil when the value read was the input's only one, as
// encoding/json and json v2 both require; what follows it, even an error
// reading on, is left to the reflective decoder.
func (d handDecoder) end(what string) error {
	if _, err := d.dec.ReadToken(); err != io.EOF {
		return fmt.Errorf("%w: data after %s", errNotByHand, what)
	}
	return nil
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
	if null, err := d.null(); null || err != nil {
		return err
	}
	switch k := d.dec.PeekKind(); k {
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
	if null, err := d.null(); null || err != nil {
		return err
	}
	switch k := d.dec.PeekKind(); k {
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
	if null, err := d.null(); null || err != nil {
		return err
	}
	switch k := d.dec.PeekKind(); k {
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
	if null, err := d.null(); null || err != nil {
		return false, err
	}
	switch k := d.dec.PeekKind(); k {
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

// notNull is an error for a null where a value goes: it is left to
// reflection (encoding/json leaves the field be, json v2 sets it to
// zero).
func (d handDecoder) notNull() error {
	if d.dec.PeekKind() == 'n' {
		return fmt.Errorf("%w: null for a value", errNotByHand)
	}
	return nil
}

// strValue, boolValue and int64Value read a value that is no null
// (notNull).
func (d handDecoder) strValue(dst *string) error {
	if err := d.notNull(); err != nil {
		return err
	}
	return d.str(dst)
}

func (d handDecoder) boolValue(dst *bool) error {
	if err := d.notNull(); err != nil {
		return err
	}
	return d.boolean(dst)
}

func (d handDecoder) int64Value(dst *int64) error {
	if err := d.notNull(); err != nil {
		return err
	}
	return d.int64(dst)
}

// timeValue reads a time as json v2 reads one (the reference of the
// bus's and the WhoIs reply's readers): by its own RFC 3339 parser, which
// refuses what time.Time.UnmarshalJSON (encoding/json's, d.time) lets
// through, a one-digit hour for one.
func (d handDecoder) timeValue(dst *time.Time) error {
	if err := d.notNull(); err != nil {
		return err
	}
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	return jsonv2.Unmarshal(raw, dst, liteDecode)
}

// intValue reads a number that fits an int.
func (d handDecoder) intValue(dst *int) error {
	var n int64
	if err := d.int64Value(&n); err != nil {
		return err
	}
	if int64(int(n)) != n {
		return fmt.Errorf("%w: %d is no int", errNotByHand, n)
	}
	*dst = int(n)
	return nil
}

// float reads a number as strconv.ParseFloat reads its literal.
func (d handDecoder) float(dst *float64) error {
	if k := d.dec.PeekKind(); k != '0' {
		return d.unread("a number", k)
	}
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return fmt.Errorf("%w: %s is no float64", errNotByHand, raw)
	}
	*dst = f
	return nil
}

// optBool reads an opt.Bool by its UnmarshalJSON.
func (d handDecoder) optBool(dst *opt.Bool) error {
	if err := d.notNull(); err != nil {
		return err
	}
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	return dst.UnmarshalJSON(raw)
}

// mapOf reads null (nil, false) or an object whose names are map keys,
// calling member with each; it is true for an object. A key given twice
// is left to reflection.
func (d handDecoder) mapOf(what string, member func(key string) error) (bool, error) {
	if null, err := d.null(); null || err != nil {
		return false, err
	}
	switch k := d.dec.PeekKind(); k {
	case '{':
	default:
		return false, d.unread(what, k)
	}
	keys := map[string]bool{}
	return true, d.object(nil, func(name []byte) error {
		key := string(name)
		if keys[key] {
			return d.twice(what, key)
		}
		keys[key] = true
		return member(key)
	})
}

// intKey is a map key that names an int, written as strconv.Itoa writes
// it; any other spelling is left to reflection.
func intKey(key string) (int, error) {
	n, err := strconv.Atoi(key)
	if err != nil || strconv.Itoa(n) != key {
		return 0, fmt.Errorf("%w: map key %q", errNotByHand, key)
	}
	return n, nil
}
