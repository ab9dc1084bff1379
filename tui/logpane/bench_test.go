package logpane

import (
	"strings"
	"testing"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/firmware"
	"github.com/tailpath/tailpath/tui/common"
)

// floodEvent is a little more than one 100 ms event of a 1 MB/s flood:
// two passes of the firmware scenario (1,352 lines, ~115 KB) with ESP-IDF
// colour codes.
func floodEvent() devlink.Event {
	var b strings.Builder
	for _, l := range firmware.ScenarioLines() {
		if t := l.Text; len(t) > 2 && strings.ContainsRune("EWI", rune(t[0])) && t[1] == ' ' {
			b.WriteString("\x1b[0;32m" + t + "\x1b[0m\r\n")
		} else {
			b.WriteString(t + "\n")
		}
	}
	s := b.String()
	return event(strings.Repeat(s, 2))
}

// BenchmarkFloodEvent is the Log pane's share of one flood event on the UI
// goroutine, with the pane already full (20,000 lines kept): Update with
// the event, then the View the next frame draws.
func BenchmarkFloodEvent(b *testing.B) {
	ev := floodEvent()
	p := New(common.DefaultStyles(), 20000)
	p.SetSize(160, 44)
	for p.Update(ev); len(p.entries) < 20000; p.Update(ev) {
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Update(ev)
		if p.View() == "" {
			b.Fatal("empty view")
		}
	}
	b.ReportMetric(float64(len(ev.Lines)), "lines/event")
}
