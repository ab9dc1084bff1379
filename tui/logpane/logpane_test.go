package logpane

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/tuitest"
)

const consoleLog = "\x1b[0;32mI (300) wifi: connected to ap\x1b[0m\r\n" +
	"D (311) ts_disco: Ping sent peer=3 to 203.0.113.5:41641 txid=9f8e\r\n" +
	"@TP1 S seq=41 up=34012 rst=poweron *6656D985\r\n" +
	"\x1b[0;33mW (320) wifi: beacon timeout\x1b[0m\r\n" +
	"regular printf \x1b]0;evil title\x07with a title escape\r\n" +
	"\x1b[0;31mE (330) esp-tls: handshake failed\x1b[0m\r\n" +
	"Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\r\n" +
	"Backtrace: 0x400d1000:0x3fc9bd60 |<-CORRUPTED\r\n"

// event builds the devlink.Event a Source with an ELF would send.
func event(text string) devlink.Event {
	var sp devlink.Splitter
	var lines []devlink.Line
	emit := func(l *devlink.Line) {
		c := l.Clone()
		c.Display = l.DisplayText()
		if l.Kind == devlink.KindBacktrace {
			c.Decoded = []safetext.Text{"0x400d1000: esp_timer_impl_init_system_time at system_time.c:29"}
		}
		lines = append(lines, c)
	}
	sp.Feed([]byte(text), emit)
	sp.Flush(emit)
	return devlink.Event{Lines: lines}
}

func press(p *Pane, s string) {
	for _, r := range s {
		switch r {
		case '\n':
			p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		case '\x1b':
			p.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
		case ' ':
			p.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
		default:
			p.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
}

func TestLogPaneFilterSearchFollow(t *testing.T) {
	p := New(common.DefaultStyles(), 0)
	p.SetSize(100, 12)
	p.Update(event(consoleLog))
	v := tuitest.Unstyled(p.View())
	for _, want := range []string{"I (300) wifi: connected to ap", "regular printf with a title escape",
		"Backtrace: 0x400d1000:0x3fc9bd60 |<-CORRUPTED", "  ↳ 0x400d1000: esp_timer_impl_init_system_time at system_time.c:29",
		"following · 7 lines"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "@TP1") || strings.Contains(v, "evil title") || strings.Contains(v, "\x1b]") {
		t.Errorf("telemetry or escape leaked:\n%q", v)
	}

	// Filter in ESP-IDF monitor syntax: only wifi warnings and up; plain lines hidden.
	press(p, "f")
	if !p.Capturing() {
		t.Fatal("filter input not capturing")
	}
	press(p, "wifi:W\n")
	v = tuitest.Unstyled(p.View())
	if !strings.Contains(v, "W (320) wifi: beacon timeout") || strings.Contains(v, "connected to ap") ||
		strings.Contains(v, "regular printf") || !strings.Contains(v, "filter wifi:W") {
		t.Errorf("filter wifi:W view:\n%s", v)
	}
	// A bad filter is reported and the old one kept.
	press(p, "f")
	p.input.SetValue("wifi:X")
	press(p, "\n")
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "unknown level") || !strings.Contains(v, "filter wifi:W") {
		t.Errorf("bad filter view:\n%s", v)
	}
	// Clear the filter, search, and pause.
	press(p, "f")
	p.input.SetValue("")
	press(p, "\n/esp-tls\n")
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "search esp-tls: 1 match (n/N)") || !strings.Contains(v, "paused") {
		t.Errorf("search view:\n%s", v)
	}
	// A new search starts empty; one with no hit says so; Enter on nothing
	// clears it.
	press(p, "/")
	if got := p.input.Value(); got != "" {
		t.Errorf("a new search starts with %q, want empty", got)
	}
	press(p, "zzzz\n")
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "search zzzz: no match") {
		t.Errorf("search without a hit:\n%s", v)
	}
	press(p, "/wifi\n")
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "search wifi: 2 matches, at 1 (n/N)") {
		t.Errorf("search with two hits:\n%s", v)
	}
	press(p, "/\n")
	if v = tuitest.Unstyled(p.View()); strings.Contains(v, "search") {
		t.Errorf("Enter on an empty search did not clear it:\n%s", v)
	}
	press(p, "/esp-tls\n")
	press(p, " ")
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "following") {
		t.Errorf("space did not resume following:\n%s", v)
	}
	// Following keeps the newest line in view as lines arrive.
	for i := range 30 {
		p.Update(event("I (" + strings.Repeat("9", i%3+1) + ") app: tick\r\n"))
	}
	p.Update(event("I (999) app: newest\r\n"))
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "app: newest") {
		t.Errorf("newest line not in view while following:\n%s", v)
	}
}

func TestLogPaneKeepsBound(t *testing.T) {
	p := New(common.DefaultStyles(), 10)
	p.SetSize(80, 5)
	for range 25 {
		p.Update(event("I (1) app: line\r\n"))
	}
	if len(p.entries) != 10 {
		t.Errorf("kept %d lines, want 10", len(p.entries))
	}
}

func TestLogGolden(t *testing.T) {
	p := New(common.DefaultStyles(), 0)
	tm := teatest.NewTestModel(t, tuitest.Host{Pane: p}, teatest.WithInitialTermSize(90, 12))
	tm.Send(event(consoleLog))
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(tuitest.Host)
	teatest.RequireEqualOutput(t, []byte(tuitest.Unstyled(final.View().Content)))
}

// TestConsole: without SetConsole `i` does nothing; with it, `i` opens an
// input line whose lines go to the board with the line ending, from a
// command (never inside Update); the input stays open for the next line;
// the board's status query is answered only once the console was opened;
// esc closes it.
func TestConsole(t *testing.T) {
	var sent []string
	send := func(b []byte) error { sent = append(sent, string(b)); return nil }
	run := func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		msg := cmd()
		if _, ok := msg.(sentMsg); ok {
			return
		}
	}
	// A live port, up.
	live := func(ev devlink.Event) devlink.Event {
		ev.State.Link = devlink.LinkStatus{Up: true, Port: "/dev/ttyACM0"}
		return ev
	}
	query := live(event("\x1b[5nesp32> "))

	p := New(common.DefaultStyles(), 100)
	p.SetSize(80, 10)
	run(p.Update(tea.KeyPressMsg{Code: 'i', Text: "i"}))
	if p.Capturing() {
		t.Fatal("read-only pane opened an input")
	}

	p.SetConsole(send, []byte("\r"))
	// No board on the port yet: i says so instead of opening a prompt.
	run(p.Update(tea.KeyPressMsg{Code: 'i', Text: "i"}))
	if p.Capturing() || !strings.Contains(tuitest.Unstyled(p.View()), "no board connected") {
		t.Fatalf("i with no board connected:\n%s", tuitest.Unstyled(p.View()))
	}
	if cmd := p.Update(query); cmd != nil {
		t.Error("the status query was answered before the console was opened")
	}
	run(p.Update(tea.KeyPressMsg{Code: 'i', Text: "i"}))
	if !p.Capturing() || !strings.Contains(tuitest.Unstyled(p.View()), "to board> ") {
		t.Fatalf("console input not open:\n%s", tuitest.Unstyled(p.View()))
	}
	for _, r := range "help" {
		run(p.Update(tea.KeyPressMsg{Code: r, Text: string(r)}))
	}
	if len(sent) != 0 {
		t.Fatalf("sent %q before Enter", sent)
	}
	cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if len(sent) != 0 || cmd == nil {
		t.Fatal("Enter wrote inside Update or returned no command")
	}
	p.Update(cmd())
	run(p.Update(tea.KeyPressMsg{Code: 'f', Text: "f"})) // typed into the input, not the filter key
	p.Update(p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})())
	if want := []string{"help\r", "f\r"}; strings.Join(sent, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", sent, want)
	}
	cmd = p.Update(query)
	if cmd == nil {
		t.Fatal("the status query was not answered with the console open")
	}
	p.Update(cmd())
	if sent[len(sent)-1] != devlink.StatusAnswer {
		t.Errorf("answer %q, want %q", sent[len(sent)-1], devlink.StatusAnswer)
	}
	p.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if p.Capturing() {
		t.Error("esc did not close the console")
	}
	for _, l := range p.build() {
		if strings.Contains(l.text, "\x1b") {
			t.Errorf("row with an escape: %q", l.text)
		}
	}
}

// TestNoColorSearchGolden: under NO_COLOR the dashboard's colour profile
// is ASCII (termcolor.Profile): a search's matches still show, in reverse
// video, which no-color.org allows, the current one (n/N's) bold too;
// other rows carry no colour and no reverse video (a crash's lines stay
// bold). The view
// goes through that profile as the program's renderer takes it
// (colorprofile.Writer). On TERM=dumb (NoTTY) nothing is left at all.
// Golden: testdata/TestNoColorSearchGolden.golden (-update).
func TestNoColorSearchGolden(t *testing.T) {
	p := New(common.DefaultStyles(), 0)
	p.SetSize(72, 10)
	p.Update(event(consoleLog))
	press(p, "/wifi\n")
	view := inProfile(p.View(), colorprofile.ASCII)
	var marked, current int
	sgr := regexp.MustCompile("\x1b\\[([0-9;]*)m")
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, "\x1b[1;7m") && strings.Contains(l, "wifi") {
			current++
			continue
		}
		if strings.Contains(l, "\x1b[7m") && strings.Contains(l, "wifi") {
			marked++
			continue
		}
		for _, m := range sgr.FindAllStringSubmatch(l, -1) {
			if m[1] != "" && m[1] != "1" {
				t.Errorf("an unmarked row has SGR %q: %q", m[1], l)
			}
		}
		if strings.Contains(sgr.ReplaceAllString(l, ""), "\x1b") {
			t.Errorf("escape in an unmarked row: %q", l)
		}
	}
	if current != 1 || marked != 1 || !strings.Contains(view, "search wifi: 2 matches, at 1 (n/N)") {
		t.Errorf("%d rows marked current and %d others, want one of each (the 2 wifi lines):\n%s", current, marked, view)
	}
	teatest.RequireEqualOutput(t, []byte(view))
	if dumb := inProfile(p.View(), colorprofile.NoTTY); strings.Contains(dumb, "\x1b") {
		t.Errorf("escapes under the NoTTY profile: %q", dumb)
	}
}

// inProfile is s as a program with colour profile prof writes it.
func inProfile(s string, prof colorprofile.Profile) string {
	var b strings.Builder
	w := colorprofile.Writer{Forward: &b, Profile: prof}
	w.WriteString(s)
	return b.String()
}

// TestPasteIntoSearch: a bracketed paste types into the open search line
// (control characters dropped), and does nothing while no input is open.
func TestPasteIntoSearch(t *testing.T) {
	p := New(common.DefaultStyles(), 0)
	p.SetSize(72, 10)
	p.Update(event(consoleLog))
	p.Update(tea.PasteMsg{Content: "/wifi"})
	if p.Capturing() || strings.Contains(tuitest.Unstyled(p.View()), "search") {
		t.Fatalf("a paste with no input open did something:\n%s", tuitest.Unstyled(p.View()))
	}
	press(p, "/")
	p.Update(tea.PasteMsg{Content: "wifi"})
	press(p, "\n")
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "search wifi: 2 matches") {
		t.Errorf("after pasting wifi into the search:\n%s", v)
	}
	// The ESC of a pasted escape sequence is dropped: no escape reaches
	// the status line.
	press(p, "/")
	p.Update(tea.PasteMsg{Content: "wi\x1b[2Jfi"})
	press(p, "\n")
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "search wi[2Jfi: no match") {
		t.Errorf("after pasting an escape sequence into the search:\n%q", v)
	}
}

// xtensaPanic is an ESP32-S3 panic as the board prints it: a register dump
// of rows wider than 80 columns, then a backtrace of eight frames.
const xtensaPanic = "I (9120) app: sending\r\n" +
	"Guru Meditation Error: Core  1 panic'ed (StoreProhibited). Exception was unhandled.\r\n" +
	"\r\n" +
	"Core  1 register dump:\r\n" +
	"PC      : 0x400d8a31  PS      : 0x00060a30  A0      : 0x800d8c6e  A1      : 0x3ffb2f40  \r\n" +
	"A2      : 0x00000000  A3      : 0x3ffc1d88  A4      : 0x00000008  A5      : 0x3ffb2f20  \r\n" +
	"EXCVADDR: 0x00000008  LBEG    : 0x4000c2e0  LEND    : 0x4000c2f6  LCOUNT  : 0xffffffff  \r\n" +
	"\r\n" +
	"Backtrace: 0x400d8a2e:0x3ffb2f40 0x400d8c6b:0x3ffb2f70 0x400d3f15:0x3ffb2fa0 0x400e1b02:0x3ffb2fd0 0x400e1d39:0x3ffb3000 0x4008f2e6:0x3ffb3020 0x4008f2f0:0x3ffb3040 0x4008f300:0x3ffb3060\r\n" +
	"I (9200) app: a long line after the panic that is much wider than eighty columns so it needs wrapping or cutting\r\n"

// TestLogWrapsLongLines: at 80 columns long lines wrap by default, a
// register row between registers and a backtrace between frames, so no
// register and no frame is lost; w cuts long lines instead, but a crash
// report's rows still wrap.
func TestLogWrapsLongLines(t *testing.T) {
	regs := regexp.MustCompile(`[A-Z][A-Z0-9]*\s*: 0x[0-9a-f]{8}`)
	frames := regexp.MustCompile(`0x[0-9a-f]{8}:0x[0-9a-f]{8}`)
	const long = "a long line after the panic that is much wider than eighty columns so it needs wrapping or cutting"
	for _, wrap := range []bool{true, false} {
		p := New(common.DefaultStyles(), 0)
		p.SetSize(80, 24)
		p.Update(event(xtensaPanic))
		if !wrap {
			press(p, "w")
		}
		v := tuitest.Unstyled(p.View())
		lines := strings.Split(v, "\n")
		if len(lines) != 24 {
			t.Fatalf("wrap %v: %d lines, want 24", wrap, len(lines))
		}
		for _, l := range lines {
			if w := common.Width(l); w > 80 {
				t.Errorf("wrap %v: a line of %d cells: %q", wrap, w, l)
			}
		}
		if n := len(regs.FindAllString(v, -1)); n != 12 {
			t.Errorf("wrap %v: %d registers whole on screen, want all 12:\n%s", wrap, n, v)
		}
		if n := len(frames.FindAllString(v, -1)); n != 8 {
			t.Errorf("wrap %v: %d backtrace frames whole on screen, want all 8:\n%s", wrap, n, v)
		}
		joined := strings.Join(strings.Fields(v), " ")
		if got := strings.Contains(joined, long); got != wrap {
			t.Errorf("wrap %v: the long log line whole: %v\n%s", wrap, got, v)
		}
		if cut := strings.Contains(v, "…"); cut == wrap {
			t.Errorf("wrap %v: a line cut with …: %v\n%s", wrap, cut, v)
		}
		if off := strings.Contains(v, "long lines cut (w wraps)"); off == wrap {
			t.Errorf("wrap %v: status says lines are cut: %v\n%s", wrap, off, v)
		}
	}
}

// TestLogScrollsWrappedLines: paused, scrolling moves by screen lines
// through a wrapped row, and reaching the bottom follows again.
func TestLogScrollsWrappedLines(t *testing.T) {
	p := New(common.DefaultStyles(), 0)
	p.SetSize(80, 6) // 5 lines of log
	p.Update(event(xtensaPanic))
	press(p, " ") // pause at the bottom
	bottom := tuitest.Unstyled(p.View())
	var seen []string
	for range 40 {
		p.Update(tea.KeyPressMsg{Code: tea.KeyUp})
		first, _, _ := strings.Cut(tuitest.Unstyled(p.View()), "\n")
		seen = append(seen, first)
	}
	if seen[len(seen)-1] != "I (9120) app: sending" {
		t.Errorf("scrolled up to %q, want the first line", seen[len(seen)-1])
	}
	// One line at a time: a register row's second line was at the top too.
	if !slices.Contains(seen, wrapIndent+"LCOUNT  : 0xffffffff  ") || !slices.Contains(seen, "EXCVADDR: 0x00000008  LBEG    : 0x4000c2e0  LEND    : 0x4000c2f6") {
		t.Errorf("scrolling up skipped a wrapped row's lines: %q", seen)
	}
	press(p, "G")
	if v, want := tuitest.Unstyled(p.View()), strings.Replace(bottom, "paused at 11/11", "following", 1); v != want {
		t.Errorf("G did not come back to the bottom, following:\n%s\nwant:\n%s", v, want)
	}
}

// TestSearchJumpsAndMarksCurrent: Enter on a search moves to its first
// match at once, from a view already drawn (it moved nowhere until n);
// n moves on, and the current match is drawn apart from the others.
func TestSearchJumpsAndMarksCurrent(t *testing.T) {
	p := New(common.DefaultStyles(), 0)
	p.SetSize(80, 4) // 3 lines of log
	for i := range 20 {
		p.Update(event(fmt.Sprintf("I (%d) app: line %d\r\n", i, i)))
		p.View() // drawn between events, as the dashboard does
	}
	press(p, "/line 3\n")
	v := tuitest.Unstyled(p.View())
	if first, _, _ := strings.Cut(v, "\n"); first != "I (3) app: line 3" || !strings.Contains(v, "paused") {
		t.Fatalf("after /line 3, want it the first line shown, paused:\n%s", v)
	}
	press(p, "/line 1\n") // line 1, then 10 to 19: 11 matches
	v = tuitest.Unstyled(p.View())
	if first, _, _ := strings.Cut(v, "\n"); first != "I (10) app: line 10" || !strings.Contains(v, "search line 1: 11 matches, at 2 (n/N)") {
		t.Errorf("after /line 1 from line 3, want line 10 first, the 2nd match:\n%s", v)
	}
	press(p, "n")
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "at 3 (n/N)") {
		t.Errorf("n did not move to the 3rd match:\n%s", v)
	}
	styled := inProfile(p.View(), colorprofile.ASCII)
	var current, others int
	for _, l := range strings.Split(styled, "\n") {
		switch {
		case strings.Contains(l, "\x1b[1;7m"):
			current++
			if !strings.Contains(l, "line 11") {
				t.Errorf("current match drawn on %q, want line 11", l)
			}
		case strings.Contains(l, "\x1b[7m"):
			others++
		}
	}
	if current != 1 || others != 2 {
		t.Errorf("%d current and %d other matches drawn, want 1 and 2:\n%q", current, others, styled)
	}
}

// TestConsoleHelpSaysSend: with the console open, Enter's help says it
// sends the line to the board, not "apply".
func TestConsoleHelpSaysSend(t *testing.T) {
	p := New(common.DefaultStyles(), 0)
	p.SetSize(80, 10)
	p.SetConsole(func([]byte) error { return nil }, []byte("\r"))
	p.Update(devlink.Event{State: devlink.State{Link: devlink.LinkStatus{Up: true, Port: "/dev/ttyACM0"}}})
	press(p, "i")
	var enter []string
	for _, b := range p.KeyMap().ShortHelp() {
		if b.Enabled() && b.Help().Key == "enter" {
			enter = append(enter, b.Help().Desc)
		}
	}
	if len(enter) != 1 || enter[0] != "send to the board" {
		t.Errorf("enter's help with the console open: %q, want [send to the board]", enter)
	}
	press(p, "\x1b/")
	enter = enter[:0]
	for _, b := range p.KeyMap().ShortHelp() {
		if b.Enabled() && b.Help().Key == "enter" {
			enter = append(enter, b.Help().Desc)
		}
	}
	if len(enter) != 1 || enter[0] != "apply" {
		t.Errorf("enter's help in the search: %q, want [apply]", enter)
	}
}
