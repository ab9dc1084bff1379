package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/tui"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/tuning"
)

// dashboardFlags are the flags of the default command (the dashboard).
type dashboardFlags struct {
	// socket is the tailscaled LocalAPI socket; "" is the platform default.
	socket string
	// interval is how often Status is polled.
	interval time.Duration
	// all keeps the peers `tailscale status` hides (shared-in nodes,
	// Mullvad exit nodes).
	all    bool
	device deviceFlags
}

func init() {
	register(&command{
		name:  "",
		short: "the dashboard: peers, paths and why relayed (default)",
		run:   runDashboardCmd,
	})
}

func runDashboardCmd(ctx context.Context, args []string, stdio IO) error {
	var f dashboardFlags
	fs := flag.NewFlagSet("tailpath", flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	fs.StringVar(&f.socket, "socket", "", "tailscaled LocalAPI socket (default: the platform's)")
	fs.DurationVar(&f.interval, "interval", 2*time.Second, "how often to poll tailscaled's status")
	fs.BoolVar(&f.all, "all", false, "also list the peers `tailscale status` hides (shared-in nodes, Mullvad exit nodes)")
	f.device.register(fs)
	fs.Usage = func() {
		usage(stdio.Stderr)
		fmt.Fprintln(stdio.Stderr, "\nWith no command, tailpath runs the dashboard against the local tailscaled.\n\ndashboard flags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see tailpath help)", fs.Arg(0))
	}
	cfg := dashboard{
		client:   probes.NewClient(f.socket),
		socket:   f.socket,
		interval: f.interval,
		all:      f.all,
		title:    "tailpath",
	}
	if err := f.device.attach(ctx, &cfg, stdio); err != nil {
		return err
	}
	// The host's own TCP tuning (on other systems the pane says "Linux only").
	addTuningPane(&cfg, tuning.Options{})
	return cfg.run(ctx, stdio)
}

// dashboardFPS is the renderer's frame rate.
const dashboardFPS = 20

// dashboard is everything one run of the TUI is wired from. The demo builds
// one from the lab; the default command from the local tailscaled.
type dashboard struct {
	client   probes.LocalClient
	socket   string
	interval time.Duration
	// all keeps the peers `tailscale status` hides (probes.GatherOptions.All).
	all   bool
	title string
	// panes are shown after Peers and Detail.
	panes []common.Pane
	// feeds run beside the tailscaled source and send their events into
	// the program; each returns when ctx ends.
	feeds []func(ctx context.Context, send func(tea.Msg))
	// input is where keys come from; nil means stdio.Stdin (--port - uses
	// the terminal, since stdin carries the capture).
	input io.Reader
	// closers run after the program and every feed have stopped.
	closers []func() error
}

// run starts the sources, runs the Bubble Tea program until the user quits
// or ctx ends, then cancels the sources and waits for them.
func (d *dashboard) run(parent context.Context, stdio IO) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	src := probes.NewSource(d.client, probes.SourceOptions{
		Interval: d.interval,
		Socket:   d.socket,
		Gather:   probes.GatherOptions{All: d.all},
		// Fresh DERP latencies every 10 minutes (a few STUN packets, as
		// `tailscale netcheck` sends), so far-home-derp is judged on
		// current numbers rather than NetInfo's, which may be hours old.
		MeasureDERP: probes.MeasureDERPLatency,
	})
	model := tui.New(tui.Options{
		Title: d.title,
		Panes: d.panes,
		Ping: func(peer probes.Peer, kind probes.PingKind) tea.Cmd {
			return func() tea.Msg {
				src.Ping(peer, kind)
				return nil
			}
		},
	})
	input := io.Reader(stdio.Stdin)
	if d.input != nil {
		input = d.input
	}
	if err := needTerminal(input); err != nil {
		return err
	}
	opts := []tea.ProgramOption{
		tea.WithAltScreen(),
		tea.WithContext(ctx),
		tea.WithInput(input),
		tea.WithOutput(stdio.Stdout),
		// The renderer wakes up at this rate even when nothing changed;
		// 20 frames/s keeps an idle dashboard's CPU low (docs/perf.md) and
		// a key's redraw within 50 ms.
		tea.WithFPS(dashboardFPS),
	}
	p := tea.NewProgram(model, opts...)

	var wg sync.WaitGroup
	events := src.Run(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range events {
			p.Send(ev)
		}
	}()
	for _, feed := range d.feeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			feed(ctx, p.Send)
		}()
	}
	_, err := p.Run()
	cancel()
	wg.Wait()
	for _, c := range d.closers {
		c()
	}
	// An interrupt (parent cancelled) ends the program with an error that
	// is no failure; anything else (no terminal, say) is reported.
	if err != nil && parent.Err() == nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// needTerminal returns an actionable error (exit 2) when keys would come
// from a file or pipe that is not a terminal.
func needTerminal(input io.Reader) error {
	if f, ok := input.(*os.File); ok && !isTerminal(f) {
		return &exitError{2, errors.New("the dashboard needs a terminal to read keys from, and standard input is not one; for scripts use 'tailpath status --json' (or 'tailpath demo --status --json')")}
	}
	return nil
}

// isTerminal reports whether r is an interactive terminal (not a file, pipe
// or /dev/null, which is a character device too).
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
