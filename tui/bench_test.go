package tui

import (
	"context"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/device"
	"github.com/tailpath/tailpath/tui/logpane"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/tuning"
)

// BenchmarkRootFrame is a whole 200×50 frame with 1,000 peers after a new
// snapshot: root routing, every pane's Update, the frame tick and View.
func BenchmarkRootFrame(b *testing.B) {
	snaps := [2]any{peerstest.Joined(peerstest.Many(1000)), peerstest.Joined(peerstest.Many(1000))}
	var m tea.Model = New(Options{Title: "bench", Now: peerstest.Now})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; i < b.N; i++ {
		m, _ = m.Update(snaps[i%2])
		m, _ = m.Update(frameMsg{})
		if len(m.View().Content) == 0 {
			b.Fatal("empty frame")
		}
	}
}

// BenchmarkRootFloodMessage is the root's cost per message it does not
// draw at once (a device log line in a serial flood): broadcast only.
func BenchmarkRootFloodMessage(b *testing.B) {
	type logLine struct{ s string }
	var m tea.Model = New(Options{Title: "bench", Now: peerstest.Now})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	m, _ = m.Update(peerstest.Joined(peerstest.Many(1000)))
	m, _ = m.Update(frameMsg{})
	m, _ = m.Update(logLine{"x"}) // a frame is now pending
	msg := logLine{"I (1234) ts_disco: Pong recv from 203.0.113.5:41641"}
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; i < b.N; i++ {
		m, _ = m.Update(msg)
		_ = m.View().Content
	}
}

// BenchmarkPaneKey is a whole 160×48 frame after a scroll key (j, then k)
// in each tab of the dashboard goldenEveryTab draws: the Peers table, the
// Detail, Device and Tuning panes (viewports), and the Log pane.
func BenchmarkPaneKey(b *testing.B) {
	st := common.DefaultStyles()
	to := tuningOptions(b)
	report := tuning.ReportMsg(to.Read(context.Background()))
	report.Report.Time = peerstest.Time
	ev := boardEvent(b)
	var joiner join.Joiner
	snap := peerstest.Snapshot()
	joiner.SetSnapshot(&snap)
	linked, _ := joiner.SetDevice(&ev.State)
	opts := testOptions()
	opts.Panes = []common.Pane{device.New(st, peerstest.Now), logpane.New(st, 0), tuning.New(to)}
	var root tea.Model = New(opts)
	for _, msg := range []tea.Msg{tea.WindowSizeMsg{Width: 160, Height: 48}, linked, ev, report} {
		root, _ = root.Update(msg)
	}
	for _, tab := range []struct{ name, key string }{{"peers", "1"}, {"detail", "2"}, {"device", "3"}, {"log", "4"}, {"tuning", "5"}} {
		b.Run(tab.name, func(b *testing.B) {
			m, _ := root.Update(keyMsg(tab.key))
			keys := [2]tea.Msg{keyMsg("j"), keyMsg("k")}
			b.ReportAllocs()
			b.ResetTimer()
			defer peerstest.Meter(b)()
			for i := 0; i < b.N; i++ {
				m, _ = m.Update(keys[i%2])
				if len(m.View().Content) == 0 {
					b.Fatal("empty frame")
				}
			}
		})
	}
}
