package tuning

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/internal/columns"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui/common"
)

type keyMap struct {
	common.Nav                  // scroll (shared with every pane)
	Apply, Revert, BBR, Yes, No key.Binding
	// NoRevert explains, in full help only, why r does nothing: it is
	// enabled exactly when Revert is disabled for want of a state file. It
	// is never matched against keys.
	NoRevert key.Binding
	dialog   bool
}

func (k keyMap) ShortHelp() []key.Binding {
	if k.dialog {
		return []key.Binding{k.Yes, k.No}
	}
	return []key.Binding{k.Apply, k.Revert, k.BBR, k.Arrows}
}

func (k keyMap) FullHelp() [][]key.Binding {
	if k.dialog {
		return [][]key.Binding{k.ShortHelp()}
	}
	return [][]key.Binding{k.Nav.Full(), {k.Apply, k.Revert, k.BBR, k.NoRevert}}
}

// dialog is an open confirm prompt.
type dialog struct {
	revert      bool
	changes     []sysctl.Change // what will be written (apply), or restored (revert)
	ccAvailable func(string) bool
}

var _ common.Pane = (*Pane)(nil)

// Pane is the Tuning pane. Create it with New.
type Pane struct {
	o      Options
	st     common.Styles
	keys   keyMap
	now    func() time.Time
	isRoot func() bool

	width, height int
	vp            viewport.Model // the report, scrolled; a dialog is shown whole

	data    *ReportMsg
	bbr     bool        // the --bbr target, toggled with b
	adv     tune.Advice // the recommendation for bbr, with its text
	confirm *dialog
	busy    bool
	outcome safetext.Text
	bad     bool

	dirty bool // the report must be rendered again
}

// New returns the Tuning pane. It shows "reading…" until the first
// ReportMsg (from Source, or from the command returned by Refresh).
func New(o Options) *Pane {
	st := common.DefaultStyles()
	if o.Styles != nil {
		st = *o.Styles
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Pane{o: o, st: st, now: now, isRoot: mayChange(o), bbr: o.BBR, dirty: true, vp: common.NewViewport(), keys: keyMap{
		Apply:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "apply")),
		Revert:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "revert")),
		NoRevert: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "revert: nothing recorded yet")),
		BBR:      key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "toggle bbr")),
		Nav:      common.NewNav("scroll"),
		Yes:      key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes, write it")),
		No:       key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "cancel")),
	}}
}

// Refresh returns a command that gathers once (for the first frame, before
// Source's first report).
func (p *Pane) Refresh() tea.Cmd {
	if p.o.Snapshot != "" {
		return nil
	}
	return refreshCmd(p.o)
}

// Title implements common.Pane.
func (p *Pane) Title() string { return Title }

// SetSize implements common.Pane.
func (p *Pane) SetSize(w, h int) { p.width, p.height, p.dirty = w, h, true }

// KeyMap implements common.Pane.
func (p *Pane) KeyMap() help.KeyMap {
	k := p.keys
	k.dialog = p.confirm != nil
	changes := len(p.adv.Rec.Changes) > 0
	k.Apply.SetEnabled(changes && !p.busy)
	k.Revert.SetEnabled(p.data != nil && p.data.State != nil && !p.busy)
	switch {
	case p.data == nil || p.data.Err != nil || p.data.State != nil:
		k.NoRevert.SetEnabled(false)
	case p.data.StateErr != nil:
		k.NoRevert.SetHelp("r", "revert: state file unreadable")
	default:
		k.NoRevert.SetHelp("r", "revert: nothing recorded yet")
	}
	k.BBR.SetEnabled(p.data != nil && p.data.Err == nil && !p.bbrInUse() && !p.bbrImpossible())
	if p.o.Snapshot != "" {
		// A saved report: nothing here to write (a and r say so).
		k.Apply.SetEnabled(false)
		k.Revert.SetEnabled(false)
		k.NoRevert.SetEnabled(false)
	}
	return k
}

// Capturing implements common.Pane: true while the confirm dialog is open.
func (p *Pane) Capturing() bool { return p.confirm != nil }

// Update implements common.Pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case ReportMsg:
		if p.data != nil && m.Err == nil && m.Report.Time.Before(p.data.Report.Time) {
			return nil // an older gathering arriving late
		}
		p.data = &m
		p.recompute()
		p.dirty = true
	case AppliedMsg:
		p.busy = false
		p.outcome, p.bad = tune.Outcome(m).Text(), m.Err != nil
		p.dirty = true
		// The outcome line is near the top: show it, wherever the table
		// had been scrolled to before a or r.
		p.vp.GotoTop()
		return refreshCmd(p.o)
	case common.StylesMsg:
		p.st, p.dirty = m.Styles, true
	case tea.KeyPressMsg:
		return p.key(m)
	}
	return nil
}

func (p *Pane) key(m tea.KeyPressMsg) tea.Cmd {
	if d := p.confirm; d != nil {
		switch {
		case key.Matches(m, p.keys.Yes):
			p.confirm, p.busy, p.dirty = nil, true, true
			p.outcome, p.bad = "writing…", false
			if d.revert {
				return revertCmd(p.o)
			}
			return applyCmd(p.o, d.changes, d.ccAvailable)
		case key.Matches(m, p.keys.No):
			p.confirm, p.dirty = nil, true
			p.outcome, p.bad = "cancelled: nothing written", false
		}
		return nil // the dialog swallows every other key
	}
	km := p.KeyMap().(keyMap)
	switch {
	case p.o.Snapshot != "" && (key.Matches(m, p.keys.Apply) || key.Matches(m, p.keys.Revert)):
		p.outcome, p.bad, p.dirty = "read-only: this is the snapshot's report; run tailpath tune on the host it was taken on", true, true
	case key.Matches(m, km.Apply):
		if !p.isRoot() {
			p.outcome, p.bad, p.dirty = p.sudoHint("--apply"), true, true
			return nil
		}
		p.confirm = &dialog{changes: append([]sysctl.Change(nil), p.adv.Rec.Changes...),
			ccAvailable: sysctl.CCChecker(p.data.Report.Settings, &p.data.Report.BBR)}
		p.dirty = true
	case key.Matches(m, km.Revert):
		if !p.isRoot() {
			p.outcome, p.bad, p.dirty = p.sudoHint("--revert"), true, true
			return nil
		}
		var back []sysctl.Change
		for i := len(p.data.State.Keys) - 1; i >= 0; i-- {
			c := p.data.State.Keys[i]
			back = append(back, sysctl.Change{Key: c.Key, Old: c.New, New: c.Old})
		}
		p.confirm, p.dirty = &dialog{revert: true, changes: back}, true
	case key.Matches(m, km.BBR):
		p.bbr = !p.bbr
		p.recompute()
		p.dirty = true
	default:
		common.Refresh(&p.vp, &p.dirty, p.render, p.width, p.height)
		km.Scroll(&p.vp, m)
	}
	return nil
}

// sudoHint names the command that does as root what the key would. The b
// toggle goes with --apply as --bbr, so the command writes the changes the
// pane showed rather than the buffers alone.
func (p *Pane) sudoHint(flag safetext.Text) safetext.Text {
	if flag == "--apply" && p.bbr {
		flag += " --bbr"
	}
	return "needs root: run sudo tailpath tune " + flag + " (or start tailpath with sudo)"
}

// bbrInUse reports whether the host already runs bbr, so there is nothing
// for b to toggle.
func (p *Pane) bbrInUse() bool {
	return p.data != nil && p.data.Report.Settings.CongestionControl == "bbr"
}

// bbrImpossible reports that this kernel cannot run BBR (sysctl.BBRImpossible):
// b then offers nothing.
func (p *Pane) bbrImpossible() bool {
	return p.data != nil && p.data.Report.BBR.State == sysctl.BBRImpossible
}

// recompute redoes the recommendation for the current BBR toggle. Pure.
func (p *Pane) recompute() {
	if p.data == nil || p.data.Err != nil {
		p.adv = tune.Advice{}
		return
	}
	p.adv = p.data.Report.Advise(p.bbr)
}

// View implements common.Pane: exactly height lines, none wider than width.
func (p *Pane) View() string {
	if p.width <= 0 || p.height <= 0 {
		return ""
	}
	if p.confirm != nil {
		// The dialog whole, from its first line; the report keeps its scroll.
		lines := p.renderDialog()
		out := make([]string, p.height)
		for i := range min(len(lines), p.height) {
			out[i] = common.Truncate(lines[i], p.width, "…")
		}
		return strings.Join(out, "\n")
	}
	common.Refresh(&p.vp, &p.dirty, p.render, p.width, p.height)
	return common.ViewportView(&p.vp)
}

// render lays the report out for the pane's width: tables and values are
// fitted whole (columns shortened, dropped or moved to a line of their
// own), prose is wrapped at words here, so no header or value is ever
// broken across lines by the viewport's wrapping. Its blocks come in
// tune's order: the title, what limits here, the buffers, congestion
// control, the path and the connections.
func (p *Pane) render() []string {
	pg := &page{w: max(p.width, 20)}
	w := pg.w
	tags := []common.Part{{Text: p.st.Title.Render("TCP tuning")}}
	if p.o.Sandbox {
		tags = append(tags, common.Part{Text: p.st.Warn.Render("[sandbox: a copy, not this machine]"), Short: p.st.Warn.Render("[sandbox]")})
	}
	if p.o.Snapshot != "" {
		tags = append(tags, common.Part{Text: p.st.Warn.Render("[snapshot " + string(p.o.Snapshot) + ": not this machine]"), Short: p.st.Warn.Render("[snapshot]")})
	}
	if p.data == nil {
		pg.add(common.FitParts(tags, " ", w))
		pg.add(p.st.Muted.Render("reading /proc/sys…"))
		return pg.b
	}
	r := p.data.Report
	if p.data.Err != nil {
		pg.add(common.FitParts(tags, " ", w))
		pg.prose(p.st.Bad, "", "tuning source: "+tune.Reading(*p.data).ErrText().String())
		return pg.b
	}
	switch {
	case r.Time.IsZero():
	case p.o.Snapshot != "":
		// The snapshot's clock stops when it was taken: "read 0s ago"
		// about an old file. Its time, as the tag says it.
		tags = append(tags, common.Part{Text: p.st.Muted.Render(" read " + r.Time.UTC().Format("2006-01-02 15:04:05Z")), Drop: 2})
	default:
		tags = append(tags, common.Part{Text: p.st.Muted.Render(fmt.Sprintf(" read %s ago", p.now().Sub(r.Time).Round(time.Second))), Drop: 2})
	}
	pg.add(common.FitParts(tags, " ", w))
	host := r.HostText()
	p.renderLimits(pg, r, host)
	p.renderBuffers(pg)
	p.renderCongestion(pg, r, host)
	p.renderConns(pg, r)
	return pg.b
}

// page is render's lines so far and the width they fit.
type page struct {
	b []string
	w int
}

func (pg *page) add(s string) { pg.b = append(pg.b, s) }

// prose adds s wrapped to the width in style st, continuation lines
// indented by more than the first.
func (pg *page) prose(st lipgloss.Style, first, s string) {
	for _, l := range wrapIndent(s, pg.w, first, first+"    ") {
		pg.add(st.Render(l))
	}
}

// renderLimits is what, other than the buffers, limits here (tune's first
// line) with its evidence and fix, userspace networking's warning, the
// system and CPU lines, where a persist goes and the last action's outcome.
func (p *Pane) renderLimits(pg *page, r tune.Report, host tune.HostText) {
	w := pg.w
	// First: what, other than the buffers, limits here (tune's first
	// line), with its evidence and fix.
	for i, l := range r.LimitLines() {
		t := l.String()
		indent := t[:len(t)-len(strings.TrimLeft(t, " "))]
		switch {
		case i == 0:
			pg.prose(p.st.Bad, "", t)
		case indent == "":
			pg.prose(p.st.Warn, "", t)
		default:
			pg.prose(p.st.Warn, indent, strings.TrimLeft(t, " "))
		}
	}
	if r.Tunnel.Mode == tune.TunnelUserspace {
		// First: nothing below governs this host's tailnet TCP.
		lines := r.UserspaceLines()
		pg.prose(p.st.Bad, "", lines[0].String())
		for _, t := range lines[1:] {
			l := t.String()
			indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
			pg.prose(p.st.Warn, indent, strings.TrimLeft(l, " "))
		}
	}
	pg.add(p.st.Muted.Render(p.systemLine(r, host, w)))
	for _, l := range r.CPULines() {
		t := l.String()
		indent := t[:len(t)-len(strings.TrimLeft(t, " "))]
		pg.prose(p.st.Muted, indent, strings.TrimLeft(t, " "))
	}
	if r.PersistWhere != "" {
		pg.prose(p.st.Muted, "", "persist (tailpath tune --apply --persist): "+r.PersistWhere.String())
	}
	if p.outcome != "" {
		st := p.st.Good
		if p.bad {
			st = p.st.Bad
		}
		pg.prose(st, "", p.outcome.String())
	}
	pg.add("")
}

// renderBuffers is the buffer arithmetic and the keys' table.
func (p *Pane) renderBuffers(pg *page) {
	w := pg.w
	pg.add(p.st.Title.Render("Buffer arithmetic"))
	if p.adv.Err != "" {
		pg.prose(p.st.Bad, "", p.adv.Err.String())
	}
	pg.b = append(pg.b, p.steps(p.adv.Steps, w)...)
	if v := p.adv.Verdict; v != "" {
		st := p.st.Good
		if p.adv.Rec.BuffersLimit {
			st = p.st.Warn
		}
		pg.prose(st, "", v.String())
	}
	pg.add("")

	rows := [][]string{{"key", "current", "recommended"}}
	for _, row := range p.adv.Rows {
		rec := p.st.Muted.Render(tune.Keep)
		if row.Recommended != "" {
			rec = p.st.Warn.Render(row.Recommended)
		}
		rows = append(rows, []string{row.Key, row.Current.String(), rec})
	}
	if columnsWidth(rows) > w {
		// Narrow: the keys without their net.ipv4./net.core. prefix.
		for _, row := range rows[1:] {
			row[0] = strings.TrimPrefix(strings.TrimPrefix(row[0], "net.ipv4."), "net.core.")
		}
	}
	pg.b = append(pg.b, table(&p.st, rows, "")...)
	pg.add("")
}

// renderCongestion is BBR and the qdisc, the advice's notes and warnings,
// and the revert state.
func (p *Pane) renderCongestion(pg *page, r tune.Report, host tune.HostText) {
	w := pg.w
	bbr := host.BBR.String()
	switch r.BBR.State {
	case sysctl.BBRAvailable:
		pg.prose(p.st.Good, "", bbr)
	case sysctl.BBRLoadable:
		pg.prose(p.st.Warn, "", bbr)
	default:
		pg.prose(p.st.Bad, "", bbr)
		if r.BBR.Missing != "" {
			pg.prose(lipgloss.NewStyle(), "  ", "missing: "+host.BBRMissing.String())
		}
	}
	if p.bbrInUse() {
		pg.prose(lipgloss.NewStyle(), "", fmt.Sprintf("congestion control: bbr already in use; default qdisc %s", host.DefaultQdisc))
	} else {
		target := "off (b: recommend bbr)"
		switch {
		case p.bbrImpossible():
			target = "not possible here (see above)"
		case p.bbr:
			target = "on (b: buffers only)"
		}
		pg.prose(lipgloss.NewStyle(), "", fmt.Sprintf("congestion control %s, default qdisc %s; bbr in the recommendation: %s",
			host.CongestionControl, host.DefaultQdisc, target))
	}
	for _, n := range p.adv.Notes {
		pg.prose(p.st.Muted, "", "note: "+n.String())
	}
	for _, x := range p.adv.Warnings {
		pg.prose(p.st.Warn, "", "warning: "+x.String())
	}
	if p.data.StateErr != nil {
		pg.prose(p.st.Bad, "", "revert state: "+tune.Reading(*p.data).StateErrText().String())
	} else if p.data.State != nil {
		lead := fmt.Sprintf("revert: %d key(s) recorded, r reverts; in ", len(p.data.State.Keys))
		pg.add(p.st.Muted.Render(lead + shortenPath(p.o.StateFile, w-common.Width(lead))))
	}
	pg.add("")
}

// renderConns is the path, the tunnel and its link, and the tailnet's TCP
// connections.
func (p *Pane) renderConns(pg *page, r tune.Report) {
	w := pg.w
	if lines := r.PathLines(); len(lines) > 0 {
		for _, l := range lines {
			pg.prose(p.st.Muted, "", l.String())
		}
		pg.add("")
	}
	if l := r.TunnelLine(); l != "" {
		pg.prose(p.st.Muted, "", l.String())
	}
	switch {
	case r.Link != nil:
		pg.prose(lipgloss.NewStyle(), "", tune.LinkLine(r.Link).String())
	case r.LinkErr != "" && r.Tunnel.Mode != tune.TunnelUserspace:
		pg.prose(p.st.Muted, "", r.LinkErr.String())
	}
	switch {
	case r.ConnsErr != "":
		pg.prose(p.st.Bad, "", "tailnet TCP connections: "+r.ConnsErr.String())
	case len(r.Conns) == 0:
		pg.prose(p.st.Muted, "", r.NoConns())
	default:
		pg.add(p.st.Title.Render(fmt.Sprintf("Tailnet TCP connections (%d)", len(r.Conns))))
		if v := r.Verdict(); v != "" {
			pg.prose(p.st.Warn, "", v) // our own words
		}
		pg.b = append(pg.b, p.connTable(r.Conns, w)...)
		for _, a := range r.ConnAdvice() {
			pg.prose(p.st.Muted, "", a.String())
		}
	}
}

// systemLine is the report's system line fitted to width: the file that
// identified the system goes first, then the kernel, never the RAM.
func (p *Pane) systemLine(r tune.Report, host tune.HostText, width int) string {
	name := host.Platform.String()
	parts := []common.Part{{Text: name}}
	if r.Platform.Evidence != "" {
		parts[0] = common.Part{Text: name + " (" + host.Evidence.String() + ")", Short: name, Drop: 2}
	}
	parts = append(parts, common.Part{Text: "kernel " + host.Kernel.String(), Drop: 1})
	if r.MemTotal > 0 {
		parts = append(parts, common.Part{Text: sysctl.FormatBytes(r.MemTotal) + " RAM"})
	}
	return common.FitParts(parts, ", ", width)
}

// steps lays the arithmetic out as label and value columns. A value too
// wide for its row goes on the next line, indented; an input's source
// goes on a line of its own when it does not fit beside its value.
func (p *Pane) steps(steps []tune.StepText, width int) []string {
	const indent, gap = "  ", "  "
	// The label column is as wide as the widest label when every row's
	// value then fits beside it; else labels up to 36 cells set it, and a
	// longer label gets a line of its own.
	labelW, fits := 0, true
	for _, s := range steps {
		labelW = max(labelW, common.Width(s.Label.String()))
	}
	for _, s := range steps {
		fits = fits && common.Width(indent+gap+s.Value.String())+labelW <= width
	}
	if !fits {
		labelW = 0
		for _, s := range steps {
			if lw := common.Width(s.Label.String()); lw <= 36 {
				labelW = max(labelW, lw)
			}
		}
	}
	var out []string
	for _, s := range steps {
		label, value, src := s.Label.String(), s.Value.String(), s.Source.String()
		full := value
		if src != "" {
			full += " (" + src + ")"
		}
		head := indent + label + strings.Repeat(" ", max(labelW-common.Width(label), 0)) + gap
		switch {
		case common.Width(label) > labelW:
			out = append(out, indent+label)
			out = append(out, wrapIndent(full, width, indent+"    ", indent+"      ")...)
		case common.Width(head+full) <= width:
			out = append(out, head+full)
		case common.Width(head+value) <= width:
			out = append(out, head+value)
			for _, l := range wrapIndent("("+src+")", width, indent+"    ", indent+"     ") {
				out = append(out, p.st.Muted.Render(l))
			}
		default:
			out = append(out, indent+label)
			out = append(out, wrapIndent(full, width, indent+"    ", indent+"      ")...)
		}
	}
	return out
}

// connHeader is the connection table's header; connHeaderNarrow leaves
// out the remote and the verdict, which the narrow layout puts on a line
// of their own above each row.
var (
	connHeader       = []string{"remote", "rtt", "cwnd", "retrans", "delivery", "sndbuf-lim", "rwnd-lim", "cc", "verdict"}
	connHeaderNarrow = []string{"  rtt", "cwnd", "retrans", "delivery", "sndbuf-lim", "rwnd-lim", "cc"}
)

// connTable lays the connections out in one table when it fits the width;
// else each connection gets a line with its remote and verdict, and its
// numbers in a table under one header.
func (p *Pane) connTable(conns []sockdiag.Conn, width int) []string {
	style := func(c sockdiag.Conn) lipgloss.Style {
		if c.Verdict.Kind == sockdiag.VerdictHealthy {
			return p.st.Good
		}
		return p.st.Warn
	}
	cells := make([][]string, len(conns))
	for i, c := range conns {
		for _, t := range tune.ConnCells(c) {
			cells[i] = append(cells[i], t.String())
		}
	}
	wide := [][]string{connHeader}
	for i, c := range cells {
		row := append([]string(nil), c...)
		row[len(row)-1] = style(conns[i]).Render(row[len(row)-1])
		wide = append(wide, row)
	}
	if columnsWidth(wide) <= width {
		return table(&p.st, wide, "")
	}
	narrow := [][]string{connHeaderNarrow}
	for _, c := range cells {
		narrow = append(narrow, append([]string{"  " + c[1]}, c[2:len(c)-1]...))
	}
	nums := table(&p.st, narrow, "")
	out := []string{nums[0]}
	for i, c := range cells {
		for _, l := range wrapIndent(c[0]+": "+c[len(c)-1], width, "", "    ") {
			out = append(out, style(conns[i]).Render(l))
		}
		out = append(out, nums[i+1])
	}
	return out
}

func (p *Pane) renderDialog() []string {
	d := p.confirm
	var body []string
	if d.revert {
		body = append(body, p.st.Title.Render(fmt.Sprintf("Revert %d key(s) to the values saved before tailpath changed them?", len(d.changes))))
	} else {
		title := fmt.Sprintf("Apply %d change(s)?", len(d.changes))
		if p.data != nil && p.data.Report.Tunnel.Mode == tune.TunnelUserspace {
			// Userspace networking: these never reach the tailnet's TCP.
			title = fmt.Sprintf("Apply %d change(s), for traffic outside the tailnet only?", len(d.changes))
		}
		body = append(body, p.st.Title.Render(title))
	}
	if p.o.Sandbox {
		body = append(body, p.st.Warn.Render("sandbox: writes go to the copy, not this machine"))
	}
	body = append(body, "")
	for _, c := range d.changes {
		body = append(body, "  "+tune.ChangeText(c).String())
	}
	// Fit the box to the pane: the border takes two columns and the padding
	// two more; lipgloss wraps long prose inside the width. The state file
	// path goes on its own line, shortened from the left at a separator, so
	// it is never broken mid-word.
	maxW := max(10, p.width-2)
	body = append(body, "", "Each key is read back; on any failure every key written is restored.")
	if !d.revert {
		body = append(body, "Previous values are saved for revert (r) in:", "  "+shortenPath(p.o.StateFile, maxW-4))
	}
	body = append(body, "", "y: write it   n/esc: cancel")
	w := 0
	for _, l := range body {
		w = max(w, common.Width(l))
	}
	// Lip Gloss v2's Width counts the border too: text, padding and border
	// are at most the pane's width.
	w = min(w+2, maxW) + 2
	box := lipgloss.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(p.st.Border.GetForeground()).Padding(0, 1).Width(w)
	return strings.Split(box.Render(strings.Join(body, "\n")), "\n")
}

// shortenPath fits path into width display cells: whole when it fits,
// else "…/" and as many trailing path elements as fit, else the tail of the
// last element after "…". Both / and \ count as separators.
func shortenPath(path string, width int) string {
	if common.Width(path) <= width {
		return path
	}
	for i := 1; i < len(path); i++ {
		if path[i-1] != '/' && path[i-1] != '\\' {
			continue
		}
		if s := "…" + path[i-1:]; common.Width(s) <= width {
			return s
		}
	}
	if width < 2 {
		return common.Truncate("…", max(width, 0), "")
	}
	return ansi.TruncateLeft(path, common.Width(path)-(width-1), "…")
}

// wrapIndent wraps s at spaces to lines of at most width cells, the
// first starting with first, the others with rest (so a continuation
// reads as one). A word too long for a line gets a line of its own.
func wrapIndent(s string, width int, first, rest string) []string {
	var out []string
	prefix, line := first, first
	for _, word := range strings.Fields(s) {
		switch {
		case line == prefix:
			line += word
		case common.Width(line)+1+common.Width(word) > width:
			out = append(out, line)
			prefix, line = rest, rest+word
		default:
			line += " " + word
		}
	}
	return append(out, line)
}

// columnsWidth is the width of rows laid out by table.
func columnsWidth(rows [][]string) int {
	w := 0
	for _, l := range columns.Lines(rows, "") {
		w = max(w, common.Width(l))
	}
	return w
}

// table lays rows out in columns (internal/columns); with st, the first
// row is a header in the muted style.
func table(st *common.Styles, rows [][]string, indent string) []string {
	out := columns.Lines(rows, indent)
	if st != nil && len(out) > 0 {
		out[0] = st.Muted.Render(out[0])
	}
	return out
}
