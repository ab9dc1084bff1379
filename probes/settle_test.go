package probes

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailpath/tailpath/internal/safetext"
)

// judgeOne judges self and p as one gather (Judge): p's verdict and this
// node's settle.
func judgeOne(self Self, p Peer) (Verdict, *Settle) {
	s := &Snapshot{Time: fixtureNow, BackendState: "Running", Self: self, Regions: testRegions, Peers: []Peer{p}}
	Judge(s, nil)
	return s.Peers[0].Verdict, s.Self.Settle
}

// TestSettleOpensAndCloses: a relayed path whose peer side is unknown is
// open, and asks for the peer's side first (it decides the most
// candidates); with the peer's facts known (hard NAT both ends, no port
// mapping) the verdict is both-hard-nat and nothing is left open.
func TestSettleOpensAndCloses(t *testing.T) {
	self := withVersion(easySelf(), "1.102.5")
	self.NAT.MappingVariesByDestIP = boolp(true)
	p := relayedPeer("203.0.113.5:41641", "10.0.0.5:41641")
	p.OS = "linux"
	p.PingRun = &PingRun{At: fixtureNow, Tries: 10, Pongs: 10}
	v, _ := judgeOne(self, p)
	if v.Settle == nil || !v.Open() {
		t.Fatalf("verdict %s with the peer's NAT unknown is settled; want it open", v.Reason)
	}
	first := v.Settle.Deciders[0]
	if first.Fact != SettlePeerSide || first.End != EndPeer || first.Ask == nil || first.Ask.Apply != ApplyPeerSnapshot {
		t.Errorf("first decider %+v, want the peer's side, from the peer, as a --peer-snapshot", first)
	}
	if !slices.Contains(first.Decides, ReasonBothHardNAT) {
		t.Errorf("the peer's side does not decide both-hard-nat: %v", first.Decides)
	}
	p.PeerSide = apiSide(func(s *PeerSide) {
		s.MappingVariesByDestIP = boolp(true)
		noMap(s)
		s.ClientSupports.UDP = boolp(true)
		s.ClientVersion = "1.102.5"
	})
	v, _ = judgeOne(self, p)
	if v.Reason != ReasonBothHardNAT || v.Settle != nil {
		t.Errorf("with both ends known: %s, settle %+v; want both-hard-nat settled", v.Reason, v.Settle)
	}
}

// TestSettleInvariants holds every verdict of the gate's evidence to what
// the "to settle" block relies on: a direct path is never open; deciders
// are ranked by how many candidates they decide; each decides only
// candidates and each candidate's open facts are deciders; no candidate is
// a reason the input refutes or one already beside the verdict; every ask
// names readers.
func TestSettleInvariants(t *testing.T) {
	open := 0
	for _, c := range gateEvidence() {
		v, _, _ := c.judge()
		st := v.Settle
		if st == nil {
			continue
		}
		open++
		if c.peer.Path.Kind == PathDirect {
			t.Errorf("%s: a direct path is open: %+v", c.name, st)
		}
		cands := map[ReasonID]bool{}
		for _, cd := range st.Candidates {
			cands[cd.Reason] = true
			if !cd.Holds && (refutedIn(v, cd.Reason) || slices.Contains(v.Also, cd.Reason)) {
				t.Errorf("%s: candidate %s is refuted or already beside %s", c.name, cd.Reason, v.Reason)
			}
			for _, f := range cd.Open {
				if !slices.ContainsFunc(st.Deciders, func(d Decider) bool { return d.Fact == f }) {
					t.Errorf("%s: %s's open fact %s is no decider", c.name, cd.Reason, f)
				}
			}
		}
		for i, d := range st.Deciders {
			if i > 0 && len(d.Decides) > len(st.Deciders[i-1].Decides) {
				t.Errorf("%s: decider %s (%d) ranks after %s (%d)", c.name, d.Fact, len(d.Decides), st.Deciders[i-1].Fact, len(st.Deciders[i-1].Decides))
			}
			for _, r := range d.Decides {
				if !cands[r] {
					t.Errorf("%s: %s decides %s, no candidate", c.name, d.Fact, r)
				}
			}
			if d.Ask != nil && len(d.Ask.Readers) == 0 {
				t.Errorf("%s: %s's ask %q names no reader", c.name, d.Fact, d.Ask.Command)
			}
			if d.Ask == nil && d.NoAsk == "" {
				t.Errorf("%s: %s has no ask and says not why", c.name, d.Fact)
			}
		}
	}
	if open == 0 {
		t.Fatal("no verdict of the gate's evidence is open: the test checks nothing")
	}
}

// TestAskPerPlatform: each platform's CLI and log, as the issue lists
// them; Android and iOS have no CLI (their NAT facts come from the
// control API); an OS with no known CLI is asked nothing.
func TestAskPerPlatform(t *testing.T) {
	tests := []struct {
		os          string
		fact        SettleFact
		want, notIn string
		none        string
	}{
		{"linux", SettlePeerSide, "tailscale netcheck; sudo journalctl -u tailscaled", "", ""},
		{"macOS", SettlePeerSide, "/Applications/Tailscale.app/Contents/MacOS/Tailscale netcheck", "journalctl", ""},
		{"windows", SettleSelfNAT, `tailscale netcheck; Get-ChildItem "$env:ProgramData\Tailscale\Logs`, "", ""},
		{"windows", SettleDISCORun, "tailscale ping nas", "", ""},
		{"android", SettlePeerSide, "", "", "control API"},
		{"iOS", SettleSelfVersion, "", "", "no tailscale CLI"},
		{"freertos", SettlePeerSide, "", "", "no tailscale CLI"},
		{"", SettleSelfVersion, "tailscale version", "", ""},
	}
	for _, tt := range tests {
		a, others, why := askFor(tt.fact, PlatformOf(tt.os), "nas")
		if tt.none != "" {
			if a != nil || !strings.Contains(why, tt.none) {
				t.Errorf("%s %s: ask %+v (%q), want none saying %q", tt.os, tt.fact, a, why, tt.none)
			}
			continue
		}
		if a == nil || !strings.Contains(string(a.Command), tt.want) {
			t.Errorf("%s %s: %+v, want a command with %q", tt.os, tt.fact, a, tt.want)
			continue
		}
		if tt.notIn != "" && strings.Contains(string(a.Command), tt.notIn) {
			t.Errorf("%s %s: %q asks for %q, whose output no reader reads there", tt.os, tt.fact, a.Command, tt.notIn)
		}
		if tt.os == "linux" {
			var got []string
			for _, o := range others {
				got = append(got, string(o.Command))
			}
			joined := strings.Join(got, "\n")
			if !strings.Contains(joined, "/var/packages/Tailscale/target/bin/tailscale netcheck") || !strings.Contains(joined, "docker exec CONTAINER tailscale netcheck; docker logs CONTAINER") {
				t.Errorf("linux: others %q lack Synology's and a container's", got)
			}
		}
	}
}

// TestPingTargetIsAShellWord: a peer name that is not a plain word is
// never put in a command; its Tailscale address is.
func TestPingTargetIsAShellWord(t *testing.T) {
	p := Peer{Name: safetext.New("tv; rm -rf ~"), TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.9")}}
	if got := pingTarget(&p); got != "100.64.0.9" {
		t.Errorf("ping target %q, want the address", got)
	}
	p.Name = "-oProxyCommand"
	if got := pingTarget(&p); got != "100.64.0.9" {
		t.Errorf("ping target %q, want the address", got)
	}
	p.Name = "nas.tail-scale.ts.net"
	if got := pingTarget(&p); got != "nas.tail-scale.ts.net" {
		t.Errorf("ping target %q, want the name", got)
	}
}

// TestStepsMergeAndRank: two peers open on the same fact of this node
// share one step, which then decides both peers' candidates and ranks by
// their sum; live, this end's facts are not asked (tailpath reads them)
// and a DISCO run is tailpath's own probe.
func TestStepsMergeAndRank(t *testing.T) {
	self := easySelf()
	self.NAT = nil
	self.OS = "linux"
	a := relayedPeer("203.0.113.5:41641")
	a.Name, a.ID, a.OS = "a", "nA", "linux"
	b := relayedPeer("203.0.113.6:41641")
	b.Name, b.ID, b.OS = "b", "nB", "linux"
	s := &Snapshot{Time: fixtureNow, BackendState: "Running", Self: self, Regions: testRegions, Peers: []Peer{a, b}}
	Judge(s, nil)
	steps := StepsOf(s, StepOptions{Mode: ModePasted}, 0)
	var selfNAT *Step
	for i := range steps {
		if steps[i].Fact == SettleSelfNAT {
			selfNAT = &steps[i]
		}
		if i > 0 && steps[i].Weight > steps[i-1].Weight {
			t.Errorf("step %d (weight %d) after one of weight %d", i, steps[i].Weight, steps[i-1].Weight)
		}
	}
	if selfNAT == nil || len(selfNAT.Peers) != 2 || selfNAT.On != "this node" {
		t.Fatalf("this node's netcheck step %+v, want one for both peers", selfNAT)
	}
	if n := len(StepsOf(s, StepOptions{Mode: ModePasted}, 3)); n > 3 {
		t.Errorf("%d steps with a limit of 3", n)
	}
	for _, st := range StepsOf(s, StepOptions{Mode: ModeStatus}, 0) {
		if st.End == EndSelf && st.Fact != SettleDISCORun {
			t.Errorf("live status asks for this end's %s: %+v", st.Fact, st)
		}
		if st.Fact == SettleDISCORun && (st.Command != "" || st.Own != "pass --probe") {
			t.Errorf("live DISCO run %+v, want tailpath's probe", st)
		}
	}
}

// TestFactBits holds factSet's bits to settleFacts' rows, which deciders
// and list read by index.
func TestFactBits(t *testing.T) {
	want := map[SettleFact]factSet{SettleDISCORun: fsDISCORun, SettlePeerSide: fsPeerSide, SettleSelfNAT: fsSelfNAT,
		SettleSession: fsSession, SettleSelfVersion: fsSelfVersion, SettleInterfaces: fsInterfaces}
	if len(settleFacts) != len(want) || len(settleFacts) > 8 {
		t.Fatalf("settleFacts has %d rows; factSet names %d and holds at most 8", len(settleFacts), len(want))
	}
	for f, bit := range want {
		if got := bitOf(f); got != bit {
			t.Errorf("bitOf(%s) = %b, want %b", f, got, bit)
		}
	}
}

// TestMaxCandsHoldsEveryCause: settle's candidates fit its fixed buffer
// (every cause, the verdict's own and a known bug), so none is dropped.
func TestMaxCandsHoldsEveryCause(t *testing.T) {
	causes := 0
	for _, r := range rules {
		if r.Role == RoleCause {
			causes++
		}
	}
	if causes+2 > maxCands {
		t.Fatalf("%d causes + the verdict's own + known-client-bug > maxCands %d", causes, maxCands)
	}
}

// TestAskPingIsAskFresh: the DISCO run's command from the per-platform
// copy (askPing) is the one askFresh makes for that peer.
func TestAskPingIsAskFresh(t *testing.T) {
	for _, p := range []Platform{PlatformLinux, PlatformMacOS, PlatformWindows, PlatformSynology, PlatformContainer, PlatformAndroid, PlatformIOS, PlatformOther, PlatformUnknown} {
		for _, target := range []safetext.Text{"nas", "100.64.0.7", "PEER", ""} {
			a, o, why := askFor(SettleDISCORun, p, target)
			wa, wo, wwhy := askFresh(SettleDISCORun, p, target)
			if diff := cmp.Diff(struct {
				A   *Ask
				O   []Ask
				Why string
			}{wa, wo, wwhy}, struct {
				A   *Ask
				O   []Ask
				Why string
			}{a, o, why}); diff != "" {
				t.Errorf("%s %q (-askFresh +askPing):\n%s", p, target, diff)
			}
		}
	}
}
