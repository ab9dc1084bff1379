package common

import (
	"regexp"
	"strings"
	"sync"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Styles are the named colour roles every pane uses. Meaning is always carried
// in words too, so a monochrome terminal reads the same.
//
// Rendering writes full colour; the program's colour profile
// (termcolor.Profile, given to tea.WithColorProfile) brings it down to what
// the terminal shows: no colour but bold and reverse video under NO_COLOR
// (so a search match and the selected row stay visible, as no-color.org
// allows), nothing at all on TERM=dumb.
type Styles struct {
	Title    lipgloss.Style // pane and section titles
	TabOn    lipgloss.Style // focused tab label
	TabOff   lipgloss.Style // other tab labels
	Muted    lipgloss.Style // secondary text, hints
	Good     lipgloss.Style // direct path, healthy, check passed
	Warn     lipgloss.Style // relayed path, warnings
	Bad      lipgloss.Style // offline, errors, alarms, failed checks
	Selected lipgloss.Style // selected row
	Banner   lipgloss.Style // source-down banner ("tailscaled is not running…")
	Border   lipgloss.Style // box borders
}

// StylesMsg gives every pane new styles: the root sends it when the
// terminal has told its background colour (tea.BackgroundColorMsg), so
// light and dark terminals each get their palette. A pane keeps them and
// redraws.
type StylesMsg struct{ Styles Styles }

// Mark renders text marked: a search match, in the Selected style (reverse
// video, which survives NO_COLOR's profile).
func (s Styles) Mark(text string) string { return s.Selected.Render(text) }

// DefaultStyles are the styles for a dark background, what a terminal that
// does not answer the background query is taken to have (as lipgloss
// does).
func DefaultStyles() Styles { return StylesFor(true) }

// StylesFor returns the styles for a dark (true) or light background:
// xterm 256-colour indexes, each role darker on a light background.
func StylesFor(dark bool) Styles {
	c := lipgloss.LightDark(dark)
	ansi := func(light, dark string) lipgloss.Style {
		return lipgloss.NewStyle().Foreground(c(lipgloss.Color(light), lipgloss.Color(dark)))
	}
	return Styles{
		Title:    lipgloss.NewStyle().Bold(true),
		TabOn:    lipgloss.NewStyle().Bold(true).Reverse(true).Padding(0, 1),
		TabOff:   ansi("240", "245").Padding(0, 1),
		Muted:    ansi("242", "244"),
		Good:     ansi("28", "42"),
		Warn:     ansi("130", "214"),
		Bad:      ansi("160", "203"),
		Selected: lipgloss.NewStyle().Bold(true).Reverse(true),
		Banner:   ansi("160", "203").Bold(true),
		Border:   ansi("250", "238"),
	}
}

// NewInput returns a text input (a filter or search line) drawn in st's
// roles: prompt and text plain, the placeholder muted, and no cursor of
// its own: the pane reports the input's Cursor (CursorPane) and the
// terminal draws its real one there, a blinking block in the terminal's
// own colour.
func NewInput(st Styles) textinput.Model {
	in := textinput.New()
	in.SetVirtualCursor(false)
	in.SetStyles(InputStyles(st))
	return in
}

// InputStyles are NewInput's styles for st (again on a StylesMsg).
func InputStyles(st Styles) textinput.Styles {
	plain := lipgloss.NewStyle()
	state := textinput.StyleState{Text: plain, Prompt: plain, Placeholder: st.Muted, Suggestion: st.Muted}
	return textinput.Styles{Focused: state, Blurred: state, Cursor: textinput.CursorStyle{Shape: tea.CursorBlock, Blink: true}}
}

// Painter draws one line of plain text in a style, as the style's Render
// does (TestPainter holds it to that), for two string concatenations:
// Render measures every line it draws, and under x/ansi v0.11.9 (each
// character split into grapheme clusters) that made a Log frame, a Render
// per row, twice as slow as under v1 (docs/perf.md). Styles with padding,
// width, borders or margins, and text with tabs or line breaks, go to
// Render.
type Painter struct {
	style     lipgloss.Style
	pre, post string
	ok        bool
}

// NewPainter returns the Painter of s.
func NewPainter(s lipgloss.Style) Painter {
	r := s.Render("\x01")
	pre, post, found := strings.Cut(r, "\x01")
	// Render wraps the text in SGR sequences and adds nothing else.
	ok := found && !strings.Contains(post, "\x01") && sgrOnly().MatchString(pre) && sgrOnly().MatchString(post)
	return Painter{style: s, pre: pre, post: post, ok: ok}
}

// sgrOnly matches a run of SGR sequences, or nothing.
var sgrOnly = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^(\x1b\\[[0-9;:]*m)*$") })

// Render is the style's Render(text).
func (p Painter) Render(text string) string {
	if !p.ok || strings.ContainsAny(text, "\t\r\n") {
		return p.style.Render(text)
	}
	return p.pre + text + p.post
}
