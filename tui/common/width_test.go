package common

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestWidthIsStringWidth: Width and Truncate give ansi.StringWidth's and
// ansi.Truncate's answers, on ASCII (styled, with controls) and on text
// whose clusters span several runes.
func TestWidthIsStringWidth(t *testing.T) {
	for _, s := range []string{
		"", "plain ascii", "\x1b[1;38;5;203mbold red\x1b[m", "tab\there", "a\x7fb", "e\u0301cole", "日本語", "👩‍💻 dev",
		"\x1b]8;;http://example.com\x07link\x1b]8;;\x07", "cr\r\nlf", "…/tune-state.json",
	} {
		if got, want := Width(s), ansi.StringWidth(s); got != want {
			t.Errorf("Width(%q) = %d, ansi.StringWidth %d", s, got, want)
		}
		for w := 0; w <= 12; w++ {
			if got, want := Truncate(s, w, "…"), ansi.Truncate(s, w, "…"); got != want {
				t.Errorf("Truncate(%q, %d) = %q, ansi.Truncate %q", s, w, got, want)
			}
		}
	}
}

// FuzzWidth: on any input, Width is ansi.StringWidth.
func FuzzWidth(f *testing.F) {
	for _, s := range []string{"abc", "\x1b[31mred\x1b[0m", "e\u0301", "\x1b[", "a\u200db"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Width(s), ansi.StringWidth(s); got != want {
			t.Errorf("Width(%q) = %d, ansi.StringWidth %d", s, got, want)
		}
	})
}

func BenchmarkWidth(b *testing.B) {
	s := "   nas         active; direct 203.0.113.7:41641      3.0ms   nyc  1.2KiB/s  640B/s    direct"
	b.Run("ansi.StringWidth", func(b *testing.B) {
		for b.Loop() {
			ansi.StringWidth(s)
		}
	})
	b.Run("Width", func(b *testing.B) {
		for b.Loop() {
			Width(s)
		}
	})
}
