package tune

import (
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/sysctl"
)

// What a screen shows of the tuning, as safetext.Text. The host's files,
// the kernel's values, the flags' sources and the errors are outside
// text, so tune cleans them here, once, and the Tuning pane (tui/tuning)
// shows these texts as they are.

// ErrText is Err's message cleaned for a screen; "" when Err is nil.
func (m Reading) ErrText() safetext.Text { return safetext.Of(m.Err) }

// StateErrText is StateErr's message cleaned for a screen (it names the
// state file and what is wrong in it); "" when StateErr is nil.
func (m Reading) StateErrText() safetext.Text { return safetext.Of(m.StateErr) }

// Outcome is what an apply or a revert did: Control.Apply's or
// Control.Revert's result and error.
type Outcome struct {
	Revert bool
	Result sysctl.ApplyResult
	Err    error
}

// Text words the outcome on one line: the keys written, or that nothing
// was written and why, or which keys were restored or left changed after
// a failure (the error's message cleaned).
func (o Outcome) Text() safetext.Text {
	verb := "applied"
	if o.Revert {
		verb = "reverted"
	}
	switch {
	case o.Err == nil:
		if o.Revert {
			return safetext.Format("reverted %d key(s)", len(o.Result.Written))
		}
		return safetext.Format("applied %d key(s); r reverts them", len(o.Result.Written))
	case len(o.Result.RollbackErrors) > 0:
		return safetext.Format("FAILED and %d key(s) NOT restored: %v", len(o.Result.RollbackErrors), o.Err)
	case len(o.Result.RolledBack) > 0:
		return safetext.Format("failed, %d key(s) restored, nothing changed: %v", len(o.Result.RolledBack), o.Err)
	}
	return safetext.Format("not %s, nothing written: %v", verb, o.Err)
}

// HostText is what a screen shows of the host a report read, cleaned.
type HostText struct {
	// Platform is the system's name (Unknown when not detected), Evidence
	// the file that identified it ("" when none), Kernel the release
	// (Unknown when not read).
	Platform, Evidence, Kernel safetext.Text
	// BBR is "BBR <state>: <why>"; BBRMissing what is missing for it.
	BBR, BBRMissing safetext.Text
	// CongestionControl and DefaultQdisc are the sysctls' values, Unknown
	// when the kernel gave none.
	CongestionControl, DefaultQdisc safetext.Text
}

// HostText is r's host as a screen shows it.
func (r Report) HostText() HostText {
	return HostText{
		Platform:          orUnknownText(safetext.New(r.Platform.Name)),
		Evidence:          safetext.New(r.Platform.Evidence),
		Kernel:            orUnknownText(safetext.New(r.BBR.Kernel)),
		BBR:               safetext.Format("BBR %s: %s", r.BBR.State, r.BBR.Why),
		BBRMissing:        safetext.New(r.BBR.Missing),
		CongestionControl: orUnknownText(safetext.New(r.Settings.CongestionControl)),
		DefaultQdisc:      orUnknownText(safetext.New(r.Settings.DefaultQdisc)),
	}
}

// Advice is a recommendation for a report's host with what a screen shows
// of it, cleaned: the Tuning pane advises again when b toggles BBR.
type Advice struct {
	Rec sysctl.Recommendation
	// Err says why nothing could be recommended; "" when Rec is one.
	Err safetext.Text
	// Steps are Rec's arithmetic.
	Steps []StepText
	// Verdict is BufferVerdict with Rec.
	Verdict safetext.Text
	// Rows are Rows with Rec.
	Rows []Row
	// Notes and Warnings are Rec's.
	Notes, Warnings []safetext.Text
}

// StepText is one step of the arithmetic (sysctl.Step) as a screen shows
// it: its label, its value without the source, and the source ("flag
// --rtt", "measured: tailnet ping to nas"); "" for a computed step.
type StepText struct{ Label, Value, Source safetext.Text }

// Advise recomputes r's recommendation for r's target with BBR asked for
// or not (sysctl.Recommend; it reads nothing).
func (r Report) Advise(bbr bool) Advice {
	t := r.Rec.Target
	t.BBR = bbr
	rec, err := sysctl.Recommend(r.Settings, t, r.MemTotal, &r.BBR)
	r.Rec = rec
	a := Advice{Rec: rec, Err: safetext.Of(err), Verdict: r.BufferVerdict(), Rows: r.Rows(),
		Notes: safetext.All(rec.Notes), Warnings: safetext.All(rec.Warnings)}
	for _, s := range rec.Steps {
		a.Steps = append(a.Steps, StepText{Label: safetext.New(s.Label), Value: safetext.New(s.Value()), Source: safetext.New(s.Source)})
	}
	return a
}

// ChangeText is c as a screen shows it ("key: old → new"): a revert's
// values come from the state file.
func ChangeText(c sysctl.Change) safetext.Text { return safetext.New(c.String()) }

func orUnknownText(t safetext.Text) safetext.Text {
	if t == "" {
		return Unknown
	}
	return t
}
