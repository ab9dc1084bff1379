package tui

import (
	"reflect"
	"testing"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// unstyled is tuitest.Unstyled: the text without its styles.
func unstyled(s string) string { return tuitest.Unstyled(s) }

// screen is the root's frame, unstyled.
func screen(m tea.Model) string { return unstyled(m.View().Content) }

// runCmd executes cmd and every command it batches, returning the messages
// produced within a short wait. Commands that don't return in time (ticks)
// are dropped: tests deliver frameMsg themselves. The wait is as long as it
// can be while still below the shortest tick (DefaultFrameInterval, 150 ms),
// so that a busy machine's delay does not drop a command that returns at
// once.
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(cmdWait):
		return nil
	}
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmd(c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	// tea.Sequence's message type is unexported; run its commands in order.
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeOf(tea.Cmd(nil)) {
		var out []tea.Msg
		for i := 0; i < v.Len(); i++ {
			out = append(out, runCmd(v.Index(i).Interface().(tea.Cmd))...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// step applies msgs in order, feeds back every message their commands
// produce (so PeerSelectedMsg and ShowPaneMsg take effect), then draws a
// frame. It returns the model and every message commands produced.
func step(t *testing.T, m Model, msgs ...tea.Msg) (Model, []tea.Msg) {
	t.Helper()
	var produced []tea.Msg
	queue := append([]tea.Msg(nil), msgs...)
	for n := 0; len(queue) > 0; n++ {
		if n > 1000 {
			t.Fatal("step: message loop did not settle")
		}
		msg := queue[0]
		queue = queue[1:]
		if _, ok := msg.(tea.QuitMsg); ok {
			continue
		}
		nm, cmd := m.Update(msg)
		m = nm.(Model)
		out := runCmd(cmd)
		produced = append(produced, out...)
		queue = append(queue, out...)
	}
	nm, _ := m.Update(frameMsg{})
	return nm.(Model), produced
}

func keyMsg(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

func keys(s ...string) []tea.Msg {
	out := make([]tea.Msg, len(s))
	for i, k := range s {
		out[i] = keyMsg(k)
	}
	return out
}

// typeText is one key message per rune.
func typeText(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

func hasMsg[T any](msgs []tea.Msg) bool {
	for _, m := range msgs {
		if _, ok := m.(T); ok {
			return true
		}
	}
	return false
}

// fakePane records what the root gives it, to test routing.
type fakePane struct {
	title     string
	capturing bool
	w, h      int
	got       []tea.Msg
}

func (f *fakePane) Title() string              { return f.title }
func (f *fakePane) SetSize(w, h int)           { f.w, f.h = w, h }
func (f *fakePane) View() string               { return "fake pane " + f.title }
func (f *fakePane) KeyMap() help.KeyMap        { return nil }
func (f *fakePane) Capturing() bool            { return f.capturing }
func (f *fakePane) Update(msg tea.Msg) tea.Cmd { f.got = append(f.got, msg); return nil }

func (f *fakePane) keys() []string {
	var out []string
	for _, m := range f.got {
		if k, ok := m.(tea.KeyPressMsg); ok {
			out = append(out, k.String())
		}
	}
	return out
}

func testOptions(extra ...*fakePane) Options {
	o := Options{Title: "tailpath demo (lab tailnet)", Now: peerstest.Now}
	for _, p := range extra {
		o.Panes = append(o.Panes, p)
	}
	return o
}

// cmdWait is how long runCmd waits for a command: below the shortest tick.
const cmdWait = DefaultFrameInterval * 2 / 3
