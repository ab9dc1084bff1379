package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/labtest"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

func TestMain(m *testing.M) {
	// The lab's DERP-only node re-executes this test binary.
	lab.MaybeRunNode()
	os.Exit(m.Run())
}

// TestLabRoundTrip saves the lab tailnet's evidence as a long-running
// source would (a second poll after the first, a board linked to the
// DERP-only peer, control-API facts), then diagnoses the saved file and
// its redacted copy: every peer's path and verdict must equal the live
// ones (the redacted ones with its addresses and names mapped), and no
// name, address, key or node id of the lab may appear in the redacted file.
func TestLabRoundTrip(t *testing.T) {
	l := labtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := l.Observer()
	if _, err := l.WaitDirect(ctx, lab.DirectName); err != nil {
		t.Fatal(err)
	}
	var derpIP netip.Addr
	for _, p := range l.Peers() {
		if p.Name == lab.DERPName {
			derpIP = p.TailscaleIP
		}
	}

	// First poll, then the board reports, then the second poll 2 s later
	// with the control API's facts, as the dashboard has them.
	var live *join.Snapshot
	var f *File
	for try := 0; ; try++ {
		_, first, err := Capture(ctx, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var lk join.Joiner
		lk.SetEvidence(probes.DeviceEvidence{TailnetIP: derpIP, Hostname: lab.DERPName, Endpoints: 0, ProbesUsed: 64, ProbesCap: 64, ProbesDropped: 3})
		linked := lk.SetSnapshot(first.Snapshot)
		time.Sleep(2 * time.Second)
		facts := labFacts(t, first.Snapshot)
		st := probes.APIStatus{State: "ok", At: facts.At}
		f, live, err = Capture(ctx, c, Options{Prev: first.Snapshot, Joined: linked,
			Gather: tailscaled.GatherOptions{PeerFacts: facts, APIStatus: &st}})
		if err != nil {
			t.Fatal(err)
		}
		if labSettled(live) || try == 10 {
			break
		}
	}
	if !labSettled(live) {
		t.Fatalf("lab paths did not settle: %v", pathsOf(live))
	}
	if live.BoardID() == "" {
		t.Fatal("the board was not linked to the DERP-only peer")
	}

	dir := t.TempDir()
	plain := filepath.Join(dir, "lab.json")
	if err := WriteFile(plain, f); err != nil {
		t.Fatal(err)
	}
	back := readFile(t, plain)
	got, err := back.Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Self, got.Self, cmpOpts...); diff != "" {
		t.Errorf("self (-live +saved):\n%s", diff)
	}
	if diff := cmp.Diff(live.Peers, got.Peers, cmpOpts...); diff != "" {
		t.Errorf("peers (-live +saved):\n%s", diff)
	}
	if diff := cmp.Diff(live.Board, got.Board, cmpOpts...); diff != "" {
		t.Errorf("board (-live +saved):\n%s", diff)
	}
	for _, p := range live.Peers {
		if diff := cmp.Diff(live.Changes(p.ID), got.Changes(p.ID)); diff != "" {
			t.Errorf("%s path changes (-live +saved):\n%s", p.Name, diff)
		}
	}

	red, r, err := redact(back)
	if err != nil {
		t.Fatal(err)
	}
	redPath := filepath.Join(dir, "lab-redacted.json")
	if err := WriteFile(redPath, red); err != nil {
		t.Fatal(err)
	}
	rgot, err := readFile(t, redPath).Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	compareRedacted(t, r, live, rgot)
	if string(rgot.BoardID()) != r.text(string(live.BoardID())) || rgot.BoardID() == "" {
		t.Errorf("redacted board linked to %q, want %q", rgot.BoardID(), r.text(string(live.BoardID())))
	}

	b, err := os.ReadFile(redPath)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ToLower(string(b))
	secrets := labSecrets(t, f)
	if len(secrets) < 30 {
		t.Fatalf("only %d lab identifiers collected: %v", len(secrets), secrets)
	}
	for _, s := range secrets {
		if strings.Contains(text, strings.ToLower(s)) {
			t.Errorf("redacted file holds the lab's %q", s)
		}
	}
}

// labSettled: the direct peer direct, the DERP-only one relayed with the
// board's verdict, the idle one idle, the offline one offline.
func labSettled(ls *join.Snapshot) bool {
	want := map[string]probes.PathKind{lab.DirectName: probes.PathDirect, lab.DERPName: probes.PathDERP,
		lab.IdleName: probes.PathIdle, lab.OfflineName: probes.PathOffline}
	for _, p := range ls.Peers {
		if want[string(p.Name)] != p.Path.Kind {
			return false
		}
	}
	return len(ls.Peers) == len(want)
}

func pathsOf(ls *join.Snapshot) string {
	var b strings.Builder
	for _, p := range ls.Peers {
		fmt.Fprintf(&b, "%s=%s ", p.Name, p.Path.Text)
	}
	return b.String()
}

func readFile(t *testing.T, path string) *File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// labFacts are control-API facts for the lab's peers, by stable node id
// (the direct peer: hard NAT, no port mapping; the idle one: easy NAT).
func labFacts(t *testing.T, s *probes.Snapshot) *probes.APIFacts {
	t.Helper()
	type rec struct {
		NodeID    string       `json:"node_id"`
		Addresses []netip.Addr `json:"addresses"`
		Facts     any          `json:"facts"`
	}
	doc := struct {
		At      time.Time `json:"at"`
		Devices int       `json:"devices"`
		Records []rec     `json:"records"`
	}{At: time.Now().Add(-time.Second)}
	for _, p := range s.Peers {
		switch p.Name {
		case lab.DirectName:
			doc.Records = append(doc.Records, rec{string(p.ID), p.TailscaleIPs, map[string]any{
				"source": probes.SourceControlAPI, "at": doc.At, "mapping_varies_by_dest_ip": true,
				"endpoints":       []string{"127.0.0.1:41641", "203.0.113.77:41641"},
				"client_supports": map[string]any{"udp": true, "upnp": false, "pmp": false, "pcp": false},
				"client_version":  "1.102.5-tlab"}})
		case lab.IdleName:
			doc.Records = append(doc.Records, rec{string(p.ID), p.TailscaleIPs, map[string]any{
				"source": probes.SourceControlAPI, "at": doc.At, "mapping_varies_by_dest_ip": false}})
		}
	}
	doc.Devices = len(doc.Records)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var facts probes.APIFacts
	if err := json.Unmarshal(b, &facts); err != nil {
		t.Fatal(err)
	}
	return &facts
}

// labSecrets are the lab's identifying strings as the unredacted file
// holds them: host names, the MagicDNS domain, every node's Tailscale
// addresses, endpoints and keys, node ids, and the DERP servers'
// addresses.
func labSecrets(t *testing.T, f *File) []string {
	t.Helper()
	out := originals(t, f)
	out = append(out, lab.ObserverName, lab.DirectName, lab.DERPName, lab.IdleName, lab.OfflineName, lab.MagicDNSDomain)
	for _, w := range f.WhoIs {
		if n := w.Node; n != nil {
			out = append(out, string(n.StableID))
			for _, a := range n.Addresses {
				out = append(out, a.Addr().String())
			}
			if !n.Machine.IsZero() {
				out = append(out, n.Machine.String())
			}
		}
	}
	for _, reg := range f.DERPMap.Regions {
		for _, n := range reg.Nodes {
			if a, err := netip.ParseAddr(n.IPv4); err == nil {
				out = append(out, a.String())
			}
		}
	}
	var buf bytes.Buffer
	Write(&buf, f)
	for _, s := range out {
		if !strings.Contains(strings.ToLower(buf.String()), strings.ToLower(s)) && !strings.HasPrefix(s, "lab") {
			t.Errorf("%q is not in the unredacted file either: the search proves nothing", s)
		}
	}
	return out
}
