package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

// TestHelpWhileCapturing: while the Peers list takes a filter, "?" and "q"
// type text, so the help bar must not offer them; ctrl+c still quits and
// is offered instead. Once the filter is applied the global keys return.
func TestHelpWhileCapturing(t *testing.T) {
	m, _ := step(t, New(testOptions()), tea.WindowSizeMsg{Width: 100, Height: 30}, peerstest.Linked(peerstest.Snapshot()))
	helpBar := func(m Model) string {
		lines := strings.Split(strings.TrimRight(m.View(), "\n"), "\n")
		return strings.TrimSpace(lines[len(lines)-1])
	}
	if got := helpBar(m); !strings.Contains(got, "? help") || !strings.Contains(got, "q quit") {
		t.Fatalf("help bar before filtering = %q, want the global keys", got)
	}

	m, _ = step(t, m, append(keys("/"), typeText("q?")...)...)
	got := helpBar(m)
	for _, bad := range []string{"? help", "q quit", "tab"} {
		if strings.Contains(got, bad) {
			t.Errorf("help bar while typing a filter offers %q, a key that types text: %q", bad, got)
		}
	}
	if !strings.Contains(got, "ctrl+c quit") || !strings.Contains(got, "esc") {
		t.Errorf("help bar while typing a filter = %q, want the filter's keys and ctrl+c quit", got)
	}
	if !strings.Contains(m.View(), "q?") {
		t.Errorf("filter text q? not shown:\n%s", m.View())
	}

	m, _ = step(t, m, keyMsg("enter"))
	if got := helpBar(m); !strings.Contains(got, "? help") || !strings.Contains(got, "q quit") || strings.Contains(got, "ctrl+c") {
		t.Errorf("help bar after applying the filter = %q, want the global keys back", got)
	}
}
