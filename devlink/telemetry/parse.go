package telemetry

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"net/netip"
	"strconv"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// errNotFrame is shared so that ordinary log lines cost no allocation.
var errNotFrame = &ParseError{Err: ErrNotFrame}

// crcTail is the length of the checksum suffix " *XXXXXXXX".
const crcTail = 10

// Index returns the offset of a frame marker "@TP" followed by a digit in
// line, or -1. Use it on lines where a reset cut the previous output so that
// a frame starts mid-line; Parse(line[i:]) then decides.
func Index(line []byte) int {
	off := 0
	for {
		i := bytes.Index(line[off:], []byte(Marker))
		if i < 0 {
			return -1
		}
		j := off + i + len(Marker)
		if j < len(line) && line[j] >= '0' && line[j] <= '9' {
			return off + i
		}
		off = j
	}
}

// Parse decodes one frame. line is one console line; a trailing "\r\n",
// "\n" or "\r" is ignored, and the frame must start at line[0]. Errors are
// *ParseError wrapping ErrNotFrame, ErrVersion, ErrUnknownKind, ErrTooLong,
// ErrSyntax, ErrChecksum, ErrMissing or ErrField (see IsCorrupt). Unknown
// fields are ignored. Parse never panics and does not retain line.
func Parse(line []byte) (Frame, error) {
	var f Frame
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	if !bytes.HasPrefix(line, []byte(Marker)) {
		return f, errNotFrame
	}
	if len(line) > MaxFrameLen {
		return f, &ParseError{Err: ErrTooLong, Detail: fmt.Sprintf("%d bytes, limit %d", len(line), MaxFrameLen)}
	}
	// Version digits.
	i := len(Marker)
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i == len(Marker) || i-len(Marker) > 3 {
		return f, &ParseError{Err: ErrSyntax, Detail: "bad version marker"}
	}
	v, _ := strconv.Atoi(string(line[len(Marker):i]))
	if v < MinVersion || v > Version {
		return f, &ParseError{Err: ErrVersion, Detail: fmt.Sprintf("version %d, this reader knows %d to %d", v, MinVersion, Version)}
	}
	f.Version = v
	// Checksum suffix " *XXXXXXXX".
	if len(line) < i+crcTail || line[len(line)-crcTail] != ' ' || line[len(line)-crcTail+1] != '*' {
		return f, &ParseError{Err: ErrSyntax, Detail: `no " *" + 8 hex digit checksum at the end`}
	}
	want, ok := parseHex32(line[len(line)-8:])
	if !ok {
		return f, &ParseError{Err: ErrSyntax, Detail: "checksum is not 8 hex digits"}
	}
	body := line[:len(line)-crcTail]
	if got := crc32.ChecksumIEEE(body); got != want {
		return f, &ParseError{Err: ErrChecksum, Detail: fmt.Sprintf("frame says %08X, body has %08X", want, got)}
	}
	// Kind.
	rest := body[i:]
	if len(rest) < 2 || rest[0] != ' ' {
		return f, &ParseError{Err: ErrSyntax, Detail: "no frame kind"}
	}
	rest = rest[1:]
	k := 0
	for k < len(rest) && rest[k] >= 'A' && rest[k] <= 'Z' {
		k++
	}
	if k == 0 || (k < len(rest) && rest[k] != ' ') {
		return f, &ParseError{Err: ErrSyntax, Detail: "bad frame kind"}
	}
	kindWord := rest[:k]
	rest = rest[k:]
	known := k == 1 && kindKeys(Kind(kindWord[0])) != nil && (Kind(kindWord[0]) != KindRelay || v >= 2)
	if known {
		f.Kind = Kind(kindWord[0])
	}
	// Fields.
	for len(rest) > 0 {
		if rest[0] != ' ' || len(rest) == 1 || rest[1] == ' ' {
			return f, &ParseError{Err: ErrSyntax, Detail: "fields must be separated by exactly one space"}
		}
		rest = rest[1:]
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		tok := rest[:end]
		rest = rest[end:]
		eq := bytes.IndexByte(tok, '=')
		if eq <= 0 || eq == len(tok)-1 {
			return f, &ParseError{Err: ErrSyntax, Detail: fmt.Sprintf("field %q is not key=value", clip(tok))}
		}
		key, val := tok[:eq], tok[eq+1:]
		for _, c := range key {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
				return f, &ParseError{Err: ErrSyntax, Detail: fmt.Sprintf("bad key %q", clip(key))}
			}
		}
		for _, c := range val {
			if c < 0x21 || c > 0x7e {
				return f, &ParseError{Err: ErrSyntax, Key: string(key), Detail: "value has a byte outside 0x21..0x7E"}
			}
		}
		if !known {
			continue
		}
		if err := f.setField(key, val); err != nil {
			return f, err
		}
	}
	if !known {
		return Frame{Version: v}, &ParseError{Err: ErrUnknownKind, Detail: fmt.Sprintf("kind %q", clip(kindWord))}
	}
	if f.present&3 != 3 {
		key := "seq"
		if f.present&1 != 0 {
			key = "up"
		}
		return f, &ParseError{Err: ErrMissing, Key: key}
	}
	return f, nil
}

func clip(b []byte) string {
	if len(b) > 24 {
		b = b[:24]
	}
	return string(b)
}

func parseHex32(b []byte) (uint32, bool) {
	if len(b) != 8 {
		return 0, false
	}
	var v uint32
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, true
}

// setField decodes val into the Go field of key (fields_gen.go), by the
// field's Go type; an unknown key is ignored.
func (f *Frame) setField(key, val []byte) error {
	p, bit := f.field(string(key))
	if p == nil {
		return nil // unknown field: ignored
	}
	bad := func(why string) error {
		return &ParseError{Err: ErrField, Key: string(key), Detail: fmt.Sprintf("%q: %s", clip(val), why)}
	}
	switch p := p.(type) {
	case *uint32:
		v, ok := parseUint(val, 1<<32-1)
		if !ok {
			return bad("want a decimal 0..4294967295")
		}
		*p = uint32(v)
	case *time.Duration: // u32 milliseconds
		v, ok := parseUint(val, 1<<32-1)
		if !ok {
			return bad("want a decimal 0..4294967295")
		}
		*p = time.Duration(v) * time.Millisecond
	case *uint16:
		v, ok := parseUint(val, 1<<16-1)
		if !ok {
			return bad("want a decimal 0..65535")
		}
		*p = uint16(v)
	case *int32:
		neg := val[0] == '-'
		digits := val
		if neg {
			digits = val[1:]
		}
		v, ok := parseUint(digits, 1<<31)
		if !ok || (!neg && v == 1<<31) || (neg && v == 0) {
			return bad("want a signed 32-bit decimal")
		}
		if neg {
			*p = int32(-int64(v))
		} else {
			*p = int32(v)
		}
	case *netip.Addr:
		a, ok := parseIPv4(val)
		if !ok {
			return bad("want a dotted IPv4 address")
		}
		*p = a
	case *safetext.Text: // a word: printable ASCII, checked above
		*p = safetext.New(string(val))
	case *Path:
		a, ok := parsePath(val)
		if !ok {
			return bad(`want "a.b.c.d:port", "derp:<region>" or "none"`)
		}
		*p = a
	case *uint64: // tenths: a decimal with exactly one fraction digit
		dot := bytes.IndexByte(val, '.')
		if dot < 1 || dot != len(val)-2 {
			return bad("want a decimal with one fraction digit")
		}
		whole, ok := parseUint(val[:dot], (1<<64-1)/10-9)
		frac := val[dot+1]
		if !ok || frac < '0' || frac > '9' {
			return bad("want a decimal with one fraction digit")
		}
		*p = whole*10 + uint64(frac-'0')
	case *bool:
		if len(val) != 1 || (val[0] != '0' && val[0] != '1') {
			return bad("want 0 or 1")
		}
		*p = val[0] == '1'
	default:
		return bad("no decoder for its Go type") // unreachable: fieldgen admits no other type
	}
	f.present |= bit
	return nil
}

// parseUint parses canonical decimal (no sign, no leading zeros) ≤ max.
func parseUint(b []byte, max uint64) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (max-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func parseIPv4(b []byte) (netip.Addr, bool) {
	var a [4]byte
	for i := 0; i < 4; i++ {
		end := len(b)
		if i < 3 {
			end = bytes.IndexByte(b, '.')
			if end < 0 {
				return netip.Addr{}, false
			}
		}
		v, ok := parseUint(b[:end], 255)
		if !ok {
			return netip.Addr{}, false
		}
		a[i] = byte(v)
		if i < 3 {
			b = b[end+1:]
		}
	}
	return netip.AddrFrom4(a), true
}

func parsePath(b []byte) (Path, bool) {
	if string(b) == "none" {
		return Path{}, true
	}
	if bytes.HasPrefix(b, []byte("derp:")) {
		r, ok := parseUint(b[5:], 1<<16-1)
		return Path{Kind: PathDERP, Region: uint16(r)}, ok
	}
	c := bytes.LastIndexByte(b, ':')
	if c < 0 {
		return Path{}, false
	}
	a, ok := parseIPv4(b[:c])
	if !ok {
		return Path{}, false
	}
	port, ok := parseUint(b[c+1:], 1<<16-1)
	if !ok {
		return Path{}, false
	}
	return Path{Kind: PathDirect, Addr: netip.AddrPortFrom(a, uint16(port))}, true
}
