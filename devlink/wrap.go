package devlink

import (
	"strings"
	"time"
)

// Wrap is the set of wrappers found around a console line and stripped
// before it was parsed. Raw and Text keep them; Line.Inner says where the
// text inside them starts.
type Wrap uint8

// Wrappers tailpath recognises, outermost first.
const (
	// WrapESPHomeTime is the `esphome logs` host time prefix `[14:04:29]`
	// (also `[14:04:29.123]`). A line holding nothing else is an empty line.
	WrapESPHomeTime Wrap = 1 << iota
	// WrapPlatformIOTime is PlatformIO monitor's `time` filter prefix
	// `10:12:51.035 > `.
	WrapPlatformIOTime
	// WrapMonitorTime is idf.py monitor's --timestamps prefix
	// `2024-06-19 10:12:51 ` (and tailpath tail --timestamps',
	// `2024-06-19 10:12:51.035 `).
	WrapMonitorTime
	// WrapESPHome is ESPHome's logger line `[I][wifi:123]: msg` (levels
	// E W I C D V VV; C, config, reads as I and VV as V). When the message
	// is itself an ESP-IDF log line (ESPHome forwards ESP-IDF's own output
	// as `[D][esp-idf:000]: I (676) phy_init: …`), that inner line gives
	// the level, tag and message.
	WrapESPHome
	// WrapArduino is Arduino-ESP32's log line `[   123][E][WiFiGeneric.cpp:45]
	// _eventCallback(): msg` (the time field, milliseconds since boot, is
	// absent in older cores). Tag is the file name.
	WrapArduino
)

var wrapNames = [...]string{"esphome-time", "platformio-time", "monitor-time", "esphome", "arduino"}

// String names the wrappers joined by "+", outermost first
// ("esphome-time+esphome"), or "" for none. These names are stable (tail
// --json's "wrap" field).
func (w Wrap) String() string {
	if w == 0 {
		return ""
	}
	var parts []string
	for i, n := range wrapNames {
		if w&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "+")
}

// unwrap strips the wrappers at the start of t, recording them in l (Wrap,
// HostTime, and for ESPHome and Arduino lines Level, Tag, Msg, Uptime). It
// returns the offset in t of the text inside the wrappers.
func unwrap(t []byte, l *Line) int {
	off := 0
	// Host time prefixes: at most one of them, each at most once.
	switch {
	case len(t) >= 10 && t[0] == '[':
		if n := hostClock(t[1:]); n > 0 && 1+n < len(t) && t[1+n] == ']' {
			l.Wrap |= WrapESPHomeTime
			l.HostTime = t[1 : 1+n]
			off = 2 + n
		}
	case len(t) >= 15 && isDigit(t[0]):
		if n := hostClock(t); n == 12 && len(t) >= 15 && t[12] == ' ' && t[13] == '>' && t[14] == ' ' {
			l.Wrap |= WrapPlatformIOTime
			l.HostTime = t[:12]
			off = 15
		} else if n := hostDateTime(t); n > 0 && len(t) > n && t[n] == ' ' {
			l.Wrap |= WrapMonitorTime
			l.HostTime = t[:n]
			off = n + 1
		}
	}
	// Device-side formats.
	u := t[off:]
	c := skipColor(u)
	if len(u) < c+4 || u[c] != '[' {
		return off
	}
	if n, ok := esphomeLine(u[c:], l); ok {
		l.Wrap |= WrapESPHome
		if c > 0 {
			l.Colored = true
		}
		return off + c + n
	}
	if n, ok := arduinoLine(u[c:], l); ok {
		l.Wrap |= WrapArduino
		if c > 0 {
			l.Colored = true
		}
		return off + c + n
	}
	return off
}

// hostClock returns the length of `HH:MM:SS` or `HH:MM:SS.mmm` at the start
// of b, or 0.
func hostClock(b []byte) int {
	if len(b) < 8 || b[2] != ':' || b[5] != ':' || !isDigit(b[0]) || !isDigit(b[1]) ||
		!isDigit(b[3]) || !isDigit(b[4]) || !isDigit(b[6]) || !isDigit(b[7]) {
		return 0
	}
	if len(b) >= 12 && b[8] == '.' && isDigit(b[9]) && isDigit(b[10]) && isDigit(b[11]) {
		return 12
	}
	return 8
}

// hostDateTime returns the length of `YYYY-MM-DD HH:MM:SS` (optionally
// `.mmm` or `,mmm`) at the start of b, or 0.
func hostDateTime(b []byte) int {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[10] != ' ' {
		return 0
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9} {
		if !isDigit(b[i]) {
			return 0
		}
	}
	n := hostClock(b[11:])
	if n == 0 {
		return 0
	}
	if n == 8 && len(b) >= 23 && b[19] == ',' && isDigit(b[20]) && isDigit(b[21]) && isDigit(b[22]) {
		return 23
	}
	return 11 + n
}

// esphomeLevel maps ESPHome's level letters to ESP-IDF's.
func esphomeLevel(b []byte) (Level, bool) {
	switch string(b) {
	case "E":
		return LevelError, true
	case "W":
		return LevelWarn, true
	case "I", "C":
		return LevelInfo, true
	case "D":
		return LevelDebug, true
	case "V", "VV":
		return LevelVerbose, true
	}
	return 0, false
}

// esphomeLine parses `[L][tag:line]: msg` at the start of b into l's Level,
// Tag and Msg, returning the offset of msg.
func esphomeLine(b []byte, l *Line) (int, bool) {
	// [L] or [VV]
	end := 2
	if len(b) > 3 && b[2] != ']' {
		end = 3
	}
	if len(b) < end+4 || b[end] != ']' || b[end+1] != '[' {
		return 0, false
	}
	lev, ok := esphomeLevel(b[1:end])
	if !ok {
		return 0, false
	}
	rest := b[end+2:]
	// tag:line]
	close := indexByteN(rest, ']', 64)
	if close <= 0 {
		return 0, false
	}
	tagLine := rest[:close]
	colon := lastIndexByte(tagLine, ':')
	if colon <= 0 || colon == len(tagLine)-1 {
		return 0, false
	}
	for _, c := range tagLine[colon+1:] {
		if !isDigit(c) {
			return 0, false
		}
	}
	after := rest[close+1:]
	// ": " then the message; an empty message may end after ":".
	if len(after) == 0 || after[0] != ':' {
		return 0, false
	}
	n := end + 2 + close + 2
	if len(after) >= 2 && after[1] == ' ' {
		n++
	}
	l.Level, l.Tag = lev, tagLine[:colon]
	l.Msg = trimReset(b[min(n, len(b)):])
	return min(n, len(b)), true
}

// arduinoLine parses `[   123][E][file.cpp:45] func(): msg` (or the same
// without the time field) at the start of b.
func arduinoLine(b []byte, l *Line) (int, bool) {
	i := 0
	var timeText []byte
	if len(b) > 2 && (b[1] == ' ' || isDigit(b[1])) {
		// [ time ]
		close := indexByteN(b, ']', 16)
		if close < 2 {
			return 0, false
		}
		j := 1
		for j < close && b[j] == ' ' {
			j++
		}
		if _, ok := digits(b[j:close]); !ok {
			return 0, false
		}
		timeText = b[j:close]
		i = close + 1
	}
	// [L]
	if len(b) < i+4 || b[i] != '[' || b[i+2] != ']' || b[i+3] != '[' {
		return 0, false
	}
	switch Level(b[i+1]) {
	case LevelError, LevelWarn, LevelInfo, LevelDebug, LevelVerbose:
	default:
		return 0, false
	}
	lev := Level(b[i+1])
	rest := b[i+4:]
	close := indexByteN(rest, ']', 96)
	if close <= 0 {
		return 0, false
	}
	fileLine := rest[:close]
	colon := lastIndexByte(fileLine, ':')
	if colon <= 0 {
		return 0, false
	}
	for _, c := range fileLine[colon+1:] {
		if !isDigit(c) {
			return 0, false
		}
	}
	n := i + 4 + close + 1
	if n < len(b) && b[n] == ' ' {
		n++
	}
	l.Level, l.Tag = lev, fileLine[:colon]
	l.Msg = trimReset(b[n:])
	if timeText != nil {
		ms, _ := digits(timeText)
		l.TimeForm, l.TimeText = TimeUptime, timeText
		l.Uptime = time.Duration(ms) * time.Millisecond
	}
	return n, true
}

// indexByteN is bytes.IndexByte limited to the first n bytes.
func indexByteN(b []byte, c byte, n int) int {
	for i := 0; i < len(b) && i < n; i++ {
		if b[i] == c {
			return i
		}
	}
	return -1
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
