// Package safetext makes untrusted text (peer host names, OS strings, device
// log lines, firmware banners) safe to write to a terminal. It is applied once,
// where outside data enters tailpath; renderers then only truncate by width.
//
// It is a leaf (it imports only charmbracelet/x/ansi) so that every source
// (probes, devlink, sysctl) and every renderer may use it without depending
// on one another.
package safetext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Clean returns s with ANSI escape sequences removed, invalid UTF-8 replaced
// by U+FFFD, and every remaining control character (C0, DEL, C1, including
// tab, CR and LF) replaced by a visible U+FFFD-free form: tab becomes a space,
// other controls are dropped. The result is a single line that cannot move the
// cursor, change colours, set the window title or ring the bell.
func Clean(s string) string {
	if isPlain(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = ansi.Strip(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			// dropped: C0/C1 controls and DEL
		case r == '\u200b' || r == '\u2028' || r == '\u2029' || r == '\u202e' || r == '\u202d':
			// dropped: invisible or direction-changing format characters
		case !unicode.IsPrint(r) && !unicode.IsSpace(r) && r != utf8.RuneError:
			// dropped: other non-printing runes
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Cut cuts s to at most n bytes on a rune boundary, marking a cut with
// "…" (which the n bytes do not count). A string of n bytes or fewer comes
// back as it is.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// isPlain reports whether s is printable ASCII only, the common fast path.
// It tests eight bytes at a time: a byte below 0x20 makes v - 0x20 borrow
// into its top bit where v's is clear, and one of 0x7f or more sets its top
// bit in v + 1 or in v itself.
func isPlain(s string) bool {
	const ones, highs, spaces = 0x0101010101010101, 0x8080808080808080, 0x2020202020202020
	for len(s) >= 8 {
		v := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		if ((v-spaces)&^v|(v+ones)|v)&highs != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
