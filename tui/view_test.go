package tui

import (
	"image/color"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/logpane"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

// TestViewDeclares: the root's View asks for the alternate screen and no
// mouse reporting, and shows the terminal's cursor exactly while an input
// is open, where its next character goes: the Peers filter on the line
// under the tabs, after "/" and what was typed; the Log search on the
// pane's last line.
func TestViewDeclares(t *testing.T) {
	opts := testOptions()
	opts.Panes = []common.Pane{logpane.New(common.DefaultStyles(), 0)}
	opts.Tabs = map[string]int{logpane.Title: 4}
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 100, Height: 30}, peerstest.Joined(peerstest.Snapshot()))
	v := m.View()
	if !v.AltScreen || v.MouseMode != tea.MouseModeNone || v.Cursor != nil {
		t.Fatalf("browsing: alt screen %v, mouse %v, cursor %+v; want the alternate screen, no mouse, no cursor", v.AltScreen, v.MouseMode, v.Cursor)
	}
	type pos struct{ X, Y int }
	cursorAt := func(m Model) *pos {
		c := m.View().Cursor
		if c == nil {
			return nil
		}
		return &pos{c.X, c.Y}
	}
	lines := func(m Model) []string { return strings.Split(screen(m), "\n") }

	m, _ = step(t, m, append(keys("/"), typeText("relay")...)...)
	if diff := cmp.Diff(&pos{len("/relay"), 1}, cursorAt(m)); diff != "" {
		t.Errorf("Peers filter cursor (-want +got):\n%s", diff)
	}
	if got := lines(m)[1]; !strings.HasPrefix(got, "/relay") {
		t.Errorf("line under the tabs = %q, want the filter", got)
	}
	m, _ = step(t, m, keyMsg("enter"))
	if c := m.View().Cursor; c != nil {
		t.Errorf("cursor %+v after the filter was applied", c)
	}

	m, _ = step(t, m, keyMsg("4"), keyMsg("/"))
	m, _ = step(t, m, typeText("wifi")...)
	l := lines(m)
	want := &pos{len("/wifi"), len(l) - 2} // above the help line
	if diff := cmp.Diff(want, cursorAt(m)); diff != "" {
		t.Errorf("Log search cursor (-want +got):\n%s", diff)
	}
	if got := l[want.Y]; !strings.HasPrefix(got, "/wifi") {
		t.Errorf("line %d = %q, want the search input", want.Y, got)
	}
	m, _ = step(t, m, keyMsg("esc"))
	if c := m.View().Cursor; c != nil {
		t.Errorf("cursor %+v after the search was cancelled", c)
	}
}

// TestPasteGoesToTheInput: a bracketed paste (tea.PasteMsg) types into an
// open input, as v1's pasted KeyMsg did, and reaches nothing else: a pane
// that is not capturing ignores it.
func TestPasteGoesToTheInput(t *testing.T) {
	fake := &fakePane{title: "Fake"}
	m, _ := step(t, New(testOptions(fake)), tea.WindowSizeMsg{Width: 100, Height: 30}, peerstest.Joined(peerstest.Snapshot()))
	fake.got = nil
	m, _ = step(t, m, tea.PasteMsg{Content: "old-pi"})
	if m.list.Filter() != "" || len(fake.got) != 0 {
		t.Fatalf("a paste with no input open: filter %q, fake pane got %v", m.list.Filter(), fake.got)
	}
	m, _ = step(t, m, keyMsg("/"), tea.PasteMsg{Content: "old-pi"})
	if got := m.list.Filter(); got != "old-pi" {
		t.Errorf("filter after a paste = %q, want old-pi", got)
	}
	if got := m.list.Shown(); len(got) != 1 {
		t.Errorf("rows shown after pasting old-pi: %v, want one", got)
	}
}

// TestStylesFollowTheBackground: with the terminal's styles (Options.Styles
// nil) Init asks for the background colour, and the answer gives the root
// and every pane the palette for it; with styles given, neither happens.
func TestStylesFollowTheBackground(t *testing.T) {
	fake := &fakePane{title: "Fake"}
	m := New(testOptions(fake))
	if m.Init() == nil {
		t.Fatal("Init asks nothing with the terminal's styles")
	}
	white := tea.BackgroundColorMsg{Color: color.White}
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 100, Height: 30}, white)
	light := common.StylesFor(false)
	if got, want := m.st.Muted.GetForeground(), light.Muted.GetForeground(); got != want {
		t.Errorf("root's muted colour on a white background = %v, want %v", got, want)
	}
	var sent *common.StylesMsg
	for _, msg := range fake.got {
		if s, ok := msg.(common.StylesMsg); ok {
			sent = &s
		}
	}
	if sent == nil || sent.Styles.Bad.GetForeground() != light.Bad.GetForeground() {
		t.Errorf("the pane got %+v, want the light palette", sent)
	}
	if dark := common.StylesFor(true); dark.Bad.GetForeground() == light.Bad.GetForeground() {
		t.Error("the light and dark palettes are the same")
	}

	st := common.DefaultStyles()
	opts := testOptions(&fakePane{title: "Fake"})
	opts.Styles = &st
	fixed := New(opts)
	if fixed.Init() != nil {
		t.Error("Init asks the terminal though styles were given")
	}
	fixed, _ = step(t, fixed, white)
	if fixed.st.Muted.GetForeground() != st.Muted.GetForeground() {
		t.Error("given styles changed on a background answer")
	}
}
