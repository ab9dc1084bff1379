package telemetry

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"net/netip"
	"strconv"
	"time"
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

// ftype is a wire value type.
type ftype uint8

const (
	tU32 ftype = iota
	tI32
	tU16
	tMS // u32 milliseconds into a time.Duration
	tIPv4
	tWord
	tPath
	tTenths // decimal with exactly one fraction digit, into tenths
	tBool   // "0" or "1"
)

// target points at the Go field a wire key decodes into.
type target struct {
	t      ftype
	bit    uint32
	u32    *uint32
	i32    *int32
	u16    *uint16
	dur    *time.Duration
	ip     *netip.Addr
	word   *string
	path   *Path
	tenths *uint64
	bool   *bool
}

// field returns where key goes in f, and false when key is unknown for f.Kind.
func (f *Frame) field(key string) (target, bool) {
	keys := kindKeys(f.Kind)
	bit := -1
	for i, k := range keys {
		if k == key {
			bit = i
			break
		}
	}
	if bit < 0 {
		return target{}, false
	}
	tg := target{bit: 1 << bit}
	u32 := func(p *uint32) (target, bool) { tg.t, tg.u32 = tU32, p; return tg, true }
	ms := func(p *time.Duration) (target, bool) { tg.t, tg.dur = tMS, p; return tg, true }
	u16 := func(p *uint16) (target, bool) { tg.t, tg.u16 = tU16, p; return tg, true }
	ip := func(p *netip.Addr) (target, bool) { tg.t, tg.ip = tIPv4, p; return tg, true }
	word := func(p *string) (target, bool) { tg.t, tg.word = tWord, p; return tg, true }
	path := func(p *Path) (target, bool) { tg.t, tg.path = tPath, p; return tg, true }
	switch key {
	case "seq":
		return u32(&f.Seq)
	case "up":
		return ms(&f.Uptime)
	}
	switch f.Kind {
	case KindStatus:
		s := &f.Status
		switch key {
		case "rst":
			return word(&s.Reset)
		case "rssi":
			tg.t, tg.i32 = tI32, &s.RSSI
			return tg, true
		case "wdis":
			return u32(&s.WiFiDisconnects)
		case "hif":
			return u32(&s.HeapFree)
		case "hmin":
			return u32(&s.HeapMinFree)
		case "hlb":
			return u32(&s.HeapLargest)
		case "psf":
			return u32(&s.PSRAMFree)
		case "bad":
			return u32(&s.BadCalls)
		}
	case KindNet:
		n := &f.Net
		switch key {
		case "ip":
			return ip(&n.IP)
		case "host":
			return word(&n.Host)
		case "eps":
			return u32(&n.Endpoints)
		case "derp":
			return u16(&n.HomeDERP)
		case "derpby":
			return word(&n.HomeDERPBy)
		case "derpms":
			return ms(&n.HomeLatency)
		case "near":
			return u16(&n.Nearest)
		case "nearms":
			return ms(&n.NearestLatency)
		}
	case KindDisco:
		d := &f.Disco
		ptrs := [...]*uint32{&d.ProbesUsed, &d.ProbesCap, &d.ProbesDropped, &d.ProbesReaped, &d.PingsSent,
			&d.PongsRecv, &d.CallMeMaybeIn, &d.CallMeMaybeOut, &d.H2Received, &d.H2WindowReturned, &d.H2WindowOpen}
		return u32(ptrs[bit-2])
	case KindPeer:
		p := &f.Peer
		switch key {
		case "peer":
			return u32(&p.ID)
		case "pip":
			return ip(&p.IP)
		case "path":
			return path(&p.Path)
		case "hs":
			return path(&p.Handshake)
		case "hsup":
			return ms(&p.HandshakeAt)
		case "lat":
			return ms(&p.Latency)
		}
	case KindFetch:
		x := &f.Fetch
		switch key {
		case "n":
			return u32(&x.N)
		case "bytes":
			return u32(&x.Bytes)
		case "ms":
			return ms(&x.Elapsed)
		case "kibs":
			tg.t, tg.tenths = tTenths, &x.KiBpsTenths
			return tg, true
		case "status":
			return u32(&x.HTTPStatus)
		case "err":
			return word(&x.Err)
		case "via":
			return path(&x.Via)
		}
	case KindRelay:
		r := &f.Relay
		switch key {
		case "rg":
			return u16(&r.Region)
		case "conn":
			tg.t, tg.bool = tBool, &r.Connected
			return tg, true
		case "att":
			return u32(&r.Attempts)
		case "drop":
			return u32(&r.Drops)
		case "err":
			return word(&r.Err)
		case "rxage":
			return ms(&r.RxAge)
		}
	}
	return target{}, false
}

func (f *Frame) setField(key, val []byte) error {
	tg, ok := f.field(string(key))
	if !ok {
		return nil // unknown field: ignored
	}
	bad := func(why string) error {
		return &ParseError{Err: ErrField, Key: string(key), Detail: fmt.Sprintf("%q: %s", clip(val), why)}
	}
	switch tg.t {
	case tU32, tMS:
		v, ok := parseUint(val, 1<<32-1)
		if !ok {
			return bad("want a decimal 0..4294967295")
		}
		if tg.t == tU32 {
			*tg.u32 = uint32(v)
		} else {
			*tg.dur = time.Duration(v) * time.Millisecond
		}
	case tU16:
		v, ok := parseUint(val, 1<<16-1)
		if !ok {
			return bad("want a decimal 0..65535")
		}
		*tg.u16 = uint16(v)
	case tI32:
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
			*tg.i32 = int32(-int64(v))
		} else {
			*tg.i32 = int32(v)
		}
	case tIPv4:
		a, ok := parseIPv4(val)
		if !ok {
			return bad("want a dotted IPv4 address")
		}
		*tg.ip = a
	case tWord:
		*tg.word = string(val)
	case tPath:
		p, ok := parsePath(val)
		if !ok {
			return bad(`want "a.b.c.d:port", "derp:<region>" or "none"`)
		}
		*tg.path = p
	case tTenths:
		dot := bytes.IndexByte(val, '.')
		if dot < 1 || dot != len(val)-2 {
			return bad("want a decimal with one fraction digit")
		}
		whole, ok := parseUint(val[:dot], (1<<64-1)/10-9)
		frac := val[dot+1]
		if !ok || frac < '0' || frac > '9' {
			return bad("want a decimal with one fraction digit")
		}
		*tg.tenths = whole*10 + uint64(frac-'0')
	case tBool:
		if len(val) != 1 || (val[0] != '0' && val[0] != '1') {
			return bad("want 0 or 1")
		}
		*tg.bool = val[0] == '1'
	}
	f.present |= tg.bit
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
