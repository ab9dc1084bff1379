// Package devlink reads a CoreS3 (ESP32-S3) board's serial console: it splits
// the byte stream into lines, parses ESP-IDF log lines, ROM banners, panics and
// the ESP32 Tailscale port's messages, filters them with ESP-IDF monitor's
// syntax, decodes backtraces from an ELF, keeps the port open across unplugs
// and folds everything into one device state model.
//
// The parsing functions are pure functions over bytes; the hot path (Splitter
// plus ParseLine) does not allocate per line. Formats follow ESP-IDF's
// esp_log output (components/log), the ROM's boot banner and the panic handler
// (components/esp_system/panic.c), as described in the design notes' facts
// (../shared/design/facts.md, "ESP-IDF console output").
package devlink

import (
	"bytes"
	"time"

	"github.com/tailpath/tailpath/devlink/internal/lex"

	"github.com/tailpath/tailpath/devlink/crash"
	"github.com/tailpath/tailpath/internal/safetext"
)

// Level is an ESP-IDF log level letter: 'E', 'W', 'I', 'D', 'V', or 0 for a
// line that is not a log line.
type Level byte

// Log levels as ESP-IDF prints them.
const (
	LevelNone    Level = 0
	LevelError   Level = 'E'
	LevelWarn    Level = 'W'
	LevelInfo    Level = 'I'
	LevelDebug   Level = 'D'
	LevelVerbose Level = 'V'
)

// rank orders levels like ESP-IDF monitor: N=0 < E < W < I < D < V=5.
func (l Level) rank() int {
	switch l {
	case LevelError:
		return 1
	case LevelWarn:
		return 2
	case LevelInfo:
		return 3
	case LevelDebug:
		return 4
	case LevelVerbose:
		return 5
	}
	return 0
}

// String returns the level letter, or "-" for none.
func (l Level) String() string {
	if l == 0 {
		return "-"
	}
	return string(rune(l))
}

// TimeForm says which timestamp form a log line carried.
type TimeForm uint8

// Timestamp forms ESP-IDF can print.
const (
	// TimeNone: no timestamp (ESP_DRAM_LOG lines, Log V2 with time disabled).
	TimeNone TimeForm = iota
	// TimeUptime: milliseconds since boot, `(90000)`.
	TimeUptime
	// TimeClock: system time of day, `(10:12:51.035)`.
	TimeClock
	// TimeDate: date and time, `(24-06-19 10:12:51.035)`.
	TimeDate
	// TimeUnix: Unix milliseconds, `(1718795571035)`.
	TimeUnix
)

var timeFormNames = [...]string{"none", "uptime", "clock", "date", "unix"}

// String names the form.
func (f TimeForm) String() string {
	if int(f) < len(timeFormNames) {
		return timeFormNames[f]
	}
	return "unknown"
}

// Kind classifies a console line.
type Kind uint8

// Line kinds. A log line whose message is itself special (a task watchdog
// report) keeps KindLog; see Line.Tag.
const (
	KindPlain         Kind = iota // anything else, printed as is
	KindLog                       // an ESP-IDF log line: level, time, tag, message
	KindBinary                    // a Log V2 binary frame (needs the ELF to decode)
	KindROM                       // ROM banner: `ESP-ROM:esp32s3-20210327`, `ets Jun  8 2016 00:22:57`
	KindReset                     // `rst:0x15 (USB_UART_CHIP_RESET),boot:0x28 (SPI_FAST_FLASH_BOOT)`
	KindPanic                     // `Guru Meditation Error: Core  0 panic'ed (LoadProhibited). …`
	KindRegisters                 // register dump line: `PC      : 0x400d1234  PS      : 0x00060530 …`
	KindBacktrace                 // `Backtrace: 0xPC:0xSP …`
	KindAbort                     // `abort() was called at PC 0x… on core 0`
	KindStackOverflow             // `***ERROR*** A stack overflow in task X has been detected.`
	KindAssert                    // `assert failed: func file:line (expr)`
	KindCorruptHeap               // `CORRUPT HEAP: …`
	KindBrownout                  // `Brownout detector was triggered`
	KindELFSHA                    // `ELF file SHA256: 0123…` (app banner or panic trailer)
	KindRebooting                 // `Rebooting...` or `CPU halted.`
	KindHexdump                   // `0x3ffb5bc0   54 68 65 … |The way to get s|`
	KindTelemetry                 // `@TP1 S seq=41 …`: a tailpath telemetry frame (devlink/telemetry)
	KindStackDump                 // RISC-V panic: `Stack memory:` and its `3fc8cdec: 0xa5a5a5a5 …` rows
	KindStatusQuery               // the ESP-IDF console's terminal status query ESC[5n at a line start (Raw is just it)
)

// IsCrash reports whether k starts or carries a crash report: the kinds
// shown as crashes (bold red in tail, highlighted in the Log pane).
func (k Kind) IsCrash() bool {
	switch k {
	case KindPanic, KindAbort, KindStackOverflow, KindAssert, KindCorruptHeap, KindBrownout, KindBacktrace:
		return true
	}
	return false
}

var kindNames = [...]string{"plain", "log", "binary", "rom", "reset", "panic", "registers",
	"backtrace", "abort", "stack-overflow", "assert", "corrupt-heap", "brownout", "elf-sha256",
	"rebooting", "hexdump", "telemetry", "stack-dump", "status-query"}

// String names the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Line is one parsed console line. Its byte slices alias the buffer it was
// parsed from: they are valid only until the next line is parsed (copy with
// Clone to keep one).
type Line struct {
	// Raw is the line exactly as received, including its "\n" or "\r\n" if it
	// had one (a line flushed after an idle gap or at the end has none).
	Raw []byte
	// Text is Raw without the line ending; device colour codes and invalid
	// UTF-8 are still in it (DisplayText removes them).
	Text []byte
	Kind Kind
	// Level, Tag, Msg are set for KindLog (and for the special kinds when
	// they arrived inside a log line). Msg excludes the trailing colour reset.
	// Tag is nil for a timestamped line without "tag: " (the Wi-Fi blob's
	// `I (588) wifi:state: run -> init (fc0)`), which filters treat as a
	// plain line, as ESP-IDF monitor does.
	Level Level
	Tag   []byte
	Msg   []byte
	// Colored is true when the device sent an ANSI colour prefix.
	Colored bool
	// TimeForm and TimeText (the text between the parentheses) describe the
	// timestamp; the decoded value is in Uptime, Clock or Wall by form.
	TimeForm TimeForm
	TimeText []byte
	// Uptime is the time since boot for TimeUptime.
	Uptime time.Duration
	// Clock is the time since midnight for TimeClock and TimeDate.
	Clock time.Duration
	// Wall is the absolute time (UTC as printed) for TimeDate and TimeUnix.
	Wall time.Time
	// Cut is the number of leading bytes of Text that belong to a line cut off
	// by a reset or a crash: for a ROM banner or a crash report's first line
	// that starts mid-line, Text[:Cut] is the stale prefix (wrappers
	// included) and Text[Cut:] the banner or report. 0 otherwise.
	Cut int
	// Partial is true when the line was flushed without its line ending
	// (idle gap, link down, end of input).
	Partial bool
	// Wrap lists the host- or framework-side wrappers stripped before the
	// line was parsed (ESPHome's logger, PlatformIO's and idf.py monitor's
	// time prefixes, Arduino-ESP32's log format); 0 for none. Text keeps
	// them, for display.
	Wrap Wrap
	// Inner is the offset in Text of the text inside the wrappers (0
	// without any): where an ESP-IDF line wrapped by ESPHome starts, or an
	// ESPHome or Arduino line's message. Cut, when set, is ≥ Inner.
	Inner int
	// HostTime is the time text of a host time prefix ("14:04:29",
	// "10:12:51.035", "2024-06-19 10:12:51"); nil without one.
	HostTime []byte
	// Decoded is the addr2line-style decoding of the PCs this line carries
	// (DecodeLine). ParseLine never sets it; Source does, on the
	// copies it sends, when it has an ELF (cleaned, like Display: the names
	// come from the ELF's DWARF).
	Decoded []safetext.Text
	// Display is DisplayText(), filled in by Source on the copies it sends
	// (on its reading goroutine, so a UI never sanitises a flood itself).
	// ParseLine leaves it ""; call DisplayText then.
	Display safetext.Text
}

// Body returns the part of the line that carries meaning: the banner after
// a cut-off prefix, else Msg for a log line, else Text.
func (l *Line) Body() []byte {
	if l.Cut > 0 {
		return l.Text[l.Cut:]
	}
	if l.Level != 0 {
		return l.Msg
	}
	return l.Text[l.Inner:]
}

// Unwrapped returns Text without the wrappers (Text[Inner:]) and without a
// stale prefix cut off by a reset or crash (Text[Cut:]).
func (l *Line) Unwrapped() []byte { return l.Text[max(l.Cut, l.Inner):] }

// DisplayText returns Text made safe for a terminal: escape sequences and
// control characters removed, invalid UTF-8 replaced (internal/safetext).
// It allocates; Source calls it on its reading goroutine (Display).
func (l *Line) DisplayText() safetext.Text { return safetext.New(string(l.Text)) }

// Clone returns a copy of l whose slices no longer alias the parse buffer.
func (l *Line) Clone() Line {
	c := *l
	c.Raw = bytes.Clone(l.Raw)
	rebase := func(s []byte) []byte {
		if s == nil {
			return nil
		}
		off := cap(l.Raw) - cap(s)
		if off < 0 || off+len(s) > len(c.Raw) {
			return bytes.Clone(s)
		}
		return c.Raw[off : off+len(s) : off+len(s)]
	}
	c.Text = rebase(l.Text)
	c.Tag = rebase(l.Tag)
	c.Msg = rebase(l.Msg)
	c.TimeText = rebase(l.TimeText)
	c.HostTime = rebase(l.HostTime)
	c.Decoded = append([]safetext.Text(nil), l.Decoded...)
	return c
}

// ParseLine parses one console line (raw, with or without its line ending)
// into l, overwriting every field. It never fails: text it does not recognise
// is KindPlain. It does not allocate; l's slices alias raw.
//
// Wrappers (Wrap) are stripped first; the text inside them is parsed as an
// ESP-IDF line. A crash report's first line is found anywhere in the line,
// glued after other text or with its first letters lost (findCrash); Cut
// then marks the stale text before it.
func ParseLine(raw []byte, l *Line) {
	*l = Line{Raw: raw}
	t := raw
	if n := len(t); n > 0 && t[n-1] == '\n' {
		t = t[:n-1]
	}
	if n := len(t); n > 0 && t[n-1] == '\r' {
		t = t[:n-1]
	}
	l.Text = t
	if len(t) > 0 && (t[0] == '[' || isDigit(t[0]) || t[0] == 0x1b) {
		l.Inner = unwrap(t, l)
	}
	u := t[l.Inner:]
	if l.Wrap&(WrapESPHome|WrapArduino) != 0 {
		// The message of an ESPHome or Arduino line may itself be an
		// ESP-IDF log line (ESPHome forwarding ESP-IDF's output): that
		// one says what the line is. Timestamped only, so prose stays.
		lev, tag, msg, col := l.Level, l.Tag, l.Msg, l.Colored
		tf, tt, up := l.TimeForm, l.TimeText, l.Uptime
		if parseLog(u, l) && l.TimeForm != TimeNone {
			l.logKinds(t)
			return
		}
		l.Level, l.Tag, l.Msg, l.Colored = lev, tag, msg, col
		l.TimeForm, l.TimeText, l.Uptime, l.Clock, l.Wall = tf, tt, up, 0, time.Time{}
		l.logKinds(t)
		return
	}
	if parseLog(u, l) {
		l.logKinds(t)
		return
	}
	l.Kind = classify(u)
	if l.Kind == KindPlain {
		// A ROM banner can start in the middle of a line cut off by a reset.
		if i := bytes.Index(u, []byte("ESP-ROM:")); i > 0 {
			l.Kind, l.Cut = KindROM, l.Inner+i
		} else if i := bytes.Index(u, []byte("rst:0x")); i > 0 {
			l.Kind, l.Cut = KindReset, l.Inner+i
		} else if i := bytes.Index(u, []byte("ets ")); i > 0 && isETSBanner(u[i:]) {
			l.Kind, l.Cut = KindROM, l.Inner+i
		} else if k, i := findCrash(u); k != KindPlain {
			l.Kind = k
			if i > 0 {
				l.Cut = l.Inner + i
			}
		}
	}
}

// logKinds sets Kind (and Cut) for a log line: KindLog, or the special
// kind its message is (a panic handler or watchdog line printed through
// the log, a ROM banner or crash glued onto a line cut short). t is Text.
func (l *Line) logKinds(t []byte) {
	l.Kind = KindLog
	if k := classify(l.Msg); k != KindPlain && k != KindHexdump {
		l.Kind = k
		return
	}
	at := cap(t) - cap(l.Msg) // Msg's offset in Text
	if i := bytes.Index(l.Msg, []byte("ESP-ROM:")); i >= 0 {
		// A reset cut this log line short and the ROM banner followed.
		l.Kind, l.Cut = KindROM, at+i
	} else if k, i := findCrash(l.Msg); k != KindPlain {
		l.Kind = k
		if i > 0 {
			l.Cut = at + i
		}
	}
}

// skipColor returns the index after the colour ESP-IDF puts at the start
// of a log line, or 0. The form is ESP-IDF monitor's
// (`\033\[[01];?[0-9]+m`: ESC[0;32m, ESC[1;31m, ESC[0;33m): a line that
// starts with another escape sequence is not a log line to monitor's
// filter, and so not to tailpath's.
func skipColor(t []byte) int {
	if len(t) < 5 || t[0] != 0x1b || t[1] != '[' || (t[2] != '0' && t[2] != '1') {
		return 0
	}
	i := 3
	if t[i] == ';' {
		i++
	}
	d := i
	for i < len(t) && i < 16 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == d || i >= len(t) || t[i] != 'm' {
		return 0
	}
	return i + 1
}

// parseLog recognises `[colour]L (time) tag: msg[reset]` and `L tag: msg`.
func parseLog(t []byte, l *Line) bool {
	i := skipColor(t)
	l.Colored = i > 0
	if len(t) < i+4 {
		return false
	}
	switch Level(t[i]) {
	case LevelError, LevelWarn, LevelInfo, LevelDebug, LevelVerbose:
	default:
		return false
	}
	if t[i+1] != ' ' {
		return false
	}
	lev := Level(t[i])
	j := i + 2
	if t[j] == '(' {
		end := bytes.IndexByte(t[j:], ')')
		if end < 0 || j+end+1 >= len(t) || t[j+end+1] != ' ' {
			return false
		}
		if !parseTime(t[j+1:j+end], l) {
			return false
		}
		l.TimeText = t[j+1 : j+end]
		j += end + 2
	}
	// tag: one or more non-colon bytes, then ": ".
	rest := t[j:]
	c := bytes.IndexByte(rest, ':')
	if c <= 0 || c+1 >= len(rest) || rest[c+1] != ' ' {
		// "L tag:" with an empty message is still a log line.
		if !(c > 0 && c+1 == len(rest)) {
			if l.TimeForm == TimeNone {
				return false
			}
			// The Wi-Fi blob's `I (588) wifi:wifi driver task: …` has no
			// "tag: " (ESP-IDF monitor's filter treats it as a plain line):
			// keep its level and time for colouring, but no tag.
			l.Level, l.Msg = lev, trimReset(rest)
			return true
		}
	}
	if l.TimeForm == TimeNone && bytes.IndexByte(rest[:c], ' ') >= 0 {
		// Without a timestamp, demand a space-free tag so prose like
		// "I think: yes" stays plain text.
		return false
	}
	l.Level = lev
	l.Tag = rest[:c]
	l.Msg = trimReset(rest[min(c+2, len(rest)):])
	return true
}

// trimReset drops a trailing colour reset.
func trimReset(msg []byte) []byte {
	if n := len(msg); n >= 4 && msg[n-1] == 'm' && bytes.HasSuffix(msg, []byte("\x1b[0m")) {
		return msg[:n-4]
	}
	return msg
}

// parseTime decodes the text between a log line's parentheses.
func parseTime(s []byte, l *Line) bool {
	if len(s) == 0 {
		return false
	}
	if v, ok := digits(s); ok {
		if v >= 1e12 { // 2001-09-09 in Unix ms: no board has been up that long
			l.TimeForm = TimeUnix
			l.Wall = time.UnixMilli(v).UTC()
		} else {
			l.TimeForm = TimeUptime
			l.Uptime = time.Duration(v) * time.Millisecond
		}
		return true
	}
	// HH:MM:SS.mmm
	if len(s) == 12 {
		d, ok := clock(s)
		if ok {
			l.TimeForm, l.Clock = TimeClock, d
		}
		return ok
	}
	// YY-MM-DD HH:MM:SS.mmm or YYYY-MM-DD HH:MM:SS.mmm
	sp := bytes.IndexByte(s, ' ')
	if sp != 8 && sp != 10 {
		return false
	}
	d, ok := clock(s[sp+1:])
	if !ok {
		return false
	}
	date := s[:sp]
	yl := sp - 6
	y, ok1 := digits(date[:yl])
	mo, ok2 := digits(date[yl+1 : yl+3])
	dd, ok3 := digits(date[yl+4:])
	if !ok1 || !ok2 || !ok3 || date[yl] != '-' || date[yl+3] != '-' || mo < 1 || mo > 12 || dd < 1 || dd > 31 {
		return false
	}
	if yl == 2 {
		y += 2000
	}
	l.TimeForm, l.Clock = TimeDate, d
	l.Wall = time.Date(int(y), time.Month(mo), int(dd), 0, 0, 0, 0, time.UTC).Add(d)
	return true
}

// clock parses HH:MM:SS.mmm.
func clock(s []byte) (time.Duration, bool) {
	if len(s) != 12 || s[2] != ':' || s[5] != ':' || s[8] != '.' {
		return 0, false
	}
	h, ok1 := digits(s[0:2])
	m, ok2 := digits(s[3:5])
	sec, ok3 := digits(s[6:8])
	ms, ok4 := digits(s[9:12])
	if !ok1 || !ok2 || !ok3 || !ok4 || h > 23 || m > 59 || sec > 60 {
		return 0, false
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(sec)*time.Second + time.Duration(ms)*time.Millisecond, true
}

// digits parses a non-empty run of at most 18 decimal digits.
func digits(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// classify recognises the non-log line shapes by their first bytes.
func classify(t []byte) Kind {
	if len(t) == 0 {
		return KindPlain
	}
	switch t[0] {
	case 'E':
		if bytes.HasPrefix(t, []byte("ESP-ROM:")) {
			return KindROM
		}
		if bytes.HasPrefix(t, []byte("ELF file SHA256:")) {
			return KindELFSHA
		}
	case 'e':
		if isETSBanner(t) {
			return KindROM
		}
	case 'r':
		if bytes.HasPrefix(t, []byte("rst:0x")) {
			return KindReset
		}
	case 'G':
		if bytes.HasPrefix(t, []byte("Guru Meditation Error:")) {
			return KindPanic
		}
	case 'B':
		if bytes.HasPrefix(t, []byte("Backtrace:")) {
			return KindBacktrace
		}
		if bytes.HasPrefix(t, []byte("Brownout detector was triggered")) {
			return KindBrownout
		}
	case 'a':
		if bytes.HasPrefix(t, []byte("abort() was called at PC")) {
			return KindAbort
		}
		if bytes.HasPrefix(t, []byte("assert failed:")) {
			return KindAssert
		}
	case '*':
		if bytes.HasPrefix(t, []byte("***ERROR*** A stack overflow in task")) {
			return KindStackOverflow
		}
	case 'C':
		if bytes.HasPrefix(t, []byte("CORRUPT HEAP:")) {
			return KindCorruptHeap
		}
		if bytes.HasPrefix(t, []byte("CPU halted.")) {
			return KindRebooting
		}
		if bytes.HasPrefix(t, []byte("Core ")) && bytes.Contains(t, []byte("register dump")) {
			return KindRegisters
		}
	case 'S':
		if bytes.HasPrefix(t, []byte("Stack memory:")) {
			return KindStackDump
		}
	case 'R':
		if bytes.HasPrefix(t, []byte("Rebooting...")) {
			return KindRebooting
		}
	case 'P':
		if bytes.HasPrefix(t, []byte("PC      : 0x")) {
			return KindRegisters
		}
	case '@':
		if len(t) > 3 && t[1] == 'T' && t[2] == 'P' && t[3] >= '0' && t[3] <= '9' {
			return KindTelemetry
		}
	case '0':
		if isHexdump(t) {
			return KindHexdump
		}
	}
	if isRegisterLine(t) {
		return KindRegisters
	}
	if _, _, ok := crash.RegisterContinuation(t); ok {
		return KindRegisters // the rest of a row a serial monitor wrapped
	}
	if isStackRow(t) {
		return KindStackDump
	}
	return KindPlain
}

// isStackRow matches a RISC-V panic's `Stack memory:` row:
// `3fc8cdec: 0xa5a5a5a5 0x42012ea6 …` (an address, then 32-bit words).
func isStackRow(t []byte) bool { return crash.IsStackRow(t) }

// isETSBanner matches the older ROM banner `ets Jun  8 2016 00:22:57`.
func isETSBanner(t []byte) bool {
	return len(t) >= 20 && bytes.HasPrefix(t, []byte("ets ")) && t[4] >= 'A' && t[4] <= 'Z'
}

// isHexdump matches `0x3ffb5bc0   54 68 …` (ESP_LOG_BUFFER_HEXDUMP's body).
func isHexdump(t []byte) bool {
	if len(t) < 16 || t[0] != '0' || t[1] != 'x' {
		return false
	}
	for _, c := range t[2:10] {
		if !lex.IsHex(c) {
			return false
		}
	}
	return t[10] == ' ' && t[11] == ' ' && lex.IsHex(t[13]) && lex.IsHex(t[14])
}

// isRegisterLine matches a register dump row such as
// `A0      : 0x800d1234  A1      : 0x3ffb1230  …` or `EXCVADDR: 0x00000000 …`.
func isRegisterLine(t []byte) bool {
	if len(t) < 20 || t[0] < 'A' || t[0] > 'Z' {
		return false
	}
	return t[8] == ':' && t[9] == ' ' && t[10] == '0' && t[11] == 'x'
}
