package telemetry

import (
	"fmt"
	"hash/crc32"
	"strconv"
	"time"
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
		tg, _ := f.field(key)
		dst = append(dst, ' ')
		dst = append(dst, key...)
		dst = append(dst, '=')
		switch tg.t {
		case tU32:
			dst = strconv.AppendUint(dst, uint64(*tg.u32), 10)
		case tI32:
			dst = strconv.AppendInt(dst, int64(*tg.i32), 10)
		case tU16:
			dst = strconv.AppendUint(dst, uint64(*tg.u16), 10)
		case tMS:
			ms := *tg.dur / time.Millisecond
			if ms < 0 || ms > 1<<32-1 {
				return dst[:start], fmt.Errorf("telemetry: append: %s=%v out of range", key, *tg.dur)
			}
			dst = strconv.AppendUint(dst, uint64(ms), 10)
		case tIPv4:
			if !tg.ip.Is4() {
				return dst[:start], fmt.Errorf("telemetry: append: %s=%v is not IPv4", key, *tg.ip)
			}
			dst = tg.ip.AppendTo(dst)
		case tWord:
			w := *tg.word
			if w == "" {
				return dst[:start], fmt.Errorf("telemetry: append: %s is empty", key)
			}
			for j := 0; j < len(w); j++ {
				if w[j] < 0x21 || w[j] > 0x7e {
					return dst[:start], fmt.Errorf("telemetry: append: %s has byte 0x%02x", key, w[j])
				}
			}
			dst = append(dst, w...)
		case tPath:
			p := *tg.path
			if p.Kind == PathDirect && !p.Addr.Addr().Is4() {
				return dst[:start], fmt.Errorf("telemetry: append: %s=%v is not IPv4", key, p.Addr)
			}
			dst = append(dst, p.String()...)
		case tTenths:
			dst = strconv.AppendUint(dst, *tg.tenths/10, 10)
			dst = append(dst, '.', byte('0'+*tg.tenths%10))
		case tBool:
			if *tg.bool {
				dst = append(dst, '1')
			} else {
				dst = append(dst, '0')
			}
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
