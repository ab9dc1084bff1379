package common

import "github.com/charmbracelet/lipgloss"

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
