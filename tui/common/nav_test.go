package common

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestNavScroll(t *testing.T) {
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	vp := NewViewport()
	vp.SetWidth(20)
	vp.SetHeight(10)
	vp.SetContent(strings.Join(lines, "\n"))
	nav := NewNav("scroll")
	for _, tt := range []struct {
		key  string
		want int // YOffset after the key
	}{
		{"j", 1}, {"down", 2}, {"k", 1}, {"pgdown", 11}, {"ctrl+d", 21}, {"pgup", 11},
		{"G", 90}, {"end", 90}, {"g", 0}, {"G", 90}, {"home", 0}, {"up", 0},
	} {
		if !nav.Scroll(&vp, keyMsg(tt.key)) {
			t.Errorf("%q is not a navigation key", tt.key)
		}
		if vp.YOffset() != tt.want {
			t.Errorf("after %q: offset %d, want %d", tt.key, vp.YOffset(), tt.want)
		}
	}
	if nav.Scroll(&vp, keyMsg("x")) {
		t.Error(`"x" scrolled`)
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

func TestNavStep(t *testing.T) {
	nav := NewNav("move")
	for _, tt := range []struct {
		key  string
		want int
		ok   bool
	}{
		{"k", -1, true}, {"down", 1, true}, {"pgup", -7, true}, {"ctrl+d", 7, true},
		{"home", -Far, true}, {"G", Far, true}, {"s", 0, false},
	} {
		got, ok := nav.Step(keyMsg(tt.key), 7)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Step(%q) = %d, %v; want %d, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

// TestViewportView: ViewportView draws what the viewport's own View does,
// for content Refresh makes (styled lines, none wider than the viewport),
// at every offset, with content shorter and longer than the viewport.
func TestViewportView(t *testing.T) {
	st := DefaultStyles()
	var long []string
	for i := range 40 {
		long = append(long, st.Good.Render(fmt.Sprintf("line %d", i))+" "+st.Muted.Render("ok"), "", "  ↳ ünïcødé 日本 "+fmt.Sprint(i))
	}
	for name, render := range map[string]func() []string{
		"short": func() []string { return []string{st.Title.Render("title"), "", "two words"} },
		"long":  func() []string { return long },
		"empty": func() []string { return nil },
	} {
		for _, size := range [][2]int{{30, 10}, {80, 24}, {1, 1}} {
			vp := NewViewport()
			stale := true
			Refresh(&vp, &stale, render, size[0], size[1])
			for off := 0; off < 130; off += 7 {
				vp.SetYOffset(off)
				if got, want := ViewportView(&vp), vp.View(); got != want {
					t.Fatalf("%s at %dx%d offset %d:\ngot  %q\nwant %q", name, size[0], size[1], vp.YOffset(), got, want)
				}
			}
		}
	}
}
