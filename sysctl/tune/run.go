package tune

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tailpath/tailpath/sysctl"
)

// Action is what Run does after gathering.
type Action struct {
	// Apply writes the recommended changes (after a confirm on a terminal,
	// or with Yes).
	Apply bool
	// Persist also keeps the values across a reboot where this platform
	// keeps them (see sysctl.PlanPersist; needs Apply).
	Persist bool
	// Revert restores what the state file recorded, instead of
	// recommending (after a confirm, as Apply).
	Revert bool
	// JSON prints one JSON object instead of text.
	JSON bool
	// Yes skips the confirm prompt of Apply and Revert.
	Yes bool
	// StatePath is the revert state file; "" means Inputs.Host.StatePath()
	// (under the root of a sandbox host).
	StatePath string
	// Cmdline is the command as typed ("tailpath", "tune", …), for the sudo hint.
	Cmdline []string
	// RevertCmdline is the command that undoes this apply (with the same
	// --state/--root), shown after applying.
	RevertCmdline []string
	// IsRoot reports whether writes are allowed; nil means euid 0 (a
	// sandbox never needs root).
	IsRoot func() bool
	// Terminal says Stdin is an interactive terminal (prompt allowed).
	Terminal bool
}

// Output is the JSON Run prints.
type Output struct {
	Report   *Report             `json:"report,omitempty"`
	Applied  *sysctl.ApplyResult `json:"applied,omitempty"`
	Reverted *sysctl.ApplyResult `json:"reverted,omitempty"`
	// Persist is where the values were kept (or the steps, when nothing
	// could be written); nil without --persist.
	Persist   *sysctl.PersistPlan `json:"persist,omitempty"`
	StateFile string              `json:"state_file,omitempty"`
	Error     string              `json:"error,omitempty"`
}

// ErrNotConfirmed is returned when the person answered no, or there was
// no terminal to ask and no --yes (then the error is ErrNeedsYes too).
var ErrNotConfirmed = errors.New("not confirmed")

// ErrNeedsYes is returned when a change needs a confirm, no terminal can
// give it and Yes was not set: the caller's usage error (pass --yes).
var ErrNeedsYes = errors.New("no terminal to confirm on")

// notConfirmed is a change not made for want of a yes: ErrNotConfirmed,
// and ErrNeedsYes when no terminal could be asked.
type notConfirmed struct {
	text       string
	noTerminal bool
}

func (e *notConfirmed) Error() string { return e.text }
func (e *notConfirmed) Is(target error) bool {
	return target == ErrNotConfirmed || (e.noTerminal && target == ErrNeedsYes)
}

// confirm asks "question [y/N]" on the terminal unless act.Yes; verb is
// what a yes does ("apply", "revert"), for the errors.
func confirm(act Action, stdin io.Reader, stdout io.Writer, question, verb string) error {
	if act.Yes {
		return nil
	}
	past := verb + "ed"
	if strings.HasSuffix(verb, "y") {
		past = strings.TrimSuffix(verb, "y") + "ied"
	}
	if !act.Terminal {
		return &notConfirmed{text: fmt.Sprintf("not %s: %v; pass --yes to %s without asking", past, ErrNeedsYes, verb), noTerminal: true}
	}
	fmt.Fprintf(stdout, "\n%s [y/N] ", question)
	line, _ := bufio.NewReader(stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		fmt.Fprintln(stdout, "Nothing changed.")
		return &notConfirmed{text: fmt.Sprintf("not %s: answered %q", past, strings.TrimSpace(line))}
	}
	return nil
}

// Run gathers, prints, and applies/persists/reverts as act says; applying
// and reverting ask first (act.Terminal) unless act.Yes. Errors: Gather's,
// os.ErrPermission (with the sudo command) when not root,
// ErrNotConfirmed (and ErrNeedsYes), sysctl.ErrCorruptState, PlanRevert's
// and Apply's errors.
//
// Long on purpose: the command's steps in order (revert, show, confirm, apply,
// persist), each deciding whether the next runs.
func Run(ctx context.Context, in Inputs, act Action, stdin io.Reader, stdout io.Writer) error {
	statePath := act.StatePath
	if statePath == "" {
		statePath = in.Host.StatePath()
	}
	isRoot := act.IsRoot
	if isRoot == nil {
		isRoot = func() bool { return in.Sandbox || os.Geteuid() == 0 }
	}
	needRoot := func() error {
		if isRoot() {
			return nil
		}
		return sysctl.NeedRootError(act.Cmdline)
	}
	if act.Persist && !act.Apply {
		return fmt.Errorf("--persist needs --apply: it records the values tailpath applies")
	}
	if act.Revert {
		if act.Apply {
			return fmt.Errorf("--revert and --apply are exclusive")
		}
		if err := needRoot(); err != nil {
			return err
		}
		// What the state file puts back, checked as Revert checks it,
		// shown and confirmed as --apply's changes are.
		st, back, err := sysctl.PlanRevert(in.Host, statePath)
		if err != nil {
			if act.JSON {
				writeJSON(stdout, Output{Reverted: &sysctl.ApplyResult{}, StateFile: statePath, Error: err.Error()})
			}
			return err
		}
		if !act.JSON {
			fmt.Fprintf(stdout, "Revert to the values saved in %s (%s):\n", statePath, st.Saved.Format(time.RFC3339))
			for _, c := range back {
				fmt.Fprintf(stdout, "  %s\n", c)
			}
			if p := st.Persist; p != nil && p.Method != sysctl.PersistSteps {
				fmt.Fprintf(stdout, "  and remove what --persist wrote: %s\n", persistedText(*p))
			}
		}
		if err := confirm(act, stdin, stdout, fmt.Sprintf("Revert these %d key(s)?", len(back)), "revert"); err != nil {
			return err
		}
		res, err := sysctl.Revert(in.Host, statePath)
		if act.JSON {
			out := Output{Reverted: &res, StateFile: statePath}
			if err != nil {
				out.Error = err.Error()
			}
			writeJSON(stdout, out)
		} else {
			fmt.Fprint(stdout, res.Report())
			if err == nil {
				if p := st.Persist; p != nil && p.Method != sysctl.PersistSteps {
					fmt.Fprintf(stdout, "removed what --persist wrote: %s\n", persistedText(*p))
				}
				fmt.Fprintf(stdout, "reverted %d key(s); removed %s\n", len(res.Written), statePath)
			}
		}
		return err
	}

	rep, err := Gather(ctx, in)
	if err != nil {
		return err
	}
	if !act.Apply {
		if act.JSON {
			writeJSON(stdout, Output{Report: &rep})
			return nil
		}
		rep.WriteText(stdout)
		if len(rep.Rec.Changes) > 0 {
			fmt.Fprintf(stdout, "\nTo apply: %s --apply\n", sudoCmd(act.Cmdline, isRoot()))
		}
		return nil
	}

	if !act.JSON {
		rep.WriteText(stdout)
	}
	if len(rep.Rec.Changes) == 0 {
		if act.JSON {
			writeJSON(stdout, Output{Report: &rep})
		}
		return nil
	}
	if err := needRoot(); err != nil {
		return err
	}
	if err := confirm(act, stdin, stdout, fmt.Sprintf("Apply these %d change(s)?", len(rep.Rec.Changes)), "apply"); err != nil {
		return err
	}
	ccAvailable := sysctl.CCChecker(rep.Settings, &rep.BBR)
	res, err := sysctl.ApplyRecorded(in.Host, rep.Rec.Changes, ccAvailable, statePath)
	out := Output{Report: &rep, Applied: &res, StateFile: statePath}
	if err == nil && act.Persist {
		out.Persist, err = persist(ctx, in.Host, statePath, rep)
	}
	if act.JSON {
		if err != nil {
			out.Error = err.Error()
		}
		writeJSON(stdout, out)
		return err
	}
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, res.Report())
	if err != nil {
		return err
	}
	undo := act.RevertCmdline
	if len(undo) == 0 {
		undo = []string{"tailpath", "tune", "--revert"}
	}
	fmt.Fprintf(stdout, "previous values saved in %s; undo with: %s\n", statePath, sudoCmd(undo, isRoot()))
	if p := out.Persist; p != nil {
		writePersisted(stdout, *p)
	}
	return nil
}

// persistedText names a persisted artefact for a person.
func persistedText(p sysctl.Persisted) string {
	switch p.Method {
	case sysctl.PersistUnraidGo:
		return "tailpath's block in " + p.Path
	case sysctl.PersistMidclt:
		return fmt.Sprintf("TrueNAS tunables %v", p.Tunables)
	}
	return p.Path
}

// writePersisted says where the values were kept, or the steps to keep them.
func writePersisted(w io.Writer, p sysctl.PersistPlan) {
	if p.Method == sysctl.PersistSteps {
		fmt.Fprintf(w, "NOT persisted on %s: %s. To keep these values after a reboot:\n", p.Platform.Name, p.Why)
		for i, s := range p.Steps {
			if strings.HasPrefix(s, "sysctl -w ") || strings.HasPrefix(s, "midclt ") {
				fmt.Fprintf(w, "       %s\n", s)
				continue
			}
			fmt.Fprintf(w, "  %d. %s\n", i+1, s)
		}
		return
	}
	fmt.Fprintf(w, "persisted on %s: %s; --revert removes it\n", p.Platform.Name, p.Where)
	if p.Note != "" {
		fmt.Fprintf(w, "note: %s\n", p.Note)
	}
}

// persist keeps every value tailpath has set (from the state file) where
// this platform keeps sysctls across a reboot, replacing what an earlier
// --persist wrote, and records it in the state for --revert. On platforms
// where nothing may be written it returns the plan with its steps.
func persist(ctx context.Context, h sysctl.Host, statePath string, rep Report) (*sysctl.PersistPlan, error) {
	st, err := sysctl.LoadState(statePath)
	if err != nil {
		return nil, fmt.Errorf("applied, but not persisted: %w", err)
	}
	var set []sysctl.Change
	for _, c := range st.Keys {
		set = append(set, sysctl.Change{Key: c.Key, New: c.New})
	}
	t := rep.Rec.Target
	plan := h.PlanPersist(rep.Platform, set, []string{fmt.Sprintf("Target %s at %v × headroom %g (BDP %s).",
		sysctl.FormatBandwidth(t.Bandwidth), t.RTT, t.Headroom, sysctl.FormatBytes(rep.Rec.BDPBytes))})
	if plan.Method == sysctl.PersistSteps {
		return &plan, nil
	}
	prev := st.Persist
	if prev == nil && st.Persisted != "" { // written by an older tailpath
		prev = &sysctl.Persisted{Method: sysctl.PersistSysctlD, Path: st.Persisted}
	}
	rec, err := h.ApplyPersist(ctx, plan, prev)
	if err != nil {
		return nil, fmt.Errorf("applied, but %w", err)
	}
	st.Persist, st.Persisted = &rec, ""
	if err := sysctl.SaveState(statePath, st); err != nil {
		h.RemovePersisted(ctx, rec)
		return nil, fmt.Errorf("applied, but not persisted: recording it for --revert failed (%w), so it was removed again", err)
	}
	return &plan, nil
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// sudoCmd renders the command line, prefixed with sudo unless root.
func sudoCmd(cmdline []string, root bool) string {
	if len(cmdline) == 0 {
		cmdline = []string{"tailpath", "tune"}
	}
	s := sysctl.ShellCommand(cmdline)
	if !root {
		s = "sudo " + s
	}
	return s
}
