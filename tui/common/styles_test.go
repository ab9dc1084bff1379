package common

import (
	"testing"

	"charm.land/lipgloss/v2"
)

// TestPainter: a Painter draws exactly what its style's Render does, for
// every role in both palettes, on plain, empty, styled, wide and
// multi-line text, and for styles it cannot paint itself (padding, width,
// a border).
func TestPainter(t *testing.T) {
	texts := []string{"", "x", "I (300) wifi: connected to ap", " lead and trail ", "日本語 ünï", "tab\there", "two\nlines", "cr\r\nlf",
		"\x1b[1mbold already\x1b[m", "\x01"}
	for _, dark := range []bool{true, false} {
		st := StylesFor(dark)
		roles := map[string]lipgloss.Style{
			"Title": st.Title, "TabOn": st.TabOn, "TabOff": st.TabOff, "Muted": st.Muted, "Good": st.Good,
			"Warn": st.Warn, "Bad": st.Bad, "Bad.Bold": st.Bad.Bold(true), "Selected": st.Selected, "Banner": st.Banner,
			"Border": st.Border, "plain": lipgloss.NewStyle(), "width": st.Good.Width(20), "border": st.Good.Border(lipgloss.NormalBorder()),
		}
		for name, s := range roles {
			p := NewPainter(s)
			for _, text := range texts {
				if got, want := p.Render(text), s.Render(text); got != want {
					t.Errorf("dark=%v %s: Render(%q) = %q, want %q", dark, name, text, got, want)
				}
			}
		}
		if p := NewPainter(st.Good); !p.ok {
			t.Errorf("dark=%v: Good is not painted without Render", dark)
		}
	}
}
