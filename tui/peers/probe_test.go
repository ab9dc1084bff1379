package peers

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

// TestListProbeKey: P, once SetProbe gave it an action, hands the relayed
// peers to it; the status line follows the probe's progress, and P stays
// off while it runs.
func TestListProbeKey(t *testing.T) {
	l := newTestList(t)
	if l.keys.Probe.Enabled() {
		t.Fatal("P enabled without SetProbe")
	}
	var got []probes.Peer
	l.SetProbe(func(peers []probes.Peer) tea.Cmd {
		got = peers
		return nil
	})
	want := len(l.relayed())
	if want == 0 || !l.keys.Probe.Enabled() {
		t.Fatalf("%d relayed peers, P enabled %v; the fixture has relayed peers", want, l.keys.Probe.Enabled())
	}
	send(l, "P")
	if len(got) != want {
		t.Fatalf("P probed %d peers, want the %d relayed", len(got), want)
	}
	for _, p := range got {
		if p.Path.Kind != probes.PathDERP && p.Path.Kind != probes.PathPeerRelay {
			t.Errorf("probed %s, whose path is %s", p.Name, p.Path.Kind)
		}
	}
	l.Update(probes.ProbeProgress{Total: want, Done: 1, Peer: got[0].Name})
	if v := l.View(); !strings.Contains(v, "probing 1/") {
		t.Errorf("status line lacks the progress:\n%s", v)
	}
	if l.keys.Probe.Enabled() {
		t.Error("P enabled while a probe runs")
	}
	// P while it runs says so, until the next key.
	got = nil
	send(l, "P")
	if v := l.View(); got != nil || !strings.Contains(v, "a probe is already running") {
		t.Errorf("P during a probe: probed %d, view:\n%s", len(got), v)
	}
	send(l, "j")
	if v := l.View(); strings.Contains(v, "already running") {
		t.Errorf("the note outlived the next key:\n%s", v)
	}
	l.Update(probes.ProbeProgress{Total: want, Done: want, Direct: 1, Finished: true, Elapsed: 3200 * time.Millisecond})
	if v := l.View(); !strings.Contains(v, "probed") || !strings.Contains(v, "1 direct") {
		t.Errorf("status line lacks the outcome:\n%s", v)
	}
	if !l.keys.Probe.Enabled() {
		t.Error("P disabled after the probe finished")
	}
}

// TestListProbeNotesDoNotGoStale: "no relayed peer to probe" goes when a
// peer is relayed again (it stayed until a key), and a probe's outcome
// says how old it is.
func TestListProbeNotesDoNotGoStale(t *testing.T) {
	now := peerstest.Now()
	l := newTestList(t)
	l.SetNow(func() time.Time { return now })
	l.SetProbe(func([]probes.Peer) tea.Cmd { return nil })
	full := peerstest.Snapshot()
	direct := full
	direct.Peers = nil
	for _, p := range full.Peers {
		if p.Path.Kind != probes.PathDERP && p.Path.Kind != probes.PathPeerRelay {
			direct.Peers = append(direct.Peers, p)
		}
	}
	l.Update(peerstest.Joined(direct))
	send(l, "P")
	if v := l.View(); !strings.Contains(v, "no relayed peer to probe") {
		t.Fatalf("P with nothing relayed:\n%s", v)
	}
	l.Update(peerstest.Joined(full))
	if v := l.View(); strings.Contains(v, "no relayed peer to probe") {
		t.Errorf("the note stayed with a peer relayed again:\n%s", v)
	}
	send(l, "P")
	l.Update(probes.ProbeProgress{Total: 1, Done: 1, Finished: true, Elapsed: time.Second})
	now = now.Add(3 * time.Minute)
	if v := l.View(); !strings.Contains(v, "probed 1 in 1s: 0 direct, 3m ago") {
		t.Errorf("the probe's outcome without its age:\n%s", v)
	}
}

// TestListProbeKeyNothingRelayed: P with no relayed peer says so instead
// of doing nothing visible.
func TestListProbeKeyNothingRelayed(t *testing.T) {
	l := newTestList(t)
	called := false
	l.SetProbe(func([]probes.Peer) tea.Cmd { called = true; return nil })
	snap := peerstest.Snapshot()
	all := snap.Peers
	snap.Peers = nil
	for _, p := range all {
		if p.Path.Kind != probes.PathDERP && p.Path.Kind != probes.PathPeerRelay {
			snap.Peers = append(snap.Peers, p)
		}
	}
	l.Update(peerstest.Joined(snap))
	send(l, "P")
	if v := l.View(); called || !strings.Contains(v, "no relayed peer to probe") {
		t.Errorf("P with nothing relayed: probe called %v, view:\n%s", called, v)
	}
}
