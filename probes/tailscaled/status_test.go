package tailscaled

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"tailscale.com/client/local"
	"tailscale.com/ipn/ipnstate"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

// TestReadStatusMatchesClient: Status decoded by readStatus's json v2
// path holds, of every peer, the fields Gather reads (peerLite) as
// local.Client decodes them, and our own node whole, for every fixture
// and a 300-peer tailnet.
func TestReadStatusMatchesClient(t *testing.T) {
	fixtures, err := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	fixes := map[string]*probestest.Fixture{"ManyPeers(300)": probestest.ManyPeers(300)}
	for _, name := range fixtures {
		fix, err := probestest.LoadFixture(name)
		if err != nil {
			t.Fatal(err)
		}
		fixes[filepath.Base(name)] = fix
	}
	fixes["daemon v1.104"] = loadDaemonFixture(t, "1.104")
	ctx := context.Background()
	for name, fix := range fixes {
		c := NewClient(probestest.New(t, fix).Socket)
		whole, err := c.Status(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := statusOf(whole)
		for i, ps := range want.Peer {
			want.Peer[i] = project(ps)
		}
		if want.Self != nil {
			want.Self = projectSelf(want.Self)
		}
		got, err := readStatusRaw(ctx, c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		byID := func(a, b *ipnstate.PeerStatus) int { return strings.Compare(string(a.ID), string(b.ID)) }
		slices.SortFunc(want.Peer, byID)
		slices.SortFunc(got.Peer, byID)
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if !bytes.Equal(wb, gb) {
			t.Errorf("%s: Status differs:\nlocal.Client: %s\nreadStatus:   %s", name, wb, gb)
		}
		if len(whole.Peer) > 0 && len(got.Peer) == 0 {
			t.Errorf("%s: no peer read", name)
		}
	}
}

// project is ps with only the fields peerLite reads.
func project(ps *ipnstate.PeerStatus) *ipnstate.PeerStatus {
	b, err := json.Marshal(ps)
	if err != nil {
		panic(err)
	}
	var l peerLite
	if err := json.Unmarshal(b, &l); err != nil {
		panic(err)
	}
	var out ipnstate.PeerStatus
	l.to(&out)
	return &out
}

// projectSelf is ps with only the fields selfLite reads.
func projectSelf(ps *ipnstate.PeerStatus) *ipnstate.PeerStatus {
	b, err := json.Marshal(ps)
	if err != nil {
		panic(err)
	}
	var l selfLite
	if err := json.Unmarshal(b, &l); err != nil {
		panic(err)
	}
	return l.to()
}

// TestReadStatusErrors: when the daemon refuses or sends what does not
// parse, readStatus's error is local.Client's.
func TestReadStatusErrors(t *testing.T) {
	srv := probestest.New(t, probestest.ManyPeers(2))
	c := NewClient(srv.Socket)
	ctx := context.Background()

	srv.SetForbidden("status", true)
	_, err := readStatus(ctx, c)
	if !local.IsAccessDeniedError(err) {
		t.Errorf("forbidden: %v, want local's access denied error", err)
	}
	srv.SetForbidden("status", false)

	srv.SetStatusBody([]byte(`{"BackendState": "Running", "Peer": {`))
	_, err = readStatus(ctx, c)
	if !errors.Is(ConnectError(err, srv.Socket), ErrBadReply) {
		t.Errorf("truncated reply: %v, want ErrBadReply through ConnectError", err)
	}

	srv.SetStatusBody([]byte("null"))
	if st, err := readStatus(ctx, c); st != nil || err != nil {
		t.Errorf("null reply: %v, %v; want nil, nil as local.Client gives", st, err)
	}

	srv.Stop()
	_, err = readStatus(ctx, c)
	if !errors.Is(ConnectError(err, srv.Socket), ErrNotRunning) {
		t.Errorf("stopped: %v, want ErrNotRunning through ConnectError", err)
	}
}

// BenchmarkReadStatus1000 reads a 1,000-peer Status over a unix socket
// as local.Client does (encoding/json) and as readStatus does (json v2
// with v1 semantics): docs/perf.md, issue 8.
func BenchmarkReadStatus1000(b *testing.B) {
	srv := probestest.New(b, probestest.ManyPeers(1000))
	c := NewClient(srv.Socket)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		read func() (*status, error)
	}{
		{"local.Client", func() (*status, error) { st, err := c.Status(ctx); return statusOf(st), err }},
		{"readStatus", func() (*status, error) { return readStatus(ctx, c) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				st, err := tc.read()
				if err != nil || len(st.Peer) != 1000 {
					b.Fatalf("%v peers, %v", st, err)
				}
			}
		})
	}
}

// TestGatherRawMatchesClient: a gather through raw requests (Status and
// WhoIs decoded lite) and one through a client that makes none (its
// Status and WhoIs decoded whole by local.Client) give the same snapshot,
// for every fixture: a field Gather reads but the lite decodings leave
// out fails it.
func TestGatherRawMatchesClient(t *testing.T) {
	fixtures, err := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	fixes := map[string]*probestest.Fixture{"variedNetmap": variedNetmap(t, 40), "daemon v1.104": loadDaemonFixture(t, "1.104")}
	for _, name := range fixtures {
		fix, err := probestest.LoadFixture(name)
		if err != nil {
			t.Fatal(err)
		}
		fixes[filepath.Base(name)] = fix
	}
	ctx := context.Background()
	opts := GatherOptions{WhoIsOnly: true, AllNodes: true}
	for name, fix := range fixes {
		c := NewClient(probestest.New(t, fix).Socket)
		raw, err := gatherAt(ctx, c, nil, fixtureNow, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		whole, err := gatherAt(ctx, busOnly{c}, nil, fixtureNow, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(whole, raw, append(cmpOpts, cmpopts.IgnoreUnexported(probes.Snapshot{}))...); diff != "" {
			t.Errorf("%s: snapshots differ (-local.Client +raw):\n%s", name, diff)
		}
	}
}
