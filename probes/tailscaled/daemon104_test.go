package tailscaled

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/ipn"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

// as104 is fix served as tailscaled v1.104 serves it.
func as104(fix *probestest.Fixture) *probestest.Fixture {
	f := *fix
	f.Daemon = probestest.Daemon104
	return &f
}

// TestNetmapRefusedBy104: a v1.104 daemon refuses the initial-netmap
// watch with 400 and its reason; readNetmapNodes says so at once (not
// after a timeout: the context here has none) as errNetmapRefused, with
// the daemon's words.
func TestNetmapRefusedBy104(t *testing.T) {
	srv := probestest.New(t, as104(probestest.ManyPeers(3)))
	c := NewClient(srv.Socket)
	first, err := readNetmapNodes(context.Background(), c)
	if !errors.Is(err, errNetmapRefused) {
		t.Fatalf("readNetmapNodes = %d nodes, %v; want errNetmapRefused", len(first.nodes), err)
	}
	if !strings.Contains(err.Error(), "400 Bad Request: "+tscompat.RefusedNetMapText) {
		t.Errorf("error %q does not carry the daemon's 400 and reason", err)
	}
	// The real client reports the same refusal as its status line only.
	if _, err := c.WatchIPNBus(context.Background(), netmapMask); err == nil || err.Error() != "400 Bad Request" {
		t.Errorf("local.Client.WatchIPNBus(netmapMask) = %v, want 400 Bad Request", err)
	}
	// The bits the Source asks for are accepted, NotifyPeerWireGuardState
	// too (unchanged in v1.104), and the first message comes.
	for _, mask := range []ipn.NotifyWatchOpt{BusMask, BusMask | ipn.NotifyPeerWireGuardState} {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		w, err := c.WatchIPNBus(ctx, mask)
		if err != nil {
			t.Errorf("WatchIPNBus(%v) on v1.104: %v", mask, err)
			cancel()
			continue
		}
		n, err := w.Next()
		if err != nil || n.State == nil || *n.State != ipn.Running {
			t.Errorf("WatchIPNBus(%v) first message = %v, %v; want State Running", mask, n, err)
		}
		w.Close()
		cancel()
	}
}

// TestGather104FallsBackQuietly: against a v1.104 daemon a cold Gather
// reads by WhoIs the nodes the verdicts need (ourselves, and the peers
// needsNode names), warns of nothing, and gives the snapshot a v1.102
// daemon gives from its netmap but for the nodes of the peers it did not
// ask (TestNodesNeededVerdictsIdentical: the same verdicts); later
// gathers on that snapshot do not ask for the netmap again, even when
// its WhoIs answers are dropped.
func TestGather104FallsBackQuietly(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	fix := probestest.ManyPeers(60)
	old := probestest.New(t, fix)
	want, err := gatherAt(ctx, NewClient(old.Socket), nil, now, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := old.Requests("whois"); n != 0 {
		t.Fatalf("v1.102: %d WhoIs requests, want 0 (the netmap)", n)
	}
	need := needed(t, fix)
	asked := 1 // ourselves
	for _, n := range need {
		if n {
			asked++
		}
	}

	srv := probestest.New(t, as104(fix))
	c := NewClient(srv.Socket)
	got, err := gatherAt(ctx, c, nil, now, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Warnings) != 0 {
		t.Errorf("warnings against v1.104: %q", got.Warnings)
	}
	for i := range want.Peers {
		w, g := want.Peers[i], got.Peers[i]
		if !need[string(w.ID)] {
			w, g = withoutNode(w), withoutNode(g)
		}
		if diff := cmp.Diff(w, g, cmpOpts...); diff != "" {
			t.Errorf("peer %s differs (-v1.102 netmap +v1.104 WhoIs):\n%s", w.Name, diff)
		}
	}
	if diff := cmp.Diff(want.Self, got.Self, cmpOpts...); diff != "" {
		t.Errorf("self differs (-v1.102 netmap +v1.104 WhoIs):\n%s", diff)
	}
	// The bus: the refused netmap watch, then the WireGuard states alone.
	if n, w, r := srv.Requests("whois"), srv.Requests("watch-ipn-bus"), srv.Requests("watch-ipn-bus refused"); n != asked || w != 2 || r != 1 {
		t.Errorf("v1.104 cold gather: %d WhoIs, %d bus watches (%d refused); want %d, 2 (1 refused)", n, w, r, asked)
	}
	if !memoOf(got).netmapRefused {
		t.Error("the refusal is not remembered in the snapshot")
	}

	// Every answer dropped (what the Source does when the bus reports a
	// state change): WhoIs again, the netmap not asked for.
	stale := *got
	m := *memoOf(got)
	m.nodes = nil
	stale.SetMemo(&m)
	again, err := gatherAt(ctx, c, &stale, now.Add(time.Second), GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// One more watch, for the WireGuard states; no netmap asked for.
	if n, w, r := srv.Requests("whois"), srv.Requests("watch-ipn-bus"), srv.Requests("watch-ipn-bus refused"); n != 2*asked || w != 3 || r != 1 {
		t.Errorf("after dropping the cache: %d WhoIs, %d bus watches (%d refused); want %d, 3 (1 refused)", n, w, r, 2*asked)
	}
	if !memoOf(again).netmapRefused || len(again.Warnings) != 0 {
		t.Errorf("second gather: refused %v, warnings %q", memoOf(again).netmapRefused, again.Warnings)
	}
}

// TestSource104: a Source on a v1.104 daemon polls with no warning, asks
// for the netmap once (refused) and keeps one bus watch open. Its WhoIs
// answers are asked once at the start, once more when the bus's first
// message (the current state) arrives, as against v1.102 (which reads the
// netmap both times), and once after each state change the bus reports,
// the netmap never again: no request is repeated per poll.
func TestSource104(t *testing.T) {
	srv := probestest.New(t, as104(probestest.ManyPeers(20)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := NewSource(NewClient(srv.Socket), SourceOptions{Interval: 20 * time.Millisecond}).Run(ctx)
	// polls reads n snapshots, none with a warning, and returns the
	// WhoIs and bus-watch request counts.
	polls := func(n int) (whois, watches int) {
		for range n {
			snap := next[*probes.Snapshot](t, ch, hangGuard)
			if len(snap.Warnings) != 0 {
				t.Fatalf("snapshot warns against v1.104: %q", snap.Warnings)
			}
			if !snap.Peers[0].EndpointsKnown {
				t.Fatalf("peer %s: endpoints unknown", snap.Peers[0].Name)
			}
		}
		return srv.Requests("whois"), srv.Requests("watch-ipn-bus")
	}
	// waitWhoIs polls until n WhoIs requests were made.
	waitWhoIs := func(n int) {
		deadline := time.Now().Add(hangGuard)
		for srv.Requests("whois") < n && time.Now().Before(deadline) {
			polls(1)
		}
	}
	waitWhoIs(42)
	if n, w := polls(15); n != 42 || w != 2 {
		t.Errorf("after the start and 15 polls: %d WhoIs, %d bus watches; want 42 (each node twice) and 2 (the refused netmap, the Source's watch)", n, w)
	}
	st := ipn.Running
	srv.Notify(ipn.Notify{State: &st})
	waitWhoIs(63)
	if n, w := polls(10); n != 63 || w != 2 {
		t.Errorf("after a state change and 10 polls: %d WhoIs, %d bus watches; want 63 and still 2", n, w)
	}
}
