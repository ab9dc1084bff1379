package logpane

import (
	"regexp"
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
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "search wifi: 2 matches (n/N)") {
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

type host struct{ p common.Pane }

func (h host) Init() tea.Cmd { return nil }
func (h host) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch m := msg.(type) {
	case tea.WindowSizeMsg:
		h.p.SetSize(m.Width, m.Height)
		return h, nil
	case tea.KeyPressMsg:
		if m.String() == "ctrl+c" {
			return h, tea.Quit
		}
	}
	return h, h.p.Update(msg)
}
func (h host) View() tea.View { return tea.NewView(h.p.View()) }

func TestLogGolden(t *testing.T) {
	p := New(common.DefaultStyles(), 0)
	tm := teatest.NewTestModel(t, host{p}, teatest.WithInitialTermSize(90, 12))
	tm.Send(event(consoleLog))
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(host)
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
// video, which no-color.org allows; other rows carry no colour and no
// reverse video (a crash's lines stay bold). The view
// goes through that profile as the program's renderer takes it
// (colorprofile.Writer). On TERM=dumb (NoTTY) nothing is left at all.
// Golden: testdata/TestNoColorSearchGolden.golden (-update).
func TestNoColorSearchGolden(t *testing.T) {
	p := New(common.DefaultStyles(), 0)
	p.SetSize(72, 10)
	p.Update(event(consoleLog))
	press(p, "/wifi\n")
	view := inProfile(p.View(), colorprofile.ASCII)
	var marked int
	sgr := regexp.MustCompile("\x1b\\[([0-9;]*)m")
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, "\x1b[1;7m") && strings.Contains(l, "wifi") {
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
	if marked != 2 || !strings.Contains(view, "search wifi: 2 matches (n/N)") {
		t.Errorf("%d rows marked, want the 2 wifi lines:\n%s", marked, view)
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
