// Package tui is tailpath's Bubble Tea dashboard: a root model that routes
// messages to panes (Peers, Peer detail, and any extra panes such as Device,
// Log and Tuning) and draws tabs, a source-down banner and help around them.
//
// The root does no I/O. Sources run outside the program and the caller
// relays their events with tea.Program.Send: *join.Snapshot (tailscaled's
// snapshot linked to the board and the path history, built by a
// join.Joiner outside the program), probes.SourceStatus,
// probes.PingResult and whatever the extra panes own (devlink.Event,
// tuning.ReportMsg).
package tui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/peers"
	"github.com/tailpath/tailpath/tui/selfpane"
)

// DefaultFrameInterval is how long data changes wait, at most, before they
// are drawn. Keys and resizes are drawn at once, and so is a snapshot
// unless another was within the last interval (the first one above all:
// the dashboard's first frame with peers).
const DefaultFrameInterval = 150 * time.Millisecond

// Options configures the dashboard. The zero value works: no extra panes,
// ping keys disabled, wall-clock time, default styles.
type Options struct {
	// Title is shown left of the tabs, e.g. "tailpath demo (lab tailnet)".
	Title safetext.Text
	// Panes are extra panes, after Peers and Detail (keys 3-9 jump to
	// them); Self, which every dashboard has, is 6.
	Panes []common.Pane
	// Tabs are the tab numbers of every extra pane a dashboard of this
	// kind may have, by title, present or not (internal/dashboard's pane
	// table), so a number reaches the same pane in every mode. Peers (1),
	// Detail (2) and Self (6) are the root's own (OwnTabs). A pane Tabs
	// does not name takes the next free number after the panes before
	// it. The tab bar shows the panes in their numbers' order.
	Tabs map[string]int
	// Ping starts an active probe without blocking: it returns a command
	// doing the I/O, whose results come back as probes.PingResult messages
	// (relayed with Program.Send, several per run). Nil disables ping keys.
	Ping func(peer probes.Peer, kind probes.PingKind) tea.Cmd
	// RefreshPeerSide asks the control API for the peers' own facts now
	// (r in Peers and Detail); nil, without an API key, disables r.
	RefreshPeerSide func() tea.Cmd
	// Probe starts a bounded DISCO probe of the given relayed peers (P in
	// Peers): a command doing the I/O, whose progress comes back as
	// probes.ProbeProgress messages. nil disables P.
	Probe func(peers []probes.Peer) tea.Cmd
	// Now is the clock for countdowns and "ago" texts; nil means time.Now.
	// Tests inject a fixed clock so output is deterministic.
	Now func() time.Time
	// Styles are the colour roles; nil means the terminal's: the dark
	// palette (common.DefaultStyles) until the terminal answers the
	// background-colour query Init sends, then common.StylesFor its answer,
	// given to every pane (common.StylesMsg).
	Styles *common.Styles
	// FrameInterval coalesces data messages into one redraw; 0 means
	// DefaultFrameInterval.
	FrameInterval time.Duration
	// Notice is a line shown under the tabs for the whole run, e.g.
	// "snapshot taken 2026-11-30 12:00:00Z · read-only" when the dashboard
	// replays a saved snapshot; "" shows none.
	Notice safetext.Text
	// Save returns a command that saves a snapshot of the evidence (the I/O
	// happens in the command) and answers with a SavedMsg; nil disables
	// the S key.
	Save func() tea.Cmd
	// Netcheck (n in Self) and PingDERP (d in Self) measure this node's
	// DERP latencies now and its home DERP region over HTTPS: a command
	// doing the I/O, answering with selfpane.NetcheckMsg or
	// selfpane.DERPPingMsg. nil (a replayed snapshot) disables the key.
	Netcheck, PingDERP func() tea.Cmd
	// Version is tailpath's own, shown in Self ("" leaves it out).
	Version string
	// NoSave, with Save nil, is what S says instead of saving (a replayed
	// snapshot: "the file is already the snapshot"); "" lets S through to
	// the pane.
	NoSave safetext.Text
}

// Model is the root tea.Model. Create it with New; the zero value is not
// usable. It routes, in this order: tea.WindowSizeMsg to every pane's
// SetSize; keys to the focused pane when it is capturing (ctrl+c always
// quits), else to the global bindings, else to the focused pane; every other
// message to every pane.
//
// View is O(1): the frame is rebuilt in Update, at once after keys, resizes
// and source status changes, and at most once per FrameInterval after data
// messages, so a flood of device lines cannot starve keystrokes.
//
// Model is a small handle: copies share one state, so passing it through
// Bubble Tea's Update costs no copying per message.
type Model struct {
	*model
}

// model is the root's state behind the Model handle.
type model struct {
	title string // Options.Title: Text its source cleaned, written as it is
	now   func() time.Time
	st    common.Styles
	// autoStyles: Options.Styles was nil, so the styles follow the
	// terminal's background (tea.BackgroundColorMsg).
	autoStyles bool
	stylesGen  int // counts style changes, for the cached lines
	panes      []common.Pane
	nums       []int // each pane's tab number (tabNumbers); 0 for none
	list       *peers.List
	detail     *peers.Detail
	focus      int
	keys       globalKeys
	help       help.Model

	width, height int
	contentW      int // width given to panes
	contentH      int // height given to panes; -1 before the first layout

	down      bool                // the tailscaled source reported Up: false
	source    probes.SourceStatus // the latest; Err is Text the source cleaned
	lastData  time.Time           // Time of the last snapshot
	bannerGen int

	notice   string // Options.Notice: Text its source cleaned
	save     func() tea.Cmd
	noSave   string // Options.NoSave: Text its source cleaned
	flash    string // the last save's outcome, shown for flashFor
	flashGen int

	// replayFrom is when a recorded board capture began replaying (the
	// demo's board), replayEnd when it ended: the clock right of the tabs
	// ("board replay 0:42"), the one the demo's timeline is told in.
	replayFrom, replayEnd time.Time
	clockTicking          bool

	frame        string
	bodyTop      int         // the frame's first line of the focused pane (under the tabs and banners)
	cursor       *tea.Cursor // the focused pane's input cursor in frame; nil for none
	dirty        bool
	framePending bool
	frameEvery   time.Duration
	// snapDrawn is when a snapshot was last drawn at once, on its
	// arrival: at most one per frameEvery is.
	snapDrawn time.Time

	// The tab and help lines as last drawn, and what they were drawn
	// from: they change with the focus, the width, the keys and the
	// styles, rarely with a frame, and Lip Gloss v2 makes drawing them
	// the larger part of a Log or Detail frame (docs/perf.md).
	tabsLine, helpLine string
	tabsFor, helpFor   string
}

// New returns the dashboard with the Peers and Detail panes first, then
// opts.Panes.
func New(opts Options) Model {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	st := common.DefaultStyles()
	if opts.Styles != nil {
		st = *opts.Styles
	}
	list := peers.NewList(st)
	list.SetNow(now)
	detail := peers.NewDetail(st, now, opts.Ping)
	if opts.RefreshPeerSide != nil {
		list.SetRefresh(opts.RefreshPeerSide)
		detail.SetRefresh(opts.RefreshPeerSide)
	}
	if opts.Probe != nil {
		list.SetProbe(opts.Probe)
	}
	self := selfpane.New(st, selfpane.Options{Netcheck: opts.Netcheck, PingDERP: opts.PingDERP, Version: opts.Version, Now: now})
	panes := append(append([]common.Pane{list, detail}, opts.Panes...), self)
	nums := tabNumbers(panes, opts.Tabs)
	byNumber(panes, nums)
	h := help.New()
	h.Styles = helpStyles(st)
	every := opts.FrameInterval
	if every <= 0 {
		every = DefaultFrameInterval
	}
	keys := newGlobalKeys()
	keys.Save.SetEnabled(opts.Save != nil)
	keys.Jump = jumpBinding(nums)
	return Model{&model{
		notice:     string(opts.Notice),
		save:       opts.Save,
		noSave:     string(opts.NoSave),
		title:      string(opts.Title),
		now:        now,
		st:         st,
		autoStyles: opts.Styles == nil,
		panes:      panes,
		nums:       nums,
		list:       list,
		detail:     detail,
		keys:       keys,
		help:       h,
		contentH:   -1,
		frameEvery: every,
	}}
}

// helpStyles are the help line's styles in st's roles.
func helpStyles(st common.Styles) help.Styles {
	return help.Styles{
		ShortKey: st.Title, FullKey: st.Title,
		ShortDesc: st.Muted, FullDesc: st.Muted,
		ShortSeparator: st.Muted, FullSeparator: st.Muted, Ellipsis: st.Muted,
	}
}

// Init implements tea.Model. Nothing starts here: sources run outside.
// With the terminal's styles (Options.Styles nil) it asks the terminal
// for its background colour; the answer comes back as a message.
func (m Model) Init() tea.Cmd {
	if m.autoStyles {
		return tea.RequestBackgroundColor
	}
	return nil
}

// View implements tea.Model: the cached frame (exactly the window's height
// in lines, none wider than the window) in the alternate screen, without
// mouse reporting (the terminal keeps selecting text), and the terminal's
// cursor where the focused pane's open input has it (none otherwise).
func (m Model) View() tea.View {
	v := tea.NewView(m.frame)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeNone
	if m.cursor != nil {
		c := *m.cursor // the renderer may keep it; the model's stays ours
		v.Cursor = &c
	}
	return v
}

// Body is the focused pane's part of the frame as drawn: the contentH
// lines under the tab line and banners, above the help. A pane's golden
// holds this, so a change of the tabs or the help rewrites only the
// golden of the whole screen.
func (m Model) Body() string {
	lines := strings.Split(m.frame, "\n")
	top := min(m.bodyTop, len(lines))
	return strings.Join(lines[top:min(top+max(m.contentH, 0), len(lines))], "\n")
}

// Focused is the Title of the focused pane.
func (m Model) Focused() string { return m.panes[m.focus].Title() }

// Update implements tea.Model.
//
// Long on purpose: a switch with one short case per message type.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.render()
		return m, nil
	case tea.KeyPressMsg:
		cmd := m.routeKey(msg)
		m.render()
		return m, cmd
	case tea.PasteMsg:
		// A paste is typing: it goes where keys would, to an open input
		// only (a focused pane that is not capturing has nowhere to put it).
		var cmd tea.Cmd
		if focused := m.panes[m.focus]; focused.Capturing() {
			cmd = focused.Update(msg)
		}
		m.render()
		return m, cmd
	case tea.BackgroundColorMsg:
		if !m.autoStyles {
			return m, nil
		}
		m.st = common.StylesFor(msg.IsDark())
		m.stylesGen++
		m.help.Styles = helpStyles(m.st)
		cmd := m.broadcast(common.StylesMsg{Styles: m.st})
		m.render()
		return m, cmd
	case frameMsg:
		m.framePending = false
		if m.dirty {
			m.render()
		}
		return m, nil
	case common.ShowPaneMsg:
		var cmd tea.Cmd
		for i, p := range m.panes {
			if p.Title() == msg.Title {
				cmd = m.setFocus(i)
				break
			}
		}
		m.render()
		return m, cmd
	case SavedMsg:
		m.flashGen++
		m.flash = "snapshot saved to " + string(msg.Path)
		if msg.Err != "" || msg.Path == "" {
			// A saved snapshot always has a path; an error whose text
			// cleaned to nothing still failed.
			m.flash = "saving the snapshot failed: " + cmp.Or(string(msg.Err), "no reason given")
		}
		m.render()
		gen := m.flashGen
		return m, tea.Tick(flashFor, func(time.Time) tea.Msg { return flashDoneMsg{gen: gen} })
	case flashDoneMsg:
		if msg.gen == m.flashGen {
			m.flash = ""
			m.render()
		}
		return m, nil
	case bannerTickMsg:
		if msg.gen != m.bannerGen || !m.down {
			return m, nil
		}
		m.render()
		return m, m.bannerTick()
	case clockTickMsg:
		m.clockTicking = false
		if !m.replayFrom.IsZero() && m.replayEnd.IsZero() {
			m.render()
			return m, m.clockTick()
		}
		return m, nil
	case devlink.Event:
		if l := msg.State.Link; l.Replay {
			if l.Up && m.replayFrom.IsZero() {
				m.replayFrom = cmp.Or(l.At, m.now())
			}
			if !l.Up && !m.replayFrom.IsZero() && m.replayEnd.IsZero() {
				m.replayEnd = cmp.Or(l.At, m.now())
			}
		}
		cmd := m.broadcast(msg)
		m.dirty = true
		if !m.framePending {
			m.framePending = true
			cmd = tea.Batch(cmd, tea.Tick(m.frameEvery, func(time.Time) tea.Msg { return frameMsg{} }))
		}
		return m, tea.Batch(cmd, m.clockTick())
	case probes.SourceStatus:
		cmd := m.broadcast(msg)
		m.bannerGen++
		m.down, m.source = !msg.Up, msg
		var tick tea.Cmd
		if m.down {
			tick = m.bannerTick()
		}
		m.render()
		return m, tea.Batch(cmd, tick)
	case *join.Snapshot:
		if msg != nil && msg.Snapshot != nil {
			m.lastData = msg.Time
		}
		if at := time.Now(); at.Sub(m.snapDrawn) >= m.frameEvery {
			// No snapshot drawn at once within the last interval: this
			// one is (the first is the first frame with peers), whatever
			// other data is waiting for its frame; the wall clock, not
			// Options.Now, which tests fix.
			m.snapDrawn = at
			cmd := m.broadcast(msg)
			m.render()
			return m, cmd
		}
	}
	cmd := m.broadcast(msg)
	m.dirty = true
	if !m.framePending {
		m.framePending = true
		cmd = tea.Batch(cmd, tea.Tick(m.frameEvery, func(time.Time) tea.Msg { return frameMsg{} }))
	}
	return m, cmd
}

// broadcast gives msg to every pane and batches their commands.
func (m *model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, p := range m.panes {
		if c := p.Update(msg); c != nil {
			cmds = append(cmds, c)
		}
	}
	switch len(cmds) {
	case 0:
		return nil
	case 1:
		return cmds[0]
	}
	return tea.Batch(cmds...)
}

// clockTick redraws the replay clock in a second, while it runs; one at
// a time.
func (m *model) clockTick() tea.Cmd {
	if m.clockTicking || m.replayFrom.IsZero() || !m.replayEnd.IsZero() {
		return nil
	}
	m.clockTicking = true
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return clockTickMsg{} })
}

// replayClock is the clock right of the tabs while a recorded board
// replays: "board replay 0:42", "board replay ended at 3:12"; "" without
// a replay.
func (m *model) replayClock() string {
	if m.replayFrom.IsZero() {
		return ""
	}
	if !m.replayEnd.IsZero() {
		return "board replay ended at " + minSec(m.replayEnd.Sub(m.replayFrom))
	}
	return "board replay " + minSec(m.now().Sub(m.replayFrom))
}

// minSec words d as m:ss.
func minSec(d time.Duration) string {
	d = max(d, 0).Truncate(time.Second)
	return fmt.Sprintf("%d:%02d", int(d/time.Minute), int(d%time.Minute/time.Second))
}

func (m *model) bannerTick() tea.Cmd {
	gen := m.bannerGen
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return bannerTickMsg{gen: gen} })
}

// routeKey applies the key routing order.
func (m *model) routeKey(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return tea.Quit
	}
	focused := m.panes[m.focus]
	if focused.Capturing() {
		return focused.Update(k)
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return tea.Quit
	case key.Matches(k, m.keys.Save):
		m.flash = "saving a snapshot…"
		return m.save()
	case m.save == nil && m.noSave != "" && k.String() == "S":
		m.flashGen++
		m.flash = m.noSave
		gen := m.flashGen
		return tea.Tick(flashFor, func(time.Time) tea.Msg { return flashDoneMsg{gen: gen} })
	case key.Matches(k, m.keys.Help):
		m.help.ShowAll = !m.help.ShowAll
		return nil
	case m.help.ShowAll && k.String() == "esc":
		// esc closes the help sheet first, as it closes any overlay; the
		// pane's own esc (Detail's back) waits for the next press.
		m.help.ShowAll = false
		return nil
	case key.Matches(k, m.keys.Next):
		return m.setFocus((m.focus + 1) % len(m.panes))
	case key.Matches(k, m.keys.Prev):
		return m.setFocus((m.focus + len(m.panes) - 1) % len(m.panes))
	case key.Matches(k, m.keys.Jump):
		if i := slices.Index(m.nums, int(k.String()[0]-'0')); i >= 0 {
			return m.setFocus(i)
		}
		return nil
	}
	return focused.Update(k)
}

// setFocus focuses pane i and tells every pane with common.FocusMsg.
func (m *model) setFocus(i int) tea.Cmd {
	if i == m.focus || i < 0 || i >= len(m.panes) {
		return nil
	}
	old := m.panes[m.focus].Title()
	m.focus = i
	return tea.Batch(
		m.broadcast(common.FocusMsg{Pane: old, Focus: false}),
		m.broadcast(common.FocusMsg{Pane: m.panes[i].Title(), Focus: true}),
	)
}

// cachedHelp is helpView(k), drawn again only when what it shows changed:
// the bindings (their keys, words and whether they are enabled), the width,
// full or short, and the styles.
func (m *model) cachedHelp(k helpKeys) string {
	var b strings.Builder
	fmt.Fprint(&b, m.width, m.help.ShowAll, k.capturing, m.stylesGen)
	add := func(bs []key.Binding) {
		for _, kb := range bs {
			fmt.Fprintf(&b, "\x00%v\x01%s\x01%s", kb.Enabled(), kb.Help().Key, kb.Help().Desc)
		}
		b.WriteByte('\x02')
	}
	if m.help.ShowAll {
		for _, col := range k.FullHelp() {
			add(col)
		}
	} else {
		add(k.ShortHelp())
	}
	if f := b.String(); f != m.helpFor {
		m.helpLine, m.helpFor = m.helpView(k), f
	}
	return m.helpLine
}

// helpView is the help line(s). The short line keeps the global keys
// ("? help • q quit") whole at the right and fits the pane's keys into
// what is left, so a narrow window cuts a pane key, never the way to quit
// or to see the rest.
func (m *model) helpView(k helpKeys) string {
	if m.help.ShowAll {
		return m.help.View(k)
	}
	var global []key.Binding
	if k.capturing {
		global = []key.Binding{k.global.ForceQuit}
	} else {
		global = k.global.ShortHelp()
	}
	gv := m.help.ShortHelpView(global)
	if k.pane == nil {
		return gv
	}
	sep := m.help.Styles.ShortSeparator.Inline(true).Render(m.help.ShortSeparator)
	pv := shortHelpFit(m.help, k.pane.ShortHelp(), m.width-common.Width(gv)-common.Width(sep))
	if pv == "" {
		return gv
	}
	return pv + sep + gv
}

// shortHelpFit renders bindings as help.ShortHelpView does, in at most
// width cells: the enabled bindings that fit, whole, then " …" when some
// were left out and it fits too. (bubbles v1.0.0's ShortHelpView adds an
// item that does not fit when its ellipsis does not fit either, which
// pushed "? help • q quit" off an 80-column line.)
func shortHelpFit(h help.Model, bindings []key.Binding, width int) string {
	if width <= 0 {
		return ""
	}
	sep := h.Styles.ShortSeparator.Inline(true).Render(h.ShortSeparator)
	tail := " " + h.Styles.Ellipsis.Inline(true).Render(h.Ellipsis)
	var b strings.Builder
	used := 0
	for _, kb := range bindings {
		if !kb.Enabled() {
			continue
		}
		item := h.Styles.ShortKey.Inline(true).Render(kb.Help().Key) + " " +
			h.Styles.ShortDesc.Inline(true).Render(kb.Help().Desc)
		if used > 0 {
			item = sep + item
		}
		w := common.Width(item)
		if used+w > width {
			if used > 0 && used+common.Width(tail) <= width {
				b.WriteString(tail)
			}
			break
		}
		b.WriteString(item)
		used += w
	}
	return b.String()
}

// render rebuilds the cached frame: the tab line, the banner while the
// source is down, the focused pane in the remaining height, then help.
func (m *model) render() {
	m.dirty = false
	m.cursor = nil
	if m.width <= 0 || m.height <= 0 {
		m.frame = ""
		return
	}
	focused := m.panes[m.focus]
	helpLines := strings.Split(m.cachedHelp(helpKeys{pane: focused.KeyMap(), global: m.keys, capturing: focused.Capturing()}), "\n")
	var banner []string
	for _, l := range []string{m.notice, m.flash} {
		if l != "" {
			banner = append(banner, m.st.Muted.Render(fit(l, m.width)))
		}
	}
	if m.down {
		// Wrap rather than cut: the banner's end is the advice (the socket,
		// the command to start tailscaled). At most three lines.
		down := strings.Split(common.WrapText(m.bannerText(), m.width), "\n")
		if len(down) > 3 {
			down = down[:3]
		}
		for _, l := range down {
			banner = append(banner, m.st.Banner.Render(l))
		}
	}
	top := 1 + len(banner)
	// Keep at least one content line: drop help lines on tiny windows.
	if extra := top + len(helpLines) + 1 - m.height; extra > 0 {
		helpLines = helpLines[:max(len(helpLines)-extra, 0)]
	}
	ch := max(m.height-top-len(helpLines), 0)
	if ch != m.contentH || m.width != m.contentW {
		m.contentW, m.contentH = m.width, ch
		for _, p := range m.panes {
			p.SetSize(m.width, ch)
		}
	}
	lines := make([]string, 0, m.height)
	clock := m.replayClock()
	if f := fmt.Sprint(m.focus, m.width, m.stylesGen, clock); f != m.tabsFor {
		m.tabsLine, m.tabsFor = fit(m.tabs(m.width, clock), m.width), f
	}
	lines = append(lines, m.tabsLine)
	m.bodyTop = len(lines) + len(banner)
	for _, l := range banner {
		lines = append(lines, fit(l, m.width))
	}
	body := m.panes[m.focus].View()
	for i := 0; i < ch; i++ {
		var l string
		l, body, _ = strings.Cut(body, "\n")
		lines = append(lines, fit(l, m.width))
	}
	for _, l := range helpLines {
		lines = append(lines, fit(l, m.width))
	}
	if len(lines) > m.height {
		lines = lines[:m.height]
	}
	m.frame = strings.Join(lines, "\n")
	if cp, ok := focused.(common.CursorPane); ok {
		if c := cp.Cursor(); c != nil && c.Y >= 0 && c.Y < ch && c.X >= 0 {
			// Into the frame: below the tab line and banners, and on the
			// last cell when the input was cut at the window's edge.
			c.Y += top
			c.X = min(c.X, m.width-1)
			m.cursor = c
		}
	}
}

// OwnTabs are the tab numbers of the root's own panes, which every
// dashboard has: Peers 1, Detail 2, Self 6 (the numbers 3-5 are
// internal/dashboard's pane table's, Options.Tabs).
func OwnTabs() map[string]int {
	return map[string]int{peers.ListTitle: 1, peers.DetailTitle: 2, selfpane.Title: 6}
}

// tabNumbers numbers panes by OwnTabs and slots (Options.Tabs), the same
// whichever of them a dashboard has (a live dashboard without a board has
// no Device or Log: its Tuning is still 5), so a key, and what the README
// says of it, reaches the same pane in every mode; a pane named in
// neither takes the next free number after the panes before it, and 0
// (no number, no key) past 9.
func tabNumbers(panes []common.Pane, slots map[string]int) []int {
	own := OwnTabs()
	slot := func(title string) (int, bool) {
		if n, ok := own[title]; ok {
			return n, true
		}
		n, ok := slots[title]
		return n, ok
	}
	nums := make([]int, len(panes))
	used := map[int]bool{}
	for i, p := range panes {
		if n, ok := slot(p.Title()); ok {
			nums[i], used[n] = n, true
		}
	}
	next := 1
	for i, p := range panes {
		if n, ok := slot(p.Title()); ok {
			next = max(next, n+1)
			continue
		}
		for used[next] {
			next++
		}
		if next <= 9 {
			nums[i], used[next] = next, true
		}
		next++
	}
	return nums
}

// byNumber orders panes (and nums with them) by tab number, those
// without one last, each kept in its place among equals: the tab bar
// reads 1, 2, 3, … whichever order the panes were given in.
func byNumber(panes []common.Pane, nums []int) {
	idx := make([]int, len(panes))
	for i := range idx {
		idx[i] = i
	}
	key := func(i int) int {
		if nums[i] == 0 {
			return math.MaxInt
		}
		return nums[i]
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(key(a), key(b)) })
	p, n := slices.Clone(panes), slices.Clone(nums)
	for i, j := range idx {
		panes[i], nums[i] = p[j], n[j]
	}
}

// jumpBinding is the number keys of the tabs there are, its help naming
// them as they are ("1-5", "1-2,5").
func jumpBinding(nums []int) key.Binding {
	in := slices.DeleteFunc(slices.Clone(nums), func(n int) bool { return n == 0 })
	slices.Sort(in)
	var keys, spans []string
	for i := 0; i < len(in); {
		j := i
		for j+1 < len(in) && in[j+1] == in[j]+1 {
			j++
		}
		span := strconv.Itoa(in[i])
		if j > i {
			span += "-" + strconv.Itoa(in[j])
		}
		spans = append(spans, span)
		i = j + 1
	}
	for _, n := range in {
		keys = append(keys, strconv.Itoa(n))
	}
	if len(keys) == 0 {
		return key.NewBinding(key.WithDisabled())
	}
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(strings.Join(spans, ","), "go to pane"))
}

// fit truncates a line to w cells (ANSI-aware, by display width).
func fit(s string, w int) string {
	if common.Width(s) <= w {
		return s
	}
	return common.Truncate(s, w, "…")
}

// tabs is the title and one tab per pane, the focused one in brackets so it
// reads without colour, then the replay clock when there is one. When they
// don't fit in width cells, the title goes first, then the tabs' padding
// (while a replay clock is shown), then the clock, so every pane's number
// stays visible.
func (m *model) tabs(width int, clock string) string {
	var full, compact, tight strings.Builder
	on, off := m.st.TabOn.UnsetPadding(), m.st.TabOff.UnsetPadding()
	for i, p := range m.panes {
		label := fmt.Sprintf("%d %s", m.nums[i], p.Title())
		if m.nums[i] == 0 {
			label = p.Title()
		}
		if i == m.focus {
			full.WriteString(m.st.TabOn.Render("[" + label + "]"))
			compact.WriteString("[" + label + "]")
			tight.WriteString(on.Render("[" + label + "]"))
		} else {
			full.WriteString(m.st.TabOff.Render(" " + label + " "))
			compact.WriteString(" " + label)
			tight.WriteString(" " + off.Render(label))
		}
	}
	tabs := full.String()
	if clock != "" {
		// The clock before the tabs' padding: a replay's time is what the
		// demo's story is told in.
		if withClock := tabs + " " + m.st.Muted.Render(clock); common.Width(withClock) <= width {
			tabs = withClock
		} else if withClock := tight.String() + " " + m.st.Muted.Render(clock); common.Width(withClock) <= width {
			tabs = withClock
		}
	}
	if m.title != "" {
		title := m.st.Title.Render(m.title) + " "
		if common.Width(title)+common.Width(tabs) <= width {
			return title + tabs
		}
	}
	if common.Width(tabs) <= width {
		return tabs
	}
	return m.st.TabOn.Render(compact.String())
}

// bannerText words the source-down banner: the retry countdown first (so
// it survives truncation), the source's own actionable error, and the time
// of the data still shown.
func (m *model) bannerText() string {
	s := "tailscaled unavailable"
	if !m.source.NextRetry.IsZero() {
		if d := m.source.NextRetry.Sub(m.now()); d > 0 {
			s += fmt.Sprintf(" (retrying in %ds)", int(math.Ceil(d.Seconds())))
		} else {
			s += " (retrying now)"
		}
	}
	msg := m.source.Err
	if msg == "" {
		msg = "no error given"
	}
	s += ": " + string(msg)
	if !m.lastData.IsZero() {
		s += " · showing data from " + m.lastData.Format("15:04:05")
	}
	return s
}
