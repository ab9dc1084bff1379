package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// readTestdata reads a saved snapshot from testdata.
func readTestdata(t *testing.T, name string) *File {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRedactDropsAPIErrorBodies: what a control API server said in an
// error (which may echo the request's credentials) is left out of a
// redacted snapshot; tailpath's own words for the status stay.
func TestRedactDropsAPIErrorBodies(t *testing.T) {
	const body = "request rejected: Authorization: Basic dHNrZXktYXBpLWtFQ0hPLWVjaG9lY2hvOg=="
	for _, tt := range []struct{ err, want string }{
		{"control API: 500 Internal Server Error: the API is failing; retrying later (" + body + ")", "control API: 500 Internal Server Error: the API is failing; retrying later"},
		{"control API: 418 I'm a teapot (" + body + ")", "control API: 418 I'm a teapot"},
		{"control API: cannot reach it (" + body + ")", "control API: cannot reach it"},
		{"control API: the device list did not parse: " + body, "control API: the device list did not parse"},
		{"something else entirely: " + body, "control API: failed (the details are left out of a redacted snapshot)"},
	} {
		f := readTestdata(t, "both-hard-nat.json")
		f.ControlAPI = &ControlAPI{Status: probes.APIStatus{State: "error", Err: safetext.New(tt.err)}}
		red, err := Redact(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(red.ControlAPI.Status.Err); got != tt.want {
			t.Errorf("redacted error of %q = %q, want %q", tt.err, got, tt.want)
		}
		var b strings.Builder
		Write(&b, red)
		if strings.Contains(b.String(), "dHNrZXkt") {
			t.Errorf("the echoed key survives in the redacted file")
		}
	}
}

// TestReadCapsLists: a snapshot listing more peers, warnings and path
// changes than a reader keeps is read within bounds, each cut said in a
// warning (which the diagnosis carries), never silently.
func TestReadCapsLists(t *testing.T) {
	raw, err := os.ReadFile("testdata/both-hard-nat.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	st := doc["status"].(map[string]any)
	peers := st["Peer"].(map[string]any)
	for i := range MaxPeers + 10 {
		k := fmt.Sprintf("nodekey:%064x", 0x1000+i)
		peers[k] = map[string]any{"ID": fmt.Sprintf("nX%06dCNTRL", i), "PublicKey": k, "HostName": fmt.Sprintf("h%d", i),
			"TailscaleIPs": []string{fmt.Sprintf("100.%d.%d.%d", 65+i>>16, i>>8&255, i&255)}}
	}
	var warnings []string
	for i := range 5000 {
		warnings = append(warnings, fmt.Sprintf("warning %d", i))
	}
	doc["warnings"] = warnings
	var changes []any
	for i := range 40 {
		changes = append(changes, map[string]any{"time": fmt.Sprintf("2026-11-30T11:%02d:00Z", i), "text": "idle", "kind": "idle"})
	}
	doc["path_changes"] = map[string]any{"n2CNTRL": changes}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Status.Peer); n != MaxPeers {
		t.Errorf("%d peers read, want %d", n, MaxPeers)
	}
	if n := len(f.PathChanges["n2CNTRL"]); n != join.HistoryLen {
		t.Errorf("%d path changes read, want %d", n, join.HistoryLen)
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(safetext.Strings(ls.Warnings), "\n")
	for _, want := range []string{
		fmt.Sprintf("this snapshot lists %d peers; only the first %d are read", MaxPeers+11, MaxPeers),
		fmt.Sprintf("this snapshot lists 5000 warnings; only the first %d are read", MaxWarnings),
		fmt.Sprintf("1 peers list more than %d path changes", join.HistoryLen),
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q", want)
		}
	}
	if n := len(ls.Warnings); n > MaxWarnings+10 {
		t.Errorf("%d warnings after the cap", n)
	}
}

// TestScrub: serve's /snapshot.json (Scrub) carries no node, disco or
// machine key and no log id, keeps names and addresses, and diagnoses
// exactly as the capture did, for every LocalAPI fixture.
func TestScrub(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			c := serveFixture(t, name)
			ctx := context.Background()
			f, live, err := Capture(ctx, c, Options{Gather: tailscaled.GatherOptions{All: true, Now: fixtureNow}})
			if err != nil {
				t.Fatal(err)
			}
			// What a real tailscaled reports beside: PeerAPI URLs, SSH host
			// keys, log ids.
			for _, ps := range f.Status.Peer {
				if len(ps.TailscaleIPs) > 0 {
					ps.PeerAPIURL = []string{"http://" + ps.TailscaleIPs[0].String() + ":40404"}
				}
				ps.SSH_HostKeys = []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIsecret"}
			}
			for i, w := range f.WhoIs {
				if w.Node == nil {
					continue
				}
				n := w.Node.Clone()
				hi := &tailcfg.Hostinfo{}
				if n.Hostinfo.Valid() {
					hi = n.Hostinfo.AsStruct()
				}
				hi.BackendLogID, hi.FrontendLogID = "backendlogid0123456789abcdef", "frontendlogid0123456789abcdef"
				n.Hostinfo = hi.View()
				n.DataPlaneAuditLogID = "auditlogid0123456789abcdef"
				f.WhoIs[i].Node = n
			}
			var orig bytes.Buffer
			Write(&orig, f)
			sf, err := Scrub(f)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			Write(&out, sf)
			for _, k := range keyRE().FindAllString(orig.String(), -1) {
				if strings.Contains(out.String(), k) {
					t.Errorf("key %s survives", k)
				}
			}
			for _, field := range []string{"logid0123456789", "40404", "AAAAIsecret"} {
				if strings.Contains(out.String(), field) {
					t.Errorf("%s survives", field)
				}
			}
			for _, p := range live.Peers {
				if !strings.Contains(out.String(), `"HostName": "`+string(p.Name)) && !strings.Contains(out.String(), string(p.Name)) {
					t.Errorf("peer name %s was renamed", p.Name)
				}
				for _, ip := range p.TailscaleIPs {
					if !strings.Contains(out.String(), ip.String()) {
						t.Errorf("address %s was renamed", ip)
					}
				}
			}
			got, err := roundTrip(t, sf).Diagnose(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(live.Self, got.Self, cmpOpts...); diff != "" {
				t.Errorf("self (-live +scrubbed):\n%s", diff)
			}
			if diff := cmp.Diff(live.Peers, got.Peers, cmpOpts...); diff != "" {
				t.Errorf("peers (-live +scrubbed):\n%s", diff)
			}
		})
	}
}

// countingClient counts WhoIs calls.
type countingClient struct {
	tailscaled.LocalClient
	whois atomic.Int64
}

func (c *countingClient) WhoIs(ctx context.Context, addr string) (*apitype.WhoIsResponse, error) {
	c.whois.Add(1)
	return c.LocalClient.WhoIs(ctx, addr)
}

// TestCaptureReusesWhoIs: a capture with ReuseWhoIs after a poll asks no
// WhoIs (serve's /snapshot.json asked one per peer: 1,400 for 1,500
// peers), and the file still diagnoses as the live gather did.
func TestCaptureReusesWhoIs(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			c := &countingClient{LocalClient: serveFixture(t, name)}
			ctx := context.Background()
			_, first, err := Capture(ctx, c, Options{Gather: tailscaled.GatherOptions{All: true, Now: fixtureNow.Add(-2 * time.Second)}})
			if err != nil {
				t.Fatal(err)
			}
			asked := c.whois.Load()
			f, live, err := Capture(ctx, c, Options{Gather: tailscaled.GatherOptions{All: true, Now: fixtureNow}, Prev: first.Snapshot, Joined: first, ReuseWhoIs: true})
			if err != nil {
				t.Fatal(err)
			}
			// Only nodes without an answer the first time (no node, an
			// error: not cached) are asked again.
			unanswered := int64(0)
			for _, id := range append([]string{""}, peerIDs(first.Snapshot)...) {
				if n, _ := tailscaled.NodeOf(first.Snapshot, safetext.New(id)); n == nil {
					unanswered++
				}
			}
			if n := c.whois.Load() - asked; n > unanswered {
				t.Errorf("%d WhoIs asked again (the first capture asked %d, %d without an answer)", n, asked, unanswered)
			}
			got, err := roundTrip(t, f).Diagnose(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(live.Self, got.Self, cmpOpts...); diff != "" {
				t.Errorf("self (-live +saved):\n%s", diff)
			}
			if diff := cmp.Diff(live.Peers, got.Peers, cmpOpts...); diff != "" {
				t.Errorf("peers (-live +saved):\n%s", diff)
			}
		})
	}
}

func peerIDs(s *probes.Snapshot) []string {
	var ids []string
	for _, p := range s.Peers {
		ids = append(ids, string(p.ID))
	}
	return ids
}

// probesGather are the gather options of a capture of f at its own time.
func probesGather(f *File) tailscaled.GatherOptions {
	return tailscaled.GatherOptions{All: true, Now: f.Taken}
}
