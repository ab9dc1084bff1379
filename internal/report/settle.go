package report

import (
	"io"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
)

// MaxSettleSteps is how many steps the status table's "to settle" block
// lists (the JSON has every verdict's deciders).
const MaxSettleSteps = 3

// MaxStepPeers is how many peers a step's line names; the others are
// counted ("and 242 more"): a relayed-heavy tailnet's one step may
// settle hundreds, and `status --json` lists each verdict's deciders.
const MaxStepPeers = 8

// StepOptions is how s was read, for its steps: pasted or saved input
// (fromFile), else a live status, whose control-API read is s.ControlAPI.
func StepOptions(s *join.Snapshot, fromFile bool) probes.StepOptions {
	if fromFile {
		return probes.StepOptions{Mode: probes.ModePasted}
	}
	return probes.StepOptions{Mode: probes.ModeStatus, API: s.ControlAPI != nil}
}

// WriteSettle writes the "to settle" block under the table: at most
// MaxSettleSteps things to run, most deciding first, each on its end with
// the verdicts it settles; nothing when every verdict is settled.
func WriteSettle(w io.Writer, s *join.Snapshot, o probes.StepOptions) error {
	steps := probes.StepsOf(s.Snapshot, o, MaxSettleSteps)
	if len(steps) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("to settle (most deciding first):\n")
	for i, st := range steps {
		b.WriteString("  " + strconv.Itoa(i+1) + ". ")
		b.WriteString(StepLine(st))
		b.WriteString("\n     " + StepFor(st, o.Mode) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// StepLine is a step's first line: where, then the command (or what
// tailpath does itself).
func StepLine(st probes.Step) string {
	where := "on " + string(st.On)
	if st.Platform != "" && st.Platform != probes.PlatformUnknown {
		where += " (" + string(st.Platform) + ")"
	}
	if st.Command == "" {
		return st.Own
	}
	return where + ": " + string(st.Command)
}

// StepFor is a step's second line: whose verdicts it settles, the
// candidates it decides, and how its output comes back.
func StepFor(st probes.Step, mode probes.Mode) string {
	var who []string
	if st.Self {
		who = append(who, "this node")
	}
	for i, p := range st.Peers {
		if i == MaxStepPeers {
			break
		}
		who = append(who, string(p))
	}
	list := strings.Join(who, ", ")
	if more := len(st.Peers) - MaxStepPeers; more > 0 {
		list += " and " + strconv.Itoa(more) + " more"
	}
	line := "for " + list + ": decides " + ReasonList(st.Decides, 3)
	if a := st.ApplyText(mode); a != "" {
		line += "; " + a
	}
	if st.Note != "" {
		line += " (" + st.Note + ")"
	}
	return line
}

// ReasonList names up to n reasons, then how many more.
func ReasonList(rs []probes.ReasonID, n int) string {
	var parts []string
	for i, r := range rs {
		if i == n {
			break
		}
		parts = append(parts, string(r))
	}
	out := strings.Join(parts, ", ")
	if len(rs) > n {
		out += " and " + strconv.Itoa(len(rs)-n) + " more"
	}
	return out
}
