package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"tailscale.com/ipn/ipnstate"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/probestest"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// fixtureNow is the probes fixtures' clock.
var fixtureNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

var cmpOpts = []cmp.Option{cmpopts.EquateComparable(netip.Addr{}, netip.AddrPort{}, netip.Prefix{}), cmpopts.EquateEmpty()}

// fixtureNames are every LocalAPI fixture in probes/testdata.
func fixtureNames(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob("../testdata/*.json")
	if err != nil || len(m) == 0 {
		t.Fatalf("no fixtures in ../testdata: %v", err)
	}
	var out []string
	for _, p := range m {
		out = append(out, strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	return out
}

// serveFixture serves probes/testdata/name.json on a LocalAPI socket.
func serveFixture(t *testing.T, name string) tailscaled.LocalClient {
	t.Helper()
	fix, err := probestest.LoadFixture(filepath.Join("..", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := probestest.New(t, fix)
	return tailscaled.NewClient(srv.Socket)
}

// roundTrip writes f and reads it back.
func roundTrip(t *testing.T, f *File) *File {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, f); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, buf.String())
	}
	return back
}

// TestFixturesRoundTrip: for every LocalAPI fixture, the snapshot saved
// and read back diagnoses exactly as the live gather did (self, every
// peer field and verdict, warnings, path changes), including history a
// long-running source carried (rates, a ping run, a direct path lost).
func TestFixturesRoundTrip(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			c := serveFixture(t, name)
			ctx := context.Background()
			// A first poll 2 s earlier, with a ping run and a latency
			// carried, as the dashboard's Source has them.
			_, first, err := Capture(ctx, c, Options{Gather: tailscaled.GatherOptions{All: true, Now: fixtureNow.Add(-2 * time.Second)}})
			if err != nil {
				t.Fatal(err)
			}
			prev := *first.Snapshot
			prev.Peers = append([]probes.Peer(nil), prev.Peers...)
			for i := range prev.Peers {
				prev.Peers[i].PingRun = &probes.PingRun{At: fixtureNow.Add(-time.Minute), Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
				prev.Peers[i].Latency = 42 * time.Millisecond
				prev.Peers[i].TxBytes -= 1000
				prev.Peers[i].LastDirect = fixtureNow.Add(-time.Minute)
				prev.Peers[i].LastDirectAddr = netip.MustParseAddrPort("203.0.113.5:41641")
			}
			f, live, err := Capture(ctx, c, Options{Gather: tailscaled.GatherOptions{All: true, Now: fixtureNow}, Prev: &prev, Joined: first})
			if err != nil {
				t.Fatal(err)
			}
			back := roundTrip(t, f)
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
			if diff := cmp.Diff(live.Warnings, got.Warnings, cmpOpts...); diff != "" {
				t.Errorf("warnings (-live +saved):\n%s", diff)
			}
			for _, p := range live.Peers {
				if diff := cmp.Diff(live.Changes(p.ID), got.Changes(p.ID)); diff != "" {
					t.Errorf("%s path changes (-live +saved):\n%s", p.Name, diff)
				}
			}
			if !got.Time.Equal(live.Time) || got.BackendState != live.BackendState || got.Hidden != live.Hidden {
				t.Errorf("time/state/hidden = %v/%s/%d, want %v/%s/%d", got.Time, got.BackendState, got.Hidden, live.Time, live.BackendState, live.Hidden)
			}
		})
	}
}

// TestRedactedFixturesDiagnoseTheSame: the redacted snapshot of every
// fixture gives every peer the same path kind, reason, also-reasons and
// checks, with the values' addresses and names mapped as the redactor
// maps them; and none of the fixture's names, addresses, keys or ids is
// left in it.
func TestRedactedFixturesDiagnoseTheSame(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			f, live, err := Capture(ctx, serveFixture(t, name), Options{Gather: tailscaled.GatherOptions{All: true, Now: fixtureNow}})
			if err != nil {
				t.Fatal(err)
			}
			red, r, err := redact(f)
			if err != nil {
				t.Fatal(err)
			}
			back := roundTrip(t, red)
			got, err := back.Diagnose(ctx)
			if err != nil {
				t.Fatal(err)
			}
			compareRedacted(t, r, live, got)
			var buf bytes.Buffer
			Write(&buf, red)
			for _, s := range originals(t, f) {
				if strings.Contains(strings.ToLower(buf.String()), strings.ToLower(s)) {
					t.Errorf("redacted file still holds %q", s)
				}
			}
			if red.Redacted == nil || len(red.Redacted.Replaced) == 0 {
				t.Error("redacted file does not say what was redacted")
			}
		})
	}
}

// compareRedacted checks that got (diagnosed from the redacted file) is
// live with r's mapping applied.
func compareRedacted(t *testing.T, r *redactor, live, got *join.Snapshot) {
	t.Helper()
	if len(got.Peers) != len(live.Peers) {
		t.Fatalf("%d peers, want %d", len(got.Peers), len(live.Peers))
	}
	byID := map[string]probes.Peer{}
	for _, p := range got.Peers {
		byID[string(p.ID)] = p
	}
	for _, lp := range live.Peers {
		gp, ok := byID[r.text(string(lp.ID))]
		if !ok {
			t.Errorf("peer %s (%s) missing from the redacted diagnosis", lp.Name, r.text(string(lp.ID)))
			continue
		}
		if string(gp.Name) != r.text(string(lp.Name)) {
			t.Errorf("name %q, want %q", gp.Name, r.text(string(lp.Name)))
		}
		if gp.Path.Kind != lp.Path.Kind || string(gp.Path.Text) != r.text(string(lp.Path.Text)) {
			t.Errorf("%s: path %s %q, want %s %q", lp.Name, gp.Path.Kind, gp.Path.Text, lp.Path.Kind, r.text(string(lp.Path.Text)))
		}
		want := mapVerdict(r, lp.Verdict)
		if diff := cmp.Diff(want, gp.Verdict, cmpOpts...); diff != "" {
			t.Errorf("%s: verdict (-live, mapped +redacted):\n%s", lp.Name, diff)
		}
	}
}

// mapVerdict is v with r's text mapping applied to its words.
func mapVerdict(r *redactor, v probes.Verdict) probes.Verdict {
	v.Summary = safetext.New(r.text(string(v.Summary)))
	v.Fix = safetext.New(r.text(string(v.Fix)))
	checks := make([]probes.Check, len(v.Checks))
	for i, c := range v.Checks {
		c.Value, c.Note = safetext.New(r.text(string(c.Value))), safetext.New(r.text(string(c.Note)))
		checks[i] = c
	}
	v.Checks = checks
	if v.Settle != nil {
		st := *v.Settle
		st.Deciders = slices.Clone(st.Deciders)
		mapAsk := func(a probes.Ask) probes.Ask {
			a.Command = safetext.New(r.text(string(a.Command)))
			return a
		}
		for i := range st.Deciders {
			d := &st.Deciders[i]
			if d.Ask != nil {
				a := mapAsk(*d.Ask)
				d.Ask = &a
			}
			others := make([]probes.Ask, len(d.Others))
			for j, o := range d.Others {
				others[j] = mapAsk(o)
			}
			if d.Others != nil {
				d.Others = others
			}
		}
		v.Settle = &st
	}
	return v
}

// originals lists the identifying strings of f: host names, DNS names,
// addresses (but loopback ::1 and the unspecified ones), keys, node ids,
// user logins and the tailnet's names.
func originals(t *testing.T, f *File) []string {
	t.Helper()
	var out []string
	add := func(s string) {
		if len(s) >= 3 && !vocabularySet()[strings.ToLower(s)] {
			out = append(out, s)
		}
	}
	addAddr := func(a netip.Addr) {
		if a.IsValid() && !keepAddr(a.Unmap()) {
			out = append(out, a.Unmap().String())
		}
	}
	st := f.Status
	//lint:ignore SA1019 older status JSON carries the suffix here, so the leak check looks for it
	add(st.MagicDNSSuffix)
	if st.CurrentTailnet != nil {
		add(st.CurrentTailnet.Name)
	}
	for _, u := range st.User {
		add(u.LoginName)
	}
	peers := []*ipnstate.PeerStatus{st.Self}
	for _, p := range st.Peer {
		peers = append(peers, p)
	}
	for _, p := range peers {
		if p == nil {
			continue
		}
		add(string(p.ID))
		add(p.HostName)
		add(strings.TrimSuffix(p.DNSName, "."))
		add(p.PublicKey.String())
		for _, a := range p.TailscaleIPs {
			addAddr(a)
		}
		for _, s := range append(p.Addrs, p.CurAddr) {
			if ap, err := netip.ParseAddrPort(s); err == nil {
				addAddr(ap.Addr())
			}
		}
	}
	for _, w := range f.WhoIs {
		if n := w.Node; n != nil {
			add(n.Key.String())
			add(n.DiscoKey.String())
			add(n.Name)
			for _, ep := range n.Endpoints {
				addAddr(ep.Addr())
			}
		}
	}
	return out
}

func vocabularySet() map[string]bool {
	m := map[string]bool{}
	for _, w := range vocabulary {
		m[w] = true
	}
	return m
}

func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "snap.json")
	f := &File{Format: Format, Version: Version, Taken: fixtureNow, Origin: OriginLocalAPI, Status: minimalStatus()}
	if err := WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	// A write that fails (the directory is gone) leaves nothing behind
	// and reports the error.
	if err := WriteFile(filepath.Join(dir, "missing", "x.json"), f); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the snapshot (no temporary files)", len(ents))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 && runtime.GOOS != "windows" {
		t.Errorf("mode %v: a snapshot holds the tailnet's addresses, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if _, err := Decode(b); err != nil {
		t.Errorf("reading the written file: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"not JSON", "hello", ErrNotSnapshot},
		{"other JSON", `{"a":1}`, ErrNotSnapshot},
		{"newer", `{"format":"tailpath-snapshot","version":99}`, ErrVersion},
		{"zero version", `{"format":"tailpath-snapshot","version":0}`, ErrVersion},
		{"no status", `{"format":"tailpath-snapshot","version":1}`, ErrCorrupt},
		{"wrong type", `{"format":"tailpath-snapshot","version":1,"status":{"Peer":7}}`, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in))
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestDiagnoseOlderFile: a version-1 file that lacks the optional parts
// (no WhoIs, no DERP map, no history) diagnoses with those facts unknown.
func TestDiagnoseOlderFile(t *testing.T) {
	in := `{"format":"tailpath-snapshot","version":1,"taken":"2026-11-30T12:00:00Z","status":{
	 "BackendState":"Running","Self":{"ID":"nS","HostName":"me","TailscaleIPs":["100.64.0.1"]},
	 "Peer":{"nodekey:2222222222222222222222222222222222222222222222222222222222222222":
	  {"ID":"n2","HostName":"nas","TailscaleIPs":["100.64.0.2"],"Active":true,"Relay":"nyc","Online":true,
	   "LastHandshake":"2026-11-30T11:59:50Z"}}}}`
	f, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Peers) != 1 {
		t.Fatalf("%d peers", len(ls.Peers))
	}
	p := ls.Peers[0]
	if p.Path.Kind != probes.PathDERP || p.EndpointsKnown || p.Verdict.Reason != probes.ReasonUnexplained {
		t.Errorf("path %s, endpoints known %v, reason %s; want relay, false, unexplained", p.Path.Kind, p.EndpointsKnown, p.Verdict.Reason)
	}
	for _, c := range p.Verdict.Checks {
		if c.Field == "WhoIs.Node.Endpoints" && c.State != probes.CheckUnknown {
			t.Errorf("endpoints check %s, want unknown", c.State)
		}
	}
}

func minimalStatus() *ipnstate.Status {
	var st ipnstate.Status
	json.Unmarshal([]byte(`{"BackendState":"Running","Self":{"ID":"nS","HostName":"me"}}`), &st)
	return &st
}

// TestRedactFreeText: addresses, keys and names inside free text are
// mapped consistently with the fields (a peer relay, a health message, an
// endpoint-change entry, a zone, IPv4 in IPv6).
func TestRedactFreeText(t *testing.T) {
	f, _, err := Capture(context.Background(), serveFixture(t, "both-hard-nat"), Options{Gather: tailscaled.GatherOptions{Now: fixtureNow}})
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := redact(f)
	if err != nil {
		t.Fatal(err)
	}
	pub := r.text("198.51.100.10")
	tests := []struct{ in, want string }{
		{"active; peer-relay 198.51.100.10:7777:vni:12", "active; peer-relay " + pub + ":7777:vni:12"},
		{"Tailscale could not reach office-pc (OFFICE-PC.tail1234.ts.net) at 198.51.100.10", "Tailscale could not reach host-2 (host-2.tailnet.invalid) at " + pub},
		{`{"ap":"[::ffff:198.51.100.10]:41641"}`, `{"ap":"[::ffff:` + pub + `]:41641"}`},
		{"fe80::1%eth0 and 12:00:00.5 and v1.102.5", r.text("fe80::1") + "%eth0 and 12:00:00.5 and v1.102.5"},
		{"office-pc-2 laptops laptop_x", "host-2-2 laptops laptop_x"},
	}
	for _, tt := range tests {
		if got := r.text(tt.in); got != tt.want {
			t.Errorf("text(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// TestRedactExtras: the board (a name no peer has), the tuning report's
// connections and the history's free text are redacted too.
func TestRedactExtras(t *testing.T) {
	f, _, err := Capture(context.Background(), serveFixture(t, "both-hard-nat"), Options{Gather: tailscaled.GatherOptions{Now: fixtureNow},
		Tuning: &tune.Report{Root: "/home/alice/proc", Conns: []sockdiag.Conn{{Local: netip.MustParseAddrPort("100.64.0.1:22"), Remote: netip.MustParseAddrPort("100.64.0.2:50123")}},
			// What tune says of the path and of forwarding names a peer
			// and this network's subnets.
			Path:       &tune.PeerPath{Peer: "laptop", Kind: tune.PathDERP, Text: `active; relay "nyc"`},
			Forwarding: &tune.Forwarding{Routes: []netip.Prefix{netip.MustParsePrefix("81.2.69.0/24")}},
			Limits:     []tune.Limit{{Kind: tune.LimitPath, Says: "laptop is relayed through DERP; a subnet router for 81.2.69.0/24"}}}})
	if err != nil {
		t.Fatal(err)
	}
	f.Board = &join.Board{Evidence: probes.DeviceEvidence{TailnetIP: netip.MustParseAddr("100.64.0.9"), Hostname: "garage-esp32", Endpoints: -1}}
	f.History.Peers = map[safetext.Text]PeerHistory{"n2CNTRL": {LastChange: &probes.EndpointChange{What: "deleteEndpointLocked-bestAddr-pong-timeout", From: `{"ap":"198.51.100.10:41641"}`}}}
	red, err := Redact(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	Write(&buf, red)
	for _, s := range []string{"garage-esp32", "100.64.0.9", "100.64.0.1:22", "100.64.0.2:50123", "198.51.100.10", "alice", "n2CNTRL", "laptop", "81.2.69"} {
		if strings.Contains(buf.String(), s) {
			t.Errorf("redacted file holds %q", s)
		}
	}
	if h := red.Board.Evidence.Hostname; !strings.HasPrefix(h, "host-") {
		t.Errorf("board host name %q", h)
	}
	if c := red.Tuning.Conns[0]; c.Local.Port() != 22 || c.Remote.Port() != 50123 || !probes.IsPrivateAddr(c.Remote.Addr()) {
		t.Errorf("connection %v → %v: ports and class must stay", c.Local, c.Remote)
	}
}

// TestWriteFileErrorNamesThePath: a directory that is not there is named
// with the file asked for, not the temporary file written beside it.
func TestWriteFileErrorNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "x.json")
	f := &File{Format: Format, Version: Version, Taken: fixtureNow, Origin: OriginLocalAPI, Status: minimalStatus()}
	err := WriteFile(path, f)
	if err == nil || !strings.HasPrefix(err.Error(), "snapshot: cannot write "+path+": ") || strings.Contains(err.Error(), ".tmp") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteFile into a missing directory: %v", err)
	}
}

// TestSelfVerdictRoundTrip: the self's verdict of a captured snapshot
// (from Status's health and NetInfo, as live) is the same after saving,
// reading back and redacting.
func TestSelfVerdictRoundTrip(t *testing.T) {
	f := bigFile(3)
	f.Status.Health = []string{"The MagicSock function ReceiveIPv4 is not running. You might experience connectivity issues."}
	ctx := context.Background()
	first, err := f.Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := first.Self.Verdict
	if v == nil || v.Reason != probes.ReasonSelfUDPReceiveStopped {
		t.Fatalf("self verdict %+v, want %s", v, probes.ReasonSelfUDPReceiveStopped)
	}
	back, err := roundTrip(t, f).Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v, back.Self.Verdict); diff != "" {
		t.Errorf("saved and read back (-before +after):\n%s", diff)
	}
	red, err := Redact(f)
	if err != nil {
		t.Fatal(err)
	}
	rls, err := red.Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rv := rls.Self.Verdict; rv == nil || rv.Reason != v.Reason {
		t.Errorf("redacted self verdict %+v, want %s", rv, v.Reason)
	}
}

// FuzzDecode: a saved snapshot's decoder never panics, and what it accepts
// diagnoses and redacts without panicking.
func FuzzDecode(f *testing.F) {
	m, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range m {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(`{"format":"tailpath-snapshot","version":1,"status":{"Self":{"TailscaleIPs":["100.64.0.1"]}},"whois":[{"addr":"100.64.0.1","node":{"Endpoints":["1.2.3.4:5"]}}],"history":{"peers":{"x":{"latency_ns":-5}}},"path_changes":{"x":[{"kind":"direct"}]},"board":{"evidence":{"hostname":"\u001b[2J"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(data)
		if err != nil {
			return
		}
		ctx := context.Background()
		file.Diagnose(ctx)
		if red, err := Redact(file); err == nil {
			red.Diagnose(ctx)
		}
	})
}
