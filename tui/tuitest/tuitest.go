// Package tuitest holds what the tests of the tui packages share: a
// frame's text without its styles, a model wrapper that lets a test wait
// until the program has drawn a frame, and a one-pane program (Host). (Bubble Tea v2's renderer
// writes only the cells that changed, so the program's output no longer
// holds a frame's lines whole, and Lip Gloss v2 renders full colour, which
// the program's colour profile brings down at the terminal.)
package tuitest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/tui/common"
)

// sgr matches one Select Graphic Rendition sequence: what styles write.
var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// Unstyled is s without its SGR sequences: the text a terminal shows
// under no colour profile. Every other escape stays, so a sanitising
// failure still shows in it.
func Unstyled(s string) string { return sgr.ReplaceAllString(s, "") }

// Watched is a model whose frames (View's content, unstyled) a test can
// wait for (Wait, WaitMatch) and read (Last). Create it with Watch.
type Watched struct {
	tea.Model
	f *frames
}

type frames struct {
	mu      sync.Mutex
	last    string
	pending []*waiter
}

// waiter is one Wait: met once a frame satisfied ok.
type waiter struct {
	ok  func(string) bool
	met bool
}

// Watch wraps m.
func Watch(m tea.Model) Watched { return Watched{Model: m, f: &frames{}} }

// Update implements tea.Model.
func (w Watched) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := w.Model.Update(msg)
	w.Model = m
	return w, cmd
}

// View implements tea.Model; the program calls it for every frame.
func (w Watched) View() tea.View {
	v := w.Model.View()
	text := Unstyled(v.Content)
	w.f.mu.Lock()
	w.f.last = text
	for _, p := range w.f.pending {
		p.met = p.met || p.ok(text)
	}
	w.f.mu.Unlock()
	return v
}

// Last is the last frame drawn, unstyled.
func (w Watched) Last() string {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	return w.f.last
}

// Wait waits until the program draws a frame holding want (or the last
// frame drawn holds it), failing t after d with the last frame.
func (w Watched) Wait(t testing.TB, want string, d time.Duration) {
	t.Helper()
	w.wait(t, fmt.Sprintf("%q", want), func(s string) bool { return strings.Contains(s, want) }, d)
}

// WaitMatch is Wait for a frame that re matches.
func (w Watched) WaitMatch(t testing.TB, re *regexp.Regexp, d time.Duration) {
	t.Helper()
	w.wait(t, "`"+re.String()+"`", re.MatchString, d)
}

func (w Watched) wait(t testing.TB, what string, ok func(string) bool, d time.Duration) {
	t.Helper()
	p := &waiter{ok: ok}
	w.f.mu.Lock()
	p.met = ok(w.f.last)
	w.f.pending = append(w.f.pending, p)
	w.f.mu.Unlock()
	defer func() {
		w.f.mu.Lock()
		w.f.pending = slices.DeleteFunc(w.f.pending, func(q *waiter) bool { return q == p })
		w.f.mu.Unlock()
	}()
	for end := time.Now().Add(d); ; time.Sleep(5 * time.Millisecond) {
		w.f.mu.Lock()
		met, last := p.met, w.f.last
		w.f.mu.Unlock()
		if met {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("no frame with %s after %v; the last:\n%s", what, d, last)
		}
	}
}

// Host runs one pane as a whole program (for teatest): a window size
// sizes the pane, ctrl+c quits, and every other message goes to the pane.
type Host struct{ Pane common.Pane }

// Init implements tea.Model.
func (h Host) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (h Host) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch m := msg.(type) {
	case tea.WindowSizeMsg:
		h.Pane.SetSize(m.Width, m.Height)
		return h, nil
	case tea.KeyPressMsg:
		if m.String() == "ctrl+c" {
			return h, tea.Quit
		}
	}
	return h, h.Pane.Update(msg)
}

// View implements tea.Model: the pane's view.
func (h Host) View() tea.View { return tea.NewView(h.Pane.View()) }
