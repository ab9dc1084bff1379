package peers

import (
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/tuitest"
)

func kmsg(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

// send applies keys, one message per rune for plain text.
func send(l *List, ks ...string) {
	for _, k := range ks {
		l.Update(kmsg(k))
	}
}

func typeInto(l *List, text string) {
	for _, r := range text {
		l.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func newTestList(t *testing.T) *List {
	t.Helper()
	l := NewList(common.DefaultStyles())
	l.SetSize(100, 20)
	l.Update(peerstest.Joined(peerstest.Snapshot()))
	return l
}

func TestSortModes(t *testing.T) {
	l := newTestList(t)
	want := map[SortMode][]string{
		SortPath:   {"nCORES3", "nBUILD", "nNAS", "nEVIL", "nLAPTOP", "nOLDPI"},
		SortName:   {"nBUILD", "nCORES3", "nEVIL", "nLAPTOP", "nNAS", "nOLDPI"},
		SortRate:   {"nNAS", "nBUILD", "nCORES3", "nEVIL", "nLAPTOP", "nOLDPI"},
		SortReason: {"nNAS", "nEVIL", "nLAPTOP", "nCORES3", "nOLDPI", "nBUILD"},
	}
	for i := 0; i < int(numSortModes); i++ {
		mode := l.SortMode()
		t.Run(mode.String(), func(t *testing.T) {
			if diff := cmp.Diff(want[mode], shownIDs(l)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if !strings.Contains(tuitest.Unstyled(l.View()), "sort: "+mode.String()) {
				t.Errorf("status line does not name the order %q", mode)
			}
		})
		send(l, "s")
	}
	if l.SortMode() != SortPath {
		t.Errorf("sort key did not cycle back to %v, at %v", SortPath, l.SortMode())
	}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"relay", []string{"nCORES3", "nBUILD"}},     // path words
		{"FREERTOS", []string{"nCORES3"}},            // OS, case-insensitive
		{"offline", []string{"nOLDPI"}},              // path and reason
		{"no traffic", []string{"nEVIL", "nLAPTOP"}}, // reason
		{"evilred", []string{"nEVIL"}},               // cleaned name
		{"no-endpoints", []string{"nCORES3"}},        // reason id
		{"zzz", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			l := newTestList(t)
			send(l, "/")
			if !l.Capturing() {
				t.Fatal("/ did not open the filter input")
			}
			typeInto(l, tt.query)
			if !l.Capturing() {
				t.Fatal("typing closed the filter input")
			}
			if diff := cmp.Diff(tt.want, shownIDs(l)); diff != "" {
				t.Errorf("while typing (-want +got):\n%s", diff)
			}
			send(l, "enter")
			if l.Capturing() {
				t.Error("enter left the input open")
			}
			if diff := cmp.Diff(tt.want, shownIDs(l)); diff != "" {
				t.Errorf("after enter (-want +got):\n%s", diff)
			}
			if len(tt.want) == 0 && !strings.Contains(tuitest.Unstyled(l.View()), "no peer matches") {
				t.Errorf("empty result not explained:\n%s", tuitest.Unstyled(l.View()))
			}
			send(l, "esc")
			if got := len(l.Shown()); got != 6 || l.Filter() != "" {
				t.Errorf("esc: %d rows, filter %q; want 6 rows, no filter", got, l.Filter())
			}
		})
	}
}

func TestFilterEscWhileTyping(t *testing.T) {
	l := newTestList(t)
	send(l, "/")
	typeInto(l, "nas")
	send(l, "esc")
	if l.Capturing() || l.Filter() != "" || len(l.Shown()) != 6 {
		t.Errorf("esc while typing: capturing %v, filter %q, %d rows; want closed, empty, 6", l.Capturing(), l.Filter(), len(l.Shown()))
	}
	// q and digits are text while typing, not global keys (the root sees Capturing).
	send(l, "/")
	typeInto(l, "q1")
	if l.Filter() != "q1" {
		t.Errorf("filter = %q, want q1", l.Filter())
	}
}

func TestSelectionStableAcrossSnapshots(t *testing.T) {
	l := newTestList(t)
	send(l, "down", "down") // cores3, build-box, nas
	if got := l.Selected().ID; got != "nNAS" {
		t.Fatalf("selected %s, want nNAS", got)
	}
	// nas falls back to DERP: relayed-first sorting moves it up.
	s := peerstest.Snapshot()
	s.Time = s.Time.Add(time.Second)
	for i := range s.Peers {
		if s.Peers[i].ID == "nNAS" {
			s.Peers[i].Path = probes.Path{Kind: probes.PathDERP, DERPCode: "nyc", Text: `active; relay "nyc"`}
		}
	}
	l.Update(peerstest.Joined(s))
	if got := l.Selected().ID; got != "nNAS" {
		t.Errorf("after re-sort selected %s, want nNAS", got)
	}
	if diff := cmp.Diff([]string{"nCORES3", "nNAS", "nBUILD", "nEVIL", "nLAPTOP", "nOLDPI"}, shownIDs(l)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	// Peers arriving and leaving don't move the selection either.
	s2 := peerstest.Snapshot()
	s2.Peers = append([]probes.Peer{{ID: "nAAA", Name: "aaa", Path: probes.Path{Kind: probes.PathDERP, Text: `active; relay "tok"`}}}, s2.Peers...)
	l.Update(peerstest.Joined(s2))
	if got := l.Selected().ID; got != "nNAS" {
		t.Errorf("after a new peer selected %s, want nNAS", got)
	}
	// The selected peer leaving keeps the cursor row, on another peer.
	s3 := peerstest.Snapshot()
	s3.Peers = s3.Peers[:4] // drops nNAS, nOLDPI
	l.Update(peerstest.Joined(s3))
	if p := l.Selected(); p == nil || p.ID == "nNAS" {
		t.Errorf("after nNAS left selected %v", p)
	}
}

func TestSelectionPublishes(t *testing.T) {
	l := NewList(common.DefaultStyles())
	l.SetSize(100, 20)
	cmd := l.Update(peerstest.Joined(peerstest.Snapshot()))
	if msg, ok := runOne(cmd).(common.PeerSelectedMsg); !ok || msg.Peer.ID != "nCORES3" {
		t.Errorf("first snapshot published %#v, want PeerSelectedMsg for nCORES3", runOne(cmd))
	}
	if cmd := l.Update(peerstest.Joined(peerstest.Snapshot())); cmd != nil {
		t.Errorf("second snapshot with the same selection published %#v", runOne(cmd))
	}
	cmd = l.Update(kmsg("down"))
	if msg, ok := runOne(cmd).(common.PeerSelectedMsg); !ok || msg.Peer.ID != "nBUILD" {
		t.Errorf("down published %#v, want PeerSelectedMsg for nBUILD", runOne(cmd))
	}
	if cmd := l.Update(kmsg("s")); cmd != nil {
		if _, ok := runOne(cmd).(common.PeerSelectedMsg); ok {
			t.Error("sorting published a selection change for the same peer")
		}
	}
	msgs := runAll(l.Update(kmsg("enter")))
	var got []string
	for _, m := range msgs {
		switch m := m.(type) {
		case common.PeerSelectedMsg:
			got = append(got, "select "+string(m.Peer.ID))
		case common.ShowPaneMsg:
			got = append(got, "show "+m.Title)
		}
	}
	if diff := cmp.Diff([]string{"select nBUILD", "show Detail"}, got); diff != "" {
		t.Errorf("enter (-want +got):\n%s", diff)
	}
}

func runOne(cmd tea.Cmd) tea.Msg {
	if cmd == nil {
		return nil
	}
	return cmd()
}

func runAll(cmd tea.Cmd) []tea.Msg {
	msg := runOne(cmd)
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runAll(c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	return []tea.Msg{msg}
}

func TestSelectsFirstPeerOnceAny(t *testing.T) {
	l := NewList(common.DefaultStyles())
	l.SetSize(80, 10)
	empty := peerstest.Snapshot()
	empty.Peers = nil
	if cmd := l.Update(peerstest.Joined(empty)); cmd != nil {
		t.Errorf("empty snapshot published %#v", runOne(cmd))
	}
	if msg, ok := runOne(l.Update(peerstest.Joined(peerstest.Snapshot()))).(common.PeerSelectedMsg); !ok || msg.Peer.ID != "nCORES3" {
		t.Errorf("first snapshot with peers published %#v, want nCORES3", msg)
	}
}

func TestTinyHeights(t *testing.T) {
	for h := 0; h <= 4; h++ {
		l := NewList(common.DefaultStyles())
		l.SetSize(80, h)
		for _, v := range []string{tuitest.Unstyled(l.View()), func() string { l.Update(peerstest.Joined(peerstest.Snapshot())); return tuitest.Unstyled(l.View()) }()} {
			if n := strings.Count(v, "\n") + 1; v != "" && n > h {
				t.Errorf("height %d: %d lines", h, n)
			}
		}
	}
}

func TestScrollKeepsCursorVisible(t *testing.T) {
	l := NewList(common.DefaultStyles())
	l.SetSize(200, 12) // 10 data rows
	l.Update(peerstest.Joined(peerstest.Many(100)))
	send(l, "s") // by name: cores3-0001 … deterministic
	for i := 0; i < 25; i++ {
		send(l, "down")
	}
	sel := l.Selected()
	v := tuitest.Unstyled(l.View())
	if !strings.Contains(v, string(sel.Name)) {
		t.Errorf("selected %s not on screen:\n%s", sel.Name, v)
	}
	send(l, "end")
	if !strings.Contains(tuitest.Unstyled(l.View()), string(l.Selected().Name)) {
		t.Errorf("end: selected %s not on screen", l.Selected().Name)
	}
	lines := strings.Split(tuitest.Unstyled(l.View()), "\n")
	if len(lines) != 12 {
		t.Errorf("%d lines, want 12", len(lines))
	}
	for i, line := range lines {
		if w := ansi.StringWidth(line); w > 200 {
			t.Errorf("line %d is %d wide", i, w)
		}
	}
}

func TestColumnsFit(t *testing.T) {
	for _, w := range []int{20, 40, 60, 80, 100, 120, 130, 200} {
		cols := layoutColumns(w)
		total := 0
		var shown []string
		for _, c := range cols {
			if c.Width > 0 {
				total += c.Width
				shown = append(shown, c.Title)
			}
		}
		if total > w && w >= 60 {
			t.Errorf("width %d: columns take %d", w, total)
		}
		if j := strings.Join(shown, ","); !strings.HasPrefix(j, "   name,") || !strings.Contains(j, ",path,") || !strings.HasSuffix(j, ",reason") {
			t.Errorf("width %d: shown columns %v lack name, path or reason", w, shown)
		}
		if w >= 130 && len(shown) != numCols {
			t.Errorf("width %d: only %v shown", w, shown)
		}
		// From 120 cells a direct path to any IPv4 endpoint reads whole:
		// the OS column gives way first.
		if long := len(`active; direct 203.0.113.255:41641`); w >= 120 && cols[colPath].Width-cellGap < long {
			t.Errorf("width %d: path column %d cells, a direct path needs %d", w, cols[colPath].Width-cellGap, long)
		}
	}
}

func TestEscapesNeverReachTheScreen(t *testing.T) {
	l := newTestList(t)
	send(l, "/")
	typeInto(l, "evil")
	send(l, "enter")
	v := tuitest.Unstyled(l.View())
	if strings.ContainsRune(v, '\x1b') || strings.ContainsRune(v, '\a') {
		t.Errorf("view holds escape or bell bytes: %q", v)
	}
	if !strings.Contains(v, "evilredbox") {
		t.Errorf("cleaned name missing:\n%s", v)
	}
}

// TestHeaderShowsSelfVerdict: the self's own verdict is on the Peers
// header line, in words where there is room and as its id where not.
func TestHeaderShowsSelfVerdict(t *testing.T) {
	snap := peerstest.Snapshot()
	snap.Self.Health = []safetext.Text{"The MagicSock function ReceiveIPv4 is not running. You might experience connectivity issues."}
	judged := snap
	judged.Peers = slices.Clone(snap.Peers)
	probes.Judge(&judged, nil) // this node's verdict; the fixture's peers keep theirs
	snap.Self.Verdict = judged.Self.Verdict
	if snap.Self.Verdict == nil {
		t.Fatal("no self verdict from a stopped ReceiveIPv4")
	}
	for _, tt := range []struct {
		width int
		want  string
	}{
		{160, string("self: " + snap.Self.Verdict.Summary)},
		{70, "self: self-udp-receive-stopped"},
	} {
		l := NewList(common.DefaultStyles())
		l.SetSize(tt.width, 20)
		l.Update(peerstest.Joined(snap))
		if head, _, _ := strings.Cut(tuitest.Unstyled(l.View()), "\n"); !strings.Contains(head, tt.want) {
			t.Errorf("width %d: header %q lacks %q", tt.width, head, tt.want)
		}
	}
}

// shownIDs is l.Shown() as plain strings, for diffs against literals.
func shownIDs(l *List) []string {
	out := []string{}
	for _, id := range l.Shown() {
		out = append(out, string(id))
	}
	return out
}

// TestListWarningsKey: the status line counts the snapshot's warnings and
// says how to read them; w shows them in place of the table, w or esc
// goes back; with none, w is not offered.
func TestListWarningsKey(t *testing.T) {
	l := newTestList(t)
	if l.keys.Warnings.Enabled() {
		t.Fatal("w offered with no warnings")
	}
	snap := peerstest.Snapshot()
	snap.Warnings = []safetext.Text{"WhoIs 100.64.0.7: permission denied", "netcheck: no UDP answer from region nyc within 3s, so the NAT type is a guess from one region"}
	l.Update(peerstest.Joined(snap))
	v := tuitest.Unstyled(l.View())
	if status, _, _ := strings.Cut(v, "\n"); !strings.Contains(status, "2 warnings (w)") {
		t.Errorf("status line %q does not count the warnings and name w", status)
	}
	for _, close := range []string{"w", "esc"} {
		send(l, "w")
		v = tuitest.Unstyled(l.View())
		for _, want := range []string{"Warnings (2)", "- WhoIs 100.64.0.7: permission denied", "- netcheck: no UDP answer from region nyc"} {
			if !strings.Contains(v, want) {
				t.Errorf("after w, the pane lacks %q:\n%s", want, v)
			}
		}
		if strings.Contains(v, "build-box") {
			t.Errorf("the table is still shown under the warnings:\n%s", v)
		}
		send(l, close)
		if v = tuitest.Unstyled(l.View()); strings.Contains(v, "Warnings (2)") {
			t.Errorf("%s did not go back to the table:\n%s", close, v)
		}
	}
}

// TestReasonComing: before the facts of the verdicts arrive (a pending
// snapshot, judged as such by the joiner), every row shows its peer and
// path with "reason coming…", dim in every row but the selected one
// (drawn whole in its own style), and no reason id.
func TestReasonComing(t *testing.T) {
	s := peerstest.Snapshot()
	s.Pending = true
	ls := join.Of(&s)
	st := common.DefaultStyles()
	l := NewList(st)
	l.SetSize(140, 20)
	l.Update(ls)
	v := l.View()
	plain := tuitest.Unstyled(v)
	if got := strings.Count(plain, ReasonComing); got != len(s.Peers) {
		t.Errorf("%d rows say %q, want %d:\n%s", got, ReasonComing, len(s.Peers), plain)
	}
	if got := strings.Count(v, st.Muted.Render(ReasonComing)); got != len(s.Peers)-1 {
		t.Errorf("%d rows dim %q, want every row but the selected one (%d):\n%q", got, ReasonComing, len(s.Peers)-1, v)
	}
	for _, p := range s.Peers {
		path := string(join.PathText(&p.Path))
		path = path[:min(len(path), 20)] // a long path is cut to its column
		if !strings.Contains(plain, string(p.Name)) || !strings.Contains(plain, path) {
			t.Errorf("row of %s lacks its name or path %q:\n%s", p.Name, path, plain)
		}
	}
}
