package devlink

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Reset is a ROM reset line: `rst:0x15 (USB_UART_CHIP_RESET),boot:0x28 (SPI_FAST_FLASH_BOOT)`.
type Reset struct {
	Code     int    // reset cause code (0x15)
	Name     string // the ROM's name for it, as printed ("USB_UART_CHIP_RESET")
	Reason   string // what it means on an ESP32-S3 ("USB-UART reset (esptool or the host toggled DTR/RTS)")
	BootMode int    // strapping value after "boot:" (0x28), -1 if absent
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
	code, n := hexPrefix(b)
	if n == 0 {
		return Reset{}, errors.New("reset line: no hex code after rst:0x")
	}
	r := Reset{Code: int(code), Reason: ResetReason(int(code)), BootMode: -1}
	b = b[n:]
	if bytes.HasPrefix(b, []byte(" (")) {
		if j := bytes.IndexByte(b, ')'); j > 2 {
			r.Name = string(b[2:j])
			b = b[j+1:]
		}
	}
	if k := bytes.Index(b, []byte("boot:0x")); k >= 0 {
		if v, n := hexPrefix(b[k+7:]); n > 0 {
			r.BootMode = int(v)
		}
	}
	return r, nil
}

// Panic is the first line of a panic: `Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.`
type Panic struct {
	Core   int    // CPU core, -1 if not printed
	Reason string // "LoadProhibited", "Interrupt wdt timeout on CPU0", …
}

// ParsePanic parses a Guru Meditation line.
func ParsePanic(b []byte) (Panic, error) {
	i := bytes.Index(b, []byte("Guru Meditation Error:"))
	if i < 0 {
		return Panic{}, errors.New("not a Guru Meditation line")
	}
	b = bytes.TrimSpace(b[i+len("Guru Meditation Error:"):])
	p := Panic{Core: -1}
	if bytes.HasPrefix(b, []byte("Core")) {
		rest := bytes.TrimLeft(b[4:], " ")
		if n := decPrefix(rest); n > 0 {
			p.Core, _ = strconv.Atoi(string(rest[:n]))
			rest = rest[n:]
		}
		b = rest
	}
	if o := bytes.IndexByte(b, '('); o >= 0 {
		if c := bytes.LastIndexByte(b, ')'); c > o {
			p.Reason = string(b[o+1 : c])
			return p, nil
		}
	}
	p.Reason = string(bytes.TrimSpace(b))
	return p, nil
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
			return bt, fmt.Errorf("backtrace frame %q is not 0xPC:0xSP", safeQuote(tok))
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
	v, n := hexPrefix(b[i+8:])
	if n == 0 || n > 8 {
		return 0, -1, errors.New("abort line: bad PC")
	}
	core = -1
	if j := bytes.Index(b, []byte("on core ")); j >= 0 {
		if n := decPrefix(b[j+8:]); n > 0 {
			core, _ = strconv.Atoi(string(b[j+8 : j+8+n]))
		}
	}
	return uint32(v), core, nil
}

// ParseRegisterPC returns the PC from a register dump line that has one
// (`PC      : 0x400d1234  PS      : …`; RISC-V dumps use `MEPC    :`).
func ParseRegisterPC(b []byte) (uint32, bool) {
	for _, key := range [][]byte{[]byte("PC      : 0x"), []byte("MEPC    : 0x")} {
		if i := bytes.Index(b, key); i >= 0 {
			v, n := hexPrefix(b[i+len(key):])
			if n > 0 && n <= 8 {
				return uint32(v), true
			}
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
	for n < len(b) && isHex(b[n]) {
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
	v, n := hexPrefix(b[2:])
	if n == 0 || n != len(b)-2 || n > 8 {
		return 0, false
	}
	return uint32(v), true
}

// hexPrefix parses leading hex digits (at most 16).
func hexPrefix(b []byte) (uint64, int) {
	var v uint64
	n := 0
	for n < len(b) && n < 16 && isHex(b[n]) {
		c := b[n]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		v = v<<4 | uint64(c)
		n++
	}
	return v, n
}

func decPrefix(b []byte) int {
	n := 0
	for n < len(b) && n < 9 && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	return n
}

func safeQuote(b []byte) string {
	if len(b) > 40 {
		b = b[:40]
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}
