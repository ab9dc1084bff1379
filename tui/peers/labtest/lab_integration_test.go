package labtest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/dashboard"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/tuitest"
)

func TestMain(m *testing.M) {
	// The lab's DERP-only node re-executes this test binary.
	lab.MaybeRunNode()
	os.Exit(m.Run())
}

// TestDashboardOnLab drives the dashboard the way a person would, against
// the lab tailnet: the relayed node shows up as relayed with its reason,
// and the ping keys run real DISCO pings through tailscaled.Source whose
// progress and result lines reach the screen.
func TestDashboardOnLab(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: starts the lab tailnet (control, DERP, five tailscale nodes) under -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logFile := filepath.Join(t.TempDir(), "lab.log")
	start := time.Now()
	l, err := lab.Start(ctx, lab.Options{LogFile: logFile})
	if err != nil {
		t.Fatalf("lab.Start: %v (logs in %s)", err, logFile)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Errorf("lab Close: %v", err)
		}
	}()
	t.Logf("lab up in %v", time.Since(start).Round(time.Millisecond))

	srcCtx, stopSrc := context.WithCancel(ctx)
	defer stopSrc()
	src := tailscaled.NewSource(l.Observer(), tailscaled.SourceOptions{Interval: 500 * time.Millisecond})

	m := tui.New(tui.Options{
		Title: "tailpath (lab tailnet)",
		Ping: func(p probes.Peer, k probes.PingKind) tea.Cmd {
			return func() tea.Msg { src.Ping(p, k); return nil }
		},
	})
	watched := tuitest.Watch(m)
	tm := teatest.NewTestModel(t, watched, teatest.WithInitialTermSize(120, 30))
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		var joiner join.Joiner
		app.Sources{}.Run(srcCtx, src, &joiner, dashboard.TeaSink(tm.Send))
	}()

	// waitFor waits until re matches a frame drawn (or the last one).
	waitFor := func(what string, re *regexp.Regexp) {
		t.Helper()
		watched.WaitMatch(t, re, 60*time.Second)
		t.Logf("%6.2fs %s", time.Since(start).Seconds(), what)
	}

	// Relayed first: lab-derp is the top row, in Tailscale's words, with
	// the diagnosis's reason.
	waitFor("relayed row", regexp.MustCompile(`> +lab-derp .*active; relay "lab1"`))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor("detail of lab-derp", regexp.MustCompile(`verdict +no-endpoints: `))
	tm.Type("p")
	waitFor("DISCO ping progress over DERP", regexp.MustCompile(`ping \d+/10 via DERP\(lab1\) [0-9.]+ms…`))

	// The direct peer: filter to it, open it, ping until direct.
	// (Pane switches arrive as messages from commands, so wait for each
	// before typing on.)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	waitFor("back on Peers", regexp.MustCompile(`\[1 Peers\]`))
	tm.Type("/" + lab.DirectName)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor("filtered", regexp.MustCompile(`\d+ peers \(1 shown\) .*filter: `+lab.DirectName))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor("detail of lab-direct", regexp.MustCompile(`verdict +direct`))
	tm.Type("p")
	waitFor("direct pong", regexp.MustCompile(`direct 127\.0\.0\.1:\d+ in [0-9.]+ms`))

	// Back to lab-derp: its run (ten tries a second apart) ends in the
	// error, shown under its verdict.
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	waitFor("back on Peers", regexp.MustCompile(`\[1 Peers\]`))
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape}) // clear the filter
	tm.Type("g")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor("detail of lab-derp again", regexp.MustCompile(`verdict +no-endpoints: `))
	waitFor("no direct path after ten tries", regexp.MustCompile(`failed: direct connection not established`))

	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(time.Minute))
	stopSrc()
	<-relayed
}
