// Package dashboard wires tailpath's sources to its terminal dashboard:
// the sources internal/app runs (tailscaled, a board, the host's TCP
// tuning) are relayed to a tea.Program running tui's root model
// (TeaSink), with the panes in one declared order. It holds the terminal's
// set-up (NeedTerminal, CheckTTY), S's save, the replay of a saved
// snapshot (--from) and the demo's dashboard. The dashboard and demo
// commands build a Dashboard and call Run; nothing here registers itself
// or keeps package state. It is the one package that joins internal/app
// to Bubble Tea and tui.
package dashboard

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/buildinfo"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/termcolor"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/selfpane"
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
	// Sources are the dashboard's sources: tailscaled (Client), the
	// control API, a board (Device: adds the Device and Log panes) and
	// the host's tuning (Tuning: adds the Tuning pane).
	app.Sources
	// Title is shown left of the tabs.
	Title safetext.Text
	// EOL is what the Log pane's console sends for Enter with a live
	// board (a replay stays read-only); nil means CR.
	EOL []byte
	// InputTTY reads keys from the controlling terminal rather than stdin
	// (--port - carries the capture on stdin).
	InputTTY bool
	// Closers run after the program and every feed have stopped.
	Closers []func() error
	// Replay, when set, takes the sources' place: the dashboard shows this
	// saved snapshot (probes/snapshot), read-only, under a "snapshot
	// taken …" notice. Sources are then unused.
	Replay *snapshot.File
	// SaveDir is where S saves snapshots of the live dashboard; "" is the
	// user's state directory (UserSaveDir), never the current one.
	SaveDir string
}

// TuningOptions hand the Tuning pane the host c reads and changes, as
// functions: the pane holds no Control and does no I/O of its own (it
// calls them in commands). Whether applying is allowed is read once, here.
func TuningOptions(c tune.Control) tuning.Options {
	may := c.MayChange()
	return tuning.Options{
		Read:      c.Read,
		Apply:     c.Apply,
		Revert:    c.Revert,
		MayChange: func() bool { return may },
		Sandbox:   c.Inputs.Sandbox,
		BBR:       c.Inputs.BBR,
		StateFile: c.StateFile(),
	}
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

	joiner := join.Joiner{Poll: true}
	sopts := d.TailscaledOptions()
	// The first frame shows Status's peers and paths as soon as Status
	// arrives; their reasons follow with the full gather.
	sopts.Early = true
	src := tailscaled.NewSource(d.Client, sopts)
	// The sources start first: the terminal's colour profile
	// (termcolor.Profile: terminfo, `tmux info` in tmux), the model and
	// the program are made while the first gather asks tailscaled, and
	// what the sources deliver meanwhile waits for the program.
	var p *tea.Program
	ready := make(chan struct{})
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		d.Sources.Run(ctx, src, &joiner, TeaSink(func(msg tea.Msg) {
			select {
			case <-ready:
				p.Send(msg)
			case <-ctx.Done():
			}
		}))
	}()
	env := os.Environ()
	styles := termStyles(stdout, env)
	paneStyles := common.DefaultStyles()
	if styles != nil {
		paneStyles = *styles
	}
	opts := tui.Options{
		Title:   d.Title,
		Styles:  styles,
		Panes:   d.panesIn(paneStyles),
		Tabs:    Tabs(),
		Version: buildinfo.Own().Version,
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
			ls := joiner.Snapshot()
			var facts *probes.APIFacts
			var st *probes.APIStatus
			if r := sopts.PeerSide; r != nil {
				f, s := r.Latest()
				facts, st = f, &s
			}
			return func() tea.Msg { return d.save(ctx, ls, facts, st) }
		},
	}
	opts.Netcheck, opts.PingDERP = selfKeys(ctx, src, &joiner)
	if d.ControlAPI != nil {
		opts.RefreshPeerSide = func() tea.Cmd {
			return func() tea.Msg {
				src.RefreshPeerSide()
				return nil
			}
		}
	}
	model := tui.New(opts)
	p = newProgram(ctx, model, input, stdout, env)
	close(ready)
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

// TeaSink is the dashboard's sink: every source's report becomes a
// message to the program (send is tea.Program.Send), which the root model
// broadcasts to its panes.
type TeaSink func(tea.Msg)

// Deliver routes each source's report to the program as the message its
// panes read (app.Sink).
func (send TeaSink) Deliver(ev app.Event) {
	switch ev := ev.(type) {
	case app.JoinedEvent:
		send(ev.Snapshot)
	case app.TailscaledEvent:
		send(ev.Event)
	case app.BoardEvent:
		send(ev.Event)
	case app.TuningEvent:
		send(tuning.ReportMsg(ev.Reading))
	}
}

// selfKeys are the Self tab's n and d over src: a netcheck now (kept for
// the next snapshots) and an HTTPS round trip to the home DERP region of
// the latest joined snapshot, each as a command doing the I/O.
func selfKeys(ctx context.Context, src *tailscaled.Source, joiner *join.Joiner) (netcheck, pingDERP func() tea.Cmd) {
	netcheck = func() tea.Cmd {
		ls := joiner.Snapshot()
		exit := false
		if ls != nil && ls.Snapshot != nil {
			for i := range ls.Peers {
				exit = exit || ls.Peers[i].ExitNode
			}
		}
		return func() tea.Msg {
			mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			rep, err := src.NetcheckNow(mctx, exit)
			if err != nil {
				return selfpane.NetcheckMsg{Err: safetext.New(err.Error())}
			}
			return selfpane.NetcheckMsg{Report: rep, How: "measured by tailpath as `tailscale netcheck` does, from its own socket (not tailscaled's port; its LocalAPI returns no fresh report)"}
		}
	}
	pingDERP = func() tea.Cmd {
		ls := joiner.Snapshot()
		home := 0
		if ls != nil && ls.Snapshot != nil {
			home = ls.Self.HomeDERP
		}
		return func() tea.Msg {
			if home == 0 {
				return selfpane.DERPPingMsg{Err: "no home DERP region known yet"}
			}
			pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			dm, err := src.DERPMap(pctx)
			if err != nil {
				return selfpane.DERPPingMsg{Region: home, Err: safetext.New("reading the DERP map from tailscaled: " + err.Error())}
			}
			rtt, code, err := tailscaled.PingDERP(pctx, dm, home)
			m := selfpane.DERPPingMsg{Region: home, Code: safetext.New(code), RTT: rtt, At: time.Now()}
			if err != nil {
				m.Err = safetext.New(err.Error())
			}
			return m
		}
	}
	return netcheck, pingDERP
}

// termStyles are the dashboard's styles when the environment already
// settles them, so that the root does not ask the terminal for its
// background (OSC 11) and redraw every pane when it answers: no colour
// (NO_COLOR, CLICOLOR=0, termcolor.Enabled's rules), where the palette is
// never seen, or a background COLORFGBG names (termcolor.Background). nil
// when only the terminal can say.
func termStyles(stdout io.Writer, env []string) *common.Styles {
	if !termcolor.Enabled(termcolor.Auto, stdout) {
		st := common.DefaultStyles()
		return &st
	}
	if dark, ok := termcolor.Background(env); ok {
		st := common.StylesFor(dark)
		return &st
	}
	return nil
}
