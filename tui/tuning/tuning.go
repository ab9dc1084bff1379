// Package tuning is the Tuning pane: current vs recommended TCP sysctls with
// the bandwidth-delay arithmetic, BBR availability and why not, the qdisc,
// the tailscale0 link, and the tailnet TCP connections with their verdicts;
// one key applies the recommendation (after a confirm dialog showing the
// exact change), one reverts. The pane does no I/O of its own: the host is
// read and changed by sysctl/tune's Control (in commands, never in Update
// or View), and the logic is in sysctl and sysctl/tune. Nor does it clean
// text: what it shows of the host and its errors comes from sysctl/tune as
// safetext.Text (screen.go there).
//
// Wiring: p := tuning.New(opts) goes in tui.Options.Panes; run
// opts.Control().Watch beside the program (internal/app does) and send
// each reading as a ReportMsg, or send p.Refresh()'s message once; the
// root broadcasts them and the pane's own AppliedMsg to every pane. For
// the demo, opts come from tuning.OptionsFor(tune.Sandbox(dir, inputs)).
package tuning

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui/common"
)

// Title is the pane's tab label.
const Title = "Tuning"

// ReportMsg is one reading of the host's tuning (from the dashboard's
// watch or from the pane's own refresh after apply/revert). Broadcast it
// to the pane.
type ReportMsg tune.Reading

// AppliedMsg is the outcome of an apply or revert the pane started.
type AppliedMsg tune.Outcome

// Options configure the pane.
type Options struct {
	// Inputs are what to read and recommend for (see tune.Inputs); Inputs.Sandbox labels the pane "sandbox".
	Inputs tune.Inputs
	// StatePath is the revert state file; "" means Inputs.Host.StatePath().
	StatePath string
	// IsRoot reports whether applying is allowed; nil means
	// tune.Control.MayChange (euid 0 or a sandbox).
	IsRoot func() bool
	// Now is the clock for "updated … ago"; nil means time.Now.
	Now func() time.Time
	// Styles are the colour roles; nil means common.DefaultStyles().
	Styles *common.Styles
	// Snapshot, when set, makes the pane read-only over a saved report
	// (`tailpath --from`): it names the snapshot in the pane's title
	// ("taken 2026-11-30 12:00:00Z"), a and r write nothing and say so,
	// and Refresh reads nothing. The report arrives as one ReportMsg.
	Snapshot safetext.Text
}

// OptionsFor returns Options for the host c reads and changes.
func OptionsFor(c tune.Control) Options {
	return Options{Inputs: c.Inputs, StatePath: c.StatePath}
}

// Control is the host these options read and change.
func (o Options) Control() tune.Control {
	return tune.Control{Inputs: o.Inputs, StatePath: o.StatePath}
}

func (o Options) statePath() string { return o.Control().StateFile() }

// refreshCmd reads the host once, as a command.
func refreshCmd(o Options) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), tune.ReadTimeout)
		defer cancel()
		return ReportMsg(o.Control().Read(ctx))
	}
}

// applyCmd applies changes, recording them for revert.
func applyCmd(o Options, changes []sysctl.Change, ccOK func(string) bool) tea.Cmd {
	return func() tea.Msg {
		res, err := o.Control().Apply(changes, ccOK)
		return AppliedMsg{Result: res, Err: err}
	}
}

// revertCmd restores the recorded values.
func revertCmd(o Options) tea.Cmd {
	return func() tea.Msg {
		res, err := o.Control().Revert()
		return AppliedMsg{Revert: true, Result: res, Err: err}
	}
}

func defaultIsRoot(o Options) func() bool {
	if o.IsRoot != nil {
		return o.IsRoot
	}
	root := o.Control().MayChange()
	return func() bool { return root }
}
