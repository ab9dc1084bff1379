package devlink

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Our own ESP-IDF Log V2 binary-mode capture (testdata/binlog, see its
// README): two small ELFs holding the format strings and tags, and a
// stream of frames pointing into them, built here from the layout esp_log's
// binary mode and esp-idf-monitor's binlog.py define. It is written by this
// file, not by the decoder it tests: TestBinLogFixtureUpToDate checks the
// committed bytes are what this file builds (regenerate with
// -update-binlog), and TestBinLogMatchesMonitor compares the decoder's
// text with binlog/capture.txt, written by hand.

var updateBinlog = flag.Bool("update-binlog", false, "rewrite testdata/binlog/{app.elf,bootloader.elf,capture.bin}")

// binlogDir is the fixture's folder.
var binlogDir = filepath.Join("testdata", "binlog")

// elfSection is one section of a fixture ELF: its strings, NUL-terminated,
// from addr on.
type elfSection struct {
	name    string
	addr    uint32
	alloc   bool // SHF_ALLOC: loaded on the board
	strings []string
}

// addrOf returns the address of s in the section (it must be there).
func (sec elfSection) addrOf(t testing.TB, s string) uint32 {
	a := sec.addr
	for _, x := range sec.strings {
		if x == s {
			return a
		}
		a += uint32(len(x) + 1)
	}
	t.Fatalf("%q not in %s", s, sec.name)
	return 0
}

// writeELF32 returns a little-endian ELF32 file for Xtensa (EM_XTENSA, 94)
// holding the sections and a section name table, nothing else: enough for
// a reader of strings by address (ELF specification, "Sections").
func writeELF32(secs []elfSection) []byte {
	const ehsize, shentsize = 52, 40
	var shstr bytes.Buffer
	shstr.WriteByte(0)
	type hdr struct {
		name, typ, flags, addr, off, size uint32
	}
	var hdrs []hdr
	var body bytes.Buffer
	for _, s := range secs {
		name := uint32(shstr.Len())
		shstr.WriteString(s.name)
		shstr.WriteByte(0)
		var data bytes.Buffer
		for _, x := range s.strings {
			data.WriteString(x)
			data.WriteByte(0)
		}
		for data.Len()%4 != 0 {
			data.WriteByte(0)
		}
		flags := uint32(0)
		if s.alloc {
			flags = 2 // SHF_ALLOC
		}
		hdrs = append(hdrs, hdr{name, 1 /* SHT_PROGBITS */, flags, s.addr, uint32(ehsize + body.Len()), uint32(data.Len())})
		body.Write(data.Bytes())
	}
	shstrName := uint32(shstr.Len())
	shstr.WriteString(".shstrtab")
	shstr.WriteByte(0)
	hdrs = append(hdrs, hdr{shstrName, 3 /* SHT_STRTAB */, 0, 0, uint32(ehsize + body.Len()), uint32(shstr.Len())})
	body.Write(shstr.Bytes())
	for body.Len()%4 != 0 {
		body.WriteByte(0)
	}
	shoff := uint32(ehsize + body.Len())

	var f bytes.Buffer
	le := binary.LittleEndian
	f.Write([]byte{0x7f, 'E', 'L', 'F', 1 /* ELFCLASS32 */, 1 /* ELFDATA2LSB */, 1 /* EV_CURRENT */, 0})
	f.Write(make([]byte, 8))
	binary.Write(&f, le, uint16(2))  // e_type: ET_EXEC
	binary.Write(&f, le, uint16(94)) // e_machine: EM_XTENSA
	binary.Write(&f, le, uint32(1))  // e_version
	binary.Write(&f, le, uint32(0))  // e_entry
	binary.Write(&f, le, uint32(0))  // e_phoff
	binary.Write(&f, le, shoff)      // e_shoff
	binary.Write(&f, le, uint32(0))  // e_flags
	binary.Write(&f, le, uint16(ehsize))
	binary.Write(&f, le, uint16(0)) // e_phentsize
	binary.Write(&f, le, uint16(0)) // e_phnum
	binary.Write(&f, le, uint16(shentsize))
	binary.Write(&f, le, uint16(len(hdrs)+1)) // e_shnum, with the null section
	binary.Write(&f, le, uint16(len(hdrs)))   // e_shstrndx: the last
	f.Write(body.Bytes())                     // section contents
	f.Write(make([]byte, shentsize))          // section 0: null
	for _, h := range hdrs {
		for _, v := range []uint32{h.name, h.typ, h.flags, h.addr, h.off, h.size, 0, 0, 1, 0} {
			binary.Write(&f, le, v)
		}
	}
	return f.Bytes()
}

// Frame parts, big-endian as the board sends them.
func beU32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func beU64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func beF64(v float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(v))
}

// beShort is a short argument: padded to 32 bits, value in the low half.
func beShort(v uint16) []byte { return append([]byte{0, 0}, byte(v>>8), byte(v)) }

// beChar is a char argument: padded to 32 bits, value in the last byte.
func beChar(v byte) []byte { return []byte{0, 0, 0, v} }

// embedded is data sent inline instead of an address: a big-endian int16
// of 1 - length (so the first word's top six bits are all set), then the
// bytes. Strings are sent with their NUL.
func embedded(b []byte) []byte {
	out := binary.BigEndian.AppendUint16(nil, uint16(int16(1-len(b))))
	return append(out, b...)
}

// crc8Ref is the frame check by its definition (polynomial 0x07, initial
// value 0, no reflection, no final XOR), written apart from the decoder's.
func crc8Ref(b []byte) byte {
	var c byte
	for _, x := range b {
		c ^= x
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// binFrame is one frame: type (1 bootloader, 2 app), a control word (total
// length in the low 10 bits, level 1-5 (E W I D V) in the next 3, a 64-bit
// time flag, version 0), format and tag (addresses or embedded), the time
// in milliseconds, the arguments, and a CRC-8 over everything before it.
func binFrame(typ byte, level int, ms uint64, ts64 bool, format, tag []byte, args ...[]byte) []byte {
	payload := append(append([]byte{}, format...), tag...)
	if ts64 {
		payload = append(payload, beU64(ms)...)
	} else {
		payload = append(payload, beU32(uint32(ms))...)
	}
	for _, a := range args {
		payload = append(payload, a...)
	}
	total := 1 + 2 + len(payload) + 1
	ctl := uint16(total) | uint16(level)<<10
	if ts64 {
		ctl |= 1 << 13
	}
	f := append([]byte{typ}, binary.BigEndian.AppendUint16(nil, ctl)...)
	f = append(f, payload...)
	return append(f, crc8Ref(f))
}

// binlogFixture builds the two ELFs and the capture.
func binlogFixture(t testing.TB) (appELF, bootELF, capture []byte) {
	// The app keeps its format strings in .noload (never loaded on the
	// board: addresses below 0x01000000) and its tags and constant
	// strings in flash rodata (ESP32-S3 DROM, 0x3c000000).
	noload := elfSection{name: ".noload", addr: 0x00000100, strings: []string{
		"Project name:     %s",
		"retry %d of %u in %lld ms",
		"%s:%hu unreachable (errno %hhd)",
		"heap %5.1f%% free, flags %c%c, id %#x, %08X, [%-6s], %+d, %.3d, at %p",
		"octal %o %#o, hex %hx %hhx, %e, %.2g",
		"uptime %llu ms since the epoch",
		"__ESP_BUFFER_HEX_FORMAT__%d%s%p",
		"__ESP_BUFFER_CHAR_FORMAT__%d%s%p",
		"__ESP_BUFFER_HEXDUMP_FORMAT__%d%s%p",
		"peer %s: %s",
	}}
	rodata := elfSection{name: ".flash.rodata", addr: 0x3c020020, alloc: true, strings: []string{
		"app_init", "tp_net", "tp_demo", "tp_demo-1.4.0", "direct",
	}}
	boot := elfSection{name: ".dram0.rodata", addr: 0x3fcd7e00, alloc: true, strings: []string{
		"boot", "ESP-IDF %s 2nd stage bootloader", "chip revision: v%d.%d",
	}}
	appELF = writeELF32([]elfSection{noload, rodata})
	bootELF = writeELF32([]elfSection{boot})

	n := func(s string) []byte { return beU32(noload.addrOf(t, s)) }
	r := func(s string) []byte { return beU32(rodata.addrOf(t, s)) }
	b := func(s string) []byte { return beU32(boot.addrOf(t, s)) }
	z := func(s string) []byte { return embedded(append([]byte(s), 0)) }
	const E, W, I, D, V = 1, 2, 3, 4, 5
	buf := []byte("tailpath fixture, 36 bytes long....!")

	var c bytes.Buffer
	// The ROM prints text before any binary frame.
	c.WriteString("ESP-ROM:esp32s3-20210327\r\n")
	c.WriteString("rst:0x1 (POWERON),boot:0x8 (SPI_FAST_FLASH_BOOT)\r\n")
	c.Write(binFrame(1, I, 27, false, b("ESP-IDF %s 2nd stage bootloader"), b("boot"), z("v5.5")))
	c.Write(binFrame(1, I, 28, false, b("chip revision: v%d.%d"), b("boot"), beU32(0), beU32(2)))
	c.Write(binFrame(2, I, 312, false, n("Project name:     %s"), r("app_init"), r("tp_demo-1.4.0")))
	c.Write(binFrame(2, W, 1200, false, n("retry %d of %u in %lld ms"), r("tp_net"), beU32(uint32(0xfffffffd)), beU32(4294967295), beU64(1500)))
	c.Write(binFrame(2, E, 1500, false, n("%s:%hu unreachable (errno %hhd)"), r("tp_net"), z("198.51.100.7"), beShort(41641), beChar(0x8f)))
	c.Write(binFrame(2, I, 2000, false, n("heap %5.1f%% free, flags %c%c, id %#x, %08X, [%-6s], %+d, %.3d, at %p"), r("tp_demo"),
		beF64(37.25), beChar('o'), beChar('k'), beU32(0xbeef), beU32(0x3fc9a5b0), r("direct"), beU32(42), beU32(7), beU32(0x3fc9a5b0)))
	c.Write(binFrame(2, D, 2100, false, n("octal %o %#o, hex %hx %hhx, %e, %.2g"), r("tp_demo"),
		beU32(8), beU32(8), beShort(0xabcd), beChar(0x7f), beF64(1500.5), beF64(0.000123)))
	c.Write(binFrame(2, V, 1748947327120, true, n("uptime %llu ms since the epoch"), z("tp_clock"), beU64(1748947327120)))
	c.Write(binFrame(2, I, 2200, false, n("__ESP_BUFFER_HEX_FORMAT__%d%s%p"), r("tp_demo"), beU32(uint32(len(buf))), embedded(buf), beU32(0x3fc9a5b0)))
	c.Write(binFrame(2, I, 2201, false, n("__ESP_BUFFER_CHAR_FORMAT__%d%s%p"), r("tp_demo"), beU32(20), embedded(buf[:20]), beU32(0x3fc9a5b0)))
	c.Write(binFrame(2, W, 2202, false, n("__ESP_BUFFER_HEXDUMP_FORMAT__%d%s%p"), r("tp_demo"), beU32(20), embedded(buf[:20]), beU32(0x3fc9a5b0)))
	// An address the ELF does not hold.
	c.Write(binFrame(2, E, 2300, false, n("peer %s: %s"), r("tp_net"), beU32(0x3c0ffff0), r("direct")))
	// Text that is not a frame, between frames, stays text.
	c.WriteString("plain printf text\r\n")
	c.Write(binFrame(2, I, 2400, false, z("the format itself embedded: %d"), z("tp_demo"), beU32(3)))
	return appELF, bootELF, c.Bytes()
}

// TestBinLogFixtureUpToDate: the committed fixture is what
// binlogFixture builds (so a change to it is made here, reviewed as code).
func TestBinLogFixtureUpToDate(t *testing.T) {
	app, boot, capture := binlogFixture(t)
	files := map[string][]byte{"app.elf": app, "bootloader.elf": boot, "capture.bin": capture}
	for name, want := range files {
		p := filepath.Join(binlogDir, name)
		if *updateBinlog {
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (regenerate with go test ./devlink -run TestBinLogFixtureUpToDate -update-binlog)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what binlogFixture builds; regenerate with -update-binlog", p)
		}
	}
}
