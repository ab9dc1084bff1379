package join

import (
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/boardtest"
)

// Telemetry frames copied from firmware/testdata/scenario.log (the bundled
// firmware's own output): the board is 100.64.0.9 "cores3", has advertised
// 0 endpoints, and later its DISCO probe table fills up.
const (
	frameNet       = "@TP1 N seq=5 up=5400 ip=100.64.0.9 host=cores3 eps=0 derp=1 derpby=lowest-id derpms=182 near=7 nearms=24 *EBF713A9"
	frameDiscoFree = "@TP1 D seq=6 up=5400 pu=0 pcap=64 pdrop=0 preap=0 ping=0 pong=0 cmmi=1 cmmo=1 h2rx=53248 h2wu=0 h2win=12287 *ADC31263"
	frameDiscoFull = "@TP1 D seq=103 up=100400 pu=64 pcap=64 pdrop=10 preap=0 ping=84 pong=20 cmmi=1 cmmo=1 h2rx=65535 h2wu=0 h2win=0 *8B1F1998"
)

var t0 = time.Date(2026, 11, 30, 5, 21, 3, 0, time.UTC)

func peer(s *Snapshot, id string) probes.Peer {
	for _, p := range s.Peers {
		if string(p.ID) == id {
			return p
		}
	}
	panic("no peer " + id)
}

func TestJoinerJoinsBoardToPeer(t *testing.T) {
	tests := []struct {
		name       string
		boards     [][]string // frames of each board state, in order
		snapFirst  bool       // the snapshot arrives before the board
		wantReason probes.ReasonID
		wantAlso   []probes.ReasonID
		wantBoard  string
		wantChecks []string // Field = Value of checks that must fail
	}{
		{name: "no board: no-endpoints", snapFirst: true,
			wantReason: probes.ReasonNoEndpoints},
		{name: "board says 0 endpoints, after the snapshot", snapFirst: true,
			boards:     [][]string{{frameNet}},
			wantReason: probes.ReasonDeviceNoPublicEndpoint, wantAlso: []probes.ReasonID{probes.ReasonNoEndpoints, probes.ReasonFarHomeDERP},
			wantBoard: "nBOARD", wantChecks: []string{"Device.Endpoints = 0"}},
		{name: "board says 0 endpoints, before the snapshot",
			boards:     [][]string{{frameNet}},
			wantReason: probes.ReasonDeviceNoPublicEndpoint, wantAlso: []probes.ReasonID{probes.ReasonNoEndpoints, probes.ReasonFarHomeDERP},
			wantBoard: "nBOARD", wantChecks: []string{"Device.Endpoints = 0"}},
		{name: "probe table fills later", snapFirst: true,
			boards:     [][]string{{frameNet, frameDiscoFree}, {frameNet, frameDiscoFull}},
			wantReason: probes.ReasonDeviceNoPublicEndpoint,
			wantAlso:   []probes.ReasonID{probes.ReasonNoEndpoints, probes.ReasonDeviceProbeTableFull, probes.ReasonFarHomeDERP},
			wantBoard:  "nBOARD",
			wantChecks: []string{
				"Device.Endpoints = 0",
				"Device.H2Window = 65535 B received, 0 B credit returned, 0 B window open",
				"Device.ProbeTable = 64/64 used, 10 dropped",
			}},
		{name: "board without a net frame is not linked", snapFirst: true,
			boards:     [][]string{{frameDiscoFull}},
			wantReason: probes.ReasonNoEndpoints},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Joiner
			raw := relayedSnapshot()
			rawVerdict := raw.Peers[0].Verdict
			var got *Snapshot
			if tt.snapFirst {
				got = l.SetSnapshot(raw)
			}
			for _, frames := range tt.boards {
				ls, changed := l.SetDevice(boardState(t, frames...))
				if changed != tt.snapFirst || (ls != nil) != tt.snapFirst {
					t.Errorf("SetDevice = %v, %v; want a new snapshot only after the first tailscaled one", ls != nil, changed)
				}
				if ls != nil {
					got = ls
				}
			}
			if !tt.snapFirst {
				got = l.SetSnapshot(raw)
			}
			if got != l.Snapshot() {
				t.Error("Snapshot() is not the latest joined snapshot")
			}
			v := peer(got, "nBOARD").Verdict
			if v.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", v.Reason, tt.wantReason)
			}
			if diff := cmp.Diff(tt.wantAlso, v.Also); diff != "" {
				t.Errorf("also (-want +got):\n%s", diff)
			}
			if string(got.BoardID()) != tt.wantBoard {
				t.Errorf("BoardID = %q, want %q", got.BoardID(), tt.wantBoard)
			}
			if (got.Board != nil) != (len(tt.boards) > 0) {
				t.Errorf("Board = %+v with %d board states", got.Board, len(tt.boards))
			}
			var failed []string
			device := 0
			for _, c := range v.Checks {
				if c.Failed {
					failed = append(failed, string(c.Field+" = "+c.Value))
				}
				if strings.HasPrefix(string(c.Field), "Device.") {
					device++
				}
			}
			for _, want := range tt.wantChecks {
				if !contains(failed, want) {
					t.Errorf("no failed check %q in %q", want, failed)
				}
			}
			if (device > 0) != (tt.wantBoard != "") {
				t.Errorf("%d Device.* checks; board linked: %v", device, tt.wantBoard != "")
			}
			if peer(got, "nNAS").Verdict.Reason != probes.ReasonDirect {
				t.Errorf("the direct peer's verdict changed: %+v", peer(got, "nNAS").Verdict)
			}
			if diff := cmp.Diff(rawVerdict, raw.Peers[0].Verdict); diff != "" {
				t.Errorf("joining modified the source's snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// A repeated board state (events between telemetry frames) is no change
// and builds nothing.
func TestJoinerSameBoardStateIsNoChange(t *testing.T) {
	var l Joiner
	l.SetSnapshot(relayedSnapshot())
	if _, changed := l.SetDevice(boardState(t, frameNet, frameDiscoFull)); !changed {
		t.Error("the first board state did not count as a change")
	}
	before := l.Snapshot()
	if ls, changed := l.SetDevice(boardState(t, frameNet, frameDiscoFull)); changed || ls != nil {
		t.Error("the same board state counted as a change")
	}
	if l.Snapshot() != before {
		t.Error("the same board state rebuilt the snapshot")
	}
	if _, changed := l.SetDevice(boardState(t, frameNet, frameDiscoFull, frameDiscoFree)); !changed {
		t.Error("a new D frame did not count as a change")
	}
}

// Snapshots handed out stay as they were while the Joiner goes on (the
// dashboard renders one while the sources feed the next).
func TestLinkedSnapshotsAreImmutable(t *testing.T) {
	var l Joiner
	first := l.SetSnapshot(relayedSnapshot())
	firstChanges := append([]PathChange(nil), first.Changes("nNAS")...)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 50 {
			s := relayedSnapshot()
			s.Time = t0.Add(time.Duration(i+1) * time.Second)
			if i%2 == 0 {
				s.Peers[1].Path = probes.Path{Kind: probes.PathDERP, DERPCode: "nyc", Text: `active; relay "nyc"`}
			}
			l.SetSnapshot(s)
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 50 {
			frames := []string{frameNet, frameDiscoFree}
			if i%2 == 0 {
				frames = []string{frameNet, frameDiscoFull}
			}
			l.SetDevice(boardState(t, frames...))
		}
	}()
	wg.Wait()
	if diff := cmp.Diff(firstChanges, first.Changes("nNAS")); diff != "" {
		t.Errorf("a handed-out snapshot's changes moved (-want +got):\n%s", diff)
	}
	if first.Board != nil {
		t.Error("a handed-out snapshot gained a board")
	}
	if n := len(l.Snapshot().Changes("nNAS")); n != HistoryLen {
		t.Errorf("%d changes after 50 flips, want the newest %d", n, HistoryLen)
	}
}

func TestHistory(t *testing.T) {
	var h History
	base := relayedSnapshot()
	at := func(sec int, p probes.Path) *probes.Snapshot {
		s := *base
		s.Time = base.Time.Add(time.Duration(sec) * time.Second)
		s.Peers = append([]probes.Peer(nil), base.Peers...)
		s.Peers[1].Path = p
		return &s
	}
	direct := probes.Path{Kind: probes.PathDirect, Addr: netip.MustParseAddrPort("203.0.113.10:41641"), Text: "active; direct 203.0.113.10:41641"}
	relay := probes.Path{Kind: probes.PathDERP, DERPCode: "nyc", Text: `active; relay "nyc"`}
	off := func(ago string) probes.Path {
		return probes.Path{Kind: probes.PathOffline, Text: safetext.New("offline, last seen " + ago + " ago")}
	}
	for _, s := range []*probes.Snapshot{
		at(0, direct), at(1, direct), at(2, relay), at(3, relay), at(4, direct),
		at(5, off("3h")), at(6, off("4h")), // text changes, path doesn't
		at(7, probes.Path{Kind: probes.PathIdle}), // no text: the kind
	} {
		h.Observe(s)
	}
	var got []string
	for _, c := range h.Changes("nNAS") {
		got = append(got, c.When.Format("05")+" "+string(c.Text))
	}
	want := []string{"03 active; direct 203.0.113.10:41641", `05 active; relay "nyc"`, "07 active; direct 203.0.113.10:41641", "08 offline", "10 idle"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}

	// Bounded: only the newest HistoryLen changes are kept.
	for i := 0; i < 3*HistoryLen; i++ {
		p := direct
		if i%2 == 0 {
			p = relay
		}
		h.Observe(at(100+i, p))
	}
	ch := h.Changes("nNAS")
	if len(ch) != HistoryLen {
		t.Fatalf("%d changes kept, want %d", len(ch), HistoryLen)
	}
	if last := ch[len(ch)-1].When; !last.Equal(base.Time.Add(time.Duration(100+3*HistoryLen-1) * time.Second)) {
		t.Errorf("newest change at %v, not the last snapshot", last)
	}

	// Peers that leave are forgotten.
	s := *base
	s.Peers = base.Peers[:1]
	h.Observe(&s)
	if h.Changes("nNAS") != nil || len(h.byID) != 1 || len(h.last) != 1 {
		t.Errorf("after peers left: nNAS %v, %d peers tracked; want nil, 1", h.Changes("nNAS"), len(h.byID))
	}
}

func TestEvidenceFrom(t *testing.T) {
	got := EvidenceFrom(boardState(t, frameNet, frameDiscoFull))
	want := probes.DeviceEvidence{
		TailnetIP: netip.MustParseAddr("100.64.0.9"), Hostname: "cores3",
		ProbesUsed: 64, ProbesCap: 64, ProbesDropped: 10, Endpoints: 0,
		HomeDERP: 1, NearestDERP: 7, HomeLatency: 182 * time.Millisecond, NearestLatency: 24 * time.Millisecond,
		HomeDERPBy: "lowest-id",
		H2Known:    true, H2Received: 65535, H2WindowReturned: 0, H2WindowOpen: 0,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateComparable(netip.Addr{}, netip.AddrPort{})); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	if e := EvidenceFrom(devlink.NewState()); e.Endpoints != -1 {
		t.Errorf("empty state: Endpoints = %d, want -1 (unknown)", e.Endpoints)
	}
	// microlink's relay status and DISCO lines (the field report's shape).
	st := devlink.NewState()
	for _, s := range []string{
		"W (53640000) ml_derp: DERP status: connected=0 fd=-1 rx=74096 tx=245596 loops=1164446",
		"W (53640100) ml_derp: DERP connect attempt 1 failed",
		"W (53640200) ml_disco: DISCO decrypt failed from peer 2",
	} {
		var l devlink.Line
		devlink.ParseLine([]byte(s+"\n"), &l)
		st.ApplyLine(&l, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), nil)
	}
	e := EvidenceFrom(st)
	if !e.RelayKnown || e.RelayUp || !e.RelayWasUp || e.RelayAttempts != 1 || e.DiscoDecryptFails != 1 {
		t.Errorf("microlink evidence %+v, want relay known, down, up earlier, 1 attempt, 1 decrypt failure", e)
	}
}

// BenchmarkJoinerSnapshot joins a 1,000-peer snapshot with a board linked
// to one peer: history, the peers copy and probes.Judge.
func BenchmarkJoinerSnapshot(b *testing.B) {
	snaps := [2]*probes.Snapshot{manyPeers(1000), manyPeers(1000)}
	snaps[1].Time = snaps[1].Time.Add(time.Second)
	var l Joiner
	l.SetDevice(boardState(b, frameNet, frameDiscoFull))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if l.SetSnapshot(snaps[i%2]).BoardID() == "" {
			b.Fatal("no board linked")
		}
	}
}

// BenchmarkHistoryObserve records paths of 1,000 peers per snapshot, none
// changed.
func BenchmarkHistoryObserve(b *testing.B) {
	s := manyPeers(1000)
	var h History
	h.Observe(s)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Observe(s)
	}
}

// manyPeers is relayedSnapshot with n peers, the first the board.
func manyPeers(n int) *probes.Snapshot {
	s := relayedSnapshot()
	base := s.Peers
	s.Peers = make([]probes.Peer, n)
	for i := range s.Peers {
		p := base[min(i, 1)]
		if i > 0 {
			p.ID = safetext.New("n" + string(rune('A'+i%26)) + time.Duration(i).String())
			p.TailscaleIPs = nil
		}
		s.Peers[i] = p
	}
	return s
}

// boardState is boardtest.BoardState at t0.
func boardState(t testing.TB, frames ...string) *devlink.State {
	t.Helper()
	return boardtest.BoardState(t, t0, frames...)
}

// relayedSnapshot is boardtest.RelayedSnapshot at t0 over nyc and fra.
func relayedSnapshot() *probes.Snapshot {
	s := boardtest.RelayedSnapshot(t0, map[int]probes.Region{1: {ID: 1, Code: "nyc"}, 7: {ID: 7, Code: "fra"}})
	return &s
}

// TestPollSettlesOnePeer: a poll's Joiner writes no peer's Settle, and
// SettleOf works out the one a one-shot Joiner wrote.
func TestPollSettlesOnePeer(t *testing.T) {
	raw := relayedSnapshot()
	// Nothing known of either relayed peer's end: both verdicts open.
	raw.Peers[0].EndpointsKnown, raw.Peers[0].Endpoints = false, nil
	far := raw.Peers[0]
	far.ID, far.Name, far.TailscaleIPs = "nFAR", "far", []netip.Addr{netip.MustParseAddr("100.64.0.11")}
	raw.Peers = append(raw.Peers, far)
	var once Joiner
	poll := Joiner{Poll: true}
	// The board is one of them: its verdict is judged with its evidence.
	st := boardState(t, frameNet, frameDiscoFull)
	once.SetDevice(st)
	poll.SetDevice(st)
	want, got := once.SetSnapshot(raw), poll.SetSnapshot(raw)
	if want.BoardID() != "nBOARD" {
		t.Fatalf("the board is linked to %q, not nBOARD", want.BoardID())
	}
	open := 0
	for i := range want.Peers {
		if got.Peers[i].Verdict.Settle != nil {
			t.Errorf("%s: a poll wrote a Settle", want.Peers[i].Name)
		}
		if want.Peers[i].Verdict.Settle != nil {
			open++
		}
		if diff := cmp.Diff(want.Peers[i].Verdict.Settle, got.SettleOf(i)); diff != "" {
			t.Errorf("%s: SettleOf differs from the one-shot Settle (-want +got):\n%s", want.Peers[i].Name, diff)
		}
	}
	if open == 0 {
		t.Fatal("no open verdict: the test checks nothing")
	}
}

// TestOwnedJudgesInPlace: an Owned Joiner judges the snapshot it is
// given where it is (no copy of its peers) and joins the same as one that
// copies; a second judgement (the board arriving after) is the same too.
func TestOwnedJudgesInPlace(t *testing.T) {
	st := boardState(t, frameNet, frameDiscoFull)
	var copying Joiner
	want := copying.SetSnapshot(relayedSnapshot())
	wantBoard, ok := copying.SetDevice(st)
	if !ok {
		t.Fatal("the board's state joined nothing")
	}

	owned := Joiner{Owned: true}
	raw := relayedSnapshot()
	got := owned.SetSnapshot(raw)
	if &got.Peers[0] != &raw.Peers[0] {
		t.Error("an Owned Joiner copied the peers it was handed")
	}
	if diff := cmp.Diff(want.Snapshot, got.Snapshot, cmpopts.IgnoreUnexported(probes.Snapshot{}), cmpopts.EquateComparable(netip.Addr{}, netip.AddrPort{}, netip.Prefix{})); diff != "" {
		t.Errorf("judged in place, the snapshot differs (-copied +in place):\n%s", diff)
	}
	gotBoard, ok := owned.SetDevice(st)
	if !ok {
		t.Fatal("the board's state joined nothing")
	}
	if &gotBoard.Peers[0] == &raw.Peers[0] {
		t.Error("a second judgement wrote over the snapshot handed out first")
	}
	if diff := cmp.Diff(wantBoard.Snapshot, gotBoard.Snapshot, cmpopts.IgnoreUnexported(probes.Snapshot{}), cmpopts.EquateComparable(netip.Addr{}, netip.AddrPort{}, netip.Prefix{})); diff != "" {
		t.Errorf("with the board, the snapshot differs (-copied +in place):\n%s", diff)
	}
	if gotBoard.BoardID() != "nBOARD" {
		t.Errorf("the board is linked to %q, not nBOARD", gotBoard.BoardID())
	}
}
