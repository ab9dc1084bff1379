package devlink

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/devlink/crash"
)

// BinLog decodes ESP-IDF Log V2 binary frames (CONFIG_LOG_MODE_BINARY):
// the board sends the addresses of format strings and tags instead of text,
// so decoding needs the ELFs they live in. Frames from the 2nd-stage
// bootloader (type 0x01) use the bootloader ELF, app frames (type 0x02) the
// app ELF. Layout (esp_log's binary mode, as esp-idf-monitor reads it): type
// byte, big-endian control word (length 10 bits, level 3 bits, 64-bit time
// flag), format, tag, time (u32 or u64 ms), arguments, CRC-8.
type BinLog struct {
	app, boot *elfData
	// NoColor leaves Expand's lines uncoloured, as ESP-IDF monitor prints
	// them with --disable-auto-color (tail sets it under NO_COLOR too).
	NoColor bool
}

// elfData holds the loadable sections of one ELF, for string lookups.
type elfData struct {
	secs   []elfSec
	noload *elfSec
}

type elfSec struct {
	addr uint64
	data []byte
}

// LoadBinLog reads the ELFs named in paths: one whose file name contains
// "bootloader" serves bootloader frames, the first other one app frames.
// Errors: an unreadable or non-ELF file.
func LoadBinLog(paths ...string) (*BinLog, error) {
	b := &BinLog{}
	for _, p := range paths {
		d, err := loadELFData(p)
		if err != nil {
			return nil, err
		}
		if strings.Contains(filepath.Base(p), "bootloader") {
			b.boot = d
		} else if b.app == nil {
			b.app = d
		}
	}
	return b, nil
}

func loadELFData(path string) (*elfData, error) {
	file, err := crash.OpenELFFile(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	f, err := elf.NewFile(file)
	if err != nil {
		return nil, crash.NotELF(path, err)
	}
	d := &elfData{}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Size == 0 {
			continue
		}
		if s.Flags&elf.SHF_ALLOC == 0 && s.Name != ".noload" {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		sec := elfSec{addr: s.Addr, data: data}
		if s.Name == ".noload" {
			d.noload = &sec
			continue
		}
		d.secs = append(d.secs, sec)
	}
	return d, nil
}

// at returns the bytes at addr: n of them, or up to the NUL when n < 0.
func (d *elfData) at(addr uint32, n int) ([]byte, bool) {
	get := func(s *elfSec) ([]byte, bool) {
		a := uint64(addr)
		if a < s.addr || a >= s.addr+uint64(len(s.data)) {
			return nil, false
		}
		b := s.data[a-s.addr:]
		if n >= 0 {
			return b[:min(n, len(b))], true
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return b[:i], true
		}
		return nil, false
	}
	if d == nil {
		return nil, false
	}
	if addr&0xff000000 == 0 {
		if d.noload != nil {
			return get(d.noload)
		}
		return nil, false
	}
	for i := range d.secs {
		if b, ok := get(&d.secs[i]); ok {
			return b, true
		}
	}
	return nil, false
}

// binReader walks a frame's payload; any short read sets err.
type binReader struct {
	b   []byte
	d   *elfData
	err error
}

var errShortFrame = errors.New("binary log frame: truncated")

func (r *binReader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShortFrame
		return make([]byte, max(n, 0))
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *binReader) u32() uint32 { return binary.BigEndian.Uint32(r.take(4)) }

// data reads a string or buffer: embedded (top 6 bits of the first word
// set: a negative big-endian int16 length marker then the bytes) or a
// 4-byte address into the ELF. n < 0 reads a NUL-terminated string.
func (r *binReader) data(n int) []byte {
	if r.err == nil && len(r.b) >= 4 && binary.BigEndian.Uint32(r.b)&0xfc000000 == 0xfc000000 {
		l := 1 - int(int16(binary.BigEndian.Uint16(r.take(2))))
		return r.take(l)
	}
	addr := r.u32()
	if r.err != nil {
		return nil
	}
	b, ok := r.d.at(addr, n)
	if !ok {
		if r.d == nil {
			return []byte("<no ELF file>")
		}
		return []byte(fmt.Sprintf("<not found %08X>", addr))
	}
	return b
}

func (r *binReader) str() string {
	return strings.TrimRight(string(r.data(-1)), "\x00")
}

// Decode turns one frame (a KindBinary line's Raw) into text log lines
// without colour or line ending: `I (126) app_init: Project name:     log`.
// Buffer logs (ESP_LOG_BUFFER_HEX/CHAR/HEXDUMP) give one line per 16 bytes.
// Errors: a frame that is truncated or carries an unknown level.
func (b *BinLog) Decode(frame []byte) ([]string, error) {
	if len(frame) < 4 {
		return nil, errShortFrame
	}
	d := b.app
	if frame[0] == 0x01 {
		d = b.boot
	}
	ctl := binary.BigEndian.Uint16(frame[1:3])
	level := "?EWIDV"[:6]
	lv := int(ctl>>10) & 7
	if lv < 1 || lv > 5 {
		return nil, fmt.Errorf("binary log frame: level %d", lv)
	}
	r := &binReader{b: frame[3:], d: d}
	format := r.str()
	tag := r.str()
	var ts uint64
	if ctl&(1<<13) != 0 {
		ts = binary.BigEndian.Uint64(r.take(8))
	} else {
		ts = uint64(r.u32())
	}
	if r.err != nil {
		return nil, r.err
	}
	prefix := string(level[lv]) + " (" + strconv.FormatUint(ts, 10) + ") " + tag + ": "
	kind := ""
	for _, k := range []string{"__ESP_BUFFER_HEX_FORMAT__", "__ESP_BUFFER_CHAR_FORMAT__", "__ESP_BUFFER_HEXDUMP_FORMAT__"} {
		if strings.HasPrefix(format, k) {
			kind = k
		}
	}
	args := r.args(format, kind != "")
	if r.err != nil {
		return nil, r.err
	}
	if kind != "" {
		return bufferLines(prefix, kind, args), nil
	}
	return []string{prefix + cFormat(format, args)}, nil
}

// spec is one printf conversion.
type spec struct {
	start, end                 int
	flags, width, prec, length string
	verb                       byte
	percent                    bool
}

// specs finds the conversions in a C format string.
func specs(f string) []spec {
	var out []spec
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		s := spec{start: i}
		j := i + 1
		if j < len(f) && f[j] == '%' {
			s.percent, s.end = true, j+1
			out = append(out, s)
			i = j
			continue
		}
		k := j
		for k < len(f) && strings.IndexByte("-+0# ", f[k]) >= 0 {
			k++
		}
		s.flags = f[j:k]
		j = k
		for k < len(f) && (f[k] >= '0' && f[k] <= '9' || f[k] == '*') {
			k++
		}
		s.width = f[j:k]
		if k < len(f) && f[k] == '.' {
			j = k + 1
			k = j
			for k < len(f) && (f[k] >= '0' && f[k] <= '9' || f[k] == '*') {
				k++
			}
			s.prec = f[j:k]
		}
		j = k
		for _, l := range []string{"hh", "ll", "h", "l", "z", "j", "t", "L"} {
			if strings.HasPrefix(f[k:], l) {
				k += len(l)
				break
			}
		}
		s.length = f[j:k]
		if k >= len(f) || strings.IndexByte("diuoxXfFeEgGaAcsp", f[k]) < 0 {
			continue // not a conversion; printed as is
		}
		s.verb, s.end = f[k], k+1
		out = append(out, s)
		i = k
	}
	return out
}

// args reads one argument per conversion, the way the board packs them:
// 32-bit words (8 bytes for ll and doubles, right-aligned short and char).
func (r *binReader) args(format string, buffer bool) []any {
	var out []any
	for _, s := range specs(format) {
		if s.percent {
			continue
		}
		switch s.verb {
		case 's':
			if buffer && len(out) > 0 {
				n, _ := out[len(out)-1].(int64)
				out = append(out, r.data(int(n)))
			} else {
				out = append(out, r.str())
			}
		case 'f', 'F', 'e', 'E', 'g', 'G', 'a', 'A':
			out = append(out, math.Float64frombits(binary.BigEndian.Uint64(r.take(8))))
		case 'c':
			r.take(3)
			out = append(out, string(rune(r.take(1)[0])))
		case 'p':
			out = append(out, int64(r.u32()))
		default: // d i u o x X
			signed := s.verb == 'd' || s.verb == 'i'
			var v int64
			switch s.length {
			case "ll":
				u := binary.BigEndian.Uint64(r.take(8))
				v = int64(u)
			case "h":
				r.take(2)
				u := binary.BigEndian.Uint16(r.take(2))
				if signed {
					v = int64(int16(u))
				} else {
					v = int64(u)
				}
			case "hh":
				r.take(3)
				u := r.take(1)[0]
				if signed {
					v = int64(int8(u))
				} else {
					v = int64(u)
				}
			default:
				u := r.u32()
				if signed {
					v = int64(int32(u))
				} else {
					v = int64(u)
				}
			}
			out = append(out, v)
		}
		if r.err != nil {
			break
		}
	}
	return out
}

// cFormat renders a C format string with decoded arguments.
func cFormat(f string, args []any) string {
	var b strings.Builder
	last, ai := 0, 0
	for _, s := range specs(f) {
		b.WriteString(f[last:s.start])
		last = s.end
		if s.percent {
			b.WriteByte('%')
			continue
		}
		var a any
		if ai < len(args) {
			a = args[ai]
		}
		ai++
		b.WriteString(formatArg(s, a))
	}
	b.WriteString(f[last:])
	return b.String()
}

func formatArg(s spec, a any) string {
	flags := ""
	for _, c := range "-+ 0#" {
		if strings.ContainsRune(s.flags, c) {
			flags += string(c)
		}
	}
	width := strings.ReplaceAll(s.width, "*", "")
	prec := strings.ReplaceAll(s.prec, "*", "")
	switch s.verb {
	case 'd', 'i', 'u', 'o', 'x', 'X', 'p':
		v, _ := a.(int64)
		verb := map[byte]string{'d': "d", 'i': "d", 'u': "d", 'o': "o", 'x': "x", 'X': "X", 'p': "x"}[s.verb]
		if s.verb == 'p' {
			flags += "#"
		}
		if s.verb == 'u' && v < 0 {
			v = int64(uint32(v))
		}
		if prec != "" { // C's minimum digits: zero padding
			return fmt.Sprintf("%"+strings.ReplaceAll(flags, "0", "")+"0"+prec+verb, v)
		}
		if s.verb == 'x' || s.verb == 'X' || s.verb == 'o' {
			return fmt.Sprintf("%"+flags+width+verb, uint64(v)&mask(s.length))
		}
		return fmt.Sprintf("%"+flags+width+verb, v)
	case 'f', 'F', 'e', 'E', 'g', 'G', 'a', 'A':
		v, _ := a.(float64)
		verb := string(s.verb)
		if verb == "F" {
			verb = "f"
		}
		if prec == "" && (verb == "g" || verb == "G") {
			prec = "6" // C's default; Go's %g would print the shortest form
		}
		if prec != "" {
			prec = "." + prec
		}
		return fmt.Sprintf("%"+flags+width+prec+verb, v)
	default: // s, c
		v := fmt.Sprint(a)
		if b, ok := a.([]byte); ok {
			v = string(b)
		}
		if prec != "" {
			if n, err := strconv.Atoi(prec); err == nil && n < len(v) {
				v = v[:n]
			}
		}
		return fmt.Sprintf("%"+strings.ReplaceAll(flags, "0", "")+width+"s", v)
	}
}

func mask(length string) uint64 {
	switch length {
	case "ll":
		return math.MaxUint64
	case "h":
		return 0xffff
	case "hh":
		return 0xff
	}
	return 0xffffffff
}

// bufferLines renders ESP_LOG_BUFFER_* frames: args are length, bytes, address.
func bufferLines(prefix, kind string, args []any) []string {
	if len(args) < 2 {
		return []string{prefix}
	}
	n, _ := args[0].(int64)
	buf, _ := args[1].([]byte)
	var addr int64
	if len(args) > 2 {
		addr, _ = args[2].(int64)
	}
	buf = buf[:min(int(max(n, 0)), len(buf))]
	var out []string
	for len(buf) > 0 {
		chunk := buf[:min(16, len(buf))]
		buf = buf[len(chunk):]
		var b strings.Builder
		switch kind {
		case "__ESP_BUFFER_HEX_FORMAT__":
			for i, c := range chunk {
				if i > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprintf(&b, "%02x", c)
			}
		case "__ESP_BUFFER_CHAR_FORMAT__":
			for _, c := range chunk {
				if c >= 32 && c < 127 {
					b.WriteByte(c)
				}
			}
		default: // hexdump
			var hx strings.Builder
			for i, c := range chunk {
				if i == 8 {
					hx.WriteByte(' ')
				}
				if i > 0 {
					hx.WriteByte(' ')
				}
				fmt.Fprintf(&hx, "%02x", c)
			}
			fmt.Fprintf(&b, "0x%08x   %-48s  |", uint32(addr), hx.String())
			for _, c := range chunk {
				if c >= 32 && c < 127 {
					b.WriteByte(c)
				} else {
					b.WriteByte('.')
				}
			}
			b.WriteByte('|')
			addr += int64(len(chunk))
		}
		out = append(out, prefix+b.String())
	}
	return out
}

// Expand decodes a KindBinary line and calls emit with each decoded text
// line, parsed, with Raw as ESP-IDF monitor prints it (coloured by level
// unless NoColor, ending in "\n"). On a decoding error it emits nothing and returns the error.
// Other lines are passed to emit unchanged.
func (b *BinLog) Expand(l *Line, emit func(*Line)) error {
	if l.Kind != KindBinary {
		emit(l)
		return nil
	}
	texts, err := b.Decode(l.Raw)
	if err != nil {
		return err
	}
	var d Line
	for _, t := range texts {
		// A format string ending in "\n" must not push the colour reset onto
		// a line of its own; embedded newlines become separate lines, all
		// coloured by the message's level.
		c := LevelColor(Level(t[0])) // monitor colours decoded lines by level
		if b.NoColor {
			c = ""
		}
		for _, piece := range strings.Split(strings.TrimRight(t, "\r\n"), "\n") {
			if piece == "" {
				continue
			}
			if c != "" {
				piece = c + piece + ColorReset
			}
			ParseLine([]byte(piece+"\n"), &d)
			emit(&d)
		}
	}
	return nil
}
