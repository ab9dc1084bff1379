package common

import "github.com/charmbracelet/x/ansi"

// Width is ansi.StringWidth, the cells s takes on a terminal (escape
// sequences take none), without its cost on ASCII. Since x/ansi v0.11.8
// StringWidth splits every character, ASCII too, into grapheme clusters,
// several times slower than before; an ASCII character is a cluster of its
// own (what would join it, a combining mark or a joiner, is not ASCII), so
// for an all-ASCII string the sum of character widths, StringWidthWc, is
// the same number, and printable ASCII alone is one cell a byte.
// Everything else goes to StringWidth.
func Width(s string) int {
	switch asciiKind(s) {
	case printable:
		return len(s)
	case ascii:
		return ansi.StringWidthWc(s)
	}
	return ansi.StringWidth(s)
}

// Truncate is ansi.Truncate(s, w, tail) (cut to w cells, escape sequences
// kept, tail added) that first asks Width, so a line that fits, the usual
// case, costs a scan and nothing more.
func Truncate(s string, w int, tail string) string {
	if Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, tail)
}

const (
	printable = iota // printable ASCII only
	ascii            // ASCII, with controls or escape sequences
	other
)

func asciiKind(s string) int {
	k := printable
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80:
			return other
		case c < 0x20 || c == 0x7f:
			k = ascii
		}
	}
	return k
}
