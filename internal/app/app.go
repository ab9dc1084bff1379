// Package app wires tailpath's sources to its dashboard: the tailscaled
// source (probes/localapi), a board (devlink) and the host's TCP tuning (sysctl)
// are run by one Sources and relayed to a Sink: a tea.Program running tui's
// root model (TeaSink), with the panes in one declared order, or serve's
// metrics store. Tailscaled's snapshots and the board's state meet in one
// link.Linker on the way, so the Peers and Detail panes get linked
// snapshots (the board's peer diagnosed with its evidence, path changes). The dashboard and demo commands build a Dashboard and
// call Run; nothing here registers itself or keeps package state.
//
// It also holds the pieces the commands share: NeedTerminal, Progress,
// OpenFirmware and PeerRTT; what status gathers and does with snapshots
// (Status, SaveSnapshot, ReadFrom, ApplyPeerSnapshots); and serve (Serve,
// Listen, ServeDemo).
package app

import (
	"context"
	"fmt"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/hostnet"
	"github.com/tailpath/tailpath/probes/link"
	"github.com/tailpath/tailpath/probes/localapi"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/device"
	"github.com/tailpath/tailpath/tui/logpane"
	"github.com/tailpath/tailpath/tui/tuning"
)

// FPS is the renderer's frame rate. The renderer wakes up at this rate even
// when nothing changed; 20 frames/s keeps an idle dashboard's CPU low
// (docs/perf.md) and a key's redraw within 50 ms.
const FPS = 20

// LogKeep is how many device lines the Log pane keeps.
const LogKeep = 20000

// Dashboard is everything one run of the TUI is wired from. The dashboard
// command builds one from the local tailscaled and flags; the demo from the
// lab (Demo).
type Dashboard struct {
	// Client is tailscaled's LocalAPI (the lab's observer in the demo).
	Client localapi.LocalClient
	// Socket names Client's socket in the source's errors; "" is the
	// platform default.
	Socket string
	// Interval is how often Status is polled; 0 means the source's default.
	Interval time.Duration
	// All keeps the peers `tailscale status` hides (shared-in nodes,
	// Mullvad exit nodes; localapi.GatherOptions.All).
	All bool
	// ControlAPI, when set, reads the peers' own side of each path from
	// the Tailscale control API, once a minute and on r.
	ControlAPI *controlapi.ControlAPI
	// Title is shown left of the tabs.
	Title safetext.Text
	// Device, when set, adds the Device and Log panes, fed by it.
	Device *devlink.Source
	// EOL is what the Log pane's console sends for Enter with a live
	// board (a replay stays read-only); nil means CR.
	EOL []byte
	// Tuning, when set, adds the Tuning pane and its source.
	Tuning *tuning.Options
	// InputTTY reads keys from the controlling terminal rather than stdin
	// (--port - carries the capture on stdin).
	InputTTY bool
	// Closers run after the program and every feed have stopped.
	Closers []func() error
	// Replay, when set, takes the tailscaled source's place: the dashboard
	// shows this saved snapshot (probes/snapshot), read-only, under a
	// "snapshot taken …" notice. Client is then unused.
	Replay *snapshot.File
	// SaveDir is where S saves snapshots of the live dashboard; "" is the
	// user's state directory (UserSaveDir), never the current one.
	SaveDir string
}

// Panes returns the panes after Peers and Detail, in tab order (Device,
// Log, Tuning: each only when its source is set), and the sources that
// keep them fed, without tailscaled's (Run adds it). It starts nothing.
func (d *Dashboard) Panes() ([]common.Pane, Sources) {
	var panes []common.Pane
	var srcs Sources
	if src := d.Device; src != nil {
		st := common.DefaultStyles() // the root sends the terminal's (common.StylesMsg)
		dev := device.New(st, nil)
		lp := logpane.New(st, LogKeep)
		if src.Link != nil {
			// R in the Device pane: one deliberate hard reset of a live board.
			dev.SetReset(src.Link.RequestReset)
			// i in the Log pane: a console line to the board.
			eol := d.EOL
			if eol == nil {
				eol = []byte("\r")
			}
			lp.SetConsole(src.Link.Send, eol)
		}
		panes = append(panes, dev, lp)
		srcs.Device = src
	}
	if d.Tuning != nil {
		panes = append(panes, tuning.New(*d.Tuning))
		c := d.Tuning.Control()
		srcs.Tuning, srcs.TuningEvery = &c, TuningInterval
	}
	return panes, srcs
}

// SourceOptions are the tailscaled source's options for d: its poll, the
// peers tailscale status hides when All, fresh DERP latencies every 10
// minutes (a few STUN packets, as `tailscale netcheck` sends, so
// far-home-derp is judged on current numbers rather than NetInfo's, which
// may be hours old), and the control API's peer side when ControlAPI is
// set.
func (d *Dashboard) SourceOptions() localapi.SourceOptions {
	o := localapi.SourceOptions{
		Interval:    d.Interval,
		Socket:      d.Socket,
		Gather:      localapi.GatherOptions{All: d.All, Host: hostnet.Reader(HostFactsMaxAge)},
		MeasureDERP: localapi.MeasureDERPLatency,
		Prober:      Prober,
	}
	if d.ControlAPI != nil {
		o.PeerSide = controlapi.NewRefresher(d.ControlAPI, 0)
	}
	return o
}

// Run starts the sources, runs the Bubble Tea program on stdin and stdout
// until the user quits or ctx ends, then cancels the sources, waits for
// them and runs the closers. It fails at once, with ErrNoTerminal, when the
// keys would come from something that is not a terminal.
func (d *Dashboard) Run(parent context.Context, stdin io.Reader, stdout io.Writer) error {
	var input tea.ProgramOption
	if d.InputTTY {
		if err := CheckTTY(); err != nil {
			return err
		}
		in, out, err := tea.OpenTTY()
		if err != nil {
			return terminalError{fmt.Sprintf("%v (%v)", ErrNoTerminal, err)}
		}
		defer in.Close()
		defer out.Close()
		input = tea.WithInput(in)
	} else {
		if err := NeedTerminal(stdin); err != nil {
			return err
		}
		input = tea.WithInput(stdin)
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	if d.Replay != nil {
		return d.runReplay(ctx, parent, input, stdout)
	}

	var linker link.Linker
	sopts := d.SourceOptions()
	src := localapi.NewSource(d.Client, sopts)
	panes, srcs := d.Panes()
	srcs.Probes = src
	opts := tui.Options{
		Title: d.Title,
		Panes: panes,
		Ping: func(peer probes.Peer, kind probes.PingKind) tea.Cmd {
			return func() tea.Msg {
				src.Ping(peer, kind)
				return nil
			}
		},
		Probe: func(peers []probes.Peer) tea.Cmd {
			return func() tea.Msg {
				src.Probe(peers)
				return nil
			}
		},
		Save: func() tea.Cmd {
			ls := linker.Snapshot()
			var facts *probes.APIFacts
			var st *probes.APIStatus
			if r := sopts.PeerSide; r != nil {
				f, s := r.Latest()
				facts, st = f, &s
			}
			return func() tea.Msg { return d.save(ctx, ls, facts, st) }
		},
	}
	if d.ControlAPI != nil {
		opts.RefreshPeerSide = func() tea.Cmd {
			return func() tea.Msg {
				src.RefreshPeerSide()
				return nil
			}
		}
	}
	model := tui.New(opts)
	p := newProgram(ctx, model, input, stdout)

	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		srcs.Run(ctx, &linker, TeaSink(p.Send))
	}()
	_, err := p.Run()
	cancel()
	<-relayed
	for _, c := range d.Closers {
		c()
	}
	// An interrupt (parent cancelled) ends the program with an error that
	// is no failure; anything else (no terminal, say) is reported.
	if err != nil && parent.Err() == nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// TeaSink is the dashboard's sink: every value becomes a message to the
// program (send is tea.Program.Send), which the root model broadcasts to
// its panes.
type TeaSink func(tea.Msg)

func (send TeaSink) Snapshot(ls *link.Snapshot) { send(ls) }
func (send TeaSink) Event(ev probes.Event)      { send(ev) }
func (send TeaSink) Board(ev devlink.Event)     { send(ev) }
func (send TeaSink) Tuning(r tune.Reading)      { send(tuning.ReportMsg(r)) }
