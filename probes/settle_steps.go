package probes

import (
	"slices"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Steps: what to do next, in order, for the open verdicts of a gather
// (the status block "to settle", the Peer detail pane, status --reply).
// Each is one decider (Settle.Deciders) worded for where it is shown:
// read from a paste or a saved file every fact is asked for, with the
// command to run on its end; live, what tailpath runs itself is named
// instead (its probe, the control API), and this end's facts, which a
// live tailpath reads from tailscaled and the host, are not asked for.

// Mode is where steps are shown.
type Mode uint8

const (
	// ModePasted: evidence read from pasted output or a saved snapshot
	// (status --from, a replay): every fact is asked for.
	ModePasted Mode = iota
	// ModeStatus: a live `tailpath status`: its own runs are flags.
	ModeStatus
	// ModeDashboard: the live dashboard: its own runs are keys.
	ModeDashboard
)

// Step is one thing to do that settles open verdicts.
type Step struct {
	Fact SettleFact `json:"fact"`
	End  End        `json:"end"`
	// Peers are the peers whose verdicts it settles; Self is true when it
	// settles this node's own.
	Peers []safetext.Text `json:"peers,omitempty"`
	Self  bool            `json:"self,omitempty"`
	// On names where to run it: "this node", or the peer.
	On safetext.Text `json:"on"`
	// Command is what to run there (Ask.Command), "" when tailpath does
	// it itself (Own: "pass --probe", "press P").
	Command  safetext.Text `json:"command,omitempty"`
	Own      string        `json:"own,omitempty"`
	Platform Platform      `json:"platform,omitempty"`
	// Apply is how its output comes back (Ask.Apply); Note what to know
	// first; Others the same command on platforms End may also be.
	Apply  string `json:"apply,omitempty"`
	Note   string `json:"note,omitempty"`
	Others []Ask  `json:"others,omitempty"`
	// Decides are the candidates it confirms or refutes (summed over the
	// peers it settles).
	Decides []ReasonID `json:"decides"`
	// Weight is how many candidates it decides, over every verdict.
	Weight int `json:"weight"`
}

// StepOptions say what a live tailpath can run itself.
type StepOptions struct {
	Mode Mode
	// API is true when the control API is read (a key is set): the
	// peer's side is asked of the peer only where the API did not fill it.
	API bool
}

// StepsOf lists at most max steps (max <= 0: all) that settle the open
// verdicts of s (every peer's and this node's), most deciding first: each
// open verdict's deciders, the same command for several verdicts (this
// node's netcheck, `tailscale version`) once, deciding their candidates
// together. Peers in s's order break ties.
func StepsOf(s *Snapshot, o StepOptions, max int) []Step {
	var out []Step
	if st := s.Self.Settle; st != nil {
		out = addSteps(out, st, s.Self, nil, o)
	}
	for i := range s.Peers {
		p := &s.Peers[i]
		if p.Verdict.Settle != nil {
			out = addSteps(out, p.Verdict.Settle, s.Self, p, o)
		}
	}
	return rankSteps(out, max)
}

// PeerSteps lists at most max steps that settle peer p's verdict (the
// Peer detail pane).
func PeerSteps(self Self, p *Peer, o StepOptions, max int) []Step {
	if p == nil || p.Verdict.Settle == nil {
		return nil
	}
	return rankSteps(addSteps(nil, p.Verdict.Settle, self, p, o), max)
}

// rankSteps sorts steps by weight (stable: first seen first) and keeps
// max.
func rankSteps(out []Step, max int) []Step {
	slices.SortStableFunc(out, func(a, b Step) int { return b.Weight - a.Weight })
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return out
}

// addSteps adds the steps of one verdict's deciders to out (p nil: this
// node's own verdict), merging a step already there for the same command
// on the same end.
func addSteps(out []Step, st *Settle, self Self, p *Peer, o StepOptions) []Step {
	for _, dc := range st.Deciders {
		step, ok := stepOf(dc, self, p, o)
		if !ok {
			continue
		}
		i := slices.IndexFunc(out, func(x Step) bool {
			return x.End == step.End && x.On == step.On && x.Command == step.Command && x.Own == step.Own
		})
		if i < 0 {
			out = append(out, step)
			i = len(out) - 1
		} else {
			for _, r := range step.Decides {
				if !slices.Contains(out[i].Decides, r) {
					out[i].Decides = append(out[i].Decides, r)
				}
			}
			out[i].Weight += step.Weight
		}
		if p != nil {
			if l := peerLabel(p); !slices.Contains(out[i].Peers, l) {
				out[i].Peers = append(out[i].Peers, l)
			}
		} else {
			out[i].Self = true
		}
	}
	return out
}

// stepOf words decider dc for where it is shown; false when there is
// nothing to show (a live tailpath reads this end's facts itself; a fact
// no command reveals and tailpath cannot run).
func stepOf(dc Decider, self Self, p *Peer, o StepOptions) (Step, bool) {
	s := Step{Fact: dc.Fact, End: dc.End, Decides: dc.Decides, Weight: len(dc.Decides), On: "this node"}
	if dc.End == EndPeer && p != nil {
		s.On = peerLabel(p)
	}
	live := o.Mode != ModePasted
	switch {
	case live && dc.Tailpath == TailpathProbe:
		s.Own = "pass --probe"
		if o.Mode == ModeDashboard {
			s.Own = "press P (in Peers) to probe it"
		}
		return s, true
	case live && dc.End == EndSelf:
		// Live, this end's facts are tailscaled's and the host's, which
		// tailpath reads itself: unknown means not reported yet.
		return s, false
	}
	if dc.Ask == nil {
		if live && dc.Tailpath == TailpathControlAPI && !o.API {
			s.Own = "set TAILSCALE_API_KEY (a read-only key with devices:core:read) so tailpath reads the peer's side from the control API"
			s.Note = dc.NoAsk
			return s, true
		}
		return s, false
	}
	a := dc.Ask
	s.Command, s.Platform, s.Apply, s.Note, s.Others = a.Command, a.Platform, a.Apply, a.Note, dc.Others
	// Live without a key, the table's footer already says a read-only
	// key would fill the peer's side: the step does not say it again.
	return s, true
}

// ApplyText says how a step's output comes back to tailpath, for mode
// (in the words of its commands).
func (s *Step) ApplyText(mode Mode) string {
	switch {
	case s.Command == "":
		return ""
	case s.Apply == ApplyPeerSnapshot && mode == ModePasted:
		return "save its output and add it as the peer's side: tailpath status --from THREAD --peer-snapshot REPLY"
	case s.Apply == ApplyPeerSnapshot:
		return "save its output and add it as the peer's side: tailpath status --peer-snapshot REPLY"
	case mode == ModePasted:
		return "add its output to the input: tailpath status --from THREAD REPLY"
	}
	return ""
}

// peerLabel names p where a step is shown: its name, else its Tailscale
// address, else what the input shows of it (a poster may have replaced
// the name with a placeholder, which the reader drops).
func peerLabel(p *Peer) safetext.Text {
	if p.Name != "" {
		return p.Name
	}
	if len(p.TailscaleIPs) > 0 {
		return safetext.New(p.TailscaleIPs[0].String())
	}
	if p.OS != "" {
		return "the " + p.OS + " peer whose name the input hides"
	}
	return "the peer whose name the input hides"
}
