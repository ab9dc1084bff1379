package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

// TestHelpKeepsQuit: at 80 columns the Peers pane with peers and the
// control API's r key has more short help than fits; the line cuts a
// pane key (…) and keeps "? help • q quit" whole at its end.
func TestHelpKeepsQuit(t *testing.T) {
	opts := testOptions()
	opts.RefreshPeerSide = func() tea.Cmd { return nil }
	snap := peerstest.Snapshot()
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 80, Height: 24}, peerstest.Joined(snap))
	lines := strings.Split(screen(m), "\n")
	last := strings.TrimRight(lines[len(lines)-1], " ")
	if !strings.HasSuffix(last, "• ? help • q quit") || !strings.Contains(last, "…") || !strings.HasPrefix(last, "↑/↓ move • enter details") {
		t.Errorf("help line at 80 columns: %q, want the pane's keys cut with … then ? help • q quit", last)
	}
	if w := ansi.StringWidth(last); w > 80 {
		t.Errorf("help line is %d columns wide: %q", w, last)
	}
}

// TestFullHelpFitsAt80: with every Peers key on (the control API's r, the
// probe's P, as in the demo), the full help (?) at 80 columns keeps its
// last column, the keys every pane shares, whole: no column is cut to "…".
func TestFullHelpFitsAt80(t *testing.T) {
	opts := testOptions()
	opts.RefreshPeerSide = func() tea.Cmd { return nil }
	opts.Probe = func([]probes.Peer) tea.Cmd { return nil }
	snap := peerstest.Snapshot()
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 80, Height: 24}, peerstest.Joined(snap), keyMsg("?"))
	s := screen(m)
	for _, want := range []string{"shift+tab prev pane", "q         quit", "P     probe"} {
		if !strings.Contains(s, want) {
			t.Errorf("full help at 80 columns lacks %q:\n%s", want, s)
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "enter details") && strings.Contains(line, "…") {
			t.Errorf("full help at 80 columns cuts a column: %q", line)
		}
	}
}
