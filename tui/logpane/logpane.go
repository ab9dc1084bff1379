// Package logpane is the Log pane: the board's console coloured by level,
// filterable with ESP-IDF monitor's `tag:L` syntax, searchable, with
// follow/pause, and panics highlighted with their decoded backtraces. It
// reads devlink.Event messages and does no I/O.
package logpane

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/tui/common"
)

// Title is the pane's tab label.
const Title = "Log"

// DefaultKeep is how many lines the pane keeps.
const DefaultKeep = 5000

// entry is one kept line, already sanitised.
type entry struct {
	level   devlink.Level
	tag     []byte
	kind    devlink.Kind
	text    string
	decoded []string
}

// row is one screen row: a line or one of its decoded frames.
type row struct {
	text  string
	style int // 0 plain, 1 by level, 2 crash, 3 decoded
	level devlink.Level
	match bool
}

type keys struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Follow                                  key.Binding
	Filter, Search, Next, Prev              key.Binding
	// Console opens an input line whose lines go to the board; enabled
	// only when the pane has a live port (SetConsole).
	Console       key.Binding
	Apply, Cancel key.Binding
}

func newKeys() keys {
	return keys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "oldest")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "newest, follow")),
		Follow:   key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "follow/pause")),
		Filter:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "filter tag:L")),
		Search:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		Next:     key.NewBinding(key.WithKeys("n"), key.WithHelp("n/N", "next/prev match")),
		Console:  key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "type to the board"), key.WithDisabled()),
		Prev:     key.NewBinding(key.WithKeys("N")),
		Apply:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
		Cancel:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

func (k keys) ShortHelp() []key.Binding {
	return []key.Binding{k.Apply, k.Cancel, k.Follow, k.Filter, k.Search, k.Next, k.Console, k.Up, k.Down}
}

func (k keys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Follow, k.Filter, k.Search, k.Next, k.Console, k.Apply, k.Cancel}}
}

// Pane is the Log pane. Create it with New.
type Pane struct {
	st            common.Styles
	keys          keys
	input         textinput.Model
	typing        int // 0 none, 'f' filter, '/' search, 'i' console
	width, height int

	// send writes to the board (devlink.Link.Send) and eol is what Enter
	// adds; nil send: read-only, the default.
	send    func([]byte) error
	eol     []byte
	sendErr string
	// opened: the console was opened once; from then on the status query
	// is answered (before, the pane writes nothing to the board).
	opened bool

	entries []entry
	keep    int
	dropped int

	filter    *devlink.Filter
	filterSrc string
	filterErr string
	query     string

	follow bool
	top    int // first shown row when not following
	rows   []row
	dirty  bool
}

// New returns an empty Log pane that keeps the last keep lines (0: DefaultKeep).
func New(st common.Styles, keep int) *Pane {
	if keep <= 0 {
		keep = DefaultKeep
	}
	in := textinput.New()
	in.Cursor.SetMode(cursor.CursorStatic)
	in.CharLimit = 200
	p := &Pane{st: st, keys: newKeys(), input: in, keep: keep, follow: true, dirty: true}
	p.syncKeys()
	return p
}

func (p *Pane) syncKeys() {
	typing := p.typing != 0
	for _, b := range []*key.Binding{&p.keys.Up, &p.keys.Down, &p.keys.PageUp, &p.keys.PageDown, &p.keys.Top,
		&p.keys.Bottom, &p.keys.Follow, &p.keys.Filter, &p.keys.Search} {
		b.SetEnabled(!typing)
	}
	p.keys.Next.SetEnabled(!typing && p.query != "")
	p.keys.Prev.SetEnabled(!typing && p.query != "")
	p.keys.Apply.SetEnabled(typing)
	p.keys.Cancel.SetEnabled(typing)
	p.keys.Console.SetEnabled(!typing && p.send != nil)
}

// SetConsole makes the pane an interactive console: `i` opens an input
// line, Enter sends it and eol to the board with send (without blocking
// the UI: from a command), and once the console was opened the board
// console's terminal status query is answered (devlink.StatusAnswer) so
// ESP-IDF's console works. Until `i` is pressed the pane writes nothing to
// the board; without SetConsole it is read-only.
func (p *Pane) SetConsole(send func([]byte) error, eol []byte) {
	p.send, p.eol = send, eol
	p.syncKeys()
}

// sentMsg reports a console write's outcome.
type sentMsg struct {
	p   *Pane
	err error
}

// sendCmd writes b to the board from a command.
func (p *Pane) sendCmd(b []byte) tea.Cmd {
	send := p.send
	return func() tea.Msg { return sentMsg{p, send(b)} }
}

// Title implements common.Pane.
func (p *Pane) Title() string { return Title }

// SetSize implements common.Pane.
func (p *Pane) SetSize(w, h int) { p.width, p.height = w, h; p.input.Width = max(10, w-20) }

// KeyMap implements common.Pane.
func (p *Pane) KeyMap() help.KeyMap { return p.keys }

// Capturing implements common.Pane: true while the filter or search input is open.
func (p *Pane) Capturing() bool { return p.typing != 0 }

// Update implements common.Pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case devlink.Event:
		p.add(m)
		if p.send != nil && p.opened {
			for i := range m.Lines {
				if m.Lines[i].Kind == devlink.KindStatusQuery {
					return p.sendCmd([]byte(devlink.StatusAnswer))
				}
			}
		}
		return nil
	case sentMsg:
		if m.p == p {
			p.sendErr = ""
			if m.err != nil {
				p.sendErr = m.err.Error()
			}
			p.dirty = true
		}
		return nil
	case tea.KeyMsg:
		return p.key(m)
	}
	return nil
}

func (p *Pane) add(ev devlink.Event) {
	if cap(p.entries)-len(p.entries) < len(ev.Lines) {
		// Room for keep more lines, so the oldest are dropped by reslicing
		// and the kept ones are copied once per keep lines, not per event.
		grown := make([]entry, len(p.entries), len(p.entries)+len(ev.Lines)+p.keep)
		copy(grown, p.entries)
		p.entries = grown
	}
	for i := range ev.Lines {
		l := &ev.Lines[i]
		if l.Kind == devlink.KindTelemetry || l.Kind == devlink.KindBinary || l.Kind == devlink.KindStatusQuery {
			continue // telemetry feeds the Device pane; binary frames and the console's status query are noise
		}
		text := l.Display // sanitised by the Source off the UI goroutine
		if text == "" {
			text = l.DisplayText()
		}
		p.entries = append(p.entries, entry{level: l.Level, tag: l.Tag, kind: l.Kind, text: text, decoded: l.Decoded})
	}
	p.dropped += ev.Dropped
	if over := len(p.entries) - p.keep; over > 0 {
		clear(p.entries[:over]) // let the dropped lines' text be collected
		p.entries = p.entries[over:]
		if !p.follow {
			p.top = max(0, p.top-over)
		}
	}
	p.dirty = true
}

func (p *Pane) key(m tea.KeyMsg) tea.Cmd {
	if p.typing == 'i' {
		switch {
		case key.Matches(m, p.keys.Apply):
			// The line goes out; the input stays open for the next one.
			line := append([]byte(p.input.Value()), p.eol...)
			p.input.SetValue("")
			return p.sendCmd(line)
		case key.Matches(m, p.keys.Cancel):
			p.typing = 0
			p.input.Blur()
			p.syncKeys()
			return nil
		}
		var cmd tea.Cmd
		p.input, cmd = p.input.Update(m)
		return cmd
	}
	if p.typing != 0 {
		switch {
		case key.Matches(m, p.keys.Apply):
			p.apply(p.input.Value())
			p.typing = 0
			p.input.Blur()
		case key.Matches(m, p.keys.Cancel):
			p.typing = 0
			p.input.Blur()
		default:
			var cmd tea.Cmd
			p.input, cmd = p.input.Update(m)
			return cmd
		}
		p.syncKeys()
		return nil
	}
	page := max(1, p.height-2)
	switch {
	case key.Matches(m, p.keys.Up):
		p.scrollBy(-1)
	case key.Matches(m, p.keys.Down):
		p.scrollBy(1)
	case key.Matches(m, p.keys.PageUp):
		p.scrollBy(-page)
	case key.Matches(m, p.keys.PageDown):
		p.scrollBy(page)
	case key.Matches(m, p.keys.Top):
		p.follow, p.top = false, 0
	case key.Matches(m, p.keys.Bottom):
		p.follow = true
	case key.Matches(m, p.keys.Follow):
		if p.follow {
			p.follow = false
			p.top = max(0, len(p.build())-p.body())
		} else {
			p.follow = true
		}
	case key.Matches(m, p.keys.Filter):
		p.typing = 'f'
		p.input.Prompt = "filter (tag:L …)> "
		p.input.SetValue(p.filterSrc)
		p.input.CursorEnd()
		p.syncKeys()
		return p.input.Focus()
	case key.Matches(m, p.keys.Console) && p.send != nil:
		p.typing, p.opened = 'i', true
		p.input.Prompt = "to board> "
		p.input.SetValue("")
		p.syncKeys()
		return p.input.Focus()
	case key.Matches(m, p.keys.Search):
		p.typing = '/'
		p.input.Prompt = "/"
		p.input.SetValue(p.query)
		p.input.CursorEnd()
		p.syncKeys()
		return p.input.Focus()
	case key.Matches(m, p.keys.Next):
		p.jump(1)
	case key.Matches(m, p.keys.Prev):
		p.jump(-1)
	}
	return nil
}

func (p *Pane) apply(v string) {
	if p.typing == 'f' {
		f, err := devlink.ParseFilter(v)
		if err != nil {
			p.filterErr = err.Error()
			return
		}
		p.filter, p.filterSrc, p.filterErr = f, strings.TrimSpace(v), ""
		if f.ShowsAll() {
			p.filter = nil
		}
	} else {
		p.query = v
		p.jump(1)
	}
	p.dirty = true
}

// body is the number of rows for log text (one row is the status line).
func (p *Pane) body() int { return max(0, p.height-1) }

func (p *Pane) scrollBy(n int) {
	rows := p.build()
	if p.follow {
		p.follow = false
		p.top = max(0, len(rows)-p.body())
	}
	p.top = max(0, min(p.top+n, len(rows)-p.body()))
	if p.top >= len(rows)-p.body() && n > 0 {
		p.follow = true
	}
}

func (p *Pane) jump(dir int) {
	rows := p.build()
	if p.query == "" || len(rows) == 0 {
		return
	}
	start := p.top
	if p.follow {
		start = max(0, len(rows)-p.body())
	}
	for i := 1; i <= len(rows); i++ {
		j := ((start+dir*i)%len(rows) + len(rows)) % len(rows)
		if rows[j].match {
			p.follow = false
			p.top = max(0, min(j, len(rows)-p.body()))
			return
		}
	}
}

// build returns the screen rows for the current lines, filter and search.
func (p *Pane) build() []row {
	if !p.dirty {
		return p.rows
	}
	p.rows = p.rows[:0]
	q := strings.ToLower(p.query)
	var l devlink.Line
	for i := range p.entries {
		e := &p.entries[i]
		if p.filter != nil {
			l.Level, l.Tag = e.level, e.tag
			if !p.filter.Match(&l) {
				continue
			}
		}
		style := 1
		if e.kind.IsCrash() {
			style = 2
		}
		match := q != "" && strings.Contains(strings.ToLower(e.text), q)
		p.rows = append(p.rows, row{text: e.text, style: style, level: e.level, match: match})
		for _, d := range e.decoded {
			p.rows = append(p.rows, row{text: "  ↳ " + d, style: 3})
		}
	}
	p.dirty = false
	return p.rows
}

// View implements common.Pane.
func (p *Pane) View() string {
	if p.width <= 0 || p.height <= 0 {
		return ""
	}
	rows := p.build()
	n := p.body()
	top := p.top
	if p.follow {
		top = max(0, len(rows)-n)
	}
	top = max(0, min(top, len(rows)-n))
	out := make([]string, 0, p.height)
	for i := top; i < len(rows) && len(out) < n; i++ {
		out = append(out, p.render(rows[i]))
	}
	for len(out) < n {
		out = append(out, "")
	}
	out = append(out, p.status(len(rows), top))
	return strings.Join(out, "\n")
}

func (p *Pane) render(r row) string {
	text := ansi.Truncate(r.text, p.width, "…")
	var s lipgloss.Style
	switch {
	case r.match:
		s = p.st.Selected
	case r.style == 2:
		s = p.st.Bad.Bold(true)
	case r.style == 3:
		s = p.st.Warn
	case r.level == devlink.LevelError:
		s = p.st.Bad
	case r.level == devlink.LevelWarn:
		s = p.st.Warn
	case r.level == devlink.LevelInfo:
		s = p.st.Good
	case r.level == devlink.LevelDebug || r.level == devlink.LevelVerbose:
		s = p.st.Muted
	default:
		return text
	}
	return s.Render(text)
}

func (p *Pane) status(total, top int) string {
	if p.typing != 0 {
		return ansi.Truncate(p.input.View(), p.width, "…")
	}
	mode := "following"
	if !p.follow {
		mode = fmt.Sprintf("paused at %d/%d", min(top+p.body(), total), total)
	}
	parts := []string{mode, fmt.Sprintf("%d lines", len(p.entries))}
	if p.filterSrc != "" {
		parts = append(parts, "filter "+p.filterSrc)
	}
	if p.query != "" {
		parts = append(parts, "search "+p.query)
	}
	if p.dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d not shown (too fast)", p.dropped))
	}
	s := p.st.Muted.Render(strings.Join(parts, " · "))
	if p.sendErr != "" {
		s = p.st.Bad.Render("console: "+p.sendErr) + " " + s
	}
	if p.filterErr != "" {
		s = p.st.Bad.Render(p.filterErr) + " " + s
	}
	return ansi.Truncate(s, p.width, "…")
}

var _ common.Pane = (*Pane)(nil)
