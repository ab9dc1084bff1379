package dashboard

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/device"
	"github.com/tailpath/tailpath/tui/logpane"
	"github.com/tailpath/tailpath/tui/peers"
	"github.com/tailpath/tailpath/tui/tuning"
)

// TestPaneTable: the pane table's tab numbers are distinct, 3-9, and none
// of the root's own (tui.OwnTabs); a dashboard with a board and a host's
// tuning has every pane of the table, each reached by its number key; one
// without a board has Tuning at the same number, and the board's numbers
// reach nothing.
func TestPaneTable(t *testing.T) {
	own := tui.OwnTabs()
	seen := map[int]string{}
	for title, n := range own {
		seen[n] = title
	}
	for _, row := range paneTable {
		if row.Tab < 3 || row.Tab > 9 {
			t.Errorf("%s: tab %d is not a number key 3-9", row.Title, row.Tab)
		}
		if other, ok := seen[row.Tab]; ok {
			t.Errorf("%s: tab %d is %s's already", row.Title, row.Tab, other)
		}
		seen[row.Tab] = row.Title
	}

	host := &tune.Control{StatePath: filepath.Join(t.TempDir(), "state.json")}
	focus := func(d *Dashboard, n int) string {
		m := tui.New(tui.Options{Panes: d.panes(), Tabs: Tabs()})
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		nm, _ = nm.Update(tea.KeyPressMsg{Code: rune('0' + n), Text: string(rune('0' + n))})
		return nm.(tui.Model).Focused()
	}
	all := &Dashboard{Sources: app.Sources{Device: &devlink.Source{}, Tuning: host}}
	if got, want := len(all.panes()), len(paneTable); got != want {
		t.Fatalf("a dashboard with a board and tuning has %d panes of the table, want %d", got, want)
	}
	for _, row := range paneTable {
		if got := focus(all, row.Tab); got != row.Title {
			t.Errorf("%d focused %q, want %q", row.Tab, got, row.Title)
		}
	}
	noBoard := &Dashboard{Sources: app.Sources{Tuning: host}}
	has := map[string]bool{}
	for _, p := range noBoard.panes() {
		has[p.Title()] = true
	}
	if has[device.Title] || has[logpane.Title] || !has[tuning.Title] {
		t.Fatalf("without a board the table built %v, want Tuning and neither Device nor Log", has)
	}
	for _, row := range paneTable {
		want := row.Title
		if !has[row.Title] {
			want = peers.ListTitle // the number reaches nothing: the focus stays
		}
		if got := focus(noBoard, row.Tab); got != want {
			t.Errorf("without a board %d focused %q, want %q", row.Tab, got, want)
		}
	}
}

var updateReadme = flag.Bool("update-readme", false, "rewrite README's list of tabs from the pane table")

// TestReadmeNamesEveryTab: README's keys name every tab by its number,
// between <!-- tabs --> and <!-- /tabs -->, as the root's own panes
// (tui.OwnTabs) and the pane table number them, so a new pane's row
// reaches the README through go generate ./... (-update-readme), not
// by hand.
func TestReadmeNamesEveryTab(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const open, end = "<!-- tabs -->", "<!-- /tabs -->"
	before, rest, ok := strings.Cut(string(b), open)
	got, after, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("README.md has no %s … %s around the list of tabs", open, end)
	}
	tabs := tui.OwnTabs()
	maps.Copy(tabs, Tabs())
	var list []string
	for _, title := range slices.SortedFunc(maps.Keys(tabs), func(a, b string) int { return cmp.Compare(tabs[a], tabs[b]) }) {
		list = append(list, fmt.Sprintf("`%d` %s", tabs[title], title))
	}
	want := strings.Join(list, ", ")
	if got == want {
		return
	}
	if !*updateReadme {
		t.Fatalf("README's tabs read %q, want %q (go generate ./..., or go test ./internal/dashboard -run TestReadmeNamesEveryTab -update-readme)", got, want)
	}
	if err := os.WriteFile(path, []byte(before+open+want+end+after), 0o644); err != nil {
		t.Fatal(err)
	}
}
