//go:build linux

package firewall

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// childEnv names the scenario a re-executed test binary runs inside its
// own network namespace.
const childEnv = "TAILPATH_FIREWALL_CHILD"

// scenarios are real rulesets, loaded with nft (or iptables-nft) into a
// private network namespace, and what InboundUDP must say of UDP 41641.
var scenarios = []struct {
	name string
	// nft is a ruleset for `nft -f -`; iptables, commands for iptables.
	nft      string
	iptables [][]string
	want     Result
	// why is a phrase the reason must contain.
	why string
}{
	{
		name: "no table",
		want: Result{Port: 41641, Verdict: Accept}, why: "no nftables base chain",
	},
	{
		name: "accept",
		nft: `table inet filter {
	chain input {
		type filter hook input priority 0; policy drop;
		iif lo accept
		udp dport 41641 accept
	}
}`,
		want: Result{Port: 41641, Verdict: Accept}, why: "rule 2",
	},
	{
		name: "drop",
		nft: `table inet filter {
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport 41641 counter drop
	}
}`,
		want: Result{Port: 41641, Verdict: Drop}, why: "rule 1",
	},
	{
		name: "stateful: ct state established accept, then policy drop",
		nft: `table inet filter {
	chain input {
		type filter hook input priority 0; policy drop;
		ct state established,related accept
		iif "lo" accept
		tcp dport 22 accept
	}
}`,
		want: Result{Port: 41641, Verdict: Drop, Stateful: true}, why: "policy drop",
	},
	{
		name: "a set of ports and an interval, through a jump",
		nft: `table ip filter {
	chain input {
		type filter hook input priority 0; policy drop;
		jump services
	}
	chain services {
		udp dport { 53, 123 } accept
		udp dport 40000-42000 accept
	}
}`,
		want: Result{Port: 41641, Verdict: Accept}, why: "services",
	},
	{
		name: "a rule on the source address: cannot be judged",
		nft: `table inet filter {
	chain input {
		type filter hook input priority 0; policy accept;
		ip saddr 192.0.2.0/24 udp dport 41641 drop
	}
}`,
		want: Result{Port: 41641, Verdict: Unknown}, why: "cannot judge",
	},
	{
		name: "iptables-nft: INPUT policy DROP with RELATED,ESTABLISHED",
		iptables: [][]string{
			{"-P", "INPUT", "DROP"},
			{"-A", "INPUT", "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"},
			{"-A", "INPUT", "-p", "tcp", "--dport", "22", "-j", "ACCEPT"},
		},
		want: Result{Port: 41641, Verdict: Drop, Stateful: true}, why: "policy drop",
	},
	{
		name: "iptables-nft: UDP 41641 accepted",
		iptables: [][]string{
			{"-P", "INPUT", "DROP"},
			{"-A", "INPUT", "-p", "udp", "--dport", "41641", "-j", "ACCEPT"},
		},
		want: Result{Port: 41641, Verdict: Accept},
	},
}

// TestInboundUDP loads each ruleset into a private network namespace (a
// re-executed child of this test binary, created with CLONE_NEWNET) and
// judges it there. It needs root and the nft (nftables) and iptables
// commands.
func TestInboundUDP(t *testing.T) {
	if name := os.Getenv(childEnv); name != "" {
		runChild(t, name)
		return
	}
	if os.Geteuid() != 0 {
		t.Skipf("skipping: a private network namespace and reading nftables need root (euid %d)", os.Geteuid())
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("skipping: the nft command (Debian package nftables) is not installed")
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			if sc.iptables != nil {
				if _, err := exec.LookPath("iptables"); err != nil {
					t.Skip("skipping: the iptables command is not installed")
				}
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestInboundUDP$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+sc.name)
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Skipf("skipping: cannot create a network namespace here: %v", err)
				}
				t.Fatalf("child in a private network namespace failed: %v\n%s", err, out.String())
			}
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, "RESULT ") {
					t.Log(strings.TrimSpace(l))
				}
			}
		})
	}
}

// runChild loads scenario name's ruleset in this (private) network
// namespace and checks InboundUDP's answer.
func runChild(t *testing.T, name string) {
	for _, sc := range scenarios {
		if sc.name != name {
			continue
		}
		if sc.nft != "" {
			cmd := exec.Command("nft", "-f", "-")
			cmd.Stdin = strings.NewReader(sc.nft)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("nft -f: %v\n%s", err, out)
			}
		}
		for _, args := range sc.iptables {
			if out, err := exec.Command("iptables", args...).CombinedOutput(); err != nil {
				t.Fatalf("iptables %v: %v\n%s", args, err, out)
			}
		}
		got, err := ReadRuleset().InboundUDP(41641)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got)
		t.Logf("RESULT %s", b)
		why := got.Why
		got.Why = ""
		if diff := cmp.Diff(sc.want, got); diff != "" {
			t.Errorf("InboundUDP(41641) (-want +got):\n%s\nwhy: %s", diff, why)
		}
		if !strings.Contains(why, sc.why) {
			t.Errorf("why %q does not say %q", why, sc.why)
		}
		return
	}
	t.Fatalf("no scenario %q", name)
}
