package peers

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

// twoSnapshots returns n-peer snapshots whose rates differ, so each one
// forces a full re-format and re-sort.
func twoSnapshots(n int) [2]probes.Snapshot {
	a, b := peerstest.Many(n), peerstest.Many(n)
	b.Time = b.Time.Add(time.Second)
	b.Peers = append([]probes.Peer(nil), b.Peers...)
	for i := range b.Peers {
		b.Peers[i].TxRate *= 1.5
	}
	return [2]probes.Snapshot{a, b}
}

// BenchmarkListSnapshotView is one frame after a new snapshot: link it
// (path history; no board), re-format, filter and sort 1,000 peers, then
// render the visible window at 200×50.
func BenchmarkListSnapshotView(b *testing.B) {
	snaps := twoSnapshots(1000)
	var joiner join.Joiner
	l := NewList(common.DefaultStyles())
	l.SetSize(200, 50)
	l.Update(joiner.SetSnapshot(&snaps[0]))
	l.View()
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; i < b.N; i++ {
		l.Update(joiner.SetSnapshot(&snaps[i%2]))
		if len(l.View()) == 0 {
			b.Fatal("empty view")
		}
	}
}

// BenchmarkListKeyView is one frame after a cursor move with 1,000 peers.
func BenchmarkListKeyView(b *testing.B) {
	l := NewList(common.DefaultStyles())
	l.SetSize(200, 50)
	l.Update(peerstest.Joined(peerstest.Many(1000)))
	down, up := tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyUp}
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; i < b.N; i++ {
		k := down
		if (i/500)%2 == 1 {
			k = up
		}
		l.Update(k)
		if len(l.View()) == 0 {
			b.Fatal("empty view")
		}
	}
}

// BenchmarkListFilterView is one frame after a filter keystroke.
func BenchmarkListFilterView(b *testing.B) {
	l := NewList(common.DefaultStyles())
	l.SetSize(200, 50)
	l.Update(peerstest.Joined(peerstest.Many(1000)))
	l.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
	keys := []tea.KeyPressMsg{{Code: 'r', Text: "r"}, {Code: tea.KeyBackspace}}
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; i < b.N; i++ {
		l.Update(keys[i%2])
		l.View()
	}
}

// BenchmarkListSnapshotViewBoard is BenchmarkListSnapshotView with a board
// linked to one of the 1,000 peers: each snapshot also copies the peers
// slice and judges it with the board (probes.Judge).
func BenchmarkListSnapshotViewBoard(b *testing.B) {
	snaps := twoSnapshots(1000)
	var joiner join.Joiner
	l := NewList(common.DefaultStyles())
	l.SetSize(200, 50)
	joiner.SetDevice(boardState(b, frameNet, frameDiscoFull))
	l.Update(joiner.SetSnapshot(&snaps[0]))
	if l.BoardID() == "" {
		b.Fatal("no peer linked to the board")
	}
	l.View()
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; i < b.N; i++ {
		l.Update(joiner.SetSnapshot(&snaps[i%2]))
		if len(l.View()) == 0 {
			b.Fatal("empty view")
		}
	}
}

// BenchmarkListBoardEventView is one frame after the board's state changed
// (a new D frame), with 1,000 peers: rejoin, then re-format; an unchanged
// state costs only the joiner's comparison.
func BenchmarkListBoardEventView(b *testing.B) {
	states := [2]*devlink.State{boardState(b, frameNet, frameDiscoFree), boardState(b, frameNet, frameDiscoFull)}
	var joiner join.Joiner
	l := NewList(common.DefaultStyles())
	l.SetSize(200, 50)
	many := peerstest.Many(1000)
	l.Update(joiner.SetSnapshot(&many))
	l.View()
	b.ReportAllocs()
	b.ResetTimer()
	defer peerstest.Meter(b)()
	for i := 0; i < b.N; i++ {
		ls, _ := joiner.SetDevice(states[i%2])
		l.Update(ls)
		if len(l.View()) == 0 {
			b.Fatal("empty view")
		}
	}
}
