package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"tailscale.com/client/local"
	"tailscale.com/ipn/ipnstate"

	"github.com/tailpath/tailpath/probes/probestest"
)

// TestReadStatusMatchesClient: Status decoded by readStatus's json v2
// path is the Status local.Client decodes, for every fixture and a
// 300-peer tailnet.
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
	ctx := context.Background()
	for name, fix := range fixes {
		c := NewClient(probestest.New(t, fix).Socket)
		want, err := c.Status(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := readStatusRaw(ctx, c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if !bytes.Equal(wb, gb) {
			t.Errorf("%s: Status differs:\nlocal.Client: %s\nreadStatus:   %s", name, wb, gb)
		}
	}
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
		read func() (*ipnstate.Status, error)
	}{
		{"local.Client", func() (*ipnstate.Status, error) { return c.Status(ctx) }},
		{"readStatus", func() (*ipnstate.Status, error) { return readStatus(ctx, c) }},
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
