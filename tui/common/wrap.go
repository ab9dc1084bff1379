package common

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// WrapLines word-wraps each line wider than width cells (WrapText),
// continuing with a four-space indent, so a narrow window loses no words;
// lines that fit are kept as they are. A single word wider than the width
// is broken. Text panes (Device, Tuning) wrap their content with it
// before cutting anything.
func WrapLines(lines []string, width int) []string {
	const indent = "    "
	if width <= 2*len(indent) {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if Width(l) <= width {
			out = append(out, l)
			continue
		}
		first, rest, _ := strings.Cut(WrapText(l, width), "\n")
		out = append(out, first)
		rest = strings.TrimLeft(strings.ReplaceAll(rest, "\n", " "), " ")
		for _, r := range strings.Split(WrapText(rest, width-len(indent)), "\n") {
			out = append(out, indent+r)
		}
	}
	return out
}

// Stand-ins while wrapping: a hyphen that is no breakpoint, and a space
// inside a code span that is none either (ansi's wrap never breaks at a
// no-break space). Both are one cell wide, as what they stand for.
const (
	keepHyphen = "\uE02D" // a private-use character
	keepSpace  = "\u00A0" // no-break space
)

// WrapText word-wraps s (plain or styled) to lines of at most width cells,
// breaking only at spaces: never inside a word, a flag (`--port=41641`,
// which ansi.Wrap splits at its hyphens), an address, or a `code span`,
// which moves to the next line whole when it fits on one (a span wider
// than a line breaks at its own spaces, and so does every span when s has
// no-break spaces of its own). A word wider than a line is broken, as the
// last resort. Lines are joined by "\n".
func WrapText(s string, width int) string {
	if width <= 0 || Width(s) <= width {
		return s
	}
	if strings.Contains(s, keepHyphen) {
		return ansi.Wrap(s, width, "") // cannot stand in: wrap as ansi does
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.IndexByte(rest, '`')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i+1:], '`')
		if j < 0 {
			b.WriteString(rest)
			break
		}
		span := rest[i : i+j+2]
		b.WriteString(rest[:i])
		if Width(span) <= width && !strings.Contains(s, keepSpace) {
			span = strings.ReplaceAll(span, " ", keepSpace)
		}
		b.WriteString(span)
		rest = rest[i+j+2:]
	}
	kept := strings.ReplaceAll(b.String(), "-", keepHyphen)
	wrapped := ansi.Wrap(kept, width, "")
	wrapped = strings.ReplaceAll(wrapped, keepHyphen, "-")
	return strings.ReplaceAll(wrapped, keepSpace, " ")
}
