package dashboard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tailpath/tailpath/probes/snapshot"
	tuipkg "github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// TestReplayAgesFromSnapshotTime: the dashboard over a saved snapshot
// counts every age from the time the snapshot was taken, and says so: the
// fixture's handshake was 30 s before the snapshot, so Detail reads
// "handshake 30s ago" however long ago the file was saved. Golden:
// testdata/TestReplayAgesFromSnapshotTime.golden (-update), unstyled: the
// Detail pane's part of the screen (tui.Model.Body), so the dashboard's
// tabs are not in it.
func TestReplayAgesFromSnapshotTime(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "probes", "snapshot", "testdata", "both-hard-nat.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := snapshot.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(f.Taken) < time.Hour {
		t.Fatalf("the fixture was taken %v: too recent to tell the clocks apart", f.Taken)
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d := &Dashboard{Title: "tailpath", Replay: f}
	watched := tuitest.Watch(tuipkg.New(d.replayOptions(nil)))
	tm := teatest.NewTestModel(t, watched, teatest.WithInitialTermSize(100, 60))
	tm.Send(ls)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	watched.Wait(t, "handshake 30s ago", time.Minute)
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute))
	view := tuitest.Unstyled(final.View().Content)
	for _, want := range []string{"snapshot taken 2026-11-30 12:00:00Z · ages as of then", "handshake 30s ago"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	teatest.RequireEqualOutput(t, []byte(tuitest.Unstyled(final.(tuitest.Watched).Model.(tuipkg.Model).Body())))
}

// TestReplaySelfTab: over a saved snapshot the Self tab shows this node's
// end as it was then (judged from the file: the home DERP region and why),
// its ages counted from the snapshot's time, and n and d, which would
// measure this machine now, are neither offered nor run.
func TestReplaySelfTab(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "probes", "snapshot", "testdata", "both-hard-nat.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := snapshot.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ls.Self.View == nil {
		t.Fatal("the replayed snapshot has no Self view")
	}
	d := &Dashboard{Title: "tailpath", Replay: f}
	watched := tuitest.Watch(tuipkg.New(d.replayOptions(nil)))
	tm := teatest.NewTestModel(t, watched, teatest.WithInitialTermSize(120, 60))
	tm.Send(ls)
	tm.Send(tea.KeyPressMsg{Code: '6', Text: "6"})
	watched.Wait(t, "as of just now", time.Minute)
	tm.Send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute))
	view := tuitest.Unstyled(final.View().Content)
	for _, want := range []string{"[6 Self]", "read-only", "NAT", "home", string(ls.Self.View.Home.Text[:20])} {
		if !strings.Contains(view, want) {
			t.Errorf("the replayed Self tab lacks %q:\n%s", want, view)
		}
	}
	for _, not := range []string{"measuring…", "netcheck now", "ping home DERP"} {
		if strings.Contains(view, not) {
			t.Errorf("a replayed Self tab shows %q:\n%s", not, view)
		}
	}
}
