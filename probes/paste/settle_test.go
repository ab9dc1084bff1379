package paste

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// roundTrips are the pairs in testdata/settle: an input (<name>.txt,
// with the peer's side already given in <name>.peer.txt when there is
// one), then the output of the first command its "to settle" block asks
// for, from the end it names (<name>.reply.txt). Appending the reply as
// that command's Apply says must settle the verdict on want. Three kinds:
// the peer's own status, version, netcheck and tailscaled log, on each
// platform whose log tailpath reads (01-14: Linux, a container,
// Windows PowerShell), added with --peer-snapshot; this node's netcheck
// and log when the peer's side is known (15-19), added to the input; and
// this node's `tailscale version` when a known bug would explain what the
// rest shows (17, 20). We wrote every file here.
var roundTrips = []struct {
	name string
	// peer is the peer whose verdict is open; "" is this node's own.
	peer string
	// fact is what the first step asks for, on end.
	fact probes.SettleFact
	end  probes.End
	// want is the reason the reply settles it on.
	want probes.ReasonID
}{
	{"01-both-hard", "nas", probes.SettlePeerSide, probes.EndPeer, probes.ReasonBothHardNAT},
	{"02-hard-here-easy-there", "office", probes.SettlePeerSide, probes.EndPeer, probes.ReasonHardAndFilteringNAT},
	{"03-easy-here-hard-there", "office", probes.SettlePeerSide, probes.EndPeer, probes.ReasonHardAndFilteringNAT},
	{"04-hard-here-mapped-there", "office", probes.SettlePeerSide, probes.EndPeer, probes.ReasonPeerPortMapBlocked},
	{"05-mapped-here-hard-there", "office", probes.SettlePeerSide, probes.EndPeer, probes.ReasonLocalPortMapBlocked},
	{"06-peer-udp-blocked", "office", probes.SettlePeerSide, probes.EndPeer, probes.ReasonPeerUDPBlocked},
	{"07-mapped-here-easy-there", "office", probes.SettlePeerSide, probes.EndPeer, probes.ReasonLocalPortMapBlocked},
	{"08-container-both-hard", "ts-box", probes.SettlePeerSide, probes.EndPeer, probes.ReasonBothHardNAT},
	{"09-windows-both-hard", "gamingpc", probes.SettlePeerSide, probes.EndPeer, probes.ReasonBothHardNAT},
	{"10-windows-hard-there", "gamingpc", probes.SettlePeerSide, probes.EndPeer, probes.ReasonHardAndFilteringNAT},
	{"11-easy-here-mapped-there", "office", probes.SettlePeerSide, probes.EndPeer, probes.ReasonPeerPortMapBlocked},
	{"12-container-udp-blocked", "ts-box", probes.SettlePeerSide, probes.EndPeer, probes.ReasonPeerUDPBlocked},
	{"13-windows-udp-blocked", "gamingpc", probes.SettlePeerSide, probes.EndPeer, probes.ReasonPeerUDPBlocked},
	{"14-hard-mapped-both", "office", probes.SettlePeerSide, probes.EndPeer, probes.ReasonLocalPortMapBlocked},
	{"15-self-both-hard", "office", probes.SettleSelfNAT, probes.EndSelf, probes.ReasonBothHardNAT},
	{"16-self-hard-peer-easy", "office", probes.SettleSelfNAT, probes.EndSelf, probes.ReasonHardAndFilteringNAT},
	{"17-udp-blocked-current-version", "office", probes.SettleSelfVersion, probes.EndSelf, probes.ReasonLocalUDPBlocked},
	{"18-self-mapped-peer-hard", "gamingpc", probes.SettleSelfNAT, probes.EndSelf, probes.ReasonLocalPortMapBlocked},
	{"19-self-easy-peer-hard", "ds920", probes.SettleSelfNAT, probes.EndSelf, probes.ReasonHardAndFilteringNAT},
	{"20-udp-blocked-unstable-1.77", "office", probes.SettleSelfVersion, probes.EndSelf, probes.ReasonKnownClientBug},
}

// TestRoundTrips: each pair's input leaves the peer's verdict open, its
// first step asks for the fact the reply holds, from the reply's end,
// with a command whose output tailpath reads as that step's readers;
// with the reply applied the verdict is want and settled.
func TestRoundTrips(t *testing.T) {
	if len(roundTrips) < 20 {
		t.Errorf("%d round trips, want at least 20", len(roundTrips))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "settle", "*.reply.txt"))
	if len(files) != len(roundTrips) {
		t.Errorf("%d replies in testdata/settle, %d round trips listed", len(files), len(roundTrips))
	}
	for _, tc := range roundTrips {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			in := readRaw(t, tc.name+".txt")
			ls := diagnoseRaws(t, in)
			if peer, err := os.ReadFile(filepath.Join("testdata", "settle", tc.name+".peer.txt")); err == nil {
				ls = applyPeerRaw(t, ls, Raw{Name: tc.name + ".peer.txt", Data: peer})
			}
			before, st := verdictOf(t, ls, tc.peer)
			if st == nil {
				t.Fatalf("verdict %s is settled before the reply; want it open", before.Reason)
			}
			steps := stepsOf(ls, tc.peer)
			if len(steps) == 0 {
				t.Fatalf("open verdict %s names no step", before.Reason)
			}
			first := steps[0]
			if first.Fact != tc.fact || first.End != tc.end {
				t.Fatalf("first step asks for %s on %s (%s), want %s on %s", first.Fact, first.End, first.Command, tc.fact, tc.end)
			}
			if first.Command == "" {
				t.Fatalf("first step has no command: %+v", first)
			}
			reply := readRaw(t, tc.name+".reply.txt")
			// The reply is that command's output: tailpath reads it with
			// every reader the step names.
			rf, err := Parse([]Raw{reply}, pasteNow)
			if err != nil {
				t.Fatalf("reply: %v", err)
			}
			for _, r := range askReaders(t, ls, tc.peer, first) {
				if !slices.ContainsFunc(rf.Inputs, func(in snapshot.Input) bool { return in.Kind == r }) {
					t.Errorf("the reply holds no %q output, which the step's command prints", r)
				}
			}
			var after *join.Snapshot
			switch first.Apply {
			case probes.ApplyAppend:
				after = diagnoseRaws(t, in, reply)
				if peer, err := os.ReadFile(filepath.Join("testdata", "settle", tc.name+".peer.txt")); err == nil {
					after = applyPeerRaw(t, after, Raw{Name: tc.name + ".peer.txt", Data: peer})
				}
			case probes.ApplyPeerSnapshot:
				after = applyPeerRaw(t, ls, reply)
			default:
				t.Fatalf("step's Apply %q", first.Apply)
			}
			got, gst := verdictOf(t, after, tc.peer)
			if got.Reason != tc.want {
				t.Errorf("after the reply: %s (%s), want %s", got.Reason, got.Summary, tc.want)
			}
			if gst != nil {
				var open []string
				for _, c := range gst.Candidates {
					open = append(open, string(c.Reason))
				}
				t.Errorf("after the reply %s is still open: %s", got.Reason, strings.Join(open, ", "))
			}
			_ = ctx
		})
	}
}

func readRaw(t *testing.T, name string) Raw {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "settle", name))
	if err != nil {
		t.Fatal(err)
	}
	return Raw{Name: name, Data: b}
}

// diagnoseRaws reads raws as `status --from` does.
func diagnoseRaws(t *testing.T, raws ...Raw) *join.Snapshot {
	t.Helper()
	f, err := Parse(raws, pasteNow)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// applyPeerRaw applies raw as --peer-snapshot does.
func applyPeerRaw(t *testing.T, ls *join.Snapshot, raw Raw) *join.Snapshot {
	t.Helper()
	ps, _, err := ReadPeer(context.Background(), raw, pasteNow.Add(time.Hour))
	if err != nil {
		t.Fatalf("%s: %v", raw.Name, err)
	}
	out, _, err := snapshot.ApplyPeer(ls, ps)
	if err != nil {
		t.Fatalf("%s: %v", raw.Name, err)
	}
	return out
}

// verdictOf is peer's verdict in ls ("" this node's) and its Settle.
func verdictOf(t *testing.T, ls *join.Snapshot, peer string) (probes.Verdict, *probes.Settle) {
	t.Helper()
	if peer == "" {
		if ls.Self.Verdict == nil {
			return probes.Verdict{Reason: "(none)"}, ls.Self.Settle
		}
		return *ls.Self.Verdict, ls.Self.Settle
	}
	for _, p := range ls.Peers {
		if string(p.Name) == peer {
			return p.Verdict, p.Verdict.Settle
		}
	}
	t.Fatalf("no peer %q", peer)
	return probes.Verdict{}, nil
}

// stepsOf are the steps that settle peer's verdict ("" this node's), as
// status --from lists them.
func stepsOf(ls *join.Snapshot, peer string) []probes.Step {
	o := probes.StepOptions{Mode: probes.ModePasted}
	if peer == "" {
		s := *ls.Snapshot
		s.Peers = nil
		return probes.StepsOf(&s, o, 3)
	}
	for i := range ls.Peers {
		if string(ls.Peers[i].Name) == peer {
			return probes.PeerSteps(ls.Self, &ls.Peers[i], o, 3)
		}
	}
	return nil
}

// askReaders are the readers of the ask behind step.
func askReaders(t *testing.T, ls *join.Snapshot, peer string, step probes.Step) []string {
	t.Helper()
	st := ls.Self.Settle
	if peer != "" {
		_, st = verdictOf(t, ls, peer)
	}
	for _, d := range st.Deciders {
		if d.Fact == step.Fact && d.Ask != nil {
			return d.Ask.Readers
		}
	}
	t.Fatalf("no ask for %s", step.Fact)
	return nil
}

// TestCorpusOpenVerdictsAsk: every open verdict of the pasted corpus
// (testdata/corpus and testdata/settle's inputs) gets at most three
// steps, each a command on a stated end, or says why there is nothing to
// ask (an end with no CLI tailpath knows).
func TestCorpusOpenVerdictsAsk(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	more, _ := filepath.Glob(filepath.Join("testdata", "settle", "[0-9][0-9]-*[a-z0-9].txt"))
	open := 0
	for _, path := range append(files, more...) {
		if strings.HasSuffix(path, ".reply.txt") || strings.HasSuffix(path, ".peer.txt") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse([]Raw{{Name: filepath.Base(path), Data: data}}, pasteNow)
		if err != nil {
			continue // the corpus holds inputs that are refused on purpose
		}
		ls, err := f.Diagnose(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		steps := probes.StepsOf(ls.Snapshot, probes.StepOptions{Mode: probes.ModePasted}, 3)
		for _, p := range ls.Peers {
			st := p.Verdict.Settle
			if st == nil {
				continue
			}
			open++
			asked := slices.ContainsFunc(steps, func(s probes.Step) bool { return slices.Contains(s.Peers, p.Name) })
			noCLI := slices.ContainsFunc(st.Deciders, func(d probes.Decider) bool { return d.Ask == nil && d.NoAsk != "" })
			if !asked && !noCLI && len(steps) < 3 {
				t.Errorf("%s: %s's open %s gets no step and says not why", filepath.Base(path), p.Name, p.Verdict.Reason)
			}
		}
		if len(steps) > 3 {
			t.Errorf("%s: %d steps", path, len(steps))
		}
		for _, s := range steps {
			if s.Command == "" || s.On == "" || (s.End != probes.EndSelf && s.End != probes.EndPeer) {
				t.Errorf("%s: step %+v has no command or no end", filepath.Base(path), s)
			}
		}
	}
	if open == 0 {
		t.Fatal("no open verdict in the corpus: the test checks nothing")
	}
}

// TestJudgePollIsJudge: over every input of the pasted corpus, a poll's
// judgement (probes.JudgePoll, no peer's Settle) gives Judge's verdicts,
// and SettleOf each peer gives the Settle Judge wrote for it.
func TestJudgePollIsJudge(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	more, _ := filepath.Glob(filepath.Join("testdata", "settle", "[0-9][0-9]-*[a-z0-9].txt"))
	open := 0
	for _, path := range append(files, more...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse([]Raw{{Name: filepath.Base(path), Data: data}}, pasteNow)
		if err != nil {
			continue // refused on purpose
		}
		ls, err := f.Diagnose(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var board *probes.DeviceEvidence
		if ls.Board != nil {
			board = &ls.Board.Evidence
		}
		poll := *ls.Snapshot
		poll.Peers = slices.Clone(ls.Peers)
		probes.JudgePoll(&poll, board)
		for i, p := range ls.Peers {
			want, got := p.Verdict, poll.Peers[i].Verdict
			if got.Settle != nil {
				t.Errorf("%s: %s: JudgePoll wrote a Settle", filepath.Base(path), p.Name)
			}
			wantSettle := want.Settle
			want.Settle = nil
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: %s: JudgePoll's verdict differs from Judge's (-Judge +JudgePoll):\n%s", filepath.Base(path), p.Name, diff)
			}
			if wantSettle != nil {
				open++
			}
			if diff := cmp.Diff(wantSettle, probes.SettleOf(&poll, i, board)); diff != "" {
				t.Errorf("%s: %s: SettleOf differs from Judge's Settle (-Judge +SettleOf):\n%s", filepath.Base(path), p.Name, diff)
			}
		}
		if diff := cmp.Diff(ls.Self.Settle, poll.Self.Settle); diff != "" {
			t.Errorf("%s: this node's Settle differs (-Judge +JudgePoll):\n%s", filepath.Base(path), diff)
		}
	}
	if open == 0 {
		t.Fatal("no open verdict in the corpus: the test checks nothing")
	}
}
