package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

// BenchmarkRootFrame is a whole 200×50 frame with 1,000 peers after a new
// snapshot: root routing, every pane's Update, the frame tick and View.
func BenchmarkRootFrame(b *testing.B) {
	snaps := [2]any{peerstest.Linked(peerstest.Many(1000)), peerstest.Linked(peerstest.Many(1000))}
	var m tea.Model = New(Options{Title: "bench", Now: peerstest.Now})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; i < b.N; i++ {
		m, _ = m.Update(snaps[i%2])
		m, _ = m.Update(frameMsg{})
		if len(screen(m)) == 0 {
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
	m, _ = m.Update(peerstest.Linked(peerstest.Many(1000)))
	m, _ = m.Update(frameMsg{})
	m, _ = m.Update(logLine{"x"}) // a frame is now pending
	msg := logLine{"I (1234) ts_disco: Pong recv from 203.0.113.5:41641"}
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; i < b.N; i++ {
		m, _ = m.Update(msg)
		_ = screen(m)
	}
}
