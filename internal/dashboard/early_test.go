package dashboard

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/probestest"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/peers"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// TestFirstFrameBeforeNetmap: with the daemon holding back the netmap (the
// IPN bus), the DERP map and WhoIs, the dashboard's sources (a Source with
// Early, as Run makes it, through app.Sources, the Joiner and TeaSink)
// already deliver a frame with every peer and its path from Status, each
// reason "reason coming…" and no verdict; once the daemon answers, the
// next frame has the verdicts the facts give (the hard-NAT peer's
// both-hard-nat, which needs both ends' NetInfo), and nothing is coming.
func TestFirstFrameBeforeNetmap(t *testing.T) {
	fix, err := probestest.LoadFixture(filepath.Join("..", "..", "probes", "testdata", "both-hard-nat.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := probestest.New(t, fix)
	release := make(chan struct{})
	for _, ep := range []string{"watch-ipn-bus", "derpmap", "whois"} {
		srv.SetHold(ep, release)
	}
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src := tailscaled.NewSource(tailscaled.NewClient(srv.Socket), tailscaled.SourceOptions{Interval: time.Hour, Early: true})
	msgs := make(chan tea.Msg, 64)
	joiner := join.Joiner{Poll: true} // as Run makes it
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.Sources{}.Run(ctx, src, &joiner, TeaSink(func(m tea.Msg) { msgs <- m }))
	}()
	defer func() { cancel(); <-done }()

	m := tui.New(tui.Options{})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	// next feeds the model the sources' messages up to the next linked
	// snapshot and returns it with the frame drawn from it.
	next := func(what string) (*join.Snapshot, string) {
		t.Helper()
		for {
			select {
			case msg := <-msgs:
				m.Update(msg)
				if ls, ok := msg.(*join.Snapshot); ok {
					m.Update(tea.WindowSizeMsg{Width: 160, Height: 30}) // drawn at once
					return ls, tuitest.Unstyled(m.View().Content)
				}
			case <-ctx.Done():
				t.Fatalf("no %s within a minute", what)
			}
		}
	}

	early, frame := next("frame before the netmap")
	if !early.Pending {
		t.Fatalf("the first snapshot is not the early one: the gather did not wait for the held-back facts")
	}
	if n := srv.Requests("status"); n != 1 {
		t.Errorf("status asked %d times before the first frame, want 1", n)
	}
	if len(early.Peers) == 0 {
		t.Fatal("the early frame has no peers")
	}
	relayed := 0
	for i, p := range early.Peers {
		if !strings.Contains(frame, string(p.Name)) {
			t.Errorf("early frame lacks peer %s:\n%s", p.Name, frame)
		}
		if !strings.Contains(frame, string(join.PathText(&p.Path))) {
			t.Errorf("early frame lacks %s's path %q:\n%s", p.Name, join.PathText(&p.Path), frame)
		}
		if !p.Verdict.Pending || p.Verdict.Reason != "" || len(p.Verdict.Checks) != 0 {
			t.Errorf("peer %s judged before its facts arrived: %+v", p.Name, p.Verdict)
		}
		if st := early.SettleOf(i); st != nil {
			t.Errorf("peer %s: what would settle a verdict not made yet: %+v", p.Name, st)
		}
		if p.Path.Kind == probes.PathDERP {
			relayed++
		}
	}
	if relayed == 0 {
		t.Errorf("the fixture's relayed peer is not relayed in the early frame (Status's path)")
	}
	if got := strings.Count(frame, peers.ReasonComing); got != len(early.Peers) {
		t.Errorf("%d peers say %q, want all %d:\n%s", got, peers.ReasonComing, len(early.Peers), frame)
	}
	if strings.Contains(frame, string(probes.ReasonBothHardNAT)) {
		t.Errorf("a verdict in the early frame:\n%s", frame)
	}
	select {
	case msg := <-msgs:
		if ls, ok := msg.(*join.Snapshot); ok {
			t.Fatalf("a second snapshot (pending %v) while the daemon still holds the netmap", ls.Pending)
		}
	case <-time.After(200 * time.Millisecond):
	}

	close(release)
	released = true
	full, frame := next("frame after the netmap")
	if full.Pending {
		t.Fatalf("the snapshot after the facts arrived is still pending")
	}
	if strings.Contains(frame, peers.ReasonComing) {
		t.Errorf("a reason still coming after the facts arrived:\n%s", frame)
	}
	hardNAT := false
	for _, p := range full.Peers {
		if p.Verdict.Pending || p.Verdict.Reason == "" {
			t.Errorf("peer %s has no verdict after the facts arrived: %+v", p.Name, p.Verdict)
		}
		if p.Verdict.Reason == probes.ReasonBothHardNAT {
			hardNAT = true
		}
	}
	if !hardNAT || !strings.Contains(frame, string(probes.ReasonBothHardNAT)) {
		t.Errorf("no %s verdict once both ends' NetInfo arrived:\n%s", probes.ReasonBothHardNAT, frame)
	}
}
