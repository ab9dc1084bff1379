package telemetry

import (
	"fmt"
	"hash/crc32"
	"net/netip"
	"strconv"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Append writes f as a frame line (without line ending) to dst: the fields
// marked present (Parse marks what it read; SetHas marks by hand) in the
// canonical order, then the checksum. It is the inverse of Parse for the
// fields this package knows, matching the C encoder byte for byte. It returns
// an error for an unknown Kind, a word value with bytes outside 0x21..0x7E, a
// Path that can't be written, or a frame over MaxFrameLen.
func (f *Frame) Append(dst []byte) ([]byte, error) {
	keys := kindKeys(f.Kind)
	if keys == nil {
		return dst, fmt.Errorf("telemetry: append: unknown kind %q", rune(f.Kind))
	}
	start := len(dst)
	dst = append(dst, Marker...)
	v := f.Version
	if v == 0 {
		v = Version
	}
	if f.Kind == KindRelay && v < 2 {
		return dst, fmt.Errorf("telemetry: append: R frames need version 2, not %d", v)
	}
	dst = strconv.AppendInt(dst, int64(v), 10)
	dst = append(dst, ' ', byte(f.Kind))
	for i, key := range keys {
		if f.present&(1<<i) == 0 {
			continue
		}
		dst = append(dst, ' ')
		dst = append(dst, key...)
		dst = append(dst, '=')
		var err error
		if dst, err = f.appendValue(dst, key); err != nil {
			return dst[:start], err
		}
	}
	sum := crc32.ChecksumIEEE(dst[start:])
	dst = append(dst, ' ', '*')
	const hex = "0123456789ABCDEF"
	for s := 28; s >= 0; s -= 4 {
		dst = append(dst, hex[(sum>>uint(s))&0xf])
	}
	if len(dst)-start > MaxFrameLen {
		return dst[:start], fmt.Errorf("telemetry: append: frame is %d bytes, limit %d", len(dst)-start, MaxFrameLen)
	}
	return dst, nil
}

// appendValue writes the wire text of f's field key (fields_gen.go) by its
// Go type.
func (f *Frame) appendValue(dst []byte, key string) ([]byte, error) {
	p, _ := f.field(key)
	switch p := p.(type) {
	case *uint32:
		return strconv.AppendUint(dst, uint64(*p), 10), nil
	case *int32:
		return strconv.AppendInt(dst, int64(*p), 10), nil
	case *uint16:
		return strconv.AppendUint(dst, uint64(*p), 10), nil
	case *time.Duration:
		ms := *p / time.Millisecond
		if ms < 0 || ms > 1<<32-1 {
			return dst, fmt.Errorf("telemetry: append: %s=%v out of range", key, *p)
		}
		return strconv.AppendUint(dst, uint64(ms), 10), nil
	case *netip.Addr:
		if !p.Is4() {
			return dst, fmt.Errorf("telemetry: append: %s=%v is not IPv4", key, *p)
		}
		return p.AppendTo(dst), nil
	case *safetext.Text:
		w := *p
		if w == "" {
			return dst, fmt.Errorf("telemetry: append: %s is empty", key)
		}
		for j := 0; j < len(w); j++ {
			if w[j] < 0x21 || w[j] > 0x7e {
				return dst, fmt.Errorf("telemetry: append: %s has byte 0x%02x", key, w[j])
			}
		}
		return append(dst, w...), nil
	case *Path:
		if p.Kind == PathDirect && !p.Addr.Addr().Is4() {
			return dst, fmt.Errorf("telemetry: append: %s=%v is not IPv4", key, p.Addr)
		}
		return append(dst, p.String()...), nil
	case *uint64: // tenths
		dst = strconv.AppendUint(dst, *p/10, 10)
		return append(dst, '.', byte('0'+*p%10)), nil
	case *bool:
		if *p {
			return append(dst, '1'), nil
		}
		return append(dst, '0'), nil
	}
	return dst, fmt.Errorf("telemetry: append: no field %s in a %s frame", key, f.Kind)
}

// Value returns the wire text of field key ("hif" → "131072") when the frame
// carries it: what Append writes after "key=", the board's text (so
// safetext.Text). It is how a reader shows a field it has no words for.
func (f *Frame) Value(key string) (safetext.Text, bool) {
	if !f.Has(key) {
		return "", false
	}
	b, err := f.appendValue(nil, key)
	if err != nil {
		return "", false
	}
	return safetext.New(string(b)), true
}
