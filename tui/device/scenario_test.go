package device

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/firmware"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// scenarioEvent replays the bundled firmware scenario
// (firmware/testdata/scenario.log) through devlink as the demo does, up to
// and not including line stop (0: all of it), and returns the Event the
// Source would send, with the link as the demo's replay reports it.
func scenarioEvent(t *testing.T, stop int) devlink.Event {
	t.Helper()
	st := devlink.NewState()
	st.ApplyLink(devlink.LinkStatus{Up: true, Port: "replay", Replay: true, At: at})
	lines := firmware.ScenarioLines()
	if stop <= 0 || stop > len(lines) {
		stop = len(lines)
	}
	var sp devlink.Splitter
	for _, l := range lines[:stop] {
		sp.Feed([]byte(l.Text+"\n"), func(dl *devlink.Line) {
			st.ApplyLine(dl, at.Add(-time.Second), nil)
		})
	}
	return devlink.Event{State: st.Clone()}
}

// scenarioLine is the index of the first scenario line containing s.
func scenarioLine(t *testing.T, s string) int {
	t.Helper()
	for i, l := range firmware.ScenarioLines() {
		if strings.Contains(l.Text, s) {
			return i
		}
	}
	t.Fatalf("scenario has no line with %q", s)
	return 0
}

// TestDevicePaneScenarioReboot: the demo's scenario runs the old firmware
// (probe table fills) then reboots into the fixed one. After the reboot the
// pane must not keep the first boot's "FULL" alarm, and fetch numbers that
// restart at #1 are marked with their boot.
func TestDevicePaneScenarioReboot(t *testing.T) {
	p := New(common.DefaultStyles(), func() time.Time { return at })
	p.SetSize(200, 60)
	p.Update(scenarioEvent(t, scenarioLine(t, "restarting into the fixed firmware")))
	v := tuitest.Unstyled(p.View())
	for _, want := range []string{"64/64 used, 55 dropped", "FULL", "boots seen 1", "boot 1 #3 420KiB"} {
		if !strings.Contains(v, want) {
			t.Errorf("first boot: view lacks %q:\n%s", want, v)
		}
	}
	p.Update(scenarioEvent(t, 0))
	v = tuitest.Unstyled(p.View())
	for _, want := range []string{"4/64 used, 0 dropped", "boots seen 2", "boot 1 #3 420KiB", "boot 2 #1 420KiB", "boot 2 #3 420KiB"} {
		if !strings.Contains(v, want) {
			t.Errorf("second boot: view lacks %q:\n%s", want, v)
		}
	}
	for _, stale := range []string{"FULL", "STALLED", "not the nearest"} {
		if strings.Contains(v, stale) {
			t.Errorf("second boot: view still says %q from the first boot:\n%s", stale, v)
		}
	}
}

// TestDevicePaneNarrowKeepsAlarms: in the dashboard at 80×24 and 100×30
// (the pane gets the height less the tab and help rows), the first boot's
// verdicts are on screen whole, and no line is cut: long lines wrap.
func TestDevicePaneNarrowKeepsAlarms(t *testing.T) {
	ev := scenarioEvent(t, scenarioLine(t, "restarting into the fixed firmware"))
	for _, size := range [][2]int{{80, 22}, {100, 28}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			p := New(common.DefaultStyles(), func() time.Time { return at })
			p.SetSize(size[0], size[1])
			p.Update(ev)
			v := tuitest.Unstyled(p.View())
			for _, want := range []string{
				"DISCO probes  FULL: new pings are dropped",
				"Control stream  STALLED: the server can send nothing more",
				"  not the nearest: region 7 answers in 24ms",
				"firmware says poweron",
				"handshake via direct", "203.0.113.7:41641 ·",
			} {
				if !strings.Contains(v, want) {
					t.Errorf("view lacks %q:\n%s", want, v)
				}
			}
			rows := strings.Split(v, "\n")
			if len(rows) != size[1] {
				t.Errorf("%d rows, want %d", len(rows), size[1])
			}
			for _, r := range rows {
				if w := ansi.StringWidth(r); w > size[0] || strings.Contains(r, "…") {
					t.Errorf("row cut or too wide (%d cells): %q", w, r)
				}
			}
		})
	}
}

// TestDevicePaneWording: the link says whether the board is live or the
// demo's recorded capture, and how the home DERP was chosen is said in words.
func TestDevicePaneWording(t *testing.T) {
	tests := []struct {
		name string
		link devlink.LinkStatus
		by   safetext.Text
		want []string
		not  []string
	}{
		{"replay", devlink.LinkStatus{Up: true, Port: "replay", Replay: true}, "lowest-id",
			[]string{"Board  replay (recorded capture)  cores3", "chosen by lowest region id (not by latency)"},
			[]string{"link up", "lowest-id"}},
		{"replay ended", devlink.LinkStatus{Port: "replay", Replay: true, Err: devlink.ErrReplayEnded}, "latency",
			[]string{"Board  replay ended (recorded capture)  cores3", "chosen by lowest latency"},
			[]string{"link down", "last error"}},
		{"serial port", devlink.LinkStatus{Up: true, Port: "/dev/ttyACM0"}, "fixed",
			[]string{"Board  link up /dev/ttyACM0  cores3", "chosen by configuration (fixed, not by latency)"},
			[]string{"replay"}},
		{"unplugged", devlink.LinkStatus{Port: "/dev/ttyACM0", Err: errors.New("port closed")}, "new-word",
			[]string{"Board  link down /dev/ttyACM0  cores3", "last error: port closed", "chosen by new-word"},
			nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := scenarioEvent(t, scenarioLine(t, "restarting into the fixed firmware"))
			ev.State.Link, ev.State.HomeDERPBy = tc.link, tc.by
			p := New(common.DefaultStyles(), func() time.Time { return at })
			p.SetSize(120, 40)
			p.Update(ev)
			v := tuitest.Unstyled(p.View())
			for _, w := range tc.want {
				if !strings.Contains(v, w) {
					t.Errorf("view lacks %q:\n%s", w, v)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(v, n) {
					t.Errorf("view has %q:\n%s", n, v)
				}
			}
		})
	}
}

// TestDevicePaneScenarioRelayOutage: the fixed firmware's relay outage in
// the demo's scenario, as the pane shows it: connected, connected but
// silent (no keep-alive), down with reconnect attempts after the watchdog,
// connected again.
func TestDevicePaneScenarioRelayOutage(t *testing.T) {
	for _, tc := range []struct{ stop, want string }{
		{"@TP2 R seq=89 ", "DERP relay  connected, last frame "},
		{"W (154200) ts_derp: region 7: no frame", "DERP relay  connected but silent for 1m26s (no keep-alive from the relay)"},
		{"W (157200) ts_derp: connect to region 7 failed", "DERP relay  DOWN: nothing relayed reaches the board · was up earlier this boot, down 1s, 1 reconnect attempt, lost 1× this boot, last error timeout"},
		{"", "DERP relay  connected, last frame 14s ago · lost 1× this boot"},
	} {
		p := New(common.DefaultStyles(), func() time.Time { return at })
		p.SetSize(200, 60)
		stop := 0
		if tc.stop != "" {
			stop = scenarioLine(t, tc.stop)
		}
		p.Update(scenarioEvent(t, stop))
		if v := ansi.Strip(p.View()); !strings.Contains(v, tc.want) {
			t.Errorf("before %q: pane lacks %q:\n%s", tc.stop, tc.want, v)
		}
	}
}
