package common

import (
	"os"

	"github.com/charmbracelet/lipgloss"
)

// Styles are the named colour roles every pane uses. Meaning is always carried
// in words too, so a monochrome terminal reads the same.
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

	// attrs: no colour, but text attributes written as they are
	// (NoColorStyles); see Mark.
	attrs bool
}

// Reverse video on and off (ECMA-48 SGR 7 and 27).
const (
	sgrReverse   = "\x1b[7m"
	sgrNoReverse = "\x1b[27m"
)

// Mark renders text marked: a search match. Normally the Selected style;
// with NoColorStyles, reverse video written as is, because lipgloss's
// no-colour profile drops text attributes along with colour, while
// no-color.org forbids only colour: a match must stay visible.
func (s Styles) Mark(text string) string {
	if s.attrs {
		return sgrReverse + text + sgrNoReverse
	}
	return s.Selected.Render(text)
}

// NoColorStyles are DefaultStyles for NO_COLOR on a terminal: Mark still
// shows reverse video.
func NoColorStyles() Styles {
	st := DefaultStyles()
	st.attrs = true
	return st
}

// TerminalStyles are the styles for this process's terminal: NoColorStyles
// when NO_COLOR is set (on any terminal but TERM=dumb, which may not know
// reverse video), else DefaultStyles.
func TerminalStyles() Styles {
	if os.Getenv("NO_COLOR") != "" && os.Getenv("TERM") != "dumb" {
		return NoColorStyles()
	}
	return DefaultStyles()
}

// DefaultStyles returns adaptive light/dark styles.
func DefaultStyles() Styles {
	return Styles{
		Title:    lipgloss.NewStyle().Bold(true),
		TabOn:    lipgloss.NewStyle().Bold(true).Reverse(true).Padding(0, 1),
		TabOff:   lipgloss.NewStyle().Padding(0, 1).Foreground(lipgloss.AdaptiveColor{Light: "240", Dark: "245"}),
		Muted:    lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "242", Dark: "244"}),
		Good:     lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "28", Dark: "42"}),
		Warn:     lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "130", Dark: "214"}),
		Bad:      lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "160", Dark: "203"}),
		Selected: lipgloss.NewStyle().Bold(true).Reverse(true),
		Banner:   lipgloss.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "160", Dark: "203"}),
		Border:   lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "250", Dark: "238"}),
	}
}
