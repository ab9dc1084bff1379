package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/probes/snapshot"
)

var updateFrom = flag.Bool("update-from", false, "rewrite testdata/from/*.golden")

// pasteDir holds the pasted-input samples, written from the formats in
// Tailscale v1.102.5's source with documentation addresses.
const pasteDir = "probes/paste/testdata/paste"

func pasteFile(name string) string { return filepath.Join(pasteDir, name) }

// TestStatusFromGolden runs `tailpath status --from` on each pasted
// format and on mixes of them, and compares stdout and stderr with
// testdata/from/*.golden (regenerate with -update-from). Only inputs that
// state their own time are used, so the output does not depend on the
// clock.
func TestStatusFromGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"thread", []string{"--from", pasteFile("thread.txt")}},
		{"thread-json", []string{"--from", pasteFile("thread.txt"), "--json"}},
		{"status-json-old-and-log", []string{"--from", pasteFile("status-old.json"), pasteFile("tailscaled.log")}},
		{"status-json-old-and-netcheck-json", []string{"--from", pasteFile("status-old.json"), "--from", pasteFile("netcheck.json")}},
		{"netcheck-text-only", []string{"--from", pasteFile("netcheck.txt")}},
		{"thread-redacted", []string{"--from", pasteFile("thread.txt"), "--redact"}},
		{"thread-reply", []string{"--from", pasteFile("thread.txt"), "--reply"}},
		{"both-hard-reply", []string{"--from", filepath.Join("probes", "paste", "testdata", "settle", "01-both-hard.txt"), "--reply"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runStatusCmd(t, tt.args...)
			if code != 0 {
				t.Errorf("exit %d: %s", code, stderr)
			}
			got := stdout + "--- stderr ---\n" + stderr
			path := filepath.Join("testdata", "from", tt.name+".golden")
			if *updateFrom {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-from to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("status %s (-want +got):\n%s", strings.Join(tt.args, " "), diff)
			}
		})
	}
}

// TestStatusFromCRLFAndConcatenated: Windows line endings, and the
// inputs concatenated into one file, read exactly as the separate LF
// files do.
func TestStatusFromCRLFAndConcatenated(t *testing.T) {
	dir := t.TempDir()
	thread, err := os.ReadFile(pasteFile("thread.txt"))
	if err != nil {
		t.Fatal(err)
	}
	crlf := filepath.Join(dir, "thread.txt")
	os.WriteFile(crlf, bytes.ReplaceAll(thread, []byte("\n"), []byte("\r\n")), 0o644)
	_, want, _ := runStatusCmd(t, "--from", pasteFile("thread.txt"))
	_, got, stderr := runStatusCmd(t, "--from", crlf)
	// The header names the path given; the rest must be identical.
	want = strings.Replace(want, pasteFile("thread.txt"), crlf, 1)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRLF input (-LF +CRLF):\n%s\n%s", diff, stderr)
	}

	var cat []byte
	for _, n := range []string{"status-old.json", "tailscaled.log"} {
		b, _ := os.ReadFile(pasteFile(n))
		cat = append(cat, b...)
	}
	one := filepath.Join(dir, "both.txt")
	os.WriteFile(one, cat, 0o644)
	_, sep, _ := runStatusCmd(t, "--from", pasteFile("status-old.json"), pasteFile("tailscaled.log"), "--json")
	_, joined, _ := runStatusCmd(t, "--from", one, "--json")
	peersOf := func(s string) any {
		var v struct {
			Self  any `json:"self"`
			Peers any `json:"peers"`
		}
		json.Unmarshal([]byte(s), &v)
		return v
	}
	if diff := cmp.Diff(peersOf(sep), peersOf(joined)); diff != "" {
		t.Errorf("one concatenated file vs two files (-two +one):\n%s", diff)
	}
}

// TestStatusFromBadInput: what cannot be read is one clear line on
// stderr and exit status 2, never a panic.
func TestStatusFromBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"nothing recognised", write("chat.txt", "hello\nworld\n"), `tailpath: --from: not a tailpath snapshot or recognised tailscale output: nothing recognised (first line: chat.txt:1: "hello")`},
		{"empty", write("empty.txt", ""), "tailpath: --from: not a tailpath snapshot or recognised tailscale output: the input is empty"},
		{"corrupt snapshot", write("bad.json", `{"format":"tailpath-snapshot","version":1,"status":{"Peer":[1]}}`), "tailpath: --from: bad.json: corrupt snapshot: "},
		{"newer snapshot", write("new.json", `{"format":"tailpath-snapshot","version":7}`), "tailpath: --from: new.json: unsupported snapshot version 7"},
		{"corrupt status JSON", write("st.json", `{"BackendState":"Running","Peer":{"nodekey:zz":{}}}`), "tailpath: --from: corrupt snapshot: st.json:1: tailscale status --json does not decode"},
		{"missing file", filepath.Join(dir, "nope.txt"), "tailpath: --from: open "},
		{"hostile bytes", write("evil.txt", "\x1b]0;pwned\x07\x1b[2J\x00\xff\xfe{{{{\n"), `tailpath: --from: not a tailpath snapshot or recognised tailscale output: evil.txt is binary, not text`},
		{"hostile text", write("esc.txt", "\x1b]0;pwned\x07\x1b[2J hello\n"), `tailpath: --from: not a tailpath snapshot or recognised tailscale output: nothing recognised (first line: esc.txt:1: "`},
		{"binary with a tailscale line", write("bin.dat", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00>\x00\nRunning\x00100.64.0.2 nas alice@ linux idle, tx 1 rx 2\n"), `tailpath: --from: not a tailpath snapshot or recognised tailscale output: bin.dat is binary, not text`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runStatusCmd(t, "--from", tt.path)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.HasPrefix(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr = %q\nwant one line starting %q", stderr, tt.want)
			}
			if strings.ContainsAny(stderr, "\x1b\x07\x00") {
				t.Errorf("stderr carries control bytes: %q", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q", stdout)
			}
		})
	}
}

// TestStatusSaveAndFrom: status --save writes a snapshot of the fixture
// tailscaled that status --from diagnoses to the same table; --save -
// writes it to stdout; --redact output holds none of the fixture's names.
func TestStatusSaveAndFrom(t *testing.T) {
	srv := statusFixture(t, "both-hard-nat")
	dir := t.TempDir()
	file := filepath.Join(dir, "snap.json")
	code, live, stderr := runStatusCmd(t, "--socket", srv.Socket, "--no-api", "--save", file)
	if code != 0 || !strings.Contains(stderr, "tailpath: saved a snapshot (taken ") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, offline, stderr := runStatusCmd(t, "--from", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// --from adds its header of "# " lines; the table is the same.
	body := offline[strings.Index(offline, "self: "):]
	if diff := cmp.Diff(live, body); diff != "" {
		t.Errorf("--from of the saved file (-live +saved):\n%s", diff)
	}

	code, out, _ := runStatusCmd(t, "--socket", srv.Socket, "--no-api", "--save", "-", "--redact")
	if code != 0 {
		t.Fatalf("--save - --redact: exit %d", code)
	}
	f, err := snapshot.Decode([]byte(out))
	if err != nil {
		t.Fatalf("stdout is not a snapshot: %v", err)
	}
	if f.Redacted == nil {
		t.Error("--redact output does not say it is redacted")
	}
	for _, s := range []string{"laptop", "office-pc", "tail1234", "alice@example.com", "nSELF1CNTRL", "198.51.100.10", "100.64.0.2", "nodekey:2222"} {
		if strings.Contains(out, s) {
			t.Errorf("redacted snapshot holds %q", s)
		}
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil || len(ls.Peers) != 1 || ls.Peers[0].Verdict.Reason != "both-hard-nat" {
		t.Errorf("redacted snapshot diagnoses as %v (%v), want both-hard-nat", ls, err)
	}
}

// TestStatusPeerSnapshot: --peer-snapshot fills the peer's side of the
// path from a snapshot saved on it, with source peer-snapshot.
func TestStatusPeerSnapshot(t *testing.T) {
	dir := t.TempDir()
	ours := filepath.Join(dir, "ours.json")
	if code, _, stderr := runStatusCmd(t, "--socket", statusFixture(t, "local-hard-nat").Socket, "--no-api", "--save", ours); code != 0 {
		t.Fatalf("save ours: %s", stderr)
	}
	// The peer's own snapshot: the fixture as seen from homeserver, whose
	// NAT is hard too.
	theirs := filepath.Join(dir, "theirs.json")
	writePeerSnapshot(t, ours, theirs)
	code, stdout, stderr := runStatusCmd(t, "--from", ours, "--peer-snapshot", theirs, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "homeserver's own side of the path from "+theirs) {
		t.Errorf("stderr = %q", stderr)
	}
	var out struct {
		Peers []struct {
			Verdict struct {
				Reason string `json:"reason"`
				Checks []struct {
					Field, Value, State, Source string
				} `json:"checks"`
			} `json:"verdict"`
			PeerSide struct{ Source string } `json:"peer_side"`
		} `json:"peers"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	p := out.Peers[0]
	if p.PeerSide.Source != "peer-snapshot" || p.Verdict.Reason != "both-hard-nat" {
		t.Errorf("peer side %q, reason %q; want peer-snapshot, both-hard-nat", p.PeerSide.Source, p.Verdict.Reason)
	}
	found := false
	for _, c := range p.Verdict.Checks {
		if c.Field == "PeerSnapshot.NetInfo.MappingVariesByDestIP" && c.Value == "true" && c.Source == "peer-snapshot" {
			found = true
		}
	}
	if !found {
		t.Errorf("no PeerSnapshot.* check from the peer's snapshot: %+v", p.Verdict.Checks)
	}

	// A peer snapshot of a node not in ours is an error.
	if code, _, stderr := runStatusCmd(t, "--from", ours, "--peer-snapshot", ours); code != 2 || !strings.Contains(stderr, "no peer matches") {
		t.Errorf("own snapshot as the peer's: exit %d, %q", code, stderr)
	}
}

// writePeerSnapshot writes, from our saved snapshot, the one the peer
// would save: the peer as self (same ids and addresses), with a hard NAT
// and no port mapping in its NetInfo.
func writePeerSnapshot(t *testing.T, ours, theirs string) {
	t.Helper()
	b, err := os.ReadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	f, err := snapshot.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var peer any
	for k, ps := range f.Status.Peer {
		f.Status.Self = ps
		f.Status.TailscaleIPs = ps.TailscaleIPs
		delete(f.Status.Peer, k)
		peer = ps
	}
	if peer == nil {
		t.Fatal("no peer in our snapshot")
	}
	var nodeJSON = `{"ID":2,"StableID":"` + string(f.Status.Self.ID) + `","Name":"homeserver.tail1234.ts.net.",
	 "Hostinfo":{"OS":"linux","NetInfo":{"MappingVariesByDestIP":true,"WorkingUDP":true,"HavePortMap":false,"UPnP":false,"PMP":false,"PCP":false,"PreferredDERP":1}}}`
	var w snapshot.WhoIs
	w.Addr = f.Status.TailscaleIPs[0].String()
	if err := json.Unmarshal([]byte(nodeJSON), &w.Node); err != nil {
		t.Fatal(err)
	}
	f.WhoIs = []snapshot.WhoIs{w}
	if err := snapshot.WriteFile(theirs, f); err != nil {
		t.Fatal(err)
	}
}

// TestStatusFromStdin: "-" reads the paste from stdin; flags after the
// files still count; --save - with --json is refused.
func TestStatusFromStdin(t *testing.T) {
	b, err := os.ReadFile(pasteFile("thread.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := dispatch(context.Background(), []string{"status", "--from", "-", "--json"}, cli.IO{Stdin: bytes.NewReader(b), Stdout: &out, Stderr: &errOut})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var v struct {
		Peers    []any `json:"peers"`
		Snapshot struct {
			From   []string `json:"from"`
			Inputs []any    `json:"inputs"`
		} `json:"snapshot"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Peers) != 6 || len(v.Snapshot.Inputs) == 0 || v.Snapshot.From[0] != "-" {
		t.Errorf("%d peers, inputs %v, from %v", len(v.Peers), v.Snapshot.Inputs, v.Snapshot.From)
	}
	if code, _, stderr := runStatusCmd(t, "--save", "-", "--json"); code != 2 || !strings.Contains(stderr, "--json has no room") {
		t.Errorf("--save - --json: exit %d, %q", code, stderr)
	}
}

// TestFromURLRefused: a URL nobody answers says what to check.
func TestFromURLRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	code, _, errOut := runStatusCmd(t, "--from", "http://"+addr+"/snapshot.json")
	if code == 0 || !strings.Contains(errOut, "connection refused") || !strings.Contains(errOut, "is tailpath serve running there") {
		t.Errorf("status --from a closed port: exit %d, stderr %q", code, errOut)
	}
}

// TestStatusFromField: `status --from` on each pasted field input of
// ../shared (what people really paste) reads it (exit 0), prints the
// self verdict the text supports and puts it in --json.
func TestStatusFromField(t *testing.T) {
	dir := filepath.Join("..", "shared", "testdata", "field", "pasted")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/testdata/field/pasted is absent: field inputs not checked")
	}
	tests := []struct {
		file, want string
	}{
		{"netcheck-logged-out.txt", "self verdict: self-netcheck-empty: "},
		{"journal-control-tls.txt", "self verdict: self-control-breaking: "},
		{"ping-placeholders.txt", "MACHINE-2  -   ping: via DERP(nue)  6.0ms    \"nue\""},
		// The CLI's netcheck measures from a port of its own
		// (cmd/tailscale/cli/netcheck.go, netcheck.Client.Standalone): its
		// NAT type is not tailscaled's (review 17, item 3).
		{"netcheck-redacted.txt", "self: -; home DERP -; UDP ok, easy NAT (the CLI's netcheck)"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			code, stdout, stderr := runStatusCmd(t, "--from", path)
			if code != 0 || !strings.Contains(stdout, tt.want) {
				t.Errorf("exit %d, want 0 and %q in:\n%s%s", code, tt.want, stdout, stderr)
			}
			// The "to settle" block may name local-udp-blocked as a
			// candidate: only the verdicts are held to this.
			verdicts, _, _ := strings.Cut(stdout, "to settle")
			if strings.Contains(verdicts, "local-udp-blocked") || strings.Contains(verdicts, "UDP blocked") {
				t.Errorf("a UDP verdict the text cannot show:\n%s", stdout)
			}
			code, stdout, _ = runStatusCmd(t, "--from", path, "--json")
			var out struct {
				Self struct {
					Verdict *struct {
						Reason string `json:"reason"`
					} `json:"verdict"`
				} `json:"self"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil {
				t.Fatalf("--json: exit %d, %v", code, err)
			}
			if want, _, _ := strings.Cut(strings.TrimPrefix(tt.want, "self verdict: "), ":"); strings.HasPrefix(tt.want, "self verdict: ") &&
				(out.Self.Verdict == nil || out.Self.Verdict.Reason != want) {
				t.Errorf("--json self.verdict %+v, want %s", out.Self.Verdict, want)
			}
		})
	}
}

// TestStatusReply: --reply is redacted (no name or address of the paste
// is in it), asks for at least one command in a code block, and refuses
// what it cannot honour.
func TestStatusReply(t *testing.T) {
	in := filepath.Join("probes", "paste", "testdata", "settle", "01-both-hard.txt")
	code, stdout, stderr := runStatusCmd(t, "--from", in, "--reply")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"laptop", "nas", "100.64.0", "198.51.100.10", "192.168.1.20"} {
		if strings.Contains(stdout, s) {
			t.Errorf("the reply holds %q:\n%s", s, stdout)
		}
	}
	if !strings.Contains(stdout, "**Still open**") || !strings.Contains(stdout, "```\n   tailscale status; tailscale version; tailscale netcheck") {
		t.Errorf("the reply asks for no peer-side command:\n%s", stdout)
	}
	for _, args := range [][]string{
		{"--reply"},
		{"--from", in, "--reply", "--json"},
		{"--from", in, "--reply", "--save", "x.json"},
		{"--from", in, "--reply", "--peer-snapshot", in},
	} {
		if code, _, stderr := runStatusCmd(t, args...); code != cli.ExitUsage || !strings.Contains(stderr, "--reply") {
			t.Errorf("status %s: exit %d (%s), want a usage error about --reply", strings.Join(args, " "), code, stderr)
		}
	}
}
