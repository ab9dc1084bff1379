package tuning

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
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
	revert  bool
	changes []sysctl.Change // what will be written (apply), or restored (revert)
	ccOK    func(string) bool
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
	bbr     bool // the --bbr target, toggled with b
	rec     sysctl.Recommendation
	recErr  error
	confirm *dialog
	busy    bool
	outcome string
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
	return &Pane{o: o, st: st, now: now, isRoot: defaultIsRoot(o), bbr: o.Inputs.BBR, dirty: true, vp: common.NewViewport(), keys: keyMap{
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
	changes := len(p.rec.Changes) > 0
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
	k.BBR.SetEnabled(p.data != nil && p.data.Err == nil && !p.bbrInUse())
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
		p.outcome, p.bad = outcomeText(m), m.Err != nil
		p.dirty = true
		return refreshCmd(p.o)
	case tea.KeyMsg:
		return p.key(m)
	}
	return nil
}

func (p *Pane) key(m tea.KeyMsg) tea.Cmd {
	if d := p.confirm; d != nil {
		switch {
		case key.Matches(m, p.keys.Yes):
			p.confirm, p.busy, p.dirty = nil, true, true
			p.outcome, p.bad = "writing…", false
			if d.revert {
				return revertCmd(p.o)
			}
			return applyCmd(p.o, d.changes, d.ccOK)
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
		p.confirm = &dialog{changes: append([]sysctl.Change(nil), p.rec.Changes...),
			ccOK: sysctl.CCChecker(p.data.Report.Settings, &p.data.Report.BBR)}
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
func (p *Pane) sudoHint(flag string) string {
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

// recompute redoes the recommendation for the current BBR toggle. Pure.
func (p *Pane) recompute() {
	if p.data == nil || p.data.Err != nil {
		p.rec, p.recErr = sysctl.Recommendation{}, nil
		return
	}
	r := p.data.Report
	t := r.Rec.Target
	t.BBR = p.bbr
	p.rec, p.recErr = sysctl.Recommend(r.Settings, t, r.MemTotal, &r.BBR)
}

func outcomeText(m AppliedMsg) string {
	verb := "applied"
	if m.Revert {
		verb = "reverted"
	}
	switch {
	case m.Err == nil:
		if m.Revert {
			return fmt.Sprintf("reverted %d key(s)", len(m.Result.Written))
		}
		return fmt.Sprintf("applied %d key(s); r reverts them", len(m.Result.Written))
	case len(m.Result.RollbackErrors) > 0:
		return fmt.Sprintf("FAILED and %d key(s) NOT restored: %v", len(m.Result.RollbackErrors), m.Err)
	case len(m.Result.RolledBack) > 0:
		return fmt.Sprintf("failed, %d key(s) restored, nothing changed: %v", len(m.Result.RolledBack), m.Err)
	}
	return fmt.Sprintf("not %s, nothing written: %v", verb, m.Err)
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
			out[i] = ansi.Truncate(lines[i], p.width, "…")
		}
		return strings.Join(out, "\n")
	}
	common.Refresh(&p.vp, &p.dirty, p.render, p.width, p.height)
	return p.vp.View()
}

func (p *Pane) render() []string {
	var b []string
	add := func(s string) { b = append(b, s) }
	head := p.st.Title.Render("TCP tuning")
	if p.o.Inputs.Sandbox {
		head += " " + p.st.Warn.Render("[sandbox: a copy, not this machine]")
	}
	if p.o.Snapshot != "" {
		head += " " + p.st.Warn.Render("[snapshot "+clean(p.o.Snapshot)+": not this machine]")
	}
	if p.data == nil {
		add(head)
		add(p.st.Muted.Render("reading /proc/sys…"))
		return b
	}
	r := p.data.Report
	if p.data.Err != nil {
		add(head)
		add(p.st.Bad.Render("tuning source: " + safetext.Clean(p.data.Err.Error())))
		return b
	}
	if !r.Time.IsZero() {
		head += p.st.Muted.Render(fmt.Sprintf("  read %s ago", p.now().Sub(r.Time).Round(time.Second)))
	}
	add(head)
	add(p.st.Muted.Render(clean(r.SystemLine())))
	if r.PersistWhere != "" {
		add(p.st.Muted.Render("persist (tailpath tune --apply --persist): " + clean(r.PersistWhere)))
	}
	if p.outcome != "" {
		st := p.st.Good
		if p.bad {
			st = p.st.Bad
		}
		add(st.Render(safetext.Clean(p.outcome)))
	}
	add("")

	add(p.st.Title.Render("Buffer arithmetic"))
	if p.recErr != nil {
		add(p.st.Bad.Render(safetext.Clean(p.recErr.Error())))
	}
	b = append(b, table(nil, stepRows(p.rec.Steps), "  ")...)
	add("")

	rep := r
	rep.Rec = p.rec
	rows := [][]string{{"key", "current", "recommended"}}
	for _, row := range rep.Rows() {
		rec := p.st.Muted.Render(tune.Keep)
		if row.Recommended != "" {
			rec = p.st.Warn.Render(row.Recommended)
		}
		rows = append(rows, []string{row.Key, clean(row.Current), rec})
	}
	b = append(b, table(&p.st, rows, "")...)
	add("")

	bbr := fmt.Sprintf("BBR %s: %s", r.BBR.State, clean(r.BBR.Why))
	switch r.BBR.State {
	case sysctl.BBRAvailable:
		add(p.st.Good.Render(bbr))
	case sysctl.BBRLoadable:
		add(p.st.Warn.Render(bbr))
	default:
		add(p.st.Bad.Render(bbr))
		if r.BBR.Missing != "" {
			add("  missing: " + clean(r.BBR.Missing))
		}
	}
	if p.bbrInUse() {
		add(fmt.Sprintf("congestion control: bbr already in use; default qdisc %s", orUnknown(clean(r.Settings.DefaultQdisc))))
	} else {
		target := "off (b: recommend bbr)"
		if p.bbr {
			target = "on (b: buffers only)"
		}
		add(fmt.Sprintf("congestion control %s, default qdisc %s; bbr in the recommendation: %s",
			orUnknown(clean(r.Settings.CongestionControl)), orUnknown(clean(r.Settings.DefaultQdisc)), target))
	}
	for _, n := range p.rec.Notes {
		add(p.st.Muted.Render("note: " + clean(n)))
	}
	for _, w := range p.rec.Warnings {
		add(p.st.Warn.Render("warning: " + clean(w)))
	}
	if p.data.StateErr != nil {
		add(p.st.Bad.Render("revert state: " + safetext.Clean(p.data.StateErr.Error())))
	} else if p.data.State != nil {
		lead := fmt.Sprintf("revert: %d key(s) recorded, r reverts; in ", len(p.data.State.Keys))
		add(p.st.Muted.Render(lead + shortenPath(p.o.statePath(), p.width-ansi.StringWidth(lead))))
	}
	add("")

	switch {
	case r.Link != nil:
		add(tune.LinkLine(r.Link))
	case r.LinkErr != "":
		add(p.st.Muted.Render(safetext.Clean(r.LinkErr)))
	}
	switch {
	case r.ConnsErr != "":
		add(p.st.Bad.Render("tailnet TCP connections: " + safetext.Clean(r.ConnsErr)))
	case len(r.Conns) == 0:
		add(p.st.Muted.Render("tailnet TCP connections: none open"))
	default:
		add(p.st.Title.Render(fmt.Sprintf("Tailnet TCP connections (%d)", len(r.Conns))))
		if v := r.Verdict(); v != "" {
			add(p.st.Warn.Render(clean(v)))
		}
		rows := [][]string{{"remote", "rtt", "cwnd", "retrans", "delivery", "sndbuf-lim", "rwnd-lim", "cc", "verdict"}}
		for _, c := range r.Conns {
			cells := tune.ConnCells(c)
			for i := range cells {
				cells[i] = clean(cells[i])
			}
			last := len(cells) - 1
			if c.Verdict.Kind == sockdiag.VerdictHealthy {
				cells[last] = p.st.Good.Render(cells[last])
			} else {
				cells[last] = p.st.Warn.Render(cells[last])
			}
			rows = append(rows, cells)
		}
		b = append(b, table(&p.st, rows, "")...)
		for _, a := range r.ConnAdvice() {
			for _, l := range wrapWords(clean(a), max(20, p.width-2)) {
				add(p.st.Muted.Render(l))
			}
		}
	}
	return b
}

func (p *Pane) renderDialog() []string {
	d := p.confirm
	var body []string
	if d.revert {
		body = append(body, p.st.Title.Render(fmt.Sprintf("Revert %d key(s) to the values saved before tailpath changed them?", len(d.changes))))
	} else {
		body = append(body, p.st.Title.Render(fmt.Sprintf("Apply %d change(s)?", len(d.changes))))
	}
	if p.o.Inputs.Sandbox {
		body = append(body, p.st.Warn.Render("sandbox: writes go to the copy, not this machine"))
	}
	body = append(body, "")
	for _, c := range d.changes {
		body = append(body, "  "+clean(c.String()))
	}
	// Fit the box to the pane: the border takes two columns and the padding
	// two more; lipgloss wraps long prose inside the width. The state file
	// path goes on its own line, shortened from the left at a separator, so
	// it is never broken mid-word.
	maxW := max(10, p.width-2)
	body = append(body, "", "Each key is read back; on any failure every key written is restored.")
	if !d.revert {
		body = append(body, "Previous values are saved for revert (r) in:", "  "+shortenPath(p.o.statePath(), maxW-4))
	}
	body = append(body, "", "y: write it   n/esc: cancel")
	w := 0
	for _, l := range body {
		w = max(w, lipgloss.Width(l))
	}
	w = min(w+2, maxW)
	box := lipgloss.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(p.st.Border.GetForeground()).Padding(0, 1).Width(w)
	return strings.Split(box.Render(strings.Join(body, "\n")), "\n")
}

// shortenPath fits path into width display cells: whole when it fits,
// else "…/" and as many trailing path elements as fit, else the tail of the
// last element after "…". Both / and \ count as separators.
func shortenPath(path string, width int) string {
	if ansi.StringWidth(path) <= width {
		return path
	}
	for i := 1; i < len(path); i++ {
		if path[i-1] != '/' && path[i-1] != '\\' {
			continue
		}
		if s := "…" + path[i-1:]; ansi.StringWidth(s) <= width {
			return s
		}
	}
	if width < 2 {
		return ansi.Truncate("…", max(width, 0), "")
	}
	return ansi.TruncateLeft(path, ansi.StringWidth(path)-(width-1), "…")
}

// wrapWords breaks s into lines of at most width display cells at spaces
// only (flags like --mtu-probe stay whole); a word longer than width gets
// a line of its own, cut when shown.
func wrapWords(s string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(s) {
		switch {
		case cur.Len() == 0:
			cur.WriteString(w)
		case ansi.StringWidth(cur.String())+1+ansi.StringWidth(w) <= width:
			cur.WriteString(" " + w)
		default:
			lines = append(lines, cur.String())
			cur.Reset()
			cur.WriteString(w)
		}
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// stepRows turns the arithmetic into two-column rows.
func stepRows(steps []sysctl.Step) [][]string {
	var rows [][]string
	for _, s := range steps {
		rows = append(rows, []string{s.Label, s.Text})
	}
	return rows
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

func clean(s string) string { return safetext.Clean(s) }

func orUnknown(s string) string {
	if s == "" {
		return tune.Unknown
	}
	return s
}
