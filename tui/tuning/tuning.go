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
// Wiring: p := tuning.New(opts) goes in tui.Options.Panes, with opts's
// Read, Apply and Revert handed in as functions (internal/dashboard builds
// them from a sysctl/tune Control, as it hands the Peers pane its ping and
// probe); run the Control's Watch beside the program and send each reading
// as a ReportMsg, or send p.Refresh()'s message once; the root broadcasts
// them and the pane's own AppliedMsg to every pane.
package tuning

import (
	"context"
	"errors"
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
	// Read reads the host once, with its revert record (tune.Control.Read);
	// nil reads nothing.
	Read func(context.Context) tune.Reading
	// Apply writes changes, recording the values they replace for Revert
	// (tune.Control.Apply); nil writes nothing and says so.
	Apply func(changes []sysctl.Change, ccAvailable func(string) bool) (sysctl.ApplyResult, error)
	// Revert restores the recorded values (tune.Control.Revert); nil
	// writes nothing and says so.
	Revert func() (sysctl.ApplyResult, error)
	// MayChange reports whether applying is allowed (tune.Control.MayChange:
	// euid 0 or a sandbox); nil means it is not.
	MayChange func() bool
	// Sandbox labels the pane "sandbox": writes go to a copy
	// (tune.Inputs.Sandbox).
	Sandbox bool
	// BBR starts the recommendation with BBR asked for (tune.Inputs.BBR).
	BBR bool
	// StateFile is the revert state file Apply writes, named in the
	// confirm dialog (tune.Control.StateFile).
	StateFile string
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

// errNotHanded is an apply or revert's outcome when the pane was handed
// no function to do it with.
var errNotHanded = errors.New("this dashboard cannot change the host's tuning; run tailpath tune on it")

// refreshCmd reads the host once, as a command; nil without a Read.
func refreshCmd(o Options) tea.Cmd {
	if o.Read == nil {
		return nil
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), tune.ReadTimeout)
		defer cancel()
		return ReportMsg(o.Read(ctx))
	}
}

// applyCmd applies changes, recording them for revert.
func applyCmd(o Options, changes []sysctl.Change, ccAvailable func(string) bool) tea.Cmd {
	return func() tea.Msg {
		if o.Apply == nil {
			return AppliedMsg{Err: errNotHanded}
		}
		res, err := o.Apply(changes, ccAvailable)
		return AppliedMsg{Result: res, Err: err}
	}
}

// revertCmd restores the recorded values.
func revertCmd(o Options) tea.Cmd {
	return func() tea.Msg {
		if o.Revert == nil {
			return AppliedMsg{Revert: true, Err: errNotHanded}
		}
		res, err := o.Revert()
		return AppliedMsg{Revert: true, Result: res, Err: err}
	}
}

// mayChange is o.MayChange, or no.
func mayChange(o Options) func() bool {
	if o.MayChange != nil {
		return o.MayChange
	}
	return func() bool { return false }
}
