// Package selfpane is the Self pane: this node's own end of every path,
// as internal/selftext words it (NAT, the home DERP region and why it is
// home, every region's latency, traffic by path with a sparkline over the
// session, health and UDP receive, versions and known bugs). It renders
// only: n (a netcheck now) and d (the home DERP over HTTPS) are commands
// handed in (Options), whose answers come back as NetcheckMsg and
// DERPPingMsg; without them (a replayed snapshot) the keys are off.
package selfpane

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/selftext"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
)

// Title is the pane's tab label.
const Title = "Self"

// NetcheckMsg is the outcome of n: a fresh DERP latency measurement (the
// next snapshot's Self view is judged on it), or why none came.
type NetcheckMsg struct {
	Report *probes.DERPLatencyReport
	// How says how it was measured ("as `tailscale netcheck` does, from
	// tailpath's own socket: …").
	How safetext.Text
	Err safetext.Text
}

// DERPPingMsg is the outcome of d: an HTTPS round trip to the home DERP
// region's server.
type DERPPingMsg struct {
	Region int
	Code   safetext.Text
	RTT    time.Duration
	At     time.Time
	Err    safetext.Text
}

// Options configure the pane.
type Options struct {
	// Netcheck (n) and PingDERP (d) start the measurement without
	// blocking: a command doing the I/O that answers with NetcheckMsg or
	// DERPPingMsg. nil disables the key.
	Netcheck func() tea.Cmd
	PingDERP func() tea.Cmd
	// Version is tailpath's own ("" leaves it out).
	Version string
	// Now is the clock ages are counted on (a replay's: the snapshot's).
	Now func() time.Time
}

type keyMap struct {
	common.Nav
	Netcheck, PingDERP key.Binding
}

func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Netcheck, k.PingDERP, k.Arrows}
}

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Nav.Full(), {k.Netcheck, k.PingDERP}}
}

// sparkKeep is how many traffic readings the sparkline keeps.
const sparkKeep = 240

var _ common.Pane = (*Pane)(nil)

// Pane is the Self pane. Create it with New.
type Pane struct {
	o  Options
	st common.Styles
	// paint are st's styles as Painters (a Render per cell measured every
	// character: most of a frame's cost).
	title, muted, good, bad common.Painter
	keys                    keyMap
	now                     func() time.Time

	width, height int
	vp            viewport.Model

	snap *join.Snapshot
	// rates are the total and DERP byte rates (in + out) of each traffic
	// reading this session, oldest first; lastAt the latest reading's time.
	rates, derp []float64
	lastAt      time.Time

	netcheck *NetcheckMsg
	ping     *DERPPingMsg
	busyN    bool
	busyD    bool

	dirty bool
}

// New returns the Self pane, "waiting for tailscaled…" until the first
// snapshot.
func New(st common.Styles, o Options) *Pane {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	p := &Pane{o: o, now: now, vp: common.NewViewport(), dirty: true}
	p.setStyles(st)
	p.keys = keyMap{Nav: common.NewNav("scroll"),
		Netcheck: key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "netcheck now")),
		PingDERP: key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "ping home DERP")),
	}
	p.keys.Netcheck.SetEnabled(o.Netcheck != nil)
	p.keys.PingDERP.SetEnabled(o.PingDERP != nil)
	return p
}

func (p *Pane) Title() string             { return Title }
func (p *Pane) KeyMap() help.KeyMap       { return p.keys }
func (p *Pane) Capturing() bool           { return false }
func (p *Pane) SetSize(w, h int)          { p.width, p.height, p.dirty = w, h, true }
func (p *Pane) SetNow(f func() time.Time) { p.now, p.dirty = f, true }

// Update implements common.Pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case *join.Snapshot:
		p.snap, p.dirty = m, true
		p.noteTraffic(m)
	case common.StylesMsg:
		p.setStyles(m.Styles)
		p.dirty = true
	case NetcheckMsg:
		p.netcheck, p.busyN, p.dirty = &m, false, true
	case DERPPingMsg:
		p.ping, p.busyD, p.dirty = &m, false, true
	case tea.KeyPressMsg:
		switch {
		case key.Matches(m, p.keys.Netcheck) && !p.busyN:
			p.busyN, p.dirty = true, true
			return p.o.Netcheck()
		case key.Matches(m, p.keys.PingDERP) && !p.busyD:
			p.busyD, p.dirty = true, true
			return p.o.PingDERP()
		default:
			p.refresh()
			p.keys.Scroll(&p.vp, m)
		}
	}
	return nil
}

func (p *Pane) setStyles(st common.Styles) {
	p.st = st
	p.title, p.muted = common.NewPainter(st.Title), common.NewPainter(st.Muted)
	p.good, p.bad = common.NewPainter(st.Good), common.NewPainter(st.Bad)
}

// noteTraffic keeps the snapshot's traffic rates for the sparkline, once
// per reading.
func (p *Pane) noteTraffic(s *join.Snapshot) {
	if s == nil || s.Snapshot == nil {
		return
	}
	t := s.Self.Traffic
	if t == nil || t.Rates == nil || !t.At.After(p.lastAt) {
		return
	}
	p.lastAt = t.At
	r := t.Rates
	p.rates = append(p.rates, r.BytesIn.Total()+r.BytesOut.Total())
	p.derp = append(p.derp, r.BytesIn.DERP+r.BytesOut.DERP)
	if n := len(p.rates); n > sparkKeep {
		p.rates = append(p.rates[:0], p.rates[n-sparkKeep:]...)
		p.derp = append(p.derp[:0], p.derp[n-sparkKeep:]...)
	}
}

// refresh gives the viewport its lines again when they are stale. lines
// fits them to the width as it draws them (measuring the words before
// they are styled), so they go in as they are; below the label columns'
// width common.Refresh wraps and cuts them.
func (p *Pane) refresh() {
	if p.width < titleW+labelW+8 {
		common.Refresh(&p.vp, &p.dirty, p.lines, p.width, p.height)
		return
	}
	if !p.dirty {
		return
	}
	p.dirty = false
	p.vp.SetWidth(p.width)
	p.vp.SetHeight(p.height)
	p.vp.SetContent(strings.Join(p.lines(), "\n"))
}

// View implements common.Pane.
func (p *Pane) View() string {
	p.refresh()
	return common.ViewportView(&p.vp)
}

// titleW and labelW are the widths of the section and label columns.
const (
	titleW = 9
	labelW = 12
)

func (p *Pane) lines() []string {
	if p.snap == nil || p.snap.Snapshot == nil {
		return []string{p.muted.Render("waiting for tailscaled…")}
	}
	s := p.snap.Snapshot
	now := p.now()
	head := string(s.Self.Name)
	if head == "" {
		head = "this node"
	}
	age := "  as of " + units.Ago(now, s.Time)
	if common.Width(head)+common.Width(age) > p.width {
		head, age = common.Truncate(head+age, p.width, "…"), ""
	}
	out := []string{p.title.Render(head) + p.muted.Render(age)}
	for _, sec := range selftext.Sections(selftext.Input{Self: &s.Self, Regions: s.Regions, Now: now, Ours: p.o.Version}) {
		rows := make([]row, len(sec.Rows))
		for i, r := range sec.Rows {
			rows[i] = row{r.Label, string(r.Text), r.Mark}
		}
		if sec.Title == "Traffic" {
			rows = append(rows, p.sparkRows()...)
		}
		if sec.Title == "DERP" {
			rows = append(rows, p.measureRows(now)...)
		}
		for i, r := range rows {
			title := ""
			if i == 0 {
				title = sec.Title
			}
			// The words wrap under themselves, right of the labels.
			tw := p.width - titleW - labelW
			text := []string{common.Truncate(r.text, max(tw, 1), "…")}
			if tw >= 24 {
				text = strings.Split(common.WrapText(r.text, tw), "\n")
			}
			out = append(out, p.title.Render(pad(title, titleW))+p.muted.Render(pad(strings.TrimSpace(r.label), labelW))+p.mark(r.mark, text[0]))
			for _, more := range text[1:] {
				out = append(out, strings.Repeat(" ", titleW+labelW)+p.mark(r.mark, strings.TrimLeft(more, " ")))
			}
		}
	}
	return out
}

// row is one line of a section as the pane draws it.
type row struct {
	label, text string
	mark        selftext.Mark
}

func (p *Pane) mark(m selftext.Mark, s string) string {
	switch m {
	case selftext.Good:
		return p.good.Render(s)
	case selftext.Bad:
		return p.bad.Render(s)
	}
	return s
}

// measureRows are n's and d's outcomes.
func (p *Pane) measureRows(now time.Time) []row {
	var rows []row
	switch {
	case p.busyN:
		rows = append(rows, row{"netcheck", "measuring…", selftext.Plain})
	case p.netcheck != nil && p.netcheck.Err != "":
		rows = append(rows, row{"netcheck", "failed: " + string(p.netcheck.Err), selftext.Bad})
	case p.netcheck != nil && p.netcheck.Report != nil:
		rows = append(rows, row{"netcheck", units.Count(len(p.netcheck.Report.ByRegion), "region", "regions") + " answered " + units.Ago(now, p.netcheck.Report.At) + "; " + string(p.netcheck.How), selftext.Plain})
	}
	switch {
	case p.busyD:
		rows = append(rows, row{"HTTPS ping", "pinging the home DERP…", selftext.Plain})
	case p.ping != nil && p.ping.Err != "":
		rows = append(rows, row{"HTTPS ping", "failed: " + string(p.ping.Err), selftext.Bad})
	case p.ping != nil:
		t := string(p.ping.Code) + " " + probes.LatencyText(p.ping.RTT) + " over HTTPS (" + units.Ago(now, p.ping.At) + ")"
		if s := p.snap.Snapshot; s.Self.NAT != nil {
			if rep := s.Self.NAT.DERPLatency[p.ping.Region]; rep > 0 {
				t += " against " + probes.LatencyText(rep) + " in the report (HTTPS adds TCP and TLS round trips)"
			}
		}
		rows = append(rows, row{"HTTPS ping", t, selftext.Plain})
	}
	return rows
}

// sparkRows is the session's byte rate as a sparkline, with DERP's part.
func (p *Pane) sparkRows() []row {
	if len(p.rates) < 2 {
		return nil
	}
	w := max(p.width-titleW-labelW-12, 8)
	rates, derp := p.rates, p.derp
	if len(rates) > w {
		rates, derp = rates[len(rates)-w:], derp[len(derp)-w:]
	}
	peak := 0.0
	for _, r := range rates {
		peak = max(peak, r)
	}
	return []row{
		{"all", Spark(rates, peak) + " " + units.Rate(rates[len(rates)-1]), selftext.Plain},
		{"via DERP", Spark(derp, peak) + " " + units.Rate(derp[len(derp)-1]), selftext.Plain},
	}
}

var bars = []rune("▁▂▃▄▅▆▇█")

// Spark draws vs as bars scaled to peak (a space for nothing moved).
func Spark(vs []float64, peak float64) string {
	b := make([]rune, len(vs))
	for i, v := range vs {
		switch {
		case v <= 0 || peak <= 0:
			b[i] = ' '
		default:
			b[i] = bars[min(int(v/peak*float64(len(bars)-1)+0.5), len(bars)-1)]
		}
	}
	return string(b)
}

// pad pads s with spaces to w cells, keeping a space after it.
func pad(s string, w int) string {
	n := common.Width(s)
	if n >= w-1 {
		s = common.Truncate(s, w-1, "…")
		n = common.Width(s)
	}
	return s + strings.Repeat(" ", w-n)
}
