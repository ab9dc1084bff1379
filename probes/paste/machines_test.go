package paste

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/probes"
)

// TestTwoMachinesPeerSide: a paste holding this node's output and then
// the peer's (its prompt names it) keeps this node's netcheck as ours and
// gives the peer's hard NAT to that peer, never to us.
func TestTwoMachinesPeerSide(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "corpus", "thread-two-machines-prompts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse([]Raw{{Name: "thread.txt", Data: data}}, pasteNow)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ls.Self.Name != "desktop" {
		t.Errorf("self %q, want desktop (the first machine)", ls.Self.Name)
	}
	if n := ls.Self.NAT; n == nil || n.MappingVariesByDestIP == nil || *n.MappingVariesByDestIP {
		t.Errorf("our NAT %+v: want desktop's easy netcheck, not office's hard report", n)
	}
	if ls.Self.Version != "" {
		t.Errorf("our version %q: office's `tailscale version` is not ours", ls.Self.Version)
	}
	if len(ls.Self.Endpoints) > 0 {
		t.Errorf("our endpoints %v: office's log lines are not ours", ls.Self.Endpoints)
	}
	if len(ls.Peers) != 1 {
		t.Fatalf("%d peers, want office only", len(ls.Peers))
	}
	p := ls.Peers[0]
	s := p.PeerSide
	if s == nil || s.Source != probes.SourcePeerSnapshot || s.MappingVariesByDestIP == nil || !*s.MappingVariesByDestIP || len(s.Endpoints) != 2 {
		t.Fatalf("office's side %+v: want its own hard NAT and endpoints from the paste", s)
	}
	if p.Verdict.Reason != probes.ReasonPeerHardNAT {
		t.Errorf("verdict %s, want %s", p.Verdict.Reason, probes.ReasonPeerHardNAT)
	}
}

// TestTwoMachinesSetAside: another machine's output that no peer is
// stays out of our facts, and the warning names its lines and kinds.
func TestTwoMachinesSetAside(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "corpus", "thread-two-machines-set-aside.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse([]Raw{{Name: "thread.txt", Data: data}}, pasteNow)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.Self.NAT; n == nil || n.MappingVariesByDestIP == nil || *n.MappingVariesByDestIP {
		t.Errorf("our NAT %+v: the second report (node B's, hard) replaced ours (easy)", n)
	}
	if len(f.PeerSides) != 0 {
		t.Errorf("peer sides %v: node B is no peer of the status", f.PeerSides)
	}
	found := false
	for _, w := range f.Warnings {
		found = found || strings.Contains(string(w), "thread.txt:20-33") && strings.Contains(string(w), "set aside") && strings.Contains(string(w), KindNetcheckText)
	}
	if !found {
		t.Errorf("warnings %q: none names the lines set aside", f.Warnings)
	}
}

// TestMachineSigns: the prompts and prose that name a machine, and
// sentences that do not.
func TestMachineSigns(t *testing.T) {
	for line, want := range map[string]string{
		"tom@desktop:~$ tailscale status":    "desktop",
		"[root@vps ~]# tailscale netcheck":   "vps",
		"tom@mbp.local ~ % tailscale status": "mbp",
		"$ tailscale status":                 "",
		"PS C:\\Users\\me> tailscale status": "",
	} {
		if got := promptHost(line); got != want {
			t.Errorf("promptHost(%q) = %q, want %q", line, got, want)
		}
	}
	for line, want := range map[string]string{
		"On the other side:":                   "generic",
		"**From the other machine:**":          "generic",
		"Then from the VPS:":                   "vps",
		"And from node B:":                     "b (noun)",
		"> on nas:":                            "nas",
		"Here is the line for the NAS:":        "",
		"Did you run it on the other machine?": "",
		"I also tried it on the other machine and it was the same.": "",
	} {
		mk, ok := proseMarker(line)
		got := ""
		switch {
		case ok && mk.host == "":
			got = "generic"
		case ok && mk.noun:
			got = mk.host + " (noun)"
		case ok:
			got = mk.host
		}
		if got != want {
			t.Errorf("proseMarker(%q) = %q, want %q", line, got, want)
		}
	}
}
