// Package logpane is the Log pane: the board's console coloured by level,
// filterable with ESP-IDF monitor's `tag:level` syntax (`wifi:W *:I`), searchable, with
// follow/pause, and panics highlighted with their decoded backtraces. Long
// lines wrap (w cuts them instead), except a crash report's, which always
// wrap: a register row or a backtrace cut short loses what it is for. It
// reads devlink.Event messages and does no I/O.
package logpane

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/tui/common"
)

// Title is the pane's tab label.
const Title = "Log"

// DefaultKeep is how many lines the pane keeps.
const DefaultKeep = 5000

// MaxBytes bounds the text the pane keeps, whatever the line count: a
// board printing 64 KiB lines without a newline would otherwise fill
// 20,000 lines with 1.3 GB. Past it the oldest lines go, and the status
// line says how many.
const MaxBytes = 32 << 20

// entryOverhead is what one kept line costs beside its text (the entry
// and its row), counted against MaxBytes.
const entryOverhead = 128

// entry is one kept line, already sanitised (by the Source: safetext.Text).
type entry struct {
	seq     uint64 // the line's number since the pane started, for the current match
	level   devlink.Level
	tag     []byte
	kind    devlink.Kind
	text    safetext.Text
	decoded []safetext.Text
}

// row is one line or one of its decoded frames: one screen line, or
// several when it wraps.
type row struct {
	text  string
	kind  rowKind
	level devlink.Level
	match bool
	// keep: part of a crash report (the panic, register rows, the
	// backtrace, a stack dump, decoded frames), wrapped even when lines
	// are cut.
	keep bool
	// regs: a register row, wrapped between registers, never inside one.
	regs bool
	seq  uint64 // its entry's
}

// pos is a place in the rows: row's screen line sub (0 unless it wraps).
type pos struct{ row, sub int }

// before reports whether a comes before b.
func (a pos) before(b pos) bool { return a.row < b.row || (a.row == b.row && a.sub < b.sub) }

// rowKind says how a row is coloured.
type rowKind int

const (
	rowLine    rowKind = iota // a log line, coloured by its level
	rowCrash                  // a line of a crash report
	rowDecoded                // a decoded backtrace frame under a crash line
)

// inputMode is what the open input line edits.
type inputMode int

const (
	noInput      inputMode = iota
	filterInput            // the tag:L filter (f)
	searchInput            // the search text (/)
	consoleInput           // a line to send to the board (i)
)

type keys struct {
	common.Nav                 // scroll; G/end also resumes following
	Follow                     key.Binding
	Filter, Search, Next, Prev key.Binding
	// FilterExample is shown in the full help under f (never matched).
	FilterExample key.Binding
	// Console opens an input line whose lines go to the board; enabled
	// only when the pane has a live port (SetConsole).
	Console key.Binding
	// Wrap toggles wrapping long lines (the default) or cutting them.
	Wrap key.Binding
	// Apply takes the filter or search; Send, the same Enter, sends the
	// console's line (only one of them is enabled at a time).
	Apply, Send, Cancel key.Binding
}

func newKeys() keys {
	return keys{
		Nav:    common.NewNav("scroll"),
		Follow: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "follow/pause")),
		Filter: key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "filter (tag:level)")),
		FilterExample: key.NewBinding(key.WithKeys("f"),
			key.WithHelp(" e.g.", "wifi:W *:I")),
		Search:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		Wrap:    key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "wrap/cut long lines")),
		Next:    key.NewBinding(key.WithKeys("n"), key.WithHelp("n/N", "next/prev match")),
		Console: key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "type to the board"), key.WithDisabled()),
		Prev:    key.NewBinding(key.WithKeys("N")),
		Apply:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
		Send:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send to the board"), key.WithDisabled()),
		Cancel:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

func (k keys) ShortHelp() []key.Binding {
	return []key.Binding{k.Apply, k.Send, k.Cancel, k.Follow, k.Filter, k.Search, k.Next, k.Console, k.Wrap, k.Arrows}
}

func (k keys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Nav.Full(), {k.Follow, k.Filter, k.FilterExample, k.Search, k.Next, k.Console, k.Wrap, k.Apply, k.Send, k.Cancel}}
}

// Pane is the Log pane. Create it with New.
//
// It scrolls its own rows rather than through bubbles/viewport: it keeps
// up to 20,000 lines under a serial flood, and viewport v1's SetContent
// re-splits and re-measures all of them (12.7 ms a frame at 20,000 lines,
// measured), where a window costs only the rows shown. The keys are the
// shared common.Nav all the same.
type Pane struct {
	st            common.Styles
	paint         painters // st's row styles
	keys          keys
	input         textinput.Model
	typing        inputMode
	width, height int

	// send writes to the board (devlink.Link.Send) and eol is what Enter
	// adds; nil send: read-only, the default.
	send    func([]byte) error
	eol     []byte
	sendErr string
	// opened: the console was opened once; from then on the status query
	// is answered (before, the pane writes nothing to the board).
	opened bool
	// boardUp: the newest event's link is a live port that is up (i
	// answers "no board connected" otherwise).
	boardUp bool

	entries []entry
	keep    int
	dropped int
	// bytes is the kept lines' size (entrySize); capped counts the lines
	// dropped to stay within maxBytes (MaxBytes).
	bytes, maxBytes, capped int
	// tags are the tags seen, each copied once (intern).
	tags map[string][]byte

	filter    *devlink.Filter
	filterSrc string
	filterErr string
	query     string

	follow  bool
	top     pos // first shown line when not following
	rows    []row
	matches int // rows matching query, counted by build
	dirty   bool
	// wrap: long lines wrap (the default); off, they are cut, but a
	// crash report's rows still wrap (row.keep).
	wrap bool
	// cur is the seq of the current match (the one n/N moved to), 0 none.
	cur     uint64
	nextSeq uint64
	lineBuf []string // a row's screen lines, reused
}

// New returns an empty Log pane that keeps the last keep lines (0: DefaultKeep).
func New(st common.Styles, keep int) *Pane {
	if keep <= 0 {
		keep = DefaultKeep
	}
	in := common.NewInput(st)
	in.CharLimit = 200
	p := &Pane{st: st, paint: newPainters(st), keys: newKeys(), input: in, keep: keep, maxBytes: MaxBytes, follow: true, dirty: true, wrap: true}
	p.syncKeys()
	return p
}

func (p *Pane) syncKeys() {
	typing := p.typing != noInput
	p.keys.Nav.SetEnabled(!typing)
	for _, b := range []*key.Binding{&p.keys.Follow, &p.keys.Filter, &p.keys.FilterExample, &p.keys.Search, &p.keys.Wrap} {
		b.SetEnabled(!typing)
	}
	p.keys.Next.SetEnabled(!typing && p.query != "")
	p.keys.Prev.SetEnabled(!typing && p.query != "")
	p.keys.Apply.SetEnabled(typing && p.typing != consoleInput)
	p.keys.Send.SetEnabled(p.typing == consoleInput)
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

// noBoardConsole is i's answer while no board is connected.
const noBoardConsole = "no board connected: i types to the board once its port is up"

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
func (p *Pane) SetSize(w, h int) { p.width, p.height = w, h; p.input.SetWidth(max(10, w-20)) }

// KeyMap implements common.Pane.
func (p *Pane) KeyMap() help.KeyMap { return p.keys }

// Capturing implements common.Pane: true while the filter or search input is open.
func (p *Pane) Capturing() bool { return p.typing != noInput }

// Update implements common.Pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case devlink.Event:
		p.boardUp = m.State.Link.Up && !m.State.Link.Replay
		if p.boardUp && p.sendErr == noBoardConsole {
			p.sendErr = ""
		}
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
	case common.StylesMsg:
		p.st, p.paint = m.Styles, newPainters(m.Styles)
		p.input.SetStyles(common.InputStyles(m.Styles))
		return nil
	case tea.KeyPressMsg:
		return p.key(m)
	case tea.PasteMsg:
		if p.typing != noInput { // a paste is typing into the open input
			var cmd tea.Cmd
			p.input, cmd = p.input.Update(m)
			return cmd
		}
	}
	return nil
}

// Cursor implements common.CursorPane: the open input's cursor, on the
// status line (the pane's last).
func (p *Pane) Cursor() *tea.Cursor {
	if p.typing == noInput || p.height <= 0 {
		return nil
	}
	c := p.input.Cursor()
	if c != nil {
		c.Y = p.height - 1
	}
	return c
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
		p.nextSeq++
		e := entry{seq: p.nextSeq, level: l.Level, tag: p.intern(l.Tag), kind: l.Kind, text: text, decoded: l.Decoded}
		p.bytes += e.size()
		p.entries = append(p.entries, e)
	}
	p.dropped += ev.Dropped
	over := max(0, len(p.entries)-p.keep)
	for i := 0; i < over; i++ {
		p.bytes -= p.entries[i].size()
	}
	for over < len(p.entries)-1 && p.bytes > p.maxBytes {
		p.bytes -= p.entries[over].size()
		over++
		p.capped++
	}
	if over > 0 {
		clear(p.entries[:over]) // let the dropped lines' text be collected
		p.entries = p.entries[over:]
		if !p.follow {
			if p.top.row -= over; p.top.row < 0 {
				p.top = pos{}
			}
		}
	}
	p.dirty = true
}

// maxTags bounds the tags intern keeps.
const maxTags = 1024

// intern returns a copy of tag, shared by every line with the same tag: a
// line's tag aliases its raw bytes (up to 64 KiB), which would otherwise
// stay alive as long as the entry, and a board uses a few dozen tags.
func (p *Pane) intern(tag []byte) []byte {
	if tag == nil {
		return nil
	}
	if t, ok := p.tags[string(tag)]; ok {
		return t
	}
	t := bytes.Clone(tag)
	if p.tags == nil {
		p.tags = map[string][]byte{}
	}
	if len(p.tags) < maxTags {
		p.tags[string(t)] = t
	}
	return t
}

// size is what e counts against MaxBytes.
func (e *entry) size() int {
	n := entryOverhead + len(e.text) + len(e.tag)
	for _, d := range e.decoded {
		n += len(d) + entryOverhead
	}
	return n
}

func (p *Pane) key(m tea.KeyPressMsg) tea.Cmd {
	if p.typing == consoleInput {
		switch {
		case key.Matches(m, p.keys.Send):
			// The line goes out; the input stays open for the next one.
			line := append([]byte(p.input.Value()), p.eol...)
			p.input.SetValue("")
			return p.sendCmd(line)
		case key.Matches(m, p.keys.Cancel):
			p.typing = noInput
			p.input.Blur()
			p.syncKeys()
			return nil
		}
		var cmd tea.Cmd
		p.input, cmd = p.input.Update(m)
		return cmd
	}
	if p.typing != noInput {
		switch {
		case key.Matches(m, p.keys.Apply):
			p.apply(p.input.Value())
			p.typing = noInput
			p.input.Blur()
		case key.Matches(m, p.keys.Cancel):
			p.typing = noInput
			p.input.Blur()
		default:
			var cmd tea.Cmd
			p.input, cmd = p.input.Update(m)
			return cmd
		}
		p.syncKeys()
		return nil
	}
	// Scrolling pauses; reaching the bottom (G/end) follows again.
	if n, ok := p.keys.Step(m, max(1, p.height-2)); ok {
		p.scrollBy(n)
		return nil
	}
	switch {
	case key.Matches(m, p.keys.Follow):
		if p.follow {
			p.follow = false
			p.top = p.bottom(p.build())
		} else {
			p.follow = true
		}
	case key.Matches(m, p.keys.Wrap):
		p.wrap = !p.wrap
		p.top.sub = 0 // the same first row, its line counts changed
	case key.Matches(m, p.keys.Filter):
		return p.openInput(filterInput, "filter (tag:level, e.g. wifi:W *:I)> ", p.filterSrc)
	case key.Matches(m, p.keys.Console) && p.send != nil:
		if !p.boardUp {
			p.sendErr, p.dirty = noBoardConsole, true
			return nil
		}
		p.opened = true
		return p.openInput(consoleInput, "to board> ", "")
	case key.Matches(m, p.keys.Search):
		// A new search starts empty (as in less and vi); Enter on nothing
		// clears the current one.
		return p.openInput(searchInput, "/", "")
	case key.Matches(m, p.keys.Next):
		p.jump(1, false)
	case key.Matches(m, p.keys.Prev):
		p.jump(-1, false)
	}
	return nil
}

// openInput opens the input line for mode with prompt, holding value.
func (p *Pane) openInput(mode inputMode, prompt, value string) tea.Cmd {
	p.typing = mode
	p.input.Prompt = prompt
	p.input.SetValue(value)
	p.input.CursorEnd()
	p.syncKeys()
	return p.input.Focus()
}

func (p *Pane) apply(v string) {
	if p.typing == filterInput {
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
		// The rows mark the new query's matches only once rebuilt: the
		// jump to the first match reads them (it found none before, so a
		// search moved nowhere until n).
		p.query, p.cur, p.dirty = v, 0, true
		p.jump(1, true)
	}
	p.dirty = true
}

// body is the number of rows for log text (one row is the status line).
func (p *Pane) body() int { return max(0, p.height-1) }

// scrollBy moves the view n screen lines; reaching the bottom going down
// follows again.
func (p *Pane) scrollBy(n int) {
	rows := p.build()
	bottom := p.bottom(rows)
	if p.follow {
		p.follow = false
		p.top = bottom
	}
	p.top = p.advance(rows, p.clamp(rows, p.top), n)
	if n > 0 && !p.top.before(bottom) {
		p.follow = true
	}
}

// lineCount is how many screen lines row r takes.
func (p *Pane) lineCount(r *row) int {
	if len(r.text) <= p.width || (!p.wrap && !r.keep) {
		return 1 // bytes ≥ cells: a line that short fits
	}
	p.lineBuf = p.appendLines(p.lineBuf[:0], r)
	return len(p.lineBuf)
}

// appendLines appends r's screen lines to buf: the line itself when it
// fits, else wrapped (p.wrap, or a crash report's row) or cut with "…".
func (p *Pane) appendLines(buf []string, r *row) []string {
	w := max(p.width, 1)
	if len(r.text) <= w || common.Width(r.text) <= w {
		return append(buf, r.text)
	}
	if !p.wrap && !r.keep {
		return append(buf, common.Truncate(r.text, w, "…"))
	}
	return append(buf, wrapRow(r.text, r.regs, w)...)
}

// wrapIndent starts a wrapped row's continuation lines.
const wrapIndent = "    "

// regGroup is one register of a register row ("PC      : 0x400d8a31",
// "EXCVADDR: 0x00000008", RISC-V's "S0/FP   : 0x3fc9bd60").
var regGroup = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Z][A-Z0-9/]*\s*: 0x[0-9a-fA-F]+`) })

// wrapRow word-wraps text to width w, continuing under wrapIndent; a
// register row (regs) breaks only between registers. A window too narrow
// to wrap in cuts.
func wrapRow(text string, regs bool, w int) []string {
	if w <= 2*len(wrapIndent) {
		return []string{common.Truncate(text, w, "…")}
	}
	glue := func(s string) string {
		if !regs {
			return s
		}
		// A no-break space keeps a register's name and value together
		// (common.WrapText breaks at no other than a plain space).
		return regGroup().ReplaceAllStringFunc(s, func(g string) string { return strings.ReplaceAll(g, " ", "\u00a0") })
	}
	first, rest, _ := strings.Cut(common.WrapText(glue(text), w), "\n")
	out := []string{first}
	rest = strings.TrimLeft(strings.ReplaceAll(rest, "\n", " "), " ")
	if rest == "" {
		return out
	}
	for _, l := range strings.Split(common.WrapText(glue(rest), w-len(wrapIndent)), "\n") {
		out = append(out, wrapIndent+l)
	}
	if regs {
		// WrapText gives back a line that fits as it came, glue and all.
		for i, l := range out {
			out[i] = strings.ReplaceAll(l, "\u00a0", " ")
		}
	}
	return out
}

// bottom is the first line shown when following: the last body() screen
// lines end with the last row.
func (p *Pane) bottom(rows []row) pos {
	n := p.body()
	for i := len(rows) - 1; i >= 0; i-- {
		k := p.lineCount(&rows[i])
		if k >= n {
			return pos{i, k - n}
		}
		n -= k
	}
	return pos{}
}

// clamp is at within rows and not past the bottom.
func (p *Pane) clamp(rows []row, at pos) pos {
	bottom := p.bottom(rows)
	if at.row >= len(rows) || bottom.before(at) {
		return bottom
	}
	at.row = max(at.row, 0)
	at.sub = max(0, min(at.sub, p.lineCount(&rows[at.row])-1))
	return at
}

// advance moves at by n screen lines (back when n < 0), within the rows
// and not past the bottom.
func (p *Pane) advance(rows []row, at pos, n int) pos {
	for n > 0 && at.row < len(rows) {
		k := p.lineCount(&rows[at.row])
		if at.sub+n < k {
			at.sub += n
			break
		}
		n -= k - at.sub
		at = pos{at.row + 1, 0}
	}
	for n < 0 {
		if at.sub >= -n {
			at.sub += n
			break
		}
		if at.row == 0 {
			at.sub = 0
			break
		}
		n += at.sub + 1
		at.row--
		at.sub = p.lineCount(&rows[at.row]) - 1
	}
	return p.clamp(rows, at)
}

// jump moves to the next match in dir from the first line shown (the
// first shown itself too when here: a new search), and makes it current.
func (p *Pane) jump(dir int, here bool) {
	rows := p.build()
	if p.query == "" || len(rows) == 0 {
		return
	}
	start := p.clamp(rows, p.top).row
	if p.follow {
		start = p.bottom(rows).row
	}
	first := 1
	if here {
		first = 0
	}
	for i := first; i <= len(rows); i++ {
		j := ((start+dir*i)%len(rows) + len(rows)) % len(rows)
		if rows[j].match {
			p.follow = false
			p.cur = rows[j].seq
			p.top = p.clamp(rows, pos{j, 0})
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
	p.matches = 0
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
		kind := rowLine
		if e.kind.IsCrash() {
			kind = rowCrash
		}
		match := q != "" && strings.Contains(strings.ToLower(e.text.String()), q)
		if match {
			p.matches++
		}
		keep := e.kind.IsCrash() || e.kind == devlink.KindRegisters || e.kind == devlink.KindStackDump
		p.rows = append(p.rows, row{text: e.text.String(), kind: kind, level: e.level, match: match,
			keep: keep, regs: e.kind == devlink.KindRegisters, seq: e.seq})
		for _, d := range e.decoded {
			p.rows = append(p.rows, row{text: "  ↳ " + d.String(), kind: rowDecoded, keep: true, seq: e.seq})
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
	var at pos
	if p.follow {
		at = p.bottom(rows)
	} else {
		at = p.clamp(rows, p.top)
	}
	out := make([]string, 0, p.height)
	shown := 0 // rows shown, to the last one on screen
	for i := at.row; i < len(rows) && len(out) < n; i++ {
		r := &rows[i]
		p.lineBuf = p.appendLines(p.lineBuf[:0], r)
		lines := p.lineBuf
		if i == at.row {
			lines = lines[min(at.sub, len(lines)-1):]
		}
		for _, l := range lines {
			if len(out) == n {
				break
			}
			out = append(out, p.render(r, l))
		}
		shown = i + 1
	}
	for len(out) < n {
		out = append(out, "")
	}
	out = append(out, p.status(len(rows), shown))
	return strings.Join(out, "\n")
}

// render paints one screen line of r.
func (p *Pane) render(r *row, text string) string {
	var s *common.Painter
	switch {
	case r.match && r.seq == p.cur:
		s = &p.paint.current // bold reverse video, NO_COLOR too
	case r.match:
		s = &p.paint.mark // reverse video, NO_COLOR too
	case r.kind == rowCrash:
		s = &p.paint.crash
	case r.kind == rowDecoded:
		s = &p.paint.warn
	case r.level == devlink.LevelError:
		s = &p.paint.bad
	case r.level == devlink.LevelWarn:
		s = &p.paint.warn
	case r.level == devlink.LevelInfo:
		s = &p.paint.good
	case r.level == devlink.LevelDebug || r.level == devlink.LevelVerbose:
		s = &p.paint.muted
	default:
		return text
	}
	return s.Render(text)
}

// painters are the row styles of st, painted without Render's cost per row.
type painters struct{ current, mark, crash, warn, bad, good, muted common.Painter }

func newPainters(st common.Styles) painters {
	return painters{
		current: common.NewPainter(st.Selected),             // Styles.Mark: the match n/N is on
		mark:    common.NewPainter(st.Selected.Bold(false)), // every other match: reverse video alone
		crash:   common.NewPainter(st.Bad.Bold(true)),
		warn:    common.NewPainter(st.Warn),
		bad:     common.NewPainter(st.Bad),
		good:    common.NewPainter(st.Good),
		muted:   common.NewPainter(st.Muted),
	}
}

// status is the last line; shown is how many rows are shown down to the
// last on screen, of total.
func (p *Pane) status(total, shown int) string {
	if p.typing != noInput {
		return common.Truncate(p.input.View(), p.width, "…")
	}
	mode := "following"
	if !p.follow {
		mode = fmt.Sprintf("paused at %d/%d", shown, total)
	}
	parts := []string{mode, fmt.Sprintf("%d lines", len(p.entries))}
	if !p.wrap {
		parts = append(parts, "long lines cut (w wraps)")
	}
	if p.filterSrc != "" {
		parts = append(parts, "filter "+p.filterSrc)
	}
	if p.query != "" {
		switch p.matches {
		case 0:
			parts = append(parts, "search "+p.query+": no match")
		case 1:
			parts = append(parts, "search "+p.query+": 1 match (n/N)")
		default:
			at := ""
			if i := p.currentMatch(); i > 0 {
				at = fmt.Sprintf(", at %d", i)
			}
			parts = append(parts, fmt.Sprintf("search %s: %d matches%s (n/N)", p.query, p.matches, at))
		}
	}
	if p.dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d not shown (too fast)", p.dropped))
	}
	if p.capped > 0 {
		parts = append(parts, fmt.Sprintf("%d older dropped (%d MiB kept)", p.capped, p.maxBytes>>20))
	}
	s := p.paint.muted.Render(strings.Join(parts, " · "))
	if p.sendErr != "" {
		s = p.st.Bad.Render("console: "+p.sendErr) + " " + s
	}
	if p.filterErr != "" {
		s = p.st.Bad.Render(p.filterErr) + " " + s
	}
	return common.Truncate(s, p.width, "…")
}

// currentMatch is the current match's place among the matches, from the
// oldest (1 is the first); 0 when none is current.
func (p *Pane) currentMatch() int {
	if p.cur == 0 {
		return 0
	}
	n := 0
	for i := range p.rows {
		if r := &p.rows[i]; r.match {
			n++
			if r.seq == p.cur {
				return n
			}
		}
	}
	return 0
}

var _ common.CursorPane = (*Pane)(nil)
