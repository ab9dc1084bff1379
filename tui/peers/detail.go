package peers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
)

// PingFunc starts an active probe of peer without blocking: the command it
// returns does the I/O, and results arrive as probes.PingResult messages
// (several per run; the last has Done set). Nil disables the ping keys.
type PingFunc func(peer probes.Peer, kind probes.PingKind) tea.Cmd

// PingTries is the number of tries a "ping until direct" run makes, as
// `tailscale ping` does by default (-c 10); used for "ping 3/10" progress.
const PingTries = probes.DefaultPingTries

// maxPingLines bounds the progress lines kept per peer; pingLinesShown are
// drawn (the latest), right under the verdict so they stay on screen.
const (
	maxPingLines   = PingTries + 2
	pingLinesShown = 4
)

// pingRun is the latest ping run for one peer. Lines hold no trailing
// "…": the view adds it to the last line while the run is going.
type pingRun struct {
	kind    probes.PingKind
	running bool
	pongs   int // answered tries so far
	lines   []pingLine
	ended   time.Time // when it ended (the clock's); zero while running
}

type pingLine struct {
	text string
	tone tone
}

// tone is a ping line's colour role; its words carry the meaning too.
type tone int

const (
	tonePlain tone = iota
	toneGood       // a pong, a direct path
	toneWarn       // still relayed, a try that failed
	toneBad        // the run failed or stopped
)

// Detail is the Peer detail pane: the selected peer's verdict with each
// piece of evidence, the fix, endpoints and home DERP, the path-change
// timeline and ping progress. Create it with NewDetail.
//
// It follows the selection through common.PeerSelectedMsg and refreshes
// the peer from every *join.Snapshot (keeping the last copy when the peer
// disappears), whose path changes it shows.
type Detail struct {
	st   common.Styles
	now  func() time.Time
	ping PingFunc
	keys detailKeys
	vp   viewport.Model

	width, height int

	// refreshAPI re-reads the control API (nil: no API key, r disabled).
	refreshAPI func() tea.Cmd

	snap   *join.Snapshot // the latest joined snapshot
	peerID safetext.Text
	peer   probes.Peer
	inSnap bool // peer is in the latest snapshot
	pings  map[safetext.Text]*pingRun
	dirty  bool
	// note says why the last key did nothing (p with no pings), until
	// the next key.
	note string
}

// NewDetail returns a Peer detail pane. now gives the time for "12s ago"
// (nil means time.Now); ping starts probes (nil disables the ping keys).
func NewDetail(st common.Styles, now func() time.Time, ping PingFunc) *Detail {
	if now == nil {
		now = time.Now
	}
	d := &Detail{st: st, now: now, ping: ping, keys: newDetailKeys(), vp: common.NewViewport(), pings: map[safetext.Text]*pingRun{}, dirty: true}
	d.syncKeys()
	return d
}

// Title implements common.Pane.
func (d *Detail) Title() string { return DetailTitle }

// Capturing implements common.Pane; the detail pane has no input.
func (d *Detail) Capturing() bool { return false }

// KeyMap implements common.Pane.
func (d *Detail) KeyMap() help.KeyMap { return d.keys }

// PeerID is the ID of the peer shown ("" when none is selected).
func (d *Detail) PeerID() safetext.Text { return d.peerID }

// Timeline returns the path changes of peer id, oldest first, from the
// latest snapshot.
func (d *Detail) Timeline(id safetext.Text) []join.PathChange { return d.snap.Changes(id) }

// SetSize implements common.Pane.
func (d *Detail) SetSize(width, height int) {
	if width == d.width && height == d.height {
		return
	}
	d.width, d.height = max(width, 0), max(height, 0)
	d.vp.SetWidth(d.width)
	d.vp.SetHeight(d.height)
	d.dirty = true
}

// Update implements common.Pane.
func (d *Detail) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case *join.Snapshot:
		if msg != nil && msg.Snapshot != nil {
			d.setSnapshot(msg)
		}
	case common.PeerSelectedMsg:
		if msg.Peer.ID != d.peerID {
			d.vp.GotoTop()
		}
		d.peerID, d.peer, d.inSnap = msg.Peer.ID, msg.Peer, true
		d.dirty = true
		d.syncKeys()
	case common.StylesMsg:
		d.st, d.dirty = msg.Styles, true
	case probes.PingResult:
		d.addPing(msg)
	case probes.SourceStatus:
		if !msg.Up {
			d.endRuns("stopped: tailscaled unavailable")
		}
	case tea.KeyPressMsg:
		return d.handleKey(msg)
	}
	return nil
}

func (d *Detail) setSnapshot(s *join.Snapshot) {
	d.snap = s
	for id, r := range d.pings {
		if !r.running && s.Changes(id) == nil {
			delete(d.pings, id) // peer left the tailnet
		}
	}
	d.dirty = true
}

func (d *Detail) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, d.keys.Back):
		return func() tea.Msg { return common.ShowPaneMsg{Title: ListTitle} }
	case key.Matches(msg, d.keys.Disco):
		return d.startPing(probes.PingDISCO)
	case key.Matches(msg, d.keys.TSMP):
		return d.startPing(probes.PingTSMP)
	case key.Matches(msg, d.keys.Refresh) && d.refreshAPI != nil:
		return d.refreshAPI()
	case key.Matches(msg, d.keys.Copy):
		return d.copySettle()
	case d.ping == nil && d.peerID != "" && (msg.String() == "p" || msg.String() == "t"):
		// Not silence: say why nothing happens.
		d.note, d.dirty = "no pings here: nothing live to ping (a saved snapshot is read-only)", true
		d.vp.GotoTop()
		return nil
	}
	if d.note != "" {
		d.note, d.dirty = "", true
	}
	d.refresh()
	d.keys.Scroll(&d.vp, msg)
	return nil
}

// startPing returns the injected ping command for the shown peer. A second
// press while a run for that peer is in progress does nothing, so results
// of two runs never interleave.
func (d *Detail) startPing(kind probes.PingKind) tea.Cmd {
	if d.ping == nil || d.peerID == "" {
		return nil
	}
	if r := d.pings[d.peerID]; r != nil && r.running {
		return nil
	}
	name := "DISCO ping until direct"
	if kind == probes.PingTSMP {
		name = "TSMP ping"
	}
	d.pings[d.peerID] = &pingRun{kind: kind, running: true, lines: []pingLine{{text: name + ": started"}}}
	// The run's lines follow the verdict near the top: show them even
	// when the evidence below was scrolled to.
	d.vp.GotoTop()
	d.dirty = true
	d.syncKeys()
	return d.ping(d.peer, kind)
}

// addPing records one result. Results for any peer are kept (the run may
// have been started elsewhere), bounded to maxPingLines per peer.
func (d *Detail) addPing(res probes.PingResult) {
	r := d.pings[res.PeerID]
	if r == nil || (!r.running && !res.Done) || r.kind != res.Kind {
		r = &pingRun{kind: res.Kind, running: true}
		d.pings[res.PeerID] = r
	}
	if res.Err == "" && res.Latency > 0 {
		r.pongs++
	}
	r.lines = append(r.lines, pingResultLine(res, r.pongs))
	if len(r.lines) > maxPingLines {
		r.lines = append(r.lines[:0], r.lines[len(r.lines)-maxPingLines:]...)
	}
	if res.Done {
		r.running, r.ended = false, d.now()
	}
	if res.PeerID == d.peerID {
		d.dirty = true
		d.syncKeys()
	}
}

// pingResultLine words one result: progress "ping 3/10 via DERP(nyc) 42ms",
// final "direct 203.0.113.5:41641 in 3ms", or the error named by its ping
// kind ("TSMP ping failed: timeout (no reply through WireGuard)"). pongs is
// how many tries of the run were answered, so a DISCO run that got none
// says the peer is not answering rather than "not direct".
func pingResultLine(res probes.PingResult, pongs int) pingLine {
	via := string(res.Via)
	errText := string(res.Err)
	lat := units.Latency(res.Latency)
	kind := "DISCO"
	if res.Kind == probes.PingTSMP {
		kind = "TSMP"
	}
	if !res.Done {
		prefix := fmt.Sprintf("ping %d/%d", res.Try, PingTries)
		if res.Kind == probes.PingTSMP {
			prefix = fmt.Sprintf("TSMP ping %d", res.Try)
		}
		if errText != "" {
			return pingLine{text: prefix + ": " + errText, tone: toneWarn}
		}
		return pingLine{text: prefix + " via " + via + " " + lat}
	}
	switch {
	case res.Kind == probes.PingTSMP && errText == "timeout":
		return pingLine{text: "TSMP ping failed: timeout (no reply through WireGuard)", tone: toneBad}
	case res.Kind != probes.PingTSMP && errText == probes.ErrNoDirect.Error() && pongs == 0:
		return pingLine{text: fmt.Sprintf("DISCO ping failed: no pong in %d tries, not even through DERP (%s)", res.Try, errText), tone: toneBad}
	case errText != "":
		return pingLine{text: kind + " ping failed: " + errText, tone: toneBad}
	case res.Path == probes.PathDirect:
		return pingLine{text: "direct " + via + " in " + lat, tone: toneGood}
	case res.Kind == probes.PingTSMP && (via == "" || strings.EqualFold(via, string(probes.PingTSMP))):
		return pingLine{text: "TSMP pong in " + lat, tone: toneGood}
	case res.Kind == probes.PingTSMP:
		return pingLine{text: "TSMP pong via " + via + " in " + lat, tone: toneGood}
	default:
		return pingLine{text: "still relayed: via " + via + " in " + lat + " (no direct path)", tone: toneWarn}
	}
}

// endRuns ends every running ping with a last line saying why, so a run
// whose results can no longer come does not keep the ping keys disabled.
func (d *Detail) endRuns(why string) {
	for id, r := range d.pings {
		if r.running {
			r.running, r.ended = false, d.now()
			r.lines = append(r.lines, pingLine{text: why, tone: toneBad})
			if id == d.peerID {
				d.dirty = true
			}
		}
	}
	d.syncKeys()
}

// syncKeys enables the ping keys only when a ping can start: a ping
// function, a peer that control does not call offline (every try would
// time out), and no run of this peer's going.
func (d *Detail) syncKeys() {
	can := d.ping != nil && d.peerID != "" && d.peer.Path.Kind != probes.PathOffline
	if r := d.pings[d.peerID]; r != nil && r.running {
		can = false
	}
	d.keys.Disco.SetEnabled(can)
	d.keys.TSMP.SetEnabled(can)
	d.keys.Refresh.SetEnabled(d.refreshAPI != nil)
	d.keys.Copy.SetEnabled(d.peer.Verdict.Settle != nil)
}

// SetRefresh gives r its action: re-read the peers' own facts from the
// control API now. Without it (no API key) r stays disabled.
func (d *Detail) SetRefresh(f func() tea.Cmd) {
	d.refreshAPI = f
	d.syncKeys()
}

// refresh rebuilds the content when something it shows changed.
func (d *Detail) refresh() {
	if !d.dirty {
		return
	}
	d.dirty = false
	if d.peerID != "" && d.snap != nil {
		d.inSnap = false
		for i := range d.snap.Peers {
			if d.snap.Peers[i].ID == d.peerID {
				d.peer, d.inSnap = d.snap.Peers[i], true
				// A poll's snapshot leaves what would settle a verdict
				// to the one peer shown.
				d.peer.Verdict.Settle = d.snap.SettleOf(i)
				break
			}
		}
		d.syncKeys()
	}
	d.vp.SetContent(strings.Join(d.lines(), "\n"))
}

// View implements common.Pane.
func (d *Detail) View() string {
	if d.width <= 0 || d.height <= 0 {
		return ""
	}
	d.refresh()
	return common.ViewportView(&d.vp)
}

// labelWidth is the width of the left label column ("endpoints ").
const labelWidth = 11

// lines renders the content, every line at most d.width cells.
//
// Long on purpose: the detail's fields in display order, each a few lines
// sharing the width and the field helper.
func (d *Detail) lines() []string {
	w := max(d.width, 1)
	var out []string
	add := func(s string) { out = append(out, common.Truncate(s, w, "…")) }
	// field adds "label     text", word-wrapping text under itself.
	field := func(label, text string, style *lipgloss.Style) {
		tw := max(w-labelWidth, 8)
		wrapped := strings.Split(common.WrapText(text, tw), "\n")
		for i, l := range wrapped {
			if style != nil {
				l = style.Render(l)
			}
			lab := strings.Repeat(" ", labelWidth)
			if i == 0 {
				lab = d.st.Muted.Render(fmt.Sprintf("%-*s", labelWidth, label))
			}
			add(lab + l)
		}
	}
	if d.peerID == "" {
		add(d.st.Muted.Render("No peer selected: pick one in Peers and press enter."))
		return out
	}
	p := &d.peer

	head := cleanName(p)
	if id := d.snap.BoardID(); id != "" && p.ID == id {
		head += " " + BoardMark
	}
	if p.OS != "" {
		head += "  " + string(p.OS)
	}
	if len(p.TailscaleIPs) > 0 {
		head += "  " + joinAddrs(p.TailscaleIPs)
	}
	add(d.st.Title.Render(head))
	if !d.inSnap {
		add(d.st.Warn.Render("not in the latest snapshot: showing the last known state"))
	}

	pathStyle := d.pathStyle(p.Path.Kind)
	field("path", string(join.PathText(&p.Path)), &pathStyle)
	v := &p.Verdict
	field("verdict", reasonWords(v), &pathStyle)
	if len(v.Also) > 0 {
		also := make([]string, len(v.Also))
		for i, r := range v.Also {
			also[i] = string(r)
		}
		field("also", strings.Join(also, ", "), nil)
	}
	if v.Fix != "" {
		field("fix", string(v.Fix), nil)
	}

	hint := "p ping until direct · t TSMP ping"
	switch {
	case d.ping == nil:
		hint = "not available here"
	case p.Path.Kind == probes.PathOffline:
		hint = "not while control says the peer is offline (every try would time out)"
	}
	field("ping", d.st.Muted.Render(hint), nil)
	if d.note != "" {
		field("", d.st.Warn.Render(d.note), nil)
	}
	if r := d.pings[d.peerID]; r != nil {
		// The latest few lines only, so the result stays on a 24-row screen.
		lines := r.lines[max(len(r.lines)-pingLinesShown, 0):]
		for i, l := range lines {
			text := l.text
			if r.running && i == len(lines)-1 {
				text += "…"
			}
			var age string
			if !r.running && !r.ended.IsZero() && i == len(lines)-1 {
				// A result stays until the next run: say how old it is.
				age = d.st.Muted.Render(" · " + units.Ago(d.now(), r.ended))
			}
			switch l.tone {
			case toneGood:
				text = d.st.Good.Render(text)
			case toneWarn:
				text = d.st.Warn.Render(text)
			case toneBad:
				text = d.st.Bad.Render(text)
			}
			add(strings.Repeat(" ", labelWidth) + text + age)
		}
	}

	out = append(out, d.settleLines(w)...)

	add(d.st.Title.Render("evidence"))
	if len(v.Checks) == 0 {
		add("  " + d.st.Muted.Render("no checks recorded"))
	}
	for _, c := range v.Checks {
		var mark string
		switch c.Mark() {
		case probes.CheckFail:
			mark = d.st.Bad.Render("[ ] FAIL   ")
		case probes.CheckUnknown:
			mark = d.st.Muted.Render("[?] unknown")
		case probes.CheckInfo:
			mark = d.st.Muted.Render("[-] info   ")
		default:
			mark = d.st.Good.Render("[x] ok     ")
		}
		text := string(c.Field) + " = " + string(c.Value)
		if c.Note != "" {
			text += ": " + string(c.Note)
		}
		const indent = 14 // "  [?] unknown "
		wrapped := strings.Split(common.WrapText(text, max(w-indent, 8)), "\n")
		for i, l := range wrapped {
			if i == 0 {
				add("  " + mark + " " + l)
			} else {
				add(strings.Repeat(" ", indent) + l)
			}
		}
	}

	out = append(out, d.bothEnds(w)...)

	var eps string
	switch {
	case !p.EndpointsKnown:
		eps = "unknown (WhoIs not available)"
	case len(p.Endpoints) == 0:
		eps = "none advertised"
	default:
		eps = joinAddrs(p.Endpoints)
	}
	field("endpoints", eps, nil)
	derp := derpCode(p, d.regions())
	if p.HomeDERP != 0 {
		derp += " (region " + strconv.Itoa(p.HomeDERP)
		if r, ok := d.regions()[p.HomeDERP]; ok && r.Name != "" {
			derp += ", " + string(r.Name)
		}
		derp += ")"
	}
	field("home DERP", derp, nil)
	// Latency is only what the last ping measured (0 until one answers),
	// so it is labelled as such and, when unmeasured, says how to measure.
	lastPing := units.Latency(p.Latency)
	if p.Latency == 0 && d.ping != nil && p.Path.Kind != probes.PathOffline {
		lastPing += " (p to ping)"
	}
	traffic := "tx " + units.Rate(p.TxRate) + "  rx " + units.Rate(p.RxRate) +
		"  last ping " + lastPing +
		"  handshake " + units.Ago(d.now(), p.LastHandshake)
	field("traffic", traffic, nil)

	add(d.st.Title.Render("path changes"))
	changes := d.snap.Changes(d.peerID)
	if len(changes) == 0 {
		add("  " + d.st.Muted.Render("none recorded yet"))
	}
	for _, c := range changes {
		st := d.pathStyle(c.Kind)
		add("  " + c.When.Format("15:04:05") + "  " + st.Render(string(c.Text)))
	}
	return out
}

func (d *Detail) regions() map[int]probes.Region {
	if d.snap == nil {
		return nil
	}
	return d.snap.Regions
}

// pathStyle is the colour role of a path kind (the words carry the meaning).
func (d *Detail) pathStyle(k probes.PathKind) lipgloss.Style {
	switch k {
	case probes.PathDirect:
		return d.st.Good
	case probes.PathDERP, probes.PathPeerRelay:
		return d.st.Warn
	case probes.PathOffline:
		return d.st.Bad
	default:
		return d.st.Muted
	}
}

// settleSteps are the shown peer's steps to settle its verdict, at most
// three (nil when it is settled or nothing is shown).
func (d *Detail) settleSteps() []probes.Step {
	if d.snap == nil || d.peerID == "" {
		return nil
	}
	o := probes.StepOptions{Mode: probes.ModeDashboard, API: d.snap.ControlAPI != nil}
	if d.ping == nil {
		// Nothing live to run (a snapshot or a paste read with --from):
		// every step is a command on an end, as `status --from` words
		// it, never this machine's API key or probe.
		o = probes.StepOptions{Mode: probes.ModePasted}
	}
	return probes.PeerSteps(d.snap.Self, &d.peer, o, 3)
}

// copySettle copies the shown steps' commands, one per line, to the
// terminal's clipboard (OSC 52, which the terminal may refuse; over SSH it
// reaches the terminal the user sits at), only because the user pressed c.
func (d *Detail) copySettle() tea.Cmd {
	var cmds []string
	for _, st := range d.settleSteps() {
		if st.Command != "" {
			cmds = append(cmds, string(st.Command))
		}
	}
	if len(cmds) == 0 {
		d.note, d.dirty = "nothing to copy: no command settles this verdict", true
		return nil
	}
	d.note, d.dirty = units.Count(len(cmds), "command", "commands")+" sent to the terminal's clipboard (OSC 52; a terminal that does not allow it ignores it)", true
	d.vp.GotoTop()
	return tea.SetClipboard(strings.Join(cmds, "\n") + "\n")
}

// settleLines are the "to settle" block of the shown peer's open verdict
// (probes.PeerSteps, as status prints it): at most three things to do,
// most deciding first, each on its end; none when the verdict is settled.
// Live, tailpath's own runs are keys (P probes), and this end's facts are
// read from tailscaled, not asked for.
func (d *Detail) settleLines(w int) []string {
	if d.snap == nil {
		return nil
	}
	steps := d.settleSteps()
	if len(steps) == 0 {
		return nil
	}
	out := []string{d.st.Title.Render("to settle")}
	const indent = 5 // "  1. "
	for i, st := range steps {
		text := st.Own
		if st.Command != "" {
			text = "on " + string(st.On)
			if st.Platform != "" && st.Platform != probes.PlatformUnknown {
				text += " (" + string(st.Platform) + ")"
			}
			text += ": " + string(st.Command)
		}
		var rs []string
		for j, r := range st.Decides {
			if j == 3 {
				rs = append(rs, fmt.Sprintf("%d more", len(st.Decides)-3))
				break
			}
			rs = append(rs, string(r))
		}
		wrapped := strings.Split(common.WrapText(text, max(w-indent, 8)), "\n")
		for j, l := range wrapped {
			lead := strings.Repeat(" ", indent)
			if j == 0 {
				lead = fmt.Sprintf("  %d. ", i+1)
			}
			out = append(out, common.Truncate(lead+l, w, "…"))
		}
		decides := common.WrapText("decides "+strings.Join(rs, ", "), max(w-indent, 8))
		for _, l := range strings.Split(decides, "\n") {
			out = append(out, common.Truncate(strings.Repeat(" ", indent)+d.st.Muted.Render(l), w, "…"))
		}
	}
	return out
}
