// Package tuning is the Tuning pane: current vs recommended TCP sysctls with
// the bandwidth-delay arithmetic, BBR availability and why not, the qdisc,
// the tailscale0 link, and the tailnet TCP connections with their verdicts;
// one key applies the recommendation (after a confirm dialog showing the
// exact change), one reverts. All I/O runs in commands or in Source, never in
// Update or View; the logic is in sysctl and sysctl/tune.
//
// Wiring: p := tuning.New(opts) goes in tui.Options.Panes; run
// go tuning.Source(ctx, opts, program.Send) beside the program (or send
// p.Refresh()'s message once) so ReportMsg values arrive; the root
// broadcasts them and the pane's own AppliedMsg to every pane. For the
// demo, opts come from tuning.Sandbox(tempDir, inputs).
package tuning

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui/common"
)

// Title is the pane's tab label.
const Title = "Tuning"

// DemoSource labels the inputs Sandbox was given without a source: they are
// the demo's own settings, not flags the person passed or measurements.
const DemoSource = "demo setting"

// gatherTimeout bounds one gathering (sysctls, BBR, sock_diag), so a stuck
// netlink dump cannot stall the pane's refreshes.
const gatherTimeout = 5 * time.Second

// DefaultInterval is how often Source re-reads the host.
const DefaultInterval = 2 * time.Second

// ReportMsg is one gathering of the host's tuning (from Source or from the
// pane's own refresh after apply/revert). Broadcast it to the pane.
type ReportMsg struct {
	Report tune.Report
	// Err is why gathering failed (not Linux, no /proc); Report is then partial.
	Err error
	// State is the revert record; nil when there is none.
	State *sysctl.State
	// StateErr is a corrupt or unreadable state file (not a missing one).
	StateErr error
}

// AppliedMsg is the outcome of an apply or revert the pane started.
type AppliedMsg struct {
	Revert bool
	Result sysctl.ApplyResult
	Err    error
}

// Options configure the pane and its Source.
type Options struct {
	// Inputs are what to read and recommend for (see tune.Inputs); Inputs.Sandbox labels the pane "sandbox".
	Inputs tune.Inputs
	// StatePath is the revert state file; "" means Inputs.Host.StatePath().
	StatePath string
	// Interval is Source's refresh period; 0 means DefaultInterval.
	Interval time.Duration
	// IsRoot reports whether applying is allowed; nil means euid 0 or a sandbox.
	IsRoot func() bool
	// Now is the clock for "updated … ago"; nil means time.Now.
	Now func() time.Time
	// Styles are the colour roles; nil means common.DefaultStyles().
	Styles *common.Styles
	// Snapshot, when set, makes the pane read-only over a saved report
	// (`tailpath --from`): it names the snapshot in the pane's title
	// ("taken 2026-11-30 12:00:00Z"), a and r write nothing and say so,
	// and Refresh reads nothing. The report arrives as one ReportMsg.
	Snapshot string
}

func (o Options) statePath() string {
	if o.StatePath != "" {
		return o.StatePath
	}
	return o.Inputs.Host.StatePath()
}

// Gather reads the host once (tune.Gather plus the revert state file). It
// does I/O: call it from a command or a goroutine.
func Gather(ctx context.Context, o Options) ReportMsg {
	var m ReportMsg
	m.Report, m.Err = tune.Gather(ctx, o.Inputs)
	st, err := sysctl.LoadState(o.statePath())
	switch {
	case err == nil:
		m.State = &st
	case errors.Is(err, fs.ErrNotExist):
	default:
		m.StateErr = err
	}
	return m
}

// Source re-reads the host every Interval and sends a ReportMsg, until ctx
// ends. main runs it beside the program and relays with Program.Send.
func Source(ctx context.Context, o Options, send func(tea.Msg)) {
	every := o.Interval
	if every <= 0 {
		every = DefaultInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		gctx, cancel := context.WithTimeout(ctx, gatherTimeout)
		m := Gather(gctx, o)
		cancel()
		send(m)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sandbox copies the real host's tuning keys into dir (see
// sysctl.NewSandbox) and returns Options reading and writing only there,
// labelled "sandbox", with the state file inside dir: for `tailpath demo`.
// sample is true when the real /proc was unreadable and stock values were used.
// A non-zero in.Bandwidth or in.RTT without a source is labelled DemoSource.
func Sandbox(dir string, in tune.Inputs) (o Options, sample bool, err error) {
	h, sample, err := sysctl.NewSandbox(dir, sysctl.Host{})
	if err != nil {
		return Options{}, false, err
	}
	if in.Bandwidth != 0 && in.BandwidthSource == "" {
		in.BandwidthSource = DemoSource
	}
	if in.RTT != 0 && in.RTTSource == "" {
		in.RTTSource = DemoSource
	}
	in.Host, in.Sandbox = h, true
	return Options{Inputs: in, StatePath: filepath.Join(dir, "var", "lib", "tailpath", "tune-state.json")}, sample, nil
}

// SeedNAS writes the seed case's NAS under dir (see tune.SeedNAS: DSM on
// Linux 4.4, no BBR, 20 ms, recorded connections) and returns Options
// reading and writing only there, labelled "sandbox", with the state file
// inside dir: the demo's Tuning tab.
func SeedNAS(dir string) (Options, error) {
	in, err := tune.SeedNAS(dir)
	if err != nil {
		return Options{}, err
	}
	return Options{Inputs: in, StatePath: filepath.Join(dir, "var", "lib", "tailpath", "tune-state.json")}, nil
}

// refreshCmd gathers once as a command.
func refreshCmd(o Options) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), gatherTimeout)
		defer cancel()
		return Gather(ctx, o)
	}
}

// applyCmd applies changes, recording them for revert.
func applyCmd(o Options, changes []sysctl.Change, ccOK func(string) bool) tea.Cmd {
	return func() tea.Msg {
		res, err := sysctl.ApplyRecorded(o.Inputs.Host, changes, ccOK, o.statePath())
		return AppliedMsg{Result: res, Err: err}
	}
}

// revertCmd restores the recorded values.
func revertCmd(o Options) tea.Cmd {
	return func() tea.Msg {
		res, err := sysctl.Revert(o.Inputs.Host, o.statePath())
		return AppliedMsg{Revert: true, Result: res, Err: err}
	}
}

func defaultIsRoot(o Options) func() bool {
	if o.IsRoot != nil {
		return o.IsRoot
	}
	root := o.Inputs.Sandbox || os.Geteuid() == 0
	return func() bool { return root }
}
