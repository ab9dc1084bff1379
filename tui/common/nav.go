package common

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
)

// Nav are the moving and scrolling bindings every pane shares, so a key
// does the same thing, with the same help text, wherever it is pressed:
// ↑/k ↓/j one line, pgup/ctrl+u pgdn/ctrl+d one page, g/home G/end the
// ends.
type Nav struct {
	// Arrows is for short help only: ↑/↓ in one entry, with the pane's
	// verb ("move" for a cursor, "scroll" for text). Its keys are Up's and
	// Down's (help hides a binding without keys); panes match those.
	Arrows                                  key.Binding
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

// NewNav returns the shared bindings; verb words the arrows in short help.
func NewNav(verb string) Nav {
	return Nav{
		Arrows:   key.NewBinding(key.WithKeys("up", "down", "k", "j"), key.WithHelp("↑/↓", verb)),
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "bottom")),
	}
}

// Full is the bindings for a full-help column.
func (n Nav) Full() []key.Binding {
	return []key.Binding{n.Up, n.Down, n.PageUp, n.PageDown, n.Top, n.Bottom}
}

// SetEnabled enables or disables every binding (an open input takes the
// keys, so they are hidden from help).
func (n *Nav) SetEnabled(on bool) {
	for _, b := range []*key.Binding{&n.Arrows, &n.Up, &n.Down, &n.PageUp, &n.PageDown, &n.Top, &n.Bottom} {
		b.SetEnabled(on)
	}
}

// Far is the step of Top and Bottom: past either end of anything a pane
// shows, so clamping lands on the end.
const Far = 1 << 30

// Step is how far a navigation key moves a pane that keeps its own cursor
// or offset (Peers, Log): ±1 a line, ±page, ±Far to an end; ok is false
// for other keys.
func (n Nav) Step(k tea.KeyPressMsg, page int) (step int, ok bool) {
	switch {
	case key.Matches(k, n.Up):
		return -1, true
	case key.Matches(k, n.Down):
		return 1, true
	case key.Matches(k, n.PageUp):
		return -page, true
	case key.Matches(k, n.PageDown):
		return page, true
	case key.Matches(k, n.Top):
		return -Far, true
	case key.Matches(k, n.Bottom):
		return Far, true
	}
	return 0, false
}

// Scroll applies k to vp when it is a navigation key and reports whether
// it was: a line, a page, or the top or bottom of the content.
func (n Nav) Scroll(vp *viewport.Model, k tea.KeyPressMsg) bool {
	switch {
	case key.Matches(k, n.Up):
		vp.ScrollUp(1)
	case key.Matches(k, n.Down):
		vp.ScrollDown(1)
	case key.Matches(k, n.PageUp):
		vp.PageUp()
	case key.Matches(k, n.PageDown):
		vp.PageDown()
	case key.Matches(k, n.Top):
		vp.GotoTop()
	case key.Matches(k, n.Bottom):
		vp.GotoBottom()
	default:
		return false
	}
	return true
}

// NewViewport returns an empty viewport for a text pane: no key map of its
// own (Nav.Scroll drives it) and no mouse.
func NewViewport() viewport.Model {
	vp := viewport.New()
	vp.KeyMap = viewport.KeyMap{}
	vp.MouseWheelEnabled = false
	return vp
}

// Refresh gives a text pane's viewport its content again when *stale (a
// new report, a resize), and clears it: render's lines for a width ×
// height area, each word-wrapped to the width (WrapLines), then cut to it
// where a single word is wider.
func Refresh(vp *viewport.Model, stale *bool, render func() []string, width, height int) {
	if !*stale {
		return
	}
	*stale = false
	lines := WrapLines(render(), width)
	for i, l := range lines {
		lines[i] = Truncate(l, width, "…")
	}
	vp.SetWidth(width)
	vp.SetHeight(height)
	vp.SetContent(strings.Join(lines, "\n"))
}

// ViewportView is vp.View() for the viewports Refresh fills (no style,
// gutter, wrapping or horizontal offset; no line wider than vp): the lines
// from vp's offset, each padded to its width, then blank lines down to its
// height. It draws them without Lip Gloss, whose width measuring (x/ansi
// v0.11.9 splits every character into grapheme clusters) made a Detail,
// Device or Tuning frame twice as slow as under v1 (docs/perf.md).
// TestViewportView holds it to vp.View().
func ViewportView(vp *viewport.Model) string {
	w, h := vp.Width(), vp.Height()
	if w <= 0 || h <= 0 {
		return ""
	}
	var lines []string
	if c := vp.GetContent(); c != "" {
		lines = strings.Split(c, "\n")
	}
	top := min(max(vp.YOffset(), 0), len(lines))
	lines = lines[top:min(top+h, len(lines))]
	var b strings.Builder
	blank := strings.Repeat(" ", w)
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i >= len(lines) {
			b.WriteString(blank)
			continue
		}
		b.WriteString(lines[i])
		b.WriteString(blank[:max(w-Width(lines[i]), 0)])
	}
	return b.String()
}
