// Package peers holds the Peers pane (one table row per peer, sortable and
// filterable) and the Peer detail pane (verdict, evidence, fix, endpoints,
// path-change timeline, pings). Both implement common.Pane and render the
// joined snapshot (*join.Snapshot: tailscaled's peers, the board linked to
// its peer, path changes) that the dashboard's wiring builds outside the
// UI; neither does I/O or links anything itself.
package peers

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/table"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
)

// Pane titles, used as tab labels and in common.ShowPaneMsg.
const (
	ListTitle   = "Peers"
	DetailTitle = "Detail"
)

// SortMode is the Peers table order.
type SortMode int

// Sort orders, in the order the sort key cycles through them.
const (
	// SortPath puts relayed peers first (DERP, peer relay, direct, idle,
	// offline), then by name. The default.
	SortPath SortMode = iota
	// SortName orders by name, then ID.
	SortName
	// SortRate orders by tx+rx rate, highest first.
	SortRate
	// SortReason orders by reason id, then name.
	SortReason
	numSortModes
)

// String names the order for the status line.
func (s SortMode) String() string {
	switch s {
	case SortPath:
		return "path (relayed first)"
	case SortName:
		return "name"
	case SortRate:
		return "rate (busiest first)"
	case SortReason:
		return "reason"
	}
	return "sort(" + strconv.Itoa(int(s)) + ")"
}

// Short names the order in one word, for a narrow status line.
func (s SortMode) Short() string {
	long := s.String()
	if w, _, ok := strings.Cut(long, " "); ok {
		return w
	}
	return long
}

// peerRow caches one peer's text for the current snapshot. Only the sort
// name is computed for every peer; cells (for the visible rows) and the
// filter text (while a filter is set) are filled on first use.
type peerRow struct {
	name  string    // lower-case cleaned name, for sorting
	cells table.Row // nil until formatted
	hay   string    // lower-case name, OS, path, reason; "" until needed
}

// List is the Peers pane. Create it with NewList; the zero value is not usable.
//
// Work per message is O(1): a snapshot is only stored. Rows are rebuilt
// (filter, sort, format: O(n log n) in peers) at most once per rendered
// frame, and only when the snapshot, filter, sort or size changed; the table
// renders only the visible window of rows.
type List struct {
	st   common.Styles
	keys listKeys
	// refreshAPI re-reads the control API (nil: no API key, r disabled).
	refreshAPI func() tea.Cmd
	// probe starts the bounded probe of the given peers (nil: P disabled);
	// probeNote says why P did nothing (no relayed peer, a probe running),
	// until the next key.
	probeNote string
	// probing is its latest progress, nil before the first P.
	probe   func([]probes.Peer) tea.Cmd
	probing *probes.ProbeProgress
	// probedAt is when the last probe finished (now), so its outcome on
	// the status line says how old it is.
	probedAt time.Time
	now      func() time.Time
	input    textinput.Model

	width, height int

	snap     *join.Snapshot // the latest joined snapshot
	rows     []peerRow      // per snap.Peers index; nil until formatted
	order    []int          // indexes into snap.Peers of the shown rows, in order
	sortBy   SortMode
	filter   string        // applied filter, lower-case
	typing   bool          // the filter input is open
	warnings bool          // the snapshot's warnings are shown in place of the table (w)
	cursor   int           // index into order
	offset   int           // first shown index into order
	selID    safetext.Text // Peer.ID under the cursor; kept across snapshots
	dirty    bool          // order must be rebuilt
	snapNew  bool          // rows must be re-formatted
	winDirty bool          // table window must be drawn again

	cols []table.Column // layout for the current width (widths include cellGap)
	tbl  string         // the table as last drawn (drawTable)
}

// NewList returns an empty Peers pane drawing with st.
func NewList(st common.Styles) *List {
	in := common.NewInput(st)
	in.Prompt = "/"
	in.Placeholder = "name, OS, path or reason"
	in.CharLimit = 128

	l := &List{st: st, keys: newListKeys(), input: in, now: time.Now}
	l.syncKeys()
	return l
}

// SetNow sets the clock for the probe outcome's age (nil: time.Now).
func (l *List) SetNow(now func() time.Time) {
	if now != nil {
		l.now = now
	}
}

// setStyles draws with st from the next frame on.
func (l *List) setStyles(st common.Styles) {
	l.st = st
	l.input.SetStyles(common.InputStyles(st))
	l.winDirty = true
}

// Cursor implements common.CursorPane: the filter input's cursor, on the
// status line, while it is open.
func (l *List) Cursor() *tea.Cursor {
	if !l.typing {
		return nil
	}
	return l.input.Cursor()
}

// Title implements common.Pane.
func (l *List) Title() string { return ListTitle }

// Capturing implements common.Pane: true while the filter input is open.
func (l *List) Capturing() bool { return l.typing }

// KeyMap implements common.Pane.
func (l *List) KeyMap() help.KeyMap { return l.keys }

// SortMode reports the current order.
func (l *List) SortMode() SortMode { return l.sortBy }

// Filter reports the applied filter text (lower-case).
func (l *List) Filter() string { return l.filter }

// SetSize implements common.Pane.
func (l *List) SetSize(width, height int) {
	if width == l.width && height == l.height {
		return
	}
	l.width, l.height = max(width, 0), max(height, 0)
	l.cols = layoutColumns(l.width)
	l.input.SetWidth(max(l.width-3, 1))
	l.clampOffset()
	l.winDirty = true
}

// tableRows is how many data rows fit: the height less the status line and
// the table header.
func (l *List) tableRows() int { return l.height - 2 }

// Update implements common.Pane. It stores snapshots and handles keys; a
// selection change returns a command yielding common.PeerSelectedMsg, enter
// also returns common.ShowPaneMsg for the detail pane.
func (l *List) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case *join.Snapshot:
		if msg != nil && msg.Snapshot != nil {
			return l.setSnapshot(msg)
		}
	case common.StylesMsg:
		l.setStyles(msg.Styles)
	case probes.ProbeProgress:
		l.probing = &msg
		if msg.Finished {
			l.probedAt = l.now()
			if l.probeNote == probeRunningNote {
				l.probeNote = "" // no longer true
			}
		}
		l.syncKeys()
	case tea.KeyPressMsg:
		return l.handleKey(msg)
	case tea.PasteMsg:
		if l.typing {
			return l.handleKey(msg)
		}
	}
	return nil
}

// BoardID is the Peer.ID of the row linked to the attached board ("" when
// no peer matches the board's tailnet IP or host name).
func (l *List) BoardID() safetext.Text { return l.snap.BoardID() }

// setSnapshot stores s. Until a peer is selected (the first snapshot, or
// every one before the first peer appears) it also selects the first row
// and publishes it.
func (l *List) setSnapshot(s *join.Snapshot) tea.Cmd {
	l.snap = s
	l.snapNew, l.dirty = true, true
	if l.probeNote == noRelayedNote && l.anyRelayed() {
		l.probeNote = "" // a peer is relayed again: the note no longer holds
	}
	if l.selID != "" {
		return nil
	}
	l.ensureOrder()
	if p := l.Selected(); p != nil {
		return selectCmd(*p)
	}
	return nil
}

func selectCmd(p probes.Peer) tea.Cmd {
	return func() tea.Msg { return common.PeerSelectedMsg{Peer: p} }
}

// handleKey handles a key, or a paste (tea.PasteMsg) while the filter is
// open: typing.
func (l *List) handleKey(m tea.Msg) tea.Cmd {
	l.ensureOrder()
	before := l.selID
	var cmds []tea.Cmd
	msg, isKey := m.(tea.KeyPressMsg)
	if l.typing {
		switch {
		case !isKey:
			var cmd tea.Cmd
			l.input, cmd = l.input.Update(m)
			cmds = append(cmds, cmd)
			l.setFilter(l.input.Value())
		case key.Matches(msg, l.keys.Cancel):
			l.closeInput()
			l.input.SetValue("")
			l.setFilter("")
		case key.Matches(msg, l.keys.Apply):
			l.closeInput()
		default:
			var cmd tea.Cmd
			l.input, cmd = l.input.Update(msg)
			cmds = append(cmds, cmd)
			l.setFilter(l.input.Value())
		}
	} else if isKey && l.warnings {
		// The warnings are shown: w or esc goes back to the table.
		if key.Matches(msg, l.keys.Warnings) || key.Matches(msg, l.keys.CloseWarnings) {
			l.warnings, l.winDirty = false, true
		}
	} else if isKey {
		if l.probeNote != "" {
			l.probeNote, l.dirty = "", true
		}
		n, nav := l.keys.Step(msg, max(l.tableRows(), 1))
		switch {
		case nav:
			l.move(n)
		case key.Matches(msg, l.keys.Sort):
			l.sortBy = (l.sortBy + 1) % numSortModes
			l.dirty = true
		case key.Matches(msg, l.keys.Filter):
			l.typing = true
			l.input.SetValue(l.filter)
			l.input.CursorEnd()
			cmds = append(cmds, l.input.Focus())
		case key.Matches(msg, l.keys.ClearFilter):
			l.input.SetValue("")
			l.setFilter("")
		case key.Matches(msg, l.keys.Refresh):
			cmds = append(cmds, l.refresh())
		case key.Matches(msg, l.keys.Warnings):
			l.warnings = true
		case key.Matches(msg, l.keys.Probe):
			if peers := l.relayed(); len(peers) > 0 && l.probe != nil {
				l.probing = &probes.ProbeProgress{Total: len(peers)}
				cmds = append(cmds, l.probe(peers))
			}
		case msg.String() == "P" && l.probe != nil && !l.keys.Probe.Enabled():
			// P is off: say why rather than nothing.
			l.probeNote, l.dirty = noRelayedNote, true
			if l.probeRunning() {
				l.probeNote = probeRunningNote
			}
		case key.Matches(msg, l.keys.Open):
			if p := l.Selected(); p != nil {
				peer := *p
				l.syncKeys()
				return tea.Batch(selectCmd(peer), func() tea.Msg { return common.ShowPaneMsg{Title: DetailTitle} })
			}
		}
	}
	l.ensureOrder()
	l.syncKeys()
	if l.selID != before && l.selID != "" {
		if p := l.Selected(); p != nil {
			cmds = append(cmds, selectCmd(*p))
		}
	}
	return tea.Batch(cmds...)
}

func (l *List) closeInput() {
	l.typing = false
	l.input.Blur()
}

func (l *List) setFilter(v string) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v != l.filter {
		l.filter = v
		l.dirty = true
	}
}

// move moves the cursor by n rows, clamped.
func (l *List) move(n int) {
	if len(l.order) == 0 {
		return
	}
	l.cursor = min(max(l.cursor+n, 0), len(l.order)-1)
	l.selID = l.snap.Peers[l.order[l.cursor]].ID
	l.clampOffset()
	l.winDirty = true
}

// clampOffset scrolls so the cursor row is visible.
func (l *List) clampOffset() {
	h := max(l.tableRows(), 1)
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if l.cursor >= l.offset+h {
		l.offset = l.cursor - h + 1
	}
	l.offset = max(min(l.offset, len(l.order)-h), 0)
}

// syncKeys enables the bindings that apply in the current state.
func (l *List) syncKeys() {
	k := &l.keys
	if l.warnings && (l.snap == nil || len(l.snap.Warnings) == 0) {
		l.warnings = false // they went
	}
	browsing := !l.typing && !l.warnings
	k.Warnings.SetEnabled(!l.typing && l.snap != nil && len(l.snap.Warnings) > 0)
	k.CloseWarnings.SetEnabled(l.warnings)
	k.Nav.SetEnabled(browsing)
	k.Sort.SetEnabled(browsing)
	k.Filter.SetEnabled(browsing)
	k.Open.SetEnabled(browsing && len(l.order) > 0)
	k.ClearFilter.SetEnabled(browsing && l.filter != "")
	k.Apply.SetEnabled(l.typing)
	k.Cancel.SetEnabled(l.typing)
	k.Refresh.SetEnabled(browsing && l.refreshAPI != nil)
	k.Probe.SetEnabled(browsing && l.probe != nil && !l.probeRunning() && l.anyRelayed())
}

// SetProbe gives P its action: probe the given relayed peers (a bounded
// DISCO run each), answering with probes.ProbeProgress messages. Without
// it P stays disabled.
func (l *List) SetProbe(f func([]probes.Peer) tea.Cmd) {
	l.probe = f
	l.syncKeys()
}

// What P says when it does nothing, until the next key or until it no
// longer holds.
const (
	noRelayedNote    = "P: no relayed peer to probe"
	probeRunningNote = "P: a probe is already running"
)

// probeRunning reports whether a probe started and has not finished.
func (l *List) probeRunning() bool { return l.probing != nil && !l.probing.Finished }

// anyRelayed reports whether a peer is relayed (relayed() is not empty).
func (l *List) anyRelayed() bool {
	if l.snap == nil {
		return false
	}
	for i := range l.snap.Peers {
		if p := &l.snap.Peers[i]; (p.Path.Kind == probes.PathDERP || p.Path.Kind == probes.PathPeerRelay) && !p.Expired {
			return true
		}
	}
	return false
}

// relayed are the peers a probe pings: relayed through DERP or a peer
// relay, key not expired.
func (l *List) relayed() []probes.Peer {
	if l.snap == nil {
		return nil
	}
	var out []probes.Peer
	for _, p := range l.snap.Peers {
		if (p.Path.Kind == probes.PathDERP || p.Path.Kind == probes.PathPeerRelay) && !p.Expired {
			out = append(out, p)
		}
	}
	return out
}

// SetRefresh gives r its action: re-read the peers' own facts from the
// control API now. Without it (no API key) r stays disabled.
func (l *List) SetRefresh(f func() tea.Cmd) {
	l.refreshAPI = f
	l.syncKeys()
}

// refresh runs SetRefresh's action, if any.
func (l *List) refresh() tea.Cmd {
	if l.refreshAPI == nil {
		return nil
	}
	return l.refreshAPI()
}

// Selected returns the peer under the cursor, or nil when no row is shown.
// The pointer is into the current snapshot: don't keep it.
func (l *List) Selected() *probes.Peer {
	l.ensureOrder()
	if l.cursor < 0 || l.cursor >= len(l.order) {
		return nil
	}
	return &l.snap.Peers[l.order[l.cursor]]
}

// Shown returns the IDs of the rows shown, in order (after filter and sort).
func (l *List) Shown() []safetext.Text {
	l.ensureOrder()
	ids := make([]safetext.Text, len(l.order))
	for i, idx := range l.order {
		ids[i] = l.snap.Peers[idx].ID
	}
	return ids
}

// ensureOrder re-formats rows after a new snapshot and re-filters and
// re-sorts when dirty, keeping the cursor on the same peer ID.
func (l *List) ensureOrder() {
	if !l.dirty || l.snap == nil {
		return
	}
	l.dirty = false
	peers := l.snap.Peers
	if l.snapNew {
		l.snapNew = false
		if cap(l.rows) >= len(peers) {
			l.rows = l.rows[:len(peers)]
		} else {
			l.rows = make([]peerRow, len(peers))
		}
		for i := range peers {
			l.rows[i] = peerRow{name: strings.ToLower(cleanName(&peers[i]))}
		}
	}
	l.order = l.order[:0]
	for i := range peers {
		if l.filter == "" || strings.Contains(l.haystack(i), l.filter) {
			l.order = append(l.order, i)
		}
	}
	sort.SliceStable(l.order, func(a, b int) bool {
		return l.less(l.order[a], l.order[b])
	})
	l.cursor = min(l.cursor, max(len(l.order)-1, 0))
	if l.selID != "" {
		for i, idx := range l.order {
			if peers[idx].ID == l.selID {
				l.cursor = i
				break
			}
		}
	}
	if len(l.order) > 0 {
		l.selID = peers[l.order[l.cursor]].ID
	}
	l.clampOffset()
	l.winDirty = true
	l.syncKeys()
}

// less orders snapshot peers i and j by the current sort mode, then by
// cleaned name, then ID.
func (l *List) less(i, j int) bool {
	a, b := &l.snap.Peers[i], &l.snap.Peers[j]
	switch l.sortBy {
	case SortPath:
		if ra, rb := pathRank(a.Path.Kind), pathRank(b.Path.Kind); ra != rb {
			return ra < rb
		}
	case SortRate:
		if ra, rb := a.TxRate+a.RxRate, b.TxRate+b.RxRate; ra != rb {
			return ra > rb
		}
	case SortReason:
		if a.Verdict.Reason != b.Verdict.Reason {
			return a.Verdict.Reason < b.Verdict.Reason
		}
	}
	if na, nb := l.rows[i].name, l.rows[j].name; na != nb {
		return na < nb
	}
	return a.ID < b.ID
}

// cleanName is the peer's name for display: cleaned again here (cheap for
// plain ASCII) so a source that forgot cannot reach the terminal; the ID
// when the name is empty.
func cleanName(p *probes.Peer) string {
	if name := string(p.Name); name != "" {
		return name
	}
	return string(p.ID)
}

// cells returns snapshot peer i's table cells, formatting them once.
func (l *List) cells(i int) table.Row {
	r := &l.rows[i]
	if r.cells == nil {
		p := &l.snap.Peers[i]
		osName := string(p.OS)
		if osName == "" {
			osName = "-"
		}
		r.cells = table.Row{
			colName:    cleanName(p),
			colOS:      osName,
			colPath:    string(join.PathText(&p.Path)),
			colLatency: units.Latency(p.Latency),
			colDERP:    derpCode(p, l.snap.Regions),
			colTx:      units.Rate(p.TxRate),
			colRx:      units.Rate(p.RxRate),
			colReason:  reasonCell(&p.Verdict),
		}
	}
	return r.cells
}

// boardIndex is the snapshot index of the board's peer, or -1.
func (l *List) boardIndex() int {
	id := l.snap.BoardID()
	if id == "" {
		return -1
	}
	for i := range l.snap.Peers {
		if l.snap.Peers[i].ID == id {
			return i
		}
	}
	return -1
}

// isBoard reports whether snapshot peer i is the attached board.
func (l *List) isBoard(i int) bool {
	id := l.snap.BoardID()
	return id != "" && l.snap.Peers[i].ID == id
}

// haystack returns snapshot peer i's lower-case filter text, once.
func (l *List) haystack(i int) string {
	r := &l.rows[i]
	if r.hay == "" {
		c := l.cells(i)
		r.hay = strings.ToLower(c[colName] + "\x00" + c[colOS] + "\x00" + c[colPath] + "\x00" +
			c[colReason] + "\x00" + string(l.snap.Peers[i].Verdict.Reason))
		if l.isBoard(i) {
			r.hay += "\x00" + BoardMark
		}
	}
	return r.hay
}

// View implements common.Pane: a status line, then the table; at most the
// height given to SetSize.
func (l *List) View() string {
	if l.width <= 0 || l.height <= 0 {
		return ""
	}
	return firstLines(l.view(), l.height)
}

// firstLines cuts s after n lines.
func firstLines(s string, n int) string {
	i := 0
	for ; n > 0; n-- {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s
		}
		i += j + 1
	}
	return s[:max(i-1, 0)]
}

func (l *List) view() string {
	l.ensureOrder()
	status := l.statusLine()
	if l.warnings {
		return status + "\n" + l.warningsView()
	}
	if l.snap == nil {
		return status + "\n" + l.st.Muted.Render(common.Truncate("waiting for the first snapshot from tailscaled…", l.width, "…"))
	}
	if len(l.order) == 0 {
		msg := "no peers"
		if l.filter != "" {
			msg = fmt.Sprintf("no peer matches %q (esc clears the filter)", l.filter)
		}
		return status + "\n" + l.st.Muted.Render(common.Truncate(msg, l.width, "…"))
	}
	if l.winDirty {
		l.winDirty = false
		h := max(l.tableRows(), 1)
		end := min(l.offset+h, len(l.order))
		win := make([]table.Row, 0, end-l.offset)
		for i, idx := range l.order[l.offset:end] {
			row := append(table.Row(nil), l.cells(idx)...)
			// The cursor is marked in text too: with no colour (NO_COLOR,
			// TERM=dumb) the selected style renders as nothing.
			// Cursor and board marker in their own cells: the name is
			// never cut for them, and the cursor reads without colour too
			// (NO_COLOR, TERM=dumb), where the selected style is nothing.
			cursor, board := " ", " "
			if l.offset+i == l.cursor {
				cursor = ">"
			}
			if l.isBoard(idx) {
				board = BoardMarker
			}
			row[colName] = cursor + board + " " + row[colName]
			// A narrow reason column shows the stable reason id
			// ("no-endpoints") rather than a cut-off summary.
			if w := l.cols[colReason].Width - cellGap; w > 0 && common.Width(row[colReason]) > w {
				if v := &l.snap.Peers[idx].Verdict; v.Reason != "" {
					row[colReason] = string(v.Reason)
					if v.PeerSide {
						row[colReason] = PeerSideMarker + " " + row[colReason]
					}
				}
			}
			win = append(win, l.fitCells(row))
		}
		var pending []bool // rows whose reason is still coming, drawn dim
		for i, idx := range l.order[l.offset:end] {
			if l.snap.Peers[idx].Verdict.Pending {
				if pending == nil {
					pending = make([]bool, len(win))
				}
				pending[i] = true
			}
		}
		l.tbl = l.drawTable(win, l.cursor-l.offset, pending)
	}
	if l.tableRows() <= 0 {
		return status
	}
	return status + "\n" + l.tbl
}

// warningsView is the snapshot's warnings (the evidence gathering's
// non-fatal problems), in place of the table: a title, then each warning
// wrapped to the width, cut at the height.
func (l *List) warningsView() string {
	ws := l.snap.Warnings
	lines := []string{l.st.Title.Render(fmt.Sprintf("Warnings (%d) gathering the evidence", len(ws))) + l.st.Muted.Render(" · w or esc: back to the peers")}
	for _, w := range ws {
		for i, line := range strings.Split(common.WrapText(w.String(), max(l.width-2, 8)), "\n") {
			prefix := "  "
			if i == 0 {
				prefix = "- "
			}
			lines = append(lines, l.st.Warn.Render(prefix+line))
		}
	}
	if n := l.height - 1; len(lines) > n {
		lines = append(lines[:max(n-1, 0)], l.st.Muted.Render(fmt.Sprintf("… %d more lines (a taller window shows them)", len(lines)-n+1)))
	}
	for i, line := range lines {
		lines[i] = common.Truncate(line, l.width, "…")
	}
	return strings.Join(lines, "\n")
}

// drawTable lays out the header and the window's rows as bubbles/table
// does, to the same text: each cell padded to its column's width, the
// header in the Title style, the cursor's row in the Selected style, every
// row line then padded to the pane's width, and blank lines down to the
// table's height. It draws each line once, as a whole: bubbles/table v2
// renders every cell through Lip Gloss, whose width measuring (x/ansi
// v0.11.9 splits every character into grapheme clusters) made a
// 1,000-peer frame 2.5 times slower than under v1 (docs/perf.md).
func (l *List) drawTable(win []table.Row, cursor int, pending []bool) string {
	var b strings.Builder
	// dim: the reason cell in the muted style (a reason still coming).
	cells := func(texts []string, dim bool) string {
		var line strings.Builder
		for i, c := range texts {
			w := l.cols[i].Width
			if w <= 0 {
				continue
			}
			c = common.Truncate(c, w, "…")
			pad := strings.Repeat(" ", max(w-common.Width(c), 0))
			if dim && i == colReason {
				c = l.st.Muted.Render(c)
			}
			line.WriteString(c)
			line.WriteString(pad)
		}
		return line.String()
	}
	titles := make([]string, len(l.cols))
	for i, c := range l.cols {
		titles[i] = c.Title
	}
	b.WriteString(l.st.Title.Render(cells(titles, false)))
	rows := max(l.tableRows(), 0)
	for i := 0; i < rows; i++ {
		b.WriteByte('\n')
		line, w := "", 0
		if i < len(win) {
			// The selected row is drawn whole in its style: a reason
			// inside it keeps that style, dim or not.
			line = cells(win[i], i != cursor && i < len(pending) && pending[i])
			w = common.Width(line)
			if i == cursor {
				line = l.st.Selected.Render(line)
			}
		}
		b.WriteString(line)
		b.WriteString(strings.Repeat(" ", max(l.width-w, 0)))
	}
	return b.String()
}

// fitCells truncates cells in place by display width to their column's
// text width (the column less cellGap).
func (l *List) fitCells(cells table.Row) table.Row {
	for i, c := range cells {
		cells[i] = common.Truncate(c, max(l.cols[i].Width-cellGap, 0), "…")
	}
	return cells
}

// statusLine is the first line: counts with meaning in words, the sort
// order and the filter (or the open filter input).
func (l *List) statusLine() string {
	if l.typing {
		return l.input.View()
	}
	// What matters most is never dropped; the rest goes, whole, sort
	// order first, when the line is too narrow.
	var parts []common.Part
	if l.snap == nil {
		parts = append(parts, common.Part{Text: "no data yet"})
	} else {
		var relayed, offline int
		for i := range l.snap.Peers {
			switch l.snap.Peers[i].Path.Kind {
			case probes.PathDERP:
				relayed++
			case probes.PathOffline:
				offline++
			}
		}
		n := len(l.snap.Peers)
		shown := fmt.Sprintf("%d peers", n)
		if len(l.order) != n {
			// The counts that follow are of all peers, not the filtered ones.
			shown = fmt.Sprintf("%d peers (%d shown)", n, len(l.order))
		}
		parts = append(parts, common.Part{Text: shown})
		// The self's own verdict (probes.Judge): trouble at this
		// end touches every row, so it comes first and is narrowed to its
		// id, and dropped, only after the counts that follow.
		if v := l.snap.Self.Verdict; v != nil && !(v.Reason == probes.ReasonSelfLoggedOut && l.snap.BackendState != "Running" && l.snap.BackendState != "") {
			parts = append(parts, common.Part{Text: l.st.Bad.Render("self: " + string(v.Summary)), Short: l.st.Bad.Render("self: " + string(v.Reason)), Drop: 1})
		}
		if relayed > 0 {
			parts = append(parts, common.Part{Text: l.st.Warn.Render(fmt.Sprintf("%d relayed via DERP", relayed)), Drop: 1})
		}
		if offline > 0 {
			parts = append(parts, common.Part{Text: l.st.Bad.Render(fmt.Sprintf("%d offline", offline)), Drop: 1})
		}
		if peerSide(l.snap) {
			parts = append(parts, common.Part{Text: PeerSideMarker + " peer's own facts", Drop: 2})
		}
		if st := l.snap.ControlAPI; st != nil && st.State == "error" {
			parts = append(parts, common.Part{Text: l.st.Warn.Render("control API failing"), Drop: 1})
		}
		if i := l.boardIndex(); i >= 0 {
			parts = append(parts, common.Part{Text: BoardMarker + " board: " + cleanName(&l.snap.Peers[i]), Drop: 2})
		}
		if st := l.snap.BackendState; st != "" && st != "Running" {
			parts = append(parts, common.Part{Text: l.st.Bad.Render("tailscaled is " + string(st))})
		}
		if w := len(l.snap.Warnings); w > 0 && !l.warnings {
			// Counted, and how to read them.
			parts = append(parts, common.Part{Text: l.st.Warn.Render(units.Count(w, "warning", "warnings") + " (w)"), Drop: 1})
		}
	}
	if l.probeNote != "" {
		parts = append(parts, common.Part{Text: l.st.Muted.Render(l.probeNote)})
	}
	if pp := l.probing; pp != nil {
		text := fmt.Sprintf("probing %d/%d relayed…", pp.Done, pp.Total)
		if pp.Finished {
			text = fmt.Sprintf("probed %d in %v: %d direct, %s", pp.Total, pp.Elapsed.Round(100*time.Millisecond), pp.Direct, units.Ago(l.now(), l.probedAt))
		}
		parts = append(parts, common.Part{Text: l.st.Title.Render(text), Drop: 1})
	}
	parts = append(parts, common.Part{
		Text:  l.st.Muted.Render("sort: " + l.sortBy.String()),
		Short: l.st.Muted.Render("sort: " + l.sortBy.Short()),
		Drop:  3,
	})
	if l.filter != "" {
		parts = append(parts, common.Part{Text: "filter: " + l.filter})
	}
	return common.FitParts(parts, " · ", l.width)
}

var _ common.CursorPane = (*List)(nil)
