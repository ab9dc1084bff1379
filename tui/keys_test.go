package tui

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/device"
	"github.com/tailpath/tailpath/tui/logpane"
	"github.com/tailpath/tailpath/tui/peers"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/tuning"
)

// TestHelpWhileCapturing: while the Peers list takes a filter, "?" and "q"
// type text, so the help bar must not offer them; ctrl+c still quits and
// is offered instead. Once the filter is applied the global keys return.
func TestHelpWhileCapturing(t *testing.T) {
	m, _ := step(t, New(testOptions()), tea.WindowSizeMsg{Width: 100, Height: 30}, peerstest.Joined(peerstest.Snapshot()))
	helpBar := func(m Model) string {
		lines := strings.Split(strings.TrimRight(screen(m), "\n"), "\n")
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
	if !strings.Contains(screen(m), "q?") {
		t.Errorf("filter text q? not shown:\n%s", screen(m))
	}

	m, _ = step(t, m, keyMsg("enter"))
	if got := helpBar(m); !strings.Contains(got, "? help") || !strings.Contains(got, "q quit") || strings.Contains(got, "ctrl+c") {
		t.Errorf("help bar after applying the filter = %q, want the global keys back", got)
	}
}

// TestPanesShareNavigation: every pane that moves or scrolls offers the
// same navigation keys with the same help (common.Nav), first in full help.
func TestPanesShareNavigation(t *testing.T) {
	st := common.DefaultStyles()
	want := helpTexts(common.NewNav("").Full())
	for _, p := range []common.Pane{
		peers.NewList(st), peers.NewDetail(st, nil, nil), device.New(st, nil), logpane.New(st, 0), tuning.New(tuning.Options{}),
	} {
		full := p.KeyMap().FullHelp()
		if len(full) == 0 {
			t.Errorf("%s: no full help", p.Title())
			continue
		}
		if diff := cmp.Diff(want, helpTexts(full[0])); diff != "" {
			t.Errorf("%s: navigation help (-want +got):\n%s", p.Title(), diff)
		}
	}
}

func helpTexts(bs []key.Binding) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Help().Key+" "+b.Help().Desc+" "+strings.Join(b.Keys(), ","))
	}
	return out
}
