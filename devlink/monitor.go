package devlink

import "bytes"

// The colour palette: ESP-IDF monitor's own codes (esp_idf_monitor's
// output_helpers.py), the one place tailpath's terminal colours for
// device lines live. tail, the binary-log decoder and the monitor
// emulation all use these.
const (
	// ColorError is monitor's ANSI_RED, bold: E lines and crash reports.
	// (ESP-IDF itself colours E lines 0;31 on the device.)
	ColorError = "\x1b[1;31m"
	// ColorWarn is monitor's ANSI_YELLOW: W lines, decoded addresses.
	ColorWarn = "\x1b[0;33m"
	// ColorInfo is monitor's ANSI_GREEN: I lines.
	ColorInfo = "\x1b[0;32m"
	// ColorReset is monitor's ANSI_NORMAL.
	ColorReset = "\x1b[0m"
)

// StatusQuery is the ESP-IDF console's terminal status query (linenoise's
// probe, "device status report"), ESC[5n; a terminal answers ESC[0n.
const StatusQuery = "\x1b[5n"

// StatusAnswer is a terminal's answer to StatusQuery: "terminal OK".
const StatusAnswer = "\x1b[0n"

// LevelColor returns the palette colour for a log level (E, W, I), or ""
// for D, V and lines that are not log lines.
func LevelColor(l Level) string {
	switch l {
	case LevelError:
		return ColorError
	case LevelWarn:
		return ColorWarn
	case LevelInfo:
		return ColorInfo
	}
	return ""
}

// LineColor returns the palette colour to show l in: ColorError for crash
// report lines (Kind.IsCrash), else its level's.
func LineColor(l *Line) string {
	if l.Kind.IsCrash() {
		return ColorError
	}
	return LevelColor(l.Level)
}

// Monitor reproduces ESP-IDF monitor's console output byte for byte
// (esp_idf_monitor 1.x, serial_handler.py): the print filter, the
// auto-colour of lines without colour of their own, and the console
// status query. Feed it the Splitter's lines in order; it is not safe for
// concurrent use. The zero value prints everything with auto-colour.
//
// Auto-colour: a line that starts with `I (`, `W (` or `E (`, then only
// digits, ':', '.', ' ' or '-' up to a ')', is printed as ColorInfo,
// ColorWarn or ColorError, the line, ColorReset, then its line ending. A
// line flushed unfinished gets its colour now and its reset when its end
// arrives. A line that already starts with an escape sequence is printed
// as is.
//
// Status query: a line that starts with StatusQuery (the Splitter emits it
// as a KindStatusQuery line of its own, at once, without waiting for the
// line's end) is printed whatever the filter says; the rest of the line is
// judged on its own.
//
// Filter: Filter.Match, except that the rest of a line printed unfinished
// is printed whatever the filter says, as monitor does.
type Monitor struct {
	Filter *Filter
	// NoAutoColor turns auto-colour off (monitor's --disable-auto-color).
	NoAutoColor bool

	trailing bool // a coloured unfinished line awaits its reset
	force    bool // the rest of a line printed unfinished prints anyway
}

// Shows reports whether l is printed, and updates what the next line
// inherits (an unfinished line printed forces its rest).
func (m *Monitor) Shows(l *Line) bool {
	if l.Kind == KindStatusQuery {
		return true
	}
	show := m.force || m.Filter.Match(l)
	m.force = show && l.Partial
	return show
}

// Append appends l's bytes as monitor prints them to dst (for a line
// Shows passed).
func (m *Monitor) Append(dst []byte, l *Line) []byte {
	raw := l.Raw
	if m.NoAutoColor || l.Kind == KindStatusQuery {
		return append(dst, raw...)
	}
	stripped := bytes.TrimRight(raw, "\r\n")
	end := raw[len(stripped):]
	c := autoColor(stripped)
	if c == "" {
		if m.trailing && len(end) > 0 {
			m.trailing = false
			dst = append(dst, stripped...)
			dst = append(dst, ColorReset...)
			return append(dst, end...)
		}
		return append(dst, raw...)
	}
	dst = append(dst, c...)
	if len(end) == 0 {
		m.trailing = true
		return append(dst, raw...)
	}
	dst = append(dst, stripped...)
	dst = append(dst, ColorReset...)
	return append(dst, end...)
}

// autoColor is monitor's AUTO_COLOR_REGEX, `^(I|W|E) \([\d:\. -]+\)`:
// the colour for a line that starts like an uncoloured log line, or "".
func autoColor(b []byte) string {
	if len(b) < 5 || b[1] != ' ' || b[2] != '(' {
		return ""
	}
	i := 3
	for i < len(b) && (isDigit(b[i]) || b[i] == ':' || b[i] == '.' || b[i] == ' ' || b[i] == '-') {
		i++
	}
	if i == 3 || i >= len(b) || b[i] != ')' {
		return ""
	}
	switch b[0] {
	case 'I':
		return ColorInfo
	case 'W':
		return ColorWarn
	case 'E':
		return ColorError
	}
	return ""
}
