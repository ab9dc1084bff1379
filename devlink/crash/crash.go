package crash

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tailpath/tailpath/devlink/internal/lex"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Reset is a ROM reset line: `rst:0x15 (USB_UART_CHIP_RESET),boot:0x28 (SPI_FAST_FLASH_BOOT)`.
type Reset struct {
	Code     int           // reset cause code (0x15)
	Name     safetext.Text // the ROM's name for it, as printed ("USB_UART_CHIP_RESET")
	Reason   string        // what it means on an ESP32-S3 ("USB-UART reset (esptool or the host toggled DTR/RTS)")
	BootMode int           // strapping value after "boot:" (0x28), -1 if absent
}

// esp32s3Resets maps ESP32-S3 reset codes to plain words (soc/esp32s3 reset_reasons.h).
var esp32s3Resets = map[int]string{
	0x01: "power-on reset",
	0x03: "software system reset (esp_restart)",
	0x05: "deep-sleep wake",
	0x07: "main watchdog 0 reset the digital core",
	0x08: "main watchdog 1 reset the digital core",
	0x09: "RTC watchdog reset the digital core",
	0x0b: "main watchdog 0 reset CPU 0",
	0x0c: "software CPU reset (panic or esp_restart)",
	0x0d: "RTC watchdog reset CPU 0",
	0x0f: "brownout: supply voltage dropped",
	0x10: "RTC watchdog reset the chip",
	0x11: "main watchdog 1 reset CPU 0",
	0x12: "super watchdog reset",
	0x13: "clock glitch reset",
	0x14: "eFuse CRC error reset",
	0x15: "USB-UART reset (the host toggled DTR/RTS)",
	0x16: "USB-JTAG reset (the host reset it over USB)",
	0x17: "power glitch reset",
}

// ResetReason returns the ESP32-S3 meaning of a reset code, or
// "unknown reset 0x…".
func ResetReason(code int) string {
	if s, ok := esp32s3Resets[code]; ok {
		return s
	}
	return fmt.Sprintf("unknown reset 0x%x", code)
}

// ParseReset parses a reset line (the part from "rst:0x"). Errors describe
// what was missing.
func ParseReset(b []byte) (Reset, error) {
	i := bytes.Index(b, []byte("rst:0x"))
	if i < 0 {
		return Reset{}, errors.New("no rst:0x in reset line")
	}
	b = b[i+6:]
	code, n := lex.HexPrefix(b)
	if n == 0 {
		return Reset{}, errors.New("reset line: no hex code after rst:0x")
	}
	r := Reset{Code: int(code), Reason: ResetReason(int(code)), BootMode: -1}
	b = b[n:]
	if bytes.HasPrefix(b, []byte(" (")) {
		if j := bytes.IndexByte(b, ')'); j > 2 {
			r.Name = safetext.New(string(b[2:j]))
			b = b[j+1:]
		}
	}
	if k := bytes.Index(b, []byte("boot:0x")); k >= 0 {
		if v, n := lex.HexPrefix(b[k+7:]); n > 0 {
			r.BootMode = int(v)
		}
	}
	return r, nil
}

// Panic is the first line of a panic: `Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.`
type Panic struct {
	Core   int    // CPU core, -1 if not printed
	Reason string // "LoadProhibited", "Illegal instruction", "Interrupt wdt timeout on CPU0", …
	// Damaged is true when the marker's first letters were lost (a reset
	// or UART glitch ate them) or a CR interrupted it.
	Damaged bool
}

// ParsePanic parses a Guru Meditation line, also one whose marker lost its
// first letters (`uru Meditation Error: …`, `ation Error: Core  0
// panic'ed (…)`), carries a CR inside, or is the pre-v4 form
// `Guru Meditation Error of type LoadProhibited occurred on core  0`.
func ParsePanic(b []byte) (Panic, error) {
	clean := stripCR(b)
	p := Panic{Core: -1, Damaged: len(clean) != len(b)}
	b = clean
	k, start := Find(b)
	if k != MarkerPanic {
		return Panic{}, errors.New("not a Guru Meditation line")
	}
	b = b[start:]
	if !bytes.HasPrefix(b, []byte("Guru Meditation Error")) {
		p.Damaged = true
	}
	if i := bytes.Index(b, []byte("panic'ed (")); i >= 0 {
		// Modern form: "… Core  0 panic'ed (Reason). Exception was unhandled."
		// The core number is the digits just before "panic'ed".
		e := i
		for e > 0 && b[e-1] == ' ' {
			e--
		}
		d := e
		for d > 0 && e-d < 3 && isDigit(b[d-1]) {
			d--
		}
		if d < e && d > 0 && b[d-1] == ' ' {
			p.Core, _ = strconv.Atoi(string(b[d:e]))
		}
		r := b[i+len("panic'ed ("):]
		if c := bytes.IndexByte(r, ')'); c >= 0 {
			r = r[:c]
		}
		p.Reason = string(bytes.TrimSpace(r))
		return p, nil
	}
	// Old form, or a line cut before "panic'ed".
	if i := bytes.Index(b, []byte(" of type ")); i >= 0 {
		r := b[i+len(" of type "):]
		if j := bytes.Index(r, []byte(" occurred")); j >= 0 {
			r = r[:j]
		}
		p.Reason = string(bytes.TrimSpace(r))
		if j := bytes.Index(b, []byte("on core ")); j >= 0 {
			rest := bytes.TrimLeft(b[j+len("on core "):], " ")
			if n := lex.DecPrefix(rest); n > 0 {
				p.Core, _ = strconv.Atoi(string(rest[:n]))
			}
		}
		return p, nil
	}
	if i := bytes.IndexByte(b, ':'); i >= 0 {
		b = b[i+1:]
	}
	b = bytes.TrimSpace(b)
	if bytes.HasPrefix(b, anchorCore) {
		rest := bytes.TrimLeft(b[4:], " ")
		if n := lex.DecPrefix(rest); n > 0 {
			p.Core, _ = strconv.Atoi(string(rest[:n]))
			b = bytes.TrimSpace(rest[n:])
		}
	}
	if o := bytes.IndexByte(b, '('); o >= 0 {
		if c := bytes.LastIndexByte(b, ')'); c > o {
			p.Reason = string(b[o+1 : c])
			return p, nil
		}
	}
	p.Reason = string(b)
	return p, nil
}

// Register is one value of a panic's register dump.
type Register struct {
	Name  string // as printed: "PC", "MEPC", "RA", "S0/FP", "EXCVADDR"
	Value uint32
}

// ParseRegisters appends the `NAME    : 0xVALUE` pairs of one register
// dump row (Xtensa `PC      : 0x400d1234  PS      : …`, RISC-V `MEPC    :
// 0x40001be4  RA      : …`) to dst. A row cut short keeps the pairs
// before the cut.
func ParseRegisters(b []byte, dst []Register) []Register {
	for {
		c := bytes.Index(b, []byte(": 0x"))
		if c <= 0 {
			return dst
		}
		name := bytes.TrimSpace(b[:c])
		if sp := bytes.LastIndexByte(name, ' '); sp >= 0 {
			name = name[sp+1:]
		}
		v, n := lex.HexPrefix(b[c+4:])
		if n == 0 || n > 8 || !isRegisterName(name) {
			return dst
		}
		dst = append(dst, Register{Name: string(name), Value: uint32(v)})
		b = b[c+4+n:]
	}
}

// DanglingRegister returns the register name a dump row ends with when a
// serial monitor wrapped the row between the name and its value: `…  A0
// : 0x80157f5c  A1   ` (the value, `   : 0x3ffce570`, starts the next
// line; see RegisterContinuation). "" when the row ends in a value.
func DanglingRegister(b []byte) string {
	if i := bytes.LastIndex(b, []byte(": 0x")); i >= 0 {
		_, n := lex.HexPrefix(b[i+4:])
		b = b[i+4+n:]
	}
	name := bytes.TrimSpace(b)
	if !isRegisterName(name) {
		return ""
	}
	return string(name)
}

// RegisterContinuation parses the start of a line that continues a wrapped
// register dump row: optional spaces, then `: 0xVALUE` (the value of the
// name the row above ended with). n is how many bytes it took, so the
// rest can hold more pairs.
func RegisterContinuation(b []byte) (v uint32, n int, ok bool) {
	t := bytes.TrimLeft(b, " ")
	if !bytes.HasPrefix(t, []byte(": 0x")) {
		return 0, 0, false
	}
	x, k := lex.HexPrefix(t[4:])
	if k == 0 || k > 8 {
		return 0, 0, false
	}
	return uint32(x), len(b) - len(t) + 4 + k, true
}

// isRegisterName matches a dumped register's name: 1–10 bytes of
// upper-case letters, digits and '/', starting with a letter ("S0/FP").
func isRegisterName(b []byte) bool {
	if len(b) == 0 || len(b) > 10 || b[0] < 'A' || b[0] > 'Z' {
		return false
	}
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || isDigit(c) || c == '/') {
			return false
		}
	}
	return true
}

// RegisterValue returns the value of register name in regs.
func RegisterValue(regs []Register, name string) (uint32, bool) {
	for _, r := range regs {
		if r.Name == name {
			return r.Value, true
		}
	}
	return 0, false
}

// ParseStackRow parses one `Stack memory:` row of a RISC-V panic:
// `3fc8cdec: 0xa5a5a5a5 0x42012ea6 …`: the row's address and its words
// (appended to dst). ok is false for a line that is not a row or holds no
// whole word; a row cut short keeps the words before the cut.
func ParseStackRow(b []byte, dst []uint32) (addr uint32, words []uint32, ok bool) {
	if !IsStackRow(b) {
		return 0, dst, false
	}
	a, _ := lex.HexPrefix(b[:8])
	b = b[9:]
	start := len(dst)
	for {
		b = bytes.TrimLeft(b, " ")
		if len(b) < 3 || b[0] != '0' || b[1] != 'x' {
			break
		}
		v, n := lex.HexPrefix(b[2:])
		if n != 8 {
			break
		}
		dst = append(dst, uint32(v))
		b = b[2+n:]
	}
	return uint32(a), dst, len(dst) > start
}

// InROM reports whether pc lies in the mask ROM of chip (the ROM banner's
// name, "esp32c3"; "" when unknown): code no app ELF holds. The ROM is at
// 0x4000_0000 to 0x4006_FFFF on every ESP32 family chip but the P4, whose
// ROM is at 0x4FC0_0000 to 0x4FC1_FFFF (its flash is mapped at
// 0x4000_0000); with chip unknown both ranges count.
func InROM(chip string, pc uint32) bool {
	p4 := pc >= 0x4fc00000 && pc < 0x4fc20000
	if chip == "esp32p4" {
		return p4
	}
	return p4 || (pc >= 0x40000000 && pc < 0x40070000)
}

// ParseChip returns the chip name from a ROM banner
// (`ESP-ROM:esp32c3-api1-20210207` → "esp32c3"), or "".
func ParseChip(b []byte) string {
	i := bytes.Index(b, []byte("ESP-ROM:"))
	if i < 0 {
		return ""
	}
	b = b[i+len("ESP-ROM:"):]
	n := 0
	for n < len(b) && n < 16 && (b[n] >= 'a' && b[n] <= 'z' || isDigit(b[n])) {
		n++
	}
	if n < 5 || !bytes.HasPrefix(b, []byte("esp32")) {
		return ""
	}
	return string(b[:n])
}

// Frame is one backtrace entry: program counter and stack pointer.
type Frame struct {
	PC, SP uint32
}

// Backtrace is a parsed `Backtrace: 0xPC:0xSP …` line.
type Backtrace struct {
	Frames []Frame
	// Corrupted: the line ended with `|<-CORRUPTED` (the stack could not be
	// walked further); Continues: `|<-CONTINUES` (more frames than printed).
	Corrupted, Continues bool
}

// ParseBacktrace parses a backtrace line. It returns an error when there is
// no "Backtrace:" or a frame is not `0xHEX:0xHEX`.
func ParseBacktrace(b []byte) (Backtrace, error) {
	i := bytes.Index(b, []byte("Backtrace:"))
	if i < 0 {
		return Backtrace{}, errors.New("no Backtrace: in line")
	}
	b = b[i+len("Backtrace:"):]
	var bt Backtrace
	for len(b) > 0 {
		b = bytes.TrimLeft(b, " \t")
		if len(b) == 0 {
			break
		}
		if b[0] == '|' {
			switch {
			case bytes.Contains(b, []byte("CORRUPTED")):
				bt.Corrupted = true
			case bytes.Contains(b, []byte("CONTINUES")):
				bt.Continues = true
			}
			break
		}
		end := bytes.IndexAny(b, " \t")
		if end < 0 {
			end = len(b)
		}
		tok := b[:end]
		b = b[end:]
		pcs, sps, ok := bytes.Cut(tok, []byte(":"))
		pc, ok1 := hex0x(pcs)
		sp, ok2 := hex0x(sps)
		if !ok || !ok1 || !ok2 {
			return bt, fmt.Errorf("backtrace frame %q is not 0xPC:0xSP", lex.Quote(tok))
		}
		bt.Frames = append(bt.Frames, Frame{PC: pc, SP: sp})
	}
	return bt, nil
}

// ParseAbortPC returns the PC from `abort() was called at PC 0x40081234 on core 0`.
func ParseAbortPC(b []byte) (pc uint32, core int, err error) {
	i := bytes.Index(b, []byte("at PC 0x"))
	if i < 0 {
		return 0, -1, errors.New("no \"at PC 0x\" in abort line")
	}
	v, n := lex.HexPrefix(b[i+8:])
	if n == 0 || n > 8 {
		return 0, -1, errors.New("abort line: bad PC")
	}
	core = -1
	if j := bytes.Index(b, []byte("on core ")); j >= 0 {
		if n := lex.DecPrefix(b[j+8:]); n > 0 {
			core, _ = strconv.Atoi(string(b[j+8 : j+8+n]))
		}
	}
	return uint32(v), core, nil
}

// ParseRegisterPC returns the PC from a register dump line that has one
// (`PC      : 0x400d1234  PS      : …`; RISC-V dumps use `MEPC    :`).
func ParseRegisterPC(b []byte) (uint32, bool) {
	for _, key := range [][]byte{[]byte("PC      : 0x"), []byte("MEPC    : 0x")} {
		if i := bytes.Index(b, key); i >= 0 && (i == 0 || b[i-1] == ' ') {
			v, n := lex.HexPrefix(b[i+len(key):])
			if n > 0 && n <= 8 {
				return uint32(v), true
			}
		}
	}
	return 0, false
}

// ParseRegisterRA returns the return address from a RISC-V register dump
// row (`… RA      : 0x42075ee2 …`): the caller of the faulting function.
func ParseRegisterRA(b []byte) (uint32, bool) {
	key := []byte("RA      : 0x")
	if i := bytes.Index(b, key); i >= 0 && (i == 0 || b[i-1] == ' ') {
		v, n := lex.HexPrefix(b[i+len(key):])
		if n > 0 && n <= 8 {
			return uint32(v), true
		}
	}
	return 0, false
}

// ParseELFSHA returns the hex digest prefix from `ELF file SHA256: 0123abcd…`.
func ParseELFSHA(b []byte) (string, bool) {
	i := bytes.Index(b, []byte("ELF file SHA256:"))
	if i < 0 {
		return "", false
	}
	b = bytes.TrimSpace(b[i+len("ELF file SHA256:"):])
	n := 0
	for n < len(b) && lex.IsHex(b[n]) {
		n++
	}
	if n < 8 {
		return "", false
	}
	return string(bytes.ToLower(b[:n])), true
}

// ParseStackOverflow returns the task from `***ERROR*** A stack overflow in task X has been detected.`
func ParseStackOverflow(b []byte) (task string, ok bool) {
	i := bytes.Index(b, []byte("stack overflow in task "))
	if i < 0 {
		return "", false
	}
	b = b[i+len("stack overflow in task "):]
	if j := bytes.Index(b, []byte(" has been detected")); j >= 0 {
		b = b[:j]
	}
	return string(b), true
}

// hex0x parses "0x" followed by 1–8 hex digits and nothing else.
func hex0x(b []byte) (uint32, bool) {
	if len(b) < 3 || b[0] != '0' || (b[1] != 'x' && b[1] != 'X') {
		return 0, false
	}
	v, n := lex.HexPrefix(b[2:])
	if n == 0 || n != len(b)-2 || n > 8 {
		return 0, false
	}
	return uint32(v), true
}

// IsStackRow matches a RISC-V panic's `Stack memory:` row:
// `3fc8cdec: 0xa5a5a5a5 0x42012ea6 …` (an address, then 32-bit words).
func IsStackRow(t []byte) bool {
	if len(t) < 20 || t[8] != ':' || t[9] != ' ' || t[10] != '0' || t[11] != 'x' {
		return false
	}
	for _, c := range t[:8] {
		if !lex.IsHex(c) {
			return false
		}
	}
	return true
}

// NullAccess reports a crash that read or wrote near address 0: an Xtensa
// LoadProhibited or StoreProhibited (EXCCAUSE 28, 29) whose EXCVADDR, the
// faulting data address, is below 0x100, or a RISC-V load or store access
// fault (MCAUSE 5, 7) whose MTVAL is. Such an address is a NULL pointer
// dereferenced, at the offset of the field read (ESP-IDF's Fatal Errors
// guide: "EXCVADDR … a NULL pointer" for LoadProhibited). arch is "xtensa"
// or "riscv", reason the panic's reason (read when EXCCAUSE was not
// dumped), regs the register dump. reg names the register ("EXCVADDR",
// "MTVAL"), access is "read" or "write".
func NullAccess(arch, reason string, regs []Register) (reg string, addr uint32, access string, ok bool) {
	switch arch {
	case "xtensa":
		reg = "EXCVADDR"
		cause, known := RegisterValue(regs, "EXCCAUSE")
		switch {
		case known && cause == 28, !known && strings.Contains(reason, "LoadProhibited"):
			access = "read"
		case known && cause == 29, !known && strings.Contains(reason, "StoreProhibited"):
			access = "write"
		}
	case "riscv":
		reg = "MTVAL"
		switch cause, _ := RegisterValue(regs, "MCAUSE"); cause {
		case 5:
			access = "read"
		case 7:
			access = "write"
		}
	}
	if access == "" {
		return "", 0, "", false
	}
	addr, found := RegisterValue(regs, reg)
	if !found || addr > 0xff {
		return "", 0, "", false
	}
	return reg, addr, access, true
}

// decodedFrame matches a backtrace frame some tool already decoded in the
// log: ESP-IDF monitor's `0x400d1000: app_main at main.c:10` (newer ones
// start `--- `) and the `#0  0x400d8a2e:0x3ffb2f40 in tp_udp_send at
// src/tp_udp.c:141` of PlatformIO's and Arduino's exception decoders.
var decodedFrame = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:--- )?(?:0x[0-9a-fA-F]{8}: \S.* at \S|#\d+\s+0x[0-9a-fA-F]+(?::0x[0-9a-fA-F]+)?\s+in\s+\S)`)
})

// IsDecodedFrame reports whether a crash report's line is a frame some
// tool already decoded (a monitor with the ELF decoded it on the board's
// side): then tailpath's own --elf adds nothing the log lacks.
func IsDecodedFrame(line string) bool {
	return decodedFrame().MatchString(line)
}
