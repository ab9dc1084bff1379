package tailscaled

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/ipn/ipnstate"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

// needed is, by peer ID, whether needsNode names the peer in fix's Status.
func needed(t *testing.T, fix *probestest.Fixture) map[string]bool {
	t.Helper()
	var st ipnstate.Status
	if err := json.Unmarshal(fix.Status, &st); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, ps := range st.Peer {
		out[string(ps.ID)] = needsNode(ps)
	}
	return out
}

// withoutNode is p without what its node alone gives (what a gather that
// did not ask for it lacks). LastSeen is among them only because the
// varied netmap sets it on nodes alone: tailscaled's Status carries the
// node's own (ipnlocal's PeerStatus LastSeen).
func withoutNode(p probes.Peer) probes.Peer {
	p.Endpoints, p.EndpointsKnown, p.NAT, p.PeerSide, p.HomeDERP, p.LastSeen = nil, false, nil, nil, 0, time.Time{}
	return p
}

// TestNodesNeededVerdictsIdentical: over one tailnet, a gather that reads
// every node (a v1.102 daemon's netmap, or WhoIs of every peer) and one
// against a v1.104 daemon, which asks WhoIs only of the peers needsNode
// names, judge every peer the same: the same path, verdict (reason,
// checks, summary, fix) and online state, the same tailnet-wide facts
// and self verdict; a peer it asked is read whole, and one it did not
// differs only in what its node gives (endpoints, NetInfo, peer side,
// home DERP from the node). Every probes/testdata fixture, the daemon
// fixtures, ManyPeers and the varied netmap (unknown online states, no
// Hostinfo, every NetInfo field).
func TestNodesNeededVerdictsIdentical(t *testing.T) {
	fixes := map[string]*probestest.Fixture{
		"ManyPeers(60)":  probestest.ManyPeers(60),
		"variedNetmap":   variedNetmap(t, 40),
		"daemon v1.102":  loadDaemonFixture(t, "1.102"),
		"offline-active": offlineActive(t),
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		fixes[name] = loadFixture(t, name)
	}
	ctx := context.Background()
	askedFewer := 0
	for name, fix := range fixes {
		t.Run(name, func(t *testing.T) {
			full := *fix
			full.Daemon = probestest.Daemon102
			srvAll := probestest.New(t, &full)
			all, err := judgedAt(ctx, NewClient(srvAll.Socket), nil, fixtureNow, GatherOptions{AllNodes: true})
			if err != nil {
				t.Fatal(err)
			}
			srv := probestest.New(t, as104(fix))
			lean, err := judgedAt(ctx, NewClient(srv.Socket), nil, fixtureNow, GatherOptions{})
			if err != nil {
				t.Fatal(err)
			}
			need := needed(t, fix)
			asked := 0
			for _, n := range need {
				if n {
					asked++
				}
			}
			if len(all.Peers) > 0 && len(lean.Peers) == 0 {
				t.Fatal("the lean gather lost its peers")
			}
			if asked < len(need) {
				askedFewer++
			}
			if len(all.Peers) != len(lean.Peers) {
				t.Fatalf("%d peers with every node, %d without", len(all.Peers), len(lean.Peers))
			}
			for i := range all.Peers {
				a, l := all.Peers[i], lean.Peers[i]
				if diff := cmp.Diff(a.Verdict, l.Verdict, cmpOpts...); diff != "" {
					t.Errorf("peer %s (needs its node: %v): verdicts differ (-every node +needed only):\n%s", a.Name, need[string(a.ID)], diff)
				}
				if !need[string(a.ID)] {
					a, l = withoutNode(a), withoutNode(l)
				}
				if diff := cmp.Diff(a, l, cmpOpts...); diff != "" {
					t.Errorf("peer %s (needs its node: %v) differs (-every node +needed only):\n%s", a.Name, need[string(a.ID)], diff)
				}
			}
			if diff := cmp.Diff(all.Self, lean.Self, cmpOpts...); diff != "" {
				t.Errorf("self differs (-every node +needed only):\n%s", diff)
			}
			if diff := cmp.Diff(all.Tailnet, lean.Tailnet, cmpOpts...); diff != "" {
				t.Errorf("tailnet facts differ (-every node +needed only):\n%s", diff)
			}
			if diff := cmp.Diff(all.Warnings, lean.Warnings); diff != "" {
				t.Errorf("warnings differ (-every node +needed only):\n%s", diff)
			}
			// Ourselves, and the peers whose verdicts read their node.
			if fix.NetMap == nil || srvAll.Requests("whois") == 0 {
				if got := srv.Requests("whois"); got > asked+1 {
					t.Errorf("%d WhoIs, want at most %d (ourselves and the %d peers that need a node)", got, asked+1, asked)
				}
			}
		})
	}
	if askedFewer < 3 {
		t.Errorf("only %d fixtures have a peer whose node is not needed: the test compares little", askedFewer)
	}
}

// offlineActive is ManyPeers(20) where Status calls no peer online: those
// control says are online too (node Online true, as a testcontrol server
// that sets none flattens to false), offline ones Active (a ping went out)
// and others whose online state control did not say (node Online nil),
// with and without a recent handshake.
func offlineActive(t *testing.T) *probestest.Fixture {
	t.Helper()
	fix := probestest.ManyPeers(20)
	var st map[string]json.RawMessage
	if err := json.Unmarshal(fix.Status, &st); err != nil {
		t.Fatal(err)
	}
	var peers map[string]*ipnstate.PeerStatus
	if err := json.Unmarshal(st["Peer"], &peers); err != nil {
		t.Fatal(err)
	}
	var nm struct {
		SelfNode json.RawMessage
		Peers    []map[string]json.RawMessage
	}
	if err := json.Unmarshal(fix.NetMap, &nm); err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, ps := range peers {
		ps.Online = false
		if i%3 == 0 {
			ps.LastHandshake = fixtureNow.Add(-10 * time.Minute)
		}
		i++
	}
	for j, n := range nm.Peers {
		switch j % 3 {
		case 0:
			n["Online"] = json.RawMessage("null")
		case 1:
			n["Online"] = json.RawMessage("false")
		}
	}
	b, err := json.Marshal(peers)
	if err != nil {
		t.Fatal(err)
	}
	st["Peer"] = b
	if fix.Status, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if fix.NetMap, err = json.Marshal(nm); err != nil {
		t.Fatal(err)
	}
	// WhoIs answers the same nodes.
	for _, n := range nm.Peers {
		var addrs []string
		json.Unmarshal(n["Addresses"], &addrs)
		if len(addrs) == 0 {
			continue
		}
		ip, _, _ := strings.Cut(addrs[0], "/")
		w, err := json.Marshal(map[string]any{"Node": n, "UserProfile": map[string]any{"ID": 1}})
		if err != nil {
			t.Fatal(err)
		}
		fix.WhoIs[ip] = w
	}
	return fix
}

// TestGatherAsksOnlyNeededNodes: a cold gather against a v1.104 daemon
// asks WhoIs of ourselves and of the peers needsNode names, not of the
// direct and idle ones; AllNodes asks every peer; FillNodes asks that
// many more, the missing ones first, then those older than FillMaxAge.
func TestGatherAsksOnlyNeededNodes(t *testing.T) {
	fix := probestest.ManyPeers(60)
	need := needed(t, fix)
	want := 1
	for _, n := range need {
		if n {
			want++
		}
	}
	if want < 10 || want > 40 {
		t.Fatalf("ManyPeers(60) has %d peers that need a node: the test needs some of each", want-1)
	}
	ctx := context.Background()
	srv := probestest.New(t, as104(fix))
	c := NewClient(srv.Socket)
	lean, err := gatherAt(ctx, c, nil, fixtureNow, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("whois"); got != want {
		t.Errorf("cold gather: %d WhoIs, want %d (ourselves and the peers that need a node)", got, want)
	}
	known := 0
	for _, p := range lean.Peers {
		if p.EndpointsKnown {
			known++
			if !need[string(p.ID)] {
				t.Errorf("peer %s: endpoints known without a node asked", p.Name)
			}
		}
	}
	if known != want-1 {
		t.Errorf("%d peers with endpoints known, want %d", known, want-1)
	}

	// Fill: 10 more a gather, the missing ones first, until every peer
	// has its node.
	prev := lean
	for round := 1; known < len(lean.Peers); round++ {
		before := srv.Requests("whois")
		next, err := gatherAt(ctx, c, prev, fixtureNow.Add(time.Duration(round)*time.Second), GatherOptions{FillNodes: 10})
		if err != nil {
			t.Fatal(err)
		}
		wantAsked := min(10, len(lean.Peers)-known)
		if got := srv.Requests("whois") - before; got != wantAsked {
			t.Errorf("fill round %d: %d WhoIs, want %d (the needed ones are fresh)", round, got, wantAsked)
		}
		was := known
		known = 0
		for _, p := range next.Peers {
			if p.EndpointsKnown {
				known++
			}
		}
		if known != was+wantAsked {
			t.Fatalf("fill round %d: %d peers with endpoints, want %d", round, known, was+wantAsked)
		}
		prev = next
	}
	// Every node held: a fill asks none until FillMaxAge; the needed ones
	// again after WhoIsMaxAge, and the held ones serve the others.
	before := srv.Requests("whois")
	if prev, err = gatherAt(ctx, c, prev, fixtureNow.Add(10*time.Second), GatherOptions{FillNodes: 10}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("whois") - before; got != 0 {
		t.Errorf("every node held and fresh: %d WhoIs, want 0", got)
	}
	before = srv.Requests("whois")
	later, err := gatherAt(ctx, c, prev, fixtureNow.Add(WhoIsMaxAge+5*time.Second), GatherOptions{FillNodes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("whois") - before; got != want {
		t.Errorf("after WhoIsMaxAge: %d WhoIs, want %d (ourselves and the needed peers; the others held)", got, want)
	}
	for _, p := range later.Peers {
		if !p.EndpointsKnown {
			t.Errorf("peer %s lost its node", p.Name)
		}
	}
	before = srv.Requests("whois")
	if _, err := gatherAt(ctx, c, later, fixtureNow.Add(FillMaxAge+6*time.Second), GatherOptions{FillNodes: 10}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("whois") - before; got != want+10 {
		t.Errorf("after FillMaxAge: %d WhoIs, want %d (the needed, and 10 of the aged)", got, want+10)
	}

	srvAll := probestest.New(t, as104(fix))
	if _, err := gatherAt(ctx, NewClient(srvAll.Socket), nil, fixtureNow, GatherOptions{AllNodes: true}); err != nil {
		t.Fatal(err)
	}
	if got := srvAll.Requests("whois"); got != 61 {
		t.Errorf("AllNodes: %d WhoIs, want 61", got)
	}
}
