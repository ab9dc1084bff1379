// Package device is the Device pane: the CoreS3 board as it sees itself
// (link, resets, last crash, home DERP, DISCO probe table, heap and PSRAM
// with history, per-peer path and handshake source, Wi-Fi drops, fetch
// timings). It renders devlink.State from devlink.Event messages, marks the
// board or its peer when that node is selected in Peers
// (common.PeerSelectedMsg; the board's own peer as the joiner matched it,
// *join.Snapshot), and does no I/O. The board's text comes clean from
// devlink (safetext.Text): the pane shows it as it is.
package device

import (
	"fmt"
	"maps"
	"net/netip"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/devlink/crash"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
)

// Title is the pane's tab label.
const Title = "Device"

type keys struct {
	common.Nav // scroll (shared with every pane)
	// Reset is enabled only when the pane has a live port to reset; it
	// asks first: Confirm (y) resets, Cancel (n, esc, any other key) not.
	Reset           key.Binding
	Confirm, Cancel key.Binding
}

func (k keys) ShortHelp() []key.Binding {
	return []key.Binding{k.Confirm, k.Cancel, k.Arrows, k.Reset}
}
func (k keys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Nav.Full(), {k.Reset, k.Confirm, k.Cancel}}
}

// Pane is the Device pane. Create it with New.
type Pane struct {
	st            common.Styles
	keys          keys
	now           func() time.Time
	width, height int
	state         *devlink.State
	stopped       bool           // the source stopped on an error
	stopErr       safetext.Text  // that error, for the screen
	vp            viewport.Model // the rendered content, rebuilt on data or size change
	dirty         bool
	selected      probes.Peer           // the peer selected in the Peers pane, if any
	boardID       safetext.Text         // the Peer.ID linked to the board (join.Snapshot.BoardID); "" none
	regions       map[int]probes.Region // the tailnet's DERP map (join.Snapshot), to name the board's regions
	ticking       bool                  // an ageTickMsg is pending
	reset         func() bool           // asks the link for a hard reset; nil for a replay
	// confirming: R asked "reset the board?" and waits for y or n.
	confirming bool
	// notice answers the last R: "no board connected" while the port is
	// down, "reset requested" until the link reports the reset.
	notice string
}

// noBoardNotice is R's answer while no board is connected.
const noBoardNotice = "no board connected: R resets the board once its port is up"

// SetReset enables the reset key: fn asks the serial link for one
// deliberate hard reset without blocking (devlink.Link.RequestReset); the
// outcome comes back as the link status in a later devlink.Event.
func (p *Pane) SetReset(fn func() bool) {
	p.reset = fn
	p.syncKeys()
}

// syncKeys enables R with a reset to ask for, and y/n while it asks.
func (p *Pane) syncKeys() {
	p.keys.Nav.SetEnabled(!p.confirming)
	p.keys.Reset.SetEnabled(p.reset != nil && !p.confirming)
	p.keys.Confirm.SetEnabled(p.confirming)
	p.keys.Cancel.SetEnabled(p.confirming)
}

// confirmQuestion is R's question, shown until y or n.
const confirmQuestion = "Reset the board now? It reboots (a hard reset through the serial port's DTR/RTS lines). y resets, n or esc does not"

// ageTickMsg redraws pane p once a second so "ago" texts (last crash,
// handshakes) keep counting while the board is silent or unplugged.
type ageTickMsg struct{ p *Pane }

// ageEvery is how often "ago" texts are refreshed.
const ageEvery = time.Second

func (p *Pane) ageTick() tea.Cmd {
	return tea.Tick(ageEvery, func(time.Time) tea.Msg { return ageTickMsg{p} })
}

// New returns an empty Device pane. now is the clock for "ago" texts (nil:
// time.Now).
func New(st common.Styles, now func() time.Time) *Pane {
	if now == nil {
		now = time.Now
	}
	p := &Pane{st: st, now: now, dirty: true, vp: common.NewViewport(), keys: keys{
		Nav:     common.NewNav("scroll"),
		Reset:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "reset board (asks first)")),
		Confirm: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "reset now")),
		Cancel:  key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "don't reset")),
	}}
	p.syncKeys()
	return p
}

// Title implements common.Pane.
func (p *Pane) Title() string { return Title }

// SetSize implements common.Pane.
func (p *Pane) SetSize(w, h int) { p.width, p.height, p.dirty = w, h, true }

// KeyMap implements common.Pane.
func (p *Pane) KeyMap() help.KeyMap { return p.keys }

// Capturing implements common.Pane: true while R's question waits for
// y or n (every key answers it).
func (p *Pane) Capturing() bool { return p.confirming }

// Update implements common.Pane: it keeps the latest state from
// devlink.Event, scrolls on keys, and once it has a board redraws every
// second (its own tick) so "ago" texts stay true.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case devlink.Event:
		s := m.State
		p.state = &s
		if m.Err != nil {
			p.stopped, p.stopErr = true, m.ErrText()
		}
		if (p.notice == noBoardNotice && s.Link.Up) || s.Link.Reset || s.Link.ResetErr != nil {
			p.notice = "" // the link says what happened now
		}
		p.dirty = true
		if !p.ticking {
			p.ticking = true
			return p.ageTick()
		}
	case ageTickMsg:
		if m.p == p {
			p.dirty = true
			return p.ageTick()
		}
	case common.PeerSelectedMsg:
		p.selected = m.Peer
		p.dirty = true
	case common.StylesMsg:
		p.st, p.dirty = m.Styles, true
	case *join.Snapshot:
		if id := m.BoardID(); id != p.boardID {
			p.boardID, p.dirty = id, true
		}
		if m.Snapshot != nil && !maps.EqualFunc(m.Regions, p.regions, func(a, b probes.Region) bool { return a.Code == b.Code }) {
			p.regions, p.dirty = m.Regions, true
		}
	case tea.KeyPressMsg:
		if p.confirming {
			return p.answer(m)
		}
		common.Refresh(&p.vp, &p.dirty, p.render, p.width, p.height)
		switch {
		case p.keys.Scroll(&p.vp, m):
		case key.Matches(m, p.keys.Reset) && p.reset != nil:
			p.dirty = true
			if p.state == nil || !p.state.Link.Up {
				p.notice = noBoardNotice
				return nil
			}
			// A reset reboots the board and loses its state: ask first.
			p.confirming, p.notice = true, ""
			p.syncKeys()
			p.vp.GotoTop() // the question is the first line
		}
	}
	return nil
}

// answer takes the key that answers R's question: y resets, any other
// key does not.
func (p *Pane) answer(m tea.KeyPressMsg) tea.Cmd {
	yes := key.Matches(m, p.keys.Confirm) // enabled while asking
	p.confirming, p.dirty = false, true
	p.syncKeys()
	if !yes {
		p.notice = "not reset"
		return nil
	}
	if p.state == nil || !p.state.Link.Up {
		p.notice = noBoardNotice // the port went down while asking
		return nil
	}
	p.notice = "reset requested"
	fn := p.reset
	return func() tea.Msg { fn(); return nil }
}

// View implements common.Pane.
func (p *Pane) View() string {
	if p.width <= 0 || p.height <= 0 {
		return ""
	}
	common.Refresh(&p.vp, &p.dirty, p.render, p.width, p.height)
	return common.ViewportView(&p.vp)
}

// render is the pane's text, section by section.
func (p *Pane) render() []string {
	var b []string
	add := func(s string) { b = append(b, s) }
	if p.stopped {
		add(p.st.Bad.Render("device source stopped: " + p.stopErr.String()))
		add("")
	}
	if p.confirming {
		add(p.st.Bad.Render(confirmQuestion))
	}
	if p.notice != "" {
		add(p.st.Warn.Render(p.notice))
	}
	s := p.state
	if s == nil {
		add(p.st.Muted.Render("no board yet: waiting for the serial port (tailpath --port auto|PATH|-)"))
		return b
	}
	now := p.now()
	b = append(b, p.renderBoard(s)...)
	b = append(b, p.renderCrash(s, now)...)
	b = append(b, p.renderDERP(s, now)...)
	b = append(b, p.renderHealth(s)...)
	b = append(b, p.renderPeers(s, now)...)
	b = append(b, p.renderFetches(s)...)
	add("")
	add(p.st.Muted.Render(fmt.Sprintf("%d lines, %d telemetry frames (%d corrupt)", s.Lines, s.Frames, s.CorruptFrames)))
	return b
}

// renderBoard is the link and the board's identity: a live port, or the
// demo's recorded capture; its resets and what the firmware says of itself.
func (p *Pane) renderBoard(s *devlink.State) []string {
	var b []string
	add := func(s string) { b = append(b, s) }
	// Link and identity: a live port, or the demo's recorded capture.
	var linkText string
	switch {
	case s.Link.Replay && s.Link.Up:
		linkText = p.st.Good.Render("replay") + " (recorded capture)"
	case s.Link.Replay:
		linkText = p.st.Muted.Render("replay ended") + " (recorded capture)"
	case s.Link.Up:
		linkText = p.st.Good.Render("link up") + " " + s.Link.Port.String()
	default:
		linkText = p.st.Bad.Render("link down") + " " + s.Link.Port.String()
	}
	id := ""
	if s.Hostname != "" || s.TailnetIP.IsValid() {
		id = fmt.Sprintf("  %s %s", s.Hostname, addrOr(s.TailnetIP.String(), s.TailnetIP.IsValid()))
	}
	if p.isBoard() {
		id += "  " + p.st.Selected.Render("selected in Peers")
	}
	add(p.st.Title.Render("Board") + "  " + linkText + id)
	if s.Link.Replay {
		// The demo's capture: its addresses are the recording's
		// (documentation and private ranges), beside a lab on 127.0.0.1.
		add("  " + p.st.Muted.Render("addresses below are the recording's, not this tailnet's"))
	}
	switch {
	case s.Link.ResetErr != nil:
		add("  " + p.st.Warn.Render("reset failed: "+s.Link.ResetErrText().String()))
	case s.Link.Reset:
		add("  " + p.st.Muted.Render("reset by tailpath at "+s.Link.At.Format("15:04:05")))
	}
	if !s.Link.Up && !s.Link.Replay && s.Link.Err != nil {
		add("  " + p.st.Muted.Render("last error: "+s.Link.ErrText().String()))
	}
	// The reset's meaning first, its register name and code after.
	reset := "unknown"
	if s.LastReset.Name != "" || s.LastReset.Code != 0 {
		reset = fmt.Sprintf("%s · %s 0x%x", s.LastReset.Reason, s.LastReset.Name, s.LastReset.Code)
	}
	if s.ResetWord != "" {
		reset += " · firmware says " + s.ResetWord.String()
	}
	add(fmt.Sprintf("  boots seen %d · last reset %s", s.Boots, reset))
	if s.ELFMismatch {
		add("  " + p.st.Warn.Render(fmt.Sprintf("the board runs firmware with ELF SHA256 %s…, not the --elf file: decoded backtraces may be wrong", s.BoardELFSHA)))
	}
	if s.BinaryLogFrames > 0 {
		add("  " + p.st.Warn.Render(fmt.Sprintf("binary logging is on (%d frames): pass the ELF to decode it", s.BinaryLogFrames)))
	}
	return b
}

// renderCrash is the last crash: its registers and decoded backtrace.
func (p *Pane) renderCrash(s *devlink.State, now time.Time) []string {
	var b []string
	add := func(s string) { b = append(b, s) }
	if c := s.LastCrash; c != nil {
		add("")
		add(p.st.Title.Render("Last crash") + "  " + p.st.Bad.Render(c.Reason.String()) + p.st.Muted.Render(" · "+units.Ago(now, c.At)))
		if regs := crashRegisters(c, s.Chip); regs != "" {
			add("  " + regs)
		}
		if reg, addr, access, ok := c.NullAccess(); ok {
			add("  " + p.st.Bad.Render(fmt.Sprintf("%s 0x%08x: a NULL-pointer %s", reg, addr, access)) +
				p.st.Muted.Render(nullOffset(addr)))
		}
		if len(c.Backtrace.Frames) > 0 {
			tail := ""
			if c.Backtrace.Corrupted {
				tail = " (stack corrupted after these)"
			}
			add(fmt.Sprintf("  backtrace: %d frames%s", len(c.Backtrace.Frames), tail))
		}
		for _, d := range c.Decoded {
			add("  " + p.st.Warn.Render(d.String()))
		}
		if h := decodeHint(c); h != "" {
			add("  " + p.st.Muted.Render(h))
		}
	}
	return b
}

// renderDERP is the home DERP, the DERP relay, DISCO decryption and
// WireGuard handshakes.
func (p *Pane) renderDERP(s *devlink.State, now time.Time) []string {
	var b []string
	add := func(s string) { b = append(b, s) }
	add("")
	derp := "unknown"
	if s.HomeDERP != 0 {
		derp = p.regionText(s.HomeDERP)
		if s.HomeDERPHost != "" {
			derp += " (" + s.HomeDERPHost.String() + ")"
		}
		if s.HomeLatency > 0 {
			derp += fmt.Sprintf(" %dms", s.HomeLatency.Milliseconds())
		}
		if s.HomeDERPBy != "" {
			derp += ", chosen by " + derpByWords(s.HomeDERPBy)
		}
	}
	add(p.st.Title.Render("Home DERP") + "  " + derp)
	if same, ok := s.NearestIsHome(); ok && !same {
		add("  " + p.st.Warn.Render(fmt.Sprintf("not the nearest: %s answers in %dms", p.regionText(s.NearestDERP), s.NearestLatency.Milliseconds())))
	}
	if r := s.Relay; r.Known {
		add(p.st.Title.Render("DERP relay") + "  " + relayWords(p.st, r, now))
	}
	if s.DiscoDecryptFails > 0 {
		add(p.st.Title.Render("DISCO decrypt") + "  " + p.st.Bad.Render(units.Count(int(s.DiscoDecryptFails), "packet", "packets")+" failed: stale disco key"))
	}
	if s.WGInitiations > 0 || s.WGResponses > 0 {
		add(p.st.Title.Render("WireGuard") + fmt.Sprintf("  handshakes: %d started, %d answered", s.WGInitiations, s.WGResponses))
	}
	return b
}

// renderHealth is the DISCO probe table, the control stream's HTTP/2
// window, the heap, Wi-Fi and the telemetry the pane has no words for.
func (p *Pane) renderHealth(s *devlink.State) []string {
	var b []string
	add := func(s string) { b = append(b, s) }
	// DISCO probe table.
	probeTable := "unknown"
	if s.ProbesCap > 0 {
		probeTable = fmt.Sprintf("%d/%d used, %d dropped, %d reaped", s.ProbesUsed, s.ProbesCap, s.ProbesDropped, s.ProbesReaped)
	}
	// The verdict comes right after the label so a narrow window keeps it.
	line := p.st.Title.Render("DISCO probes") + "  "
	if s.ProbeTableFull() || s.PoolFullLines > 0 {
		line += p.st.Bad.Render("FULL: new pings are dropped") + " · "
	}
	add(line + probeTable + "  " + spark(s.ProbeHistory.Samples(), s.ProbesCap))

	// The control stream's HTTP/2 receive window (D frame h2rx/h2wu/h2win).
	if s.H2Known {
		h2 := fmt.Sprintf("HTTP/2 %d B open, %d B received, %d B window credit returned",
			s.H2WindowOpen, s.H2Received, s.H2WindowReturned)
		if s.H2Received > 0 && s.H2WindowReturned == 0 && s.H2WindowOpen == 0 {
			add(p.st.Title.Render("Control stream") + "  " + p.st.Bad.Render("STALLED: the server can send nothing more"))
			add("  " + h2)
		} else {
			add(p.st.Title.Render("Control stream") + "  " + h2)
		}
	}

	// Heap.
	// The sparklines draw this boot's samples only, the same measure as
	// the figures beside them: the min (the board's own, since boot) is
	// never above a bar, and another boot's heap never shows as a dip.
	// Only what the board said: a figure it has not reported is left out,
	// not shown as "?" or 0 (an LTE board has no Wi-Fi to count).
	if heap := heapWords(s); heap != "" {
		add(p.st.Title.Render("Heap") + "  " + heap + "  " + spark(s.HeapHistory.Since(s.BootAt), 0))
	}
	if s.PSRAMFree > 0 {
		add(fmt.Sprintf("  PSRAM free %s  %s", heapBytes(s.PSRAMFree), spark(s.PSRAMHistory.Since(s.BootAt), 0)))
	}
	if s.WiFiKnown {
		wifi := fmt.Sprintf("%d disconnects", max(s.WiFiDisconnects, s.WiFiDropLines))
		if s.RSSI != 0 {
			wifi += fmt.Sprintf(", RSSI %d dBm", s.RSSI)
		}
		add(p.st.Title.Render("Wi-Fi") + "  " + wifi)
	}
	// Fields of the telemetry table this pane has no words for yet, as the
	// board wrote them (devlink.State.Extra).
	var more []string
	for _, k := range telemetry.Kinds() {
		if f := s.Extra[k]; len(f) > 0 {
			more = append(more, k.String()+": "+fieldsText(f))
		}
	}
	if len(more) > 0 {
		add(p.st.Title.Render("More telemetry") + "  " + strings.Join(more, " · "))
	}
	return b
}

// renderPeers is the peers as the board sees them.
func (p *Pane) renderPeers(s *devlink.State, now time.Time) []string {
	var b []string
	add := func(s string) { b = append(b, s) }
	add("")
	add(p.st.Title.Render("Peers (board's view)"))
	ids := s.PeerIDs()
	if len(ids) == 0 {
		add("  " + p.st.Muted.Render("none reported yet"))
	}
	for _, id := range ids {
		pr := s.Peers[id]
		ip := addrOr(pr.IP.String(), pr.IP.IsValid())
		lat := ""
		if pr.Latency > 0 {
			lat = fmt.Sprintf(" %dms", pr.Latency.Milliseconds())
		}
		row := fmt.Sprintf("  peer %d %s  path %s%s  handshake via %s", id, ip, p.pathWords(pr.Path), lat, p.pathText(pr.Handshake))
		if !pr.HandshakeAt.IsZero() {
			row += p.st.Muted.Render(" · " + units.Ago(now, pr.HandshakeAt))
		}
		if len(pr.Extra) > 0 {
			row += "  " + fieldsText(pr.Extra)
		}
		if pr.IP.IsValid() && p.selectedHas(pr.IP) {
			row += "  " + p.st.Selected.Render("◀ "+string(p.selected.Name))
		}
		add(row)
	}
	return b
}

// renderFetches is the board's last HTTP fetches.
func (p *Pane) renderFetches(s *devlink.State) []string {
	var b []string
	add := func(s string) { b = append(b, s) }
	if len(s.Fetches) > 0 {
		add("")
		add(p.st.Title.Render("HTTP fetches"))
		from := max(0, len(s.Fetches)-5)
		for _, f := range s.Fetches[from:] {
			res := fmt.Sprintf("HTTP %d", f.HTTPStatus)
			if f.Err != "" {
				res = p.st.Bad.Render(f.Err.String())
			}
			// Fetch numbers restart every boot: name the boot.
			boot := ""
			if f.Boot > 0 {
				boot = fmt.Sprintf("boot %d ", f.Boot)
			}
			row := fmt.Sprintf("  %s#%d %s in %dms = %s, %s via %s", boot, f.N, units.Bytes(int64(f.Bytes)), f.Elapsed.Milliseconds(), units.Rate(f.KiBps()*1024), res, p.pathText(f.Via))
			if len(f.Extra) > 0 {
				row += "  " + fieldsText(f.Extra)
			}
			add(row)
		}
	}
	return b
}

// crashRegisters words the registers that locate a crash: the faulting PC
// (and whether it is in the chip's ROM, where no app ELF can decode it),
// for RISC-V its return address, the stack pointer, the architecture, and
// whether the report was cut short. "" before a register dump.
func crashRegisters(c *devlink.Crash, chip string) string {
	if len(c.Registers) == 0 {
		return ""
	}
	var parts []string
	pcName, spName := "PC", "A1"
	if c.Arch == "riscv" {
		pcName, spName = "MEPC", "SP"
	}
	if c.PC != 0 {
		w := fmt.Sprintf("%s 0x%08x", pcName, c.PC)
		if crash.InROM(chip, c.PC) {
			w += " (in ROM)"
		}
		parts = append(parts, w)
	}
	if ra, ok := crash.RegisterValue(c.Registers, "RA"); ok && c.Arch == "riscv" {
		parts = append(parts, fmt.Sprintf("RA 0x%08x", ra))
	}
	if sp, ok := crash.RegisterValue(c.Registers, spName); ok {
		parts = append(parts, fmt.Sprintf("SP 0x%08x", sp))
	}
	if c.Arch != "" {
		parts = append(parts, c.Arch)
	}
	if !c.Ended {
		parts = append(parts, "report cut short")
	}
	return strings.Join(parts, " · ")
}

// nullOffset words a NULL access's address: the offset of the field read
// through the pointer.
func nullOffset(addr uint32) string {
	if addr == 0 {
		return " (address 0 itself)"
	}
	return fmt.Sprintf(" (a field %d bytes into a struct reached through a NULL pointer)", addr)
}

// decodeHint says what would decode the crash, or that the log already
// holds it decoded; "" when tailpath decoded it or nothing is to decode.
func decodeHint(c *devlink.Crash) string {
	switch {
	case len(c.Decoded) > 0:
		return ""
	case c.DecodedInLog():
		return "the log holds this backtrace decoded already (its #N / 0x…: lines, in the Log tab)"
	case len(c.Backtrace.Frames) > 0:
		return "pass the firmware ELF (--elf) to decode the backtrace"
	case c.Arch == "riscv" && len(c.Stack) > 0:
		// RISC-V prints no Backtrace: line; the ELF finds the return
		// addresses in the stack dump, as ESP-IDF monitor does with gdb.
		return "pass the firmware ELF (--elf) to decode MEPC and recover the backtrace from the stack dump"
	case c.PC != 0:
		return "pass the firmware ELF (--elf) to decode the faulting PC"
	}
	return ""
}

// relayWords says how the board's DERP relay connection is: up, or down
// with what is known (was up this boot, attempts, how long, last error).
func relayWords(st common.Styles, r devlink.Relay, now time.Time) string {
	if r.Connected {
		w := st.Good.Render("connected")
		switch {
		case r.RxAge >= relaySilent:
			// DERP servers send a keep-alive every 60 s: a longer silence
			// means the relay may be gone though the connection looks up.
			w = st.Warn.Render(fmt.Sprintf("connected but silent for %s", r.RxAge.Round(time.Second))) +
				" (no keep-alive from the relay)"
		case r.RxAge >= 0:
			w += fmt.Sprintf(", last frame %s ago", r.RxAge.Round(time.Second))
		}
		if r.Drops > 0 {
			w += fmt.Sprintf(" · lost %d× this boot", r.Drops)
		}
		return w
	}
	w := st.Bad.Render("DOWN: nothing relayed reaches the board")
	var parts []string
	if r.WasUp {
		parts = append(parts, "was up earlier this boot")
	}
	if d := r.DownFor(now); d >= time.Second {
		parts = append(parts, "down "+d.Round(time.Second).String())
	}
	if r.Attempts > 0 {
		parts = append(parts, units.Count(int(r.Attempts), "reconnect attempt", "reconnect attempts"))
	}
	if r.Drops > 0 {
		parts = append(parts, fmt.Sprintf("lost %d× this boot", r.Drops))
	}
	if r.Silences > 0 {
		parts = append(parts, fmt.Sprintf("went silent %d×", r.Silences))
	}
	if r.LastErr != "" {
		parts = append(parts, "last error "+r.LastErr.String())
	}
	if len(parts) > 0 {
		w += " · " + strings.Join(parts, ", ")
	}
	return w
}

// relaySilent is how long a connected relay may stay silent before the
// pane warns: past one 60 s DERP keep-alive, with slack.
const relaySilent = 75 * time.Second

// derpByWords says how the board chose its home DERP, from the N frame's
// derpby word ("latency", "lowest-id", "fixed", "none"); unknown words are
// shown as sent.
func derpByWords(by safetext.Text) string {
	switch by {
	case "lowest-id":
		return "lowest region id (not by latency)"
	case "latency":
		return "lowest latency"
	case "fixed":
		return "configuration (fixed, not by latency)"
	case "none":
		return "nothing (no home region)"
	}
	return by.String()
}

// isBoard reports whether the peer selected in Peers is this board, as
// the joiner matched them (probes/join).
func (p *Pane) isBoard() bool {
	return p.boardID != "" && p.selected.ID == p.boardID
}

func (p *Pane) selectedHas(ip netip.Addr) bool {
	for _, a := range p.selected.TailscaleIPs {
		if a == ip {
			return true
		}
	}
	return false
}

func addrOr(s string, ok bool) string {
	if ok {
		return s
	}
	return "?"
}

// fieldsText lists telemetry fields as the board wrote them: "key=value
// key=value" (wire text: printable ASCII without spaces).
func fieldsText(fs []telemetry.Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Key + "=" + f.Value.String()
	}
	return strings.Join(parts, " ")
}

// regionText names a DERP region of the board's as the tailnet's DERP map
// does (`region 901 "lab1"`), or by its id alone when the map is not known.
func (p *Pane) regionText(id int) string {
	if r, ok := p.regions[id]; ok && r.Code != "" {
		return fmt.Sprintf("region %d %q", id, string(r.Code))
	}
	return fmt.Sprintf("region %d", id)
}

// pathText words a path: "direct 1.2.3.4:41641", `DERP region 7 "lab1"`, "unknown".
func (p *Pane) pathText(path telemetry.Path) string {
	switch path.Kind {
	case telemetry.PathDirect:
		return "direct " + path.Addr.String()
	case telemetry.PathDERP:
		return "DERP " + p.regionText(int(path.Region))
	}
	return "unknown"
}

func (p *Pane) pathWords(path telemetry.Path) string {
	switch path.Kind {
	case telemetry.PathDirect:
		return p.st.Good.Render(p.pathText(path))
	case telemetry.PathDERP:
		return p.st.Warn.Render("relay, " + p.pathText(path))
	}
	return "none"
}

// heapWords words the heap figures the board reported ("internal 128KiB
// free (min 120KiB since boot, largest 68.0KiB)"); "" when it reported none.
func heapWords(s *devlink.State) string {
	var w string
	if s.HeapFree > 0 {
		w = "internal " + units.Bytes(s.HeapFree) + " free"
	}
	var more []string
	if s.HeapMin > 0 {
		more = append(more, "min "+units.Bytes(s.HeapMin)+" since boot")
	}
	if s.HeapLargest > 0 {
		more = append(more, "largest "+units.Bytes(s.HeapLargest))
	}
	switch {
	case len(more) == 0:
	case w == "":
		w = "internal " + strings.Join(more, ", ")
	default:
		w += " (" + strings.Join(more, ", ") + ")"
	}
	return w
}

// heapBytes words a heap figure (units.Bytes); "?" for unknown (0).
func heapBytes(b int64) string {
	if b <= 0 {
		return "?"
	}
	return units.Bytes(b)
}

var bars = []rune("▁▂▃▄▅▆▇█")

// spark draws the last 20 samples as a bar line scaled to top (0: the max).
func spark(s []devlink.Sample, top int64) string {
	if len(s) == 0 {
		return ""
	}
	s = s[max(0, len(s)-20):]
	lo, hi := s[0].Value, s[0].Value
	for _, v := range s {
		lo, hi = min(lo, v.Value), max(hi, v.Value)
	}
	if top > 0 {
		lo, hi = 0, top
	}
	var b strings.Builder
	for _, v := range s {
		i := 0
		if hi > lo {
			i = int((v.Value - lo) * int64(len(bars)-1) / (hi - lo))
		}
		b.WriteRune(bars[max(0, min(i, len(bars)-1))])
	}
	return b.String()
}

var _ common.Pane = (*Pane)(nil)
