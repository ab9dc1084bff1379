package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/device"
	"github.com/tailpath/tailpath/tui/logpane"
	"github.com/tailpath/tailpath/tui/peers"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/selfpane"
	"github.com/tailpath/tailpath/tui/tuning"
)

func TestKeyRoutingOrder(t *testing.T) {
	fake := &fakePane{title: "Fake"}
	m, _ := step(t, New(testOptions(fake)), tea.WindowSizeMsg{Width: 100, Height: 30}, keyMsg("3"))
	if got := m.Focused(); got != "Fake" {
		t.Fatalf("after key 3 focused = %q, want Fake", got)
	}

	// Global bindings are not seen by the focused pane; others are.
	m, produced := step(t, m, keys("x", "?", "y")...)
	if diff := cmp.Diff([]string{"x", "y"}, fake.keys()); diff != "" {
		t.Errorf("keys reaching the focused pane (-want +got):\n%s", diff)
	}
	if !m.help.ShowAll {
		t.Error("? did not open full help")
	}
	if hasMsg[tea.QuitMsg](produced) {
		t.Error("quit without q")
	}

	// A capturing pane gets every key, global ones included; ctrl+c still quits.
	fake.capturing = true
	fake.got = nil
	m, produced = step(t, m, keys("q", "1", "tab", "?")...)
	if diff := cmp.Diff([]string{"q", "1", "tab", "?"}, fake.keys()); diff != "" {
		t.Errorf("keys reaching the capturing pane (-want +got):\n%s", diff)
	}
	if m.Focused() != "Fake" || hasMsg[tea.QuitMsg](produced) {
		t.Errorf("capturing pane: focused %q, quit %v; want Fake, no quit", m.Focused(), hasMsg[tea.QuitMsg](produced))
	}
	_, produced = step(t, m, keyMsg("ctrl+c"))
	if !hasMsg[tea.QuitMsg](produced) {
		t.Error("ctrl+c did not quit while capturing")
	}

	// Not capturing: q quits, tab cycles, shift+tab goes back.
	fake.capturing = false
	_, produced = step(t, m, keyMsg("q"))
	if !hasMsg[tea.QuitMsg](produced) {
		t.Error("q did not quit")
	}
	m, _ = step(t, m, keyMsg("tab"))
	if m.Focused() != selfpane.Title {
		t.Errorf("tab from the pane before Self: focused %q, want %q", m.Focused(), selfpane.Title)
	}
	m, _ = step(t, m, keyMsg("tab"))
	if m.Focused() != peers.ListTitle {
		t.Errorf("tab from the last pane: focused %q, want %q", m.Focused(), peers.ListTitle)
	}
	m, _ = step(t, m, keyMsg("shift+tab"), keyMsg("shift+tab"))
	if m.Focused() != "Fake" {
		t.Errorf("shift+tab twice: focused %q, want Fake", m.Focused())
	}
	m, _ = step(t, m, keyMsg("9")) // no ninth pane: ignored
	if m.Focused() != "Fake" {
		t.Errorf("key 9 with 3 panes: focused %q, want Fake", m.Focused())
	}
}

func TestRoutingDataAndSize(t *testing.T) {
	a, b := &fakePane{title: "A"}, &fakePane{title: "B"}
	m, _ := step(t, New(testOptions(a, b)), tea.WindowSizeMsg{Width: 90, Height: 25})
	if a.w != 90 || b.w != 90 || a.h == 0 || a.h != b.h {
		t.Fatalf("SetSize: A %dx%d, B %dx%d; want both 90 wide, same height", a.w, a.h, b.w, b.h)
	}
	type devMsg struct{ n int }
	_, _ = step(t, m, devMsg{1})
	for _, p := range []*fakePane{a, b} {
		if !hasMsg[devMsg](p.got) {
			t.Errorf("pane %s (not focused) did not get the data message", p.title)
		}
		if len(p.keys()) != 0 {
			t.Errorf("pane %s got keys %v", p.title, p.keys())
		}
	}
	// Focus changes are announced to every pane.
	a.got, b.got = nil, nil
	_, _ = step(t, m, keyMsg("3"))
	want := common.FocusMsg{Pane: "A", Focus: true}
	for _, p := range []*fakePane{a, b} {
		found := false
		for _, g := range p.got {
			if g == (tea.Msg)(want) {
				found = true
			}
		}
		if !found {
			t.Errorf("pane %s did not get %+v; got %v", p.title, want, p.got)
		}
	}
}

func TestBanner(t *testing.T) {
	m, _ := step(t, New(testOptions()), tea.WindowSizeMsg{Width: 100, Height: 30}, peerstest.Joined(peerstest.Snapshot()))
	if strings.Contains(screen(m), "unavailable") {
		t.Fatal("banner shown before any SourceStatus")
	}
	down := probes.SourceStatus{
		Up:        false,
		Err:       "failed to connect to local tailscaled; it doesn't appear to be running (sudo systemctl start tailscaled)",
		NextRetry: peerstest.Now().Add(4200 * time.Millisecond),
	}
	m, _ = step(t, m, down)
	lines := strings.Split(screen(m), "\n")
	// The banner wraps (never cuts) so the advice at its end is readable.
	want := []string{
		"tailscaled unavailable (retrying in 5s): failed to connect to local tailscaled; it doesn't appear to",
		"be running (sudo systemctl start tailscaled) · showing data from 05:21:03",
	}
	if diff := cmp.Diff(want, []string{strings.TrimRight(lines[1], " "), strings.TrimRight(lines[2], " ")}); diff != "" {
		t.Errorf("banner lines (-want +got):\n%s", diff)
	}
	if len(lines) != 30 {
		t.Errorf("with banner: %d lines, want 30", len(lines))
	}
	if !strings.Contains(screen(m), "cores3") {
		t.Error("last snapshot not visible while the source is down")
	}
	m.width = 200
	m.help.SetWidth(200)
	m.render()
	if got := strings.Split(screen(m), "\n")[1]; !strings.HasSuffix(got, "(sudo systemctl start tailscaled) · showing data from 05:21:03") {
		t.Errorf("banner at 200 columns lacks countdown and data time: %q", got)
	}

	m, _ = step(t, m, probes.SourceStatus{Up: true})
	if strings.Contains(screen(m), "unavailable") {
		t.Error("banner still shown after Up: true")
	}
	if !strings.Contains(screen(m), "cores3") {
		t.Error("peers gone after the source came back")
	}
}

// checkScreen asserts the frame fills exactly w×h: h lines, none wider.
func checkScreen(t *testing.T, name, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Errorf("%s: %d lines, want %d", name, len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got > w {
			t.Errorf("%s: line %d is %d cells wide (> %d): %q", name, i+1, got, w, l)
		}
	}
}

func TestFitsSmallScreens(t *testing.T) {
	fake := &fakePane{title: "Device"}
	down := probes.SourceStatus{Err: safetext.New(strings.Repeat("a very long error ", 20)), NextRetry: peerstest.Now().Add(time.Minute)}
	for _, size := range []struct{ w, h int }{{80, 24}, {100, 30}, {60, 12}, {200, 50}, {20, 5}} {
		name := fmt.Sprintf("%dx%d", size.w, size.h)
		m, _ := step(t, New(testOptions(fake)), tea.WindowSizeMsg{Width: size.w, Height: size.h}, peerstest.Joined(peerstest.Many(300)))
		checkScreen(t, name+" peers", screen(m), size.w, size.h)
		m, _ = step(t, m, keyMsg("enter"))
		if m.Focused() != peers.DetailTitle {
			t.Fatalf("%s: enter focused %q, want %q", name, m.Focused(), peers.DetailTitle)
		}
		checkScreen(t, name+" detail", screen(m), size.w, size.h)
		m, _ = step(t, m, keyMsg("?"), down)
		checkScreen(t, name+" detail+help+banner", screen(m), size.w, size.h)
		m, _ = step(t, m, keyMsg("1"), keyMsg("/"))
		checkScreen(t, name+" peers+filter", screen(m), size.w, size.h)
		m, _ = step(t, m, keyMsg("esc"), keyMsg("3"))
		checkScreen(t, name+" device", screen(m), size.w, size.h)
	}
}

func TestResizeKeepsWithinBounds(t *testing.T) {
	m, _ := step(t, New(testOptions()), tea.WindowSizeMsg{Width: 200, Height: 50}, peerstest.Joined(peerstest.Snapshot()))
	for _, s := range []tea.WindowSizeMsg{{Width: 80, Height: 24}, {Width: 120, Height: 40}, {Width: 80, Height: 24}, {Width: 81, Height: 24}, {Width: 80, Height: 24}} {
		m, _ = step(t, m, s)
		checkScreen(t, fmt.Sprintf("resized to %dx%d", s.Width, s.Height), screen(m), s.Width, s.Height)
		// The table is laid out for the new width: its header ends in
		// "reason" padded to exactly the width.
		if hdr := strings.Split(screen(m), "\n")[2]; ansi.StringWidth(hdr) != s.Width {
			t.Errorf("at %dx%d the table header is %d wide: %q", s.Width, s.Height, ansi.StringWidth(hdr), hdr)
		}
	}
}

func TestEnterOpensDetailAndPings(t *testing.T) {
	var pinged []string
	opts := testOptions()
	opts.Ping = func(p probes.Peer, kind probes.PingKind) tea.Cmd {
		pinged = append(pinged, string(p.ID)+"/"+string(kind))
		return nil
	}
	m, produced := step(t, New(opts), tea.WindowSizeMsg{Width: 100, Height: 30}, peerstest.Joined(peerstest.Snapshot()))
	if !hasMsg[common.PeerSelectedMsg](produced) {
		t.Error("first snapshot did not publish PeerSelectedMsg")
	}
	m, produced = step(t, m, keyMsg("down"))
	var sel []string
	for _, p := range produced {
		if s, ok := p.(common.PeerSelectedMsg); ok {
			sel = append(sel, string(s.Peer.ID))
		}
	}
	if diff := cmp.Diff([]string{"nBUILD"}, sel); diff != "" {
		t.Errorf("PeerSelectedMsg after down (-want +got):\n%s", diff)
	}
	m, _ = step(t, m, keyMsg("enter"))
	if m.Focused() != peers.DetailTitle {
		t.Fatalf("enter: focused %q, want Detail", m.Focused())
	}
	if !strings.Contains(screen(m), "build-box  windows") {
		t.Errorf("detail does not show build-box:\n%s", screen(m))
	}
	m, _ = step(t, m, keyMsg("p"))
	// Running: a second p must not start another run.
	m, _ = step(t, m, keyMsg("p"), keyMsg("t"))
	if diff := cmp.Diff([]string{"nBUILD/disco"}, pinged); diff != "" {
		t.Errorf("ping calls (-want +got):\n%s", diff)
	}
	m, _ = step(t, m,
		probes.PingResult{PeerID: "nBUILD", Kind: probes.PingDISCO, Try: 3, Via: "DERP(nyc)", Path: probes.PathDERP, Latency: 42 * time.Millisecond},
		probes.PingResult{PeerID: "nBUILD", Kind: probes.PingDISCO, Try: 4, Via: "203.0.113.7:41641", Path: probes.PathDirect, Latency: 3 * time.Millisecond, Done: true},
	)
	v := screen(m)
	for _, want := range []string{"ping 3/10 via DERP(nyc) 42ms ", "direct 203.0.113.7:41641 in 3.0ms"} {
		if !strings.Contains(v, want) {
			t.Errorf("detail lacks %q:\n%s", want, v)
		}
	}
	m, _ = step(t, m, keyMsg("t"))
	if diff := cmp.Diff([]string{"nBUILD/disco", "nBUILD/tsmp"}, pinged); diff != "" {
		t.Errorf("ping calls after the run ended (-want +got):\n%s", diff)
	}
	m, _ = step(t, m, keyMsg("esc"))
	if m.Focused() != peers.ListTitle {
		t.Errorf("esc in detail: focused %q, want Peers", m.Focused())
	}
}

// TestDataIsCoalesced: a snapshot is drawn on arrival (the first is the
// dashboard's first frame with peers), but not a second within the frame
// interval, which waits for the frame tick with every other data message
// (a board's flood); one frame is scheduled for all of them. The interval
// is an hour here, so no clock decides the test.
func TestDataIsCoalesced(t *testing.T) {
	opts := testOptions()
	opts.FrameInterval = time.Hour
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 100, Height: 30})
	nm, _ := m.Update(peerstest.Joined(peerstest.Snapshot()))
	m = nm.(Model)
	if !strings.Contains(screen(m), "cores3") {
		t.Fatalf("the first snapshot was not drawn on arrival:\n%s", screen(m))
	}
	before := screen(m)
	next := peerstest.Snapshot()
	next.Peers[0].Name = safetext.New("rnmd")
	nm, cmd := m.Update(peerstest.Joined(next))
	m = nm.(Model)
	if cmd == nil {
		t.Fatal("a second snapshot within the interval scheduled no frame")
	}
	if screen(m) != before {
		t.Error("frame rebuilt on a second snapshot within the interval; want it deferred to the frame tick")
	}
	type flood struct{}
	for i := 0; i < 1000; i++ {
		nm, cmd = m.Update(flood{})
		m = nm.(Model)
		if cmd != nil {
			t.Fatalf("message %d scheduled another frame while one is pending", i)
		}
	}
	nm, _ = m.Update(frameMsg{})
	if !strings.Contains(screen(nm), "rnmd") {
		t.Error("frame tick did not draw the second snapshot")
	}
}

// TestTabsFitNarrow: with the demo's long title and five panes, every
// pane's number stays visible at 80 columns (the title gives way first).
func TestTabsFitNarrow(t *testing.T) {
	opts := testOptions(&fakePane{title: "Device"}, &fakePane{title: "Log"}, &fakePane{title: "Tuning"})
	opts.Title = "tailpath demo (lab tailnet on 127.0.0.1)"
	for _, w := range []int{80, 100, 140} {
		m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: w, Height: 24})
		tabs := strings.Split(screen(m), "\n")[0]
		for _, want := range []string{"1 Peers", "2 Detail", "3 Device", "4 Log", "5 Tuning"} {
			if !strings.Contains(tabs, want) {
				t.Errorf("width %d: tab bar %q lacks %q", w, tabs, want)
			}
		}
		if w >= 140 && !strings.Contains(tabs, "tailpath demo") {
			t.Errorf("width %d: title dropped although it fits: %q", w, tabs)
		}
	}
}

// TestSaveKeyAndNotice: S runs Options.Save's command (no I/O in Update)
// and shows its outcome under the tabs; a Notice stays there; without
// Save, S does nothing and help does not offer it.
func TestSaveKeyAndNotice(t *testing.T) {
	saves := 0
	opts := testOptions()
	opts.Notice = "snapshot taken 2026-11-30 12:00:00Z · read-only"
	opts.Save = func() tea.Cmd {
		saves++
		return func() tea.Msg { return SavedMsg{Path: "/tmp/tailpath-snapshot-x.json"} }
	}
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 100, Height: 30}, peerstest.Joined(peerstest.Snapshot()))
	if v := screen(m); !strings.Contains(v, "snapshot taken 2026-11-30 12:00:00Z · read-only") {
		t.Errorf("notice missing:\n%s", v)
	}
	m, _ = step(t, m, keyMsg("S"))
	if saves != 1 {
		t.Fatalf("Save called %d times", saves)
	}
	if v := screen(m); !strings.Contains(v, "snapshot saved to /tmp/tailpath-snapshot-x.json") {
		t.Errorf("save outcome missing:\n%s", v)
	}
	m, _ = step(t, m, SavedMsg{Err: safetext.Of(errors.New("disk full\x1b[2J"))})
	if v := screen(m); !strings.Contains(v, "saving the snapshot failed: disk full") || strings.Contains(v, "\x1b[2J") {
		t.Errorf("save failure shown wrongly:\n%q", v)
	}
	m, _ = step(t, m, keyMsg("?"))
	if !strings.Contains(screen(m), "save snapshot") {
		t.Error("full help does not offer S")
	}

	plain, _ := step(t, New(testOptions()), tea.WindowSizeMsg{Width: 100, Height: 30}, keyMsg("S"), keyMsg("?"))
	if strings.Contains(screen(plain), "save snapshot") || strings.Contains(screen(plain), "saving") {
		t.Errorf("S without Save:\n%s", screen(plain))
	}
}

// TestEscClosesHelp: esc closes the help sheet and goes no further (Detail's
// esc would otherwise leave the tab with the sheet still open); with the
// sheet closed, esc is the pane's.
func TestEscClosesHelp(t *testing.T) {
	fake := &fakePane{title: "Fake"}
	m, _ := step(t, New(testOptions(fake)), tea.WindowSizeMsg{Width: 100, Height: 30}, keyMsg("3"))
	m, _ = step(t, m, keys("?", "esc")...)
	if m.help.ShowAll {
		t.Error("esc did not close the help sheet")
	}
	if got := fake.keys(); len(got) != 0 {
		t.Errorf("the pane saw %q while the help sheet was open", got)
	}
	_, _ = step(t, m, keyMsg("esc"))
	if diff := cmp.Diff([]string{"esc"}, fake.keys()); diff != "" {
		t.Errorf("keys reaching the pane once help is closed (-want +got):\n%s", diff)
	}
}

// TestTabNumbersFixed: a pane keeps its tab number whichever others the
// dashboard has (Tuning is 5 with a board and without one), the number
// keys reach only the tabs there are, and help names those numbers
// rather than "1-9".
func TestTabNumbersFixed(t *testing.T) {
	st := common.DefaultStyles()
	for _, tc := range []struct {
		name  string
		panes []common.Pane
		tabs  string // the tab line, unstyled
		help  string // the number keys' help
	}{
		{"demo", []common.Pane{device.New(st, nil), logpane.New(st, 0), tuning.New(tuning.Options{})},
			"1 Peers [2 Detail] 3 Device 4 Log 5 Tuning 6 Self", "1-6"},
		{"live, no board", []common.Pane{tuning.New(tuning.Options{})}, "1 Peers [2 Detail] 5 Tuning 6 Self", "1-2,5-6"},
		{"a snapshot", nil, "1 Peers [2 Detail] 6 Self", "1-2,6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			opts.Title = ""
			opts.Panes = tc.panes
			opts.Tabs = map[string]int{device.Title: 3, logpane.Title: 4, tuning.Title: 5} // internal/dashboard's table
			m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 100, Height: 30}, keyMsg("2"))
			if m.Focused() != peers.DetailTitle {
				t.Fatalf("2 focused %q", m.Focused())
			}
			tabs, _, _ := strings.Cut(screen(m), "\n")
			if got := strings.Join(strings.Fields(tabs), " "); got != tc.tabs {
				t.Errorf("tabs %q, want %q", got, tc.tabs)
			}
			if got := m.keys.Jump.Help().Key; got != tc.help {
				t.Errorf("help names the number keys %q, want %q", got, tc.help)
			}
			if len(tc.panes) > 0 {
				last := tc.panes[len(tc.panes)-1].Title()
				m, _ = step(t, m, keyMsg("5"))
				if m.Focused() != last {
					t.Errorf("5 focused %q, want %s", m.Focused(), last)
				}
			}
			m, _ = step(t, m, keyMsg("6"))
			if m.Focused() != selfpane.Title {
				t.Errorf("6 focused %q, want Self", m.Focused())
			}
			m, _ = step(t, m, keyMsg("2"), keyMsg("3")) // a number no tab has here does nothing
			if len(tc.panes) < 2 && m.Focused() != peers.DetailTitle {
				t.Errorf("3 moved to %q with no tab 3", m.Focused())
			}
		})
	}
}

// TestTabsInNumberOrder: the root's own panes keep their numbers (Peers
// 1, Detail 2, Self 6); a pane Options.Tabs numbers after Self is drawn
// after it and reached by its number, whatever order Panes gives; a pane
// named nowhere takes the next free number after the panes before it.
func TestTabsInNumberOrder(t *testing.T) {
	for title, n := range map[string]int{peers.ListTitle: 1, peers.DetailTitle: 2, selfpane.Title: 6} {
		if OwnTabs()[title] != n {
			t.Errorf("OwnTabs()[%q] = %d, want %d", title, OwnTabs()[title], n)
		}
	}
	opts := testOptions(&fakePane{title: "Late"}, &fakePane{title: "Loose"}, &fakePane{title: "Early"})
	opts.Title = ""
	opts.Tabs = map[string]int{"Late": 7, "Early": 4}
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 100, Height: 30})
	tabs, _, _ := strings.Cut(screen(m), "\n")
	if got, want := strings.Join(strings.Fields(tabs), " "), "[1 Peers] 2 Detail 4 Early 6 Self 7 Late 8 Loose"; got != want {
		t.Errorf("tabs %q, want %q", got, want)
	}
	for k, title := range map[string]string{"7": "Late", "6": selfpane.Title, "8": "Loose", "4": "Early"} {
		if m, _ := step(t, m, keyMsg(k)); m.Focused() != title {
			t.Errorf("%s focused %q, want %q", k, m.Focused(), title)
		}
	}
	if got := m.keys.Jump.Help().Key; got != "1-2,4,6-8" {
		t.Errorf("help names the number keys %q, want 1-2,4,6-8", got)
	}
}

// TestReplayClock: while a recorded board replays (the demo's), the tab
// line carries its clock, the one README's timeline (0:35, 1:40, 2:40) is
// told in, ticking by itself; when the replay ends it says so and stops.
func TestReplayClock(t *testing.T) {
	start := peerstest.Now()
	now := start
	opts := testOptions()
	opts.Now = func() time.Time { return now }
	opts.Panes = []common.Pane{device.New(common.DefaultStyles(), opts.Now), logpane.New(common.DefaultStyles(), 0)}
	replay := func(up bool) devlink.Event {
		return devlink.Event{State: devlink.State{Link: devlink.LinkStatus{Up: up, Port: "replay", Replay: true, At: now}}}
	}
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 80, Height: 24})
	if tabs, _, _ := strings.Cut(screen(m), "\n"); strings.Contains(tabs, "replay") {
		t.Fatalf("a clock before any replay: %q", tabs)
	}
	m, _ = step(t, m, replay(true))
	if !m.clockTicking { // (step drops the tick's command: it waits a second)
		t.Error("no clock tick started with the replay")
	}
	now = start.Add(35 * time.Second)
	m, _ = step(t, m, clockTickMsg{})
	if tabs, _, _ := strings.Cut(screen(m), "\n"); !strings.Contains(tabs, "3 Device") || !strings.HasSuffix(strings.TrimSpace(tabs), "board replay 0:35") {
		t.Errorf("at 0:35 the tab line reads %q", tabs)
	}
	if !m.clockTicking {
		t.Error("the clock stopped ticking while the replay runs")
	}
	now = start.Add(3*time.Minute + 12*time.Second)
	m, _ = step(t, m, replay(false))
	now = now.Add(time.Hour)
	m, _ = step(t, m, clockTickMsg{})
	if tabs, _, _ := strings.Cut(screen(m), "\n"); !strings.HasSuffix(strings.TrimSpace(tabs), "board replay ended at 3:12") {
		t.Errorf("after the replay ended the tab line reads %q", tabs)
	}
	if m.clockTicking {
		t.Error("the clock kept ticking after the replay ended")
	}
}
