//go:build linux

package main

// The NAT lab: real tailscaled daemons (built from the pinned module) in
// Linux network namespaces, behind iptables NAT routers and an nftables
// firewall, joined to the lab's control and DERP+STUN servers on an
// "internet" bridge (198.51.100.0/24, a documentation range: a private
// range there would make reflexive addresses read as private). Each
// scenario asserts the real path (tailscale's own status) and tailpath's
// verdict, run in the node's own namespace so that this host's interfaces
// and firewall are the node's. It needs root, ip (iproute2), iptables,
// nft and sysctl; it skips under -short.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"tailscale.com/client/local"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/labtest"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// natNode is one tailscaled in the lab.
type natNode struct {
	name, ns, sock string
	lc             *local.Client
	d              *daemon
}

// TestNATLab covers, with real tailscaled and real NAT:
//   - an end with a public address and no firewall ↔ a hard NAT: direct
//     (magicsock handlePingLocked answers the hard end's ping);
//   - the same public end behind a stateful nftables firewall that drops
//     new inbound UDP to tailscaled's port ↔ the hard NAT: relayed;
//     tailpath says local-inbound-udp-blocked there (its firewall read as
//     stateful) and peer-inbound-udp-blocked from the hard end;
//   - hard ↔ hard: relayed, both-hard-nat;
//   - UDP blocked on one side (its router forwards no UDP): relayed,
//     local-udp-blocked there.
func TestNATLab(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds tailscaled and runs five in network namespaces; run without -short")
	}
	if os.Geteuid() != 0 {
		t.Skipf("skipping: network namespaces need root (euid %d)", os.Geteuid())
	}
	for _, cmd := range []string{"ip", "iptables", "nft", "sysctl"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("skipping: the NAT lab needs %s (Debian: iproute2, iptables, nftables, procps)", cmd)
		}
	}
	start := time.Now()
	tailscaledBin, tailscale := buildTailscale(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	id := randHex(3)
	ns := func(role string) string { return "tp" + id + "-" + role }
	inet := ns("inet")
	roles := []string{"inet", "pub", "pubfw", "ra", "ha", "rb", "hb", "rc", "hc"}
	for _, r := range roles {
		sh(t, "ip", "netns", "add", ns(r))
		name := ns(r)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	}
	for _, r := range roles {
		sh(t, "ip", "-n", ns(r), "link", "set", "lo", "up")
	}
	// The "internet": a bridge with a fixed MAC (a bridge takes its ports'
	// lowest MAC otherwise, and routers that cached the old one lose it).
	sh(t, "ip", "-n", inet, "link", "add", "br0", "type", "bridge")
	sh(t, "ip", "-n", inet, "link", "set", "br0", "address", "02:00:00:00:17:01")
	sh(t, "ip", "-n", inet, "addr", "add", "198.51.100.1/24", "dev", "br0")
	sh(t, "ip", "-n", inet, "link", "set", "br0", "up")
	wan := func(role, addr string) {
		port := "p" + role
		sh(t, "ip", "link", "add", "wan", "netns", ns(role), "type", "veth", "peer", "name", port, "netns", inet)
		sh(t, "ip", "-n", inet, "link", "set", port, "master", "br0", "up")
		sh(t, "ip", "-n", ns(role), "addr", "add", addr+"/24", "dev", "wan")
		sh(t, "ip", "-n", ns(role), "link", "set", "wan", "up")
	}
	wan("pub", "198.51.100.10")
	wan("pubfw", "198.51.100.11")
	// Routers with a LAN behind: hard NAT (MASQUERADE --random-fully: a
	// new port per destination), and one forwarding no UDP at all.
	router := func(r, h, wanAddr, lan string, extra ...[]string) {
		wan(r, wanAddr)
		sh(t, "ip", "link", "add", "lan", "netns", ns(r), "type", "veth", "peer", "name", "eth0", "netns", ns(h))
		sh(t, "ip", "-n", ns(r), "addr", "add", lan+".1/24", "dev", "lan")
		sh(t, "ip", "-n", ns(r), "link", "set", "lan", "up")
		sh(t, "ip", "-n", ns(h), "addr", "add", lan+".2/24", "dev", "eth0")
		sh(t, "ip", "-n", ns(h), "link", "set", "eth0", "up")
		sh(t, "ip", "-n", ns(h), "route", "add", "default", "via", lan+".1")
		sh(t, "ip", "netns", "exec", ns(r), "sysctl", "-qw", "net.ipv4.ip_forward=1")
		for _, args := range extra {
			sh(t, append([]string{"ip", "netns", "exec", ns(r), "iptables"}, args...)...)
		}
	}
	hard := []string{"-t", "nat", "-A", "POSTROUTING", "-o", "wan", "-j", "MASQUERADE", "--random-fully"}
	router("ra", "ha", "198.51.100.20", "10.1.0", hard)
	router("rb", "hb", "198.51.100.21", "10.2.0", hard)
	router("rc", "hc", "198.51.100.22", "10.3.0",
		[]string{"-t", "nat", "-A", "POSTROUTING", "-o", "wan", "-j", "MASQUERADE"},
		[]string{"-A", "FORWARD", "-p", "udp", "-j", "DROP"})
	// A stateful host firewall on pubfw: replies admitted, new inbound
	// UDP to tailscaled's port dropped.
	nft := exec.Command("ip", "netns", "exec", ns("pubfw"), "nft", "-f", "-")
	nft.Stdin = strings.NewReader(`table inet filter {
	chain input {
		type filter hook input priority 0; policy accept;
		ct state established,related accept
		udp dport 41641 drop
	}
}`)
	if out, err := nft.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v\n%s", err, out)
	}
	t.Logf("namespaces up after %v", time.Since(start).Round(time.Second))

	// Control and DERP+STUN on the bridge, their sockets made in inet.
	var infra *labtest.Infra
	var ierr error
	inNetns(t, inet, func() {
		infra, ierr = labtest.StartInfra(netip.MustParseAddr("198.51.100.1"), nil, nil)
	})
	if ierr != nil {
		t.Fatal(ierr)
	}
	t.Cleanup(infra.Close)

	sockDir, err := os.MkdirTemp("", "tpnat-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	nodes := map[string]*natNode{}
	for _, name := range []string{"pub", "pubfw", "ha", "hb", "hc"} {
		n := &natNode{name: name, ns: ns(name), sock: filepath.Join(sockDir, name+".sock")}
		n.d = startTailscaledIn(t, n.ns, tailscaledBin, t.TempDir(), n.sock, infra.DaemonEnv())
		n.lc = &local.Client{Socket: n.sock, UseSocketOnly: true}
		nodes[name] = n
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			waitSocket(ctx, t, n.lc, n.d)
			cmd := exec.CommandContext(ctx, tailscale, "--socket", n.sock, "up", "--login-server", infra.ControlURL, "--hostname", n.name)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("%s: tailscale up: %v\n%s\n%s", n.name, err, out, n.d.tail(20))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Every node measured its NAT, and sees every other node's NetInfo
	// (testcontrol passes it on): the verdicts need both ends.
	natWait(ctx, t, "every node's NAT facts, and its peers'", 90*time.Second, func() (bool, string) {
		for _, n := range nodes {
			snap, err := tailscaled.Gather(ctx, n.lc, nil)
			if err != nil {
				return false, n.name + ": " + err.Error()
			}
			if nat := snap.Self.NAT; nat == nil || nat.WorkingUDP == nil || (*nat.WorkingUDP && nat.MappingVariesByDestIP == nil) {
				return false, n.name + ": no netcheck yet"
			}
			if len(snap.Peers) != 4 {
				return false, fmt.Sprintf("%s sees %d peers", n.name, len(snap.Peers))
			}
			for _, p := range snap.Peers {
				if p.NAT == nil || p.NAT.WorkingUDP == nil {
					return false, n.name + ": no NetInfo of " + string(p.Name)
				}
			}
		}
		return true, ""
	})
	t.Logf("five nodes joined and measured after %v", time.Since(start).Round(time.Second))

	// Traffic on every pair under test: a TSMP ping (through WireGuard)
	// every second, which starts path discovery and keeps it going.
	pairs := [][2]string{{"pub", "ha"}, {"pubfw", "ha"}, {"ha", "hb"}, {"hc", "pub"}}
	tctx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	for _, p := range pairs {
		from, to := nodes[p[0]], nodes[p[1]]
		ip := tailnetIP(ctx, t, to)
		go func() {
			for tctx.Err() == nil {
				pctx, c := context.WithTimeout(tctx, 2*time.Second)
				from.lc.Ping(pctx, ip, tailcfg.PingTSMP)
				c()
				select {
				case <-tctx.Done():
				case <-time.After(time.Second):
				}
			}
		}()
	}

	t.Run("public end, hard NAT: direct", func(t *testing.T) {
		natWait(ctx, t, "pub → ha direct", 2*time.Minute, func() (bool, string) {
			k := pathOf(ctx, t, nodes["pub"], "ha")
			return k == "direct", k
		})
		checkVerdict(ctx, t, nodes["pub"], "ha", []probes.ReasonID{probes.ReasonDirect}, nil)
	})

	// The relayed pairs had traffic for as long as the direct one needed;
	// give discovery a few more heartbeats, then they must still be relayed.
	time.Sleep(10 * time.Second)
	for _, p := range pairs[1:] {
		for range 3 {
			if k := pathOf(ctx, t, nodes[p[0]], p[1]); k != "relay" {
				t.Errorf("%s → %s: path %s, want relay (the lab is built so)", p[0], p[1], k)
			}
			time.Sleep(time.Second)
		}
	}
	t.Run("public end behind a stateful firewall, hard NAT: the firewall end drops inbound UDP", func(t *testing.T) {
		checkVerdict(ctx, t, nodes["pubfw"], "ha", []probes.ReasonID{probes.ReasonLocalInboundUDPBlocked}, func(t *testing.T, v probes.Verdict) {
			if !hasCheck(v, "Host.Firewall", probes.CheckFail) || !strings.Contains(string(v.Fix), "replies this firewall lets in") {
				t.Errorf("the verdict does not read pubfw's stateful nftables ruleset: fix %q, checks %+v", v.Fix, v.Checks)
			}
		})
		// From ha, pubfw's one public endpoint is what a host behind a
		// carrier's NAT advertises too (net/netmon/state.go
		// LocalAddresses skips 100.64.0.0/10), so whether pubfw has a NAT
		// is unknown: our hard NAT is the verdict, and pubfw's endpoints
		// read unknown, never peer-inbound-udp-blocked from ha's side
		// (review 17, item 1).
		checkVerdict(ctx, t, nodes["ha"], "pubfw", []probes.ReasonID{probes.ReasonLocalHardNAT}, func(t *testing.T, v probes.Verdict) {
			if !hasCheck(v, "Peer.Endpoints", probes.CheckUnknown) {
				t.Errorf("pubfw's endpoints are not read unknown: checks %+v", v.Checks)
			}
		})
	})
	t.Run("hard NAT on both ends", func(t *testing.T) {
		checkVerdict(ctx, t, nodes["ha"], "hb", []probes.ReasonID{probes.ReasonBothHardNAT}, nil)
	})
	t.Run("UDP blocked on one side", func(t *testing.T) {
		checkVerdict(ctx, t, nodes["hc"], "pub", []probes.ReasonID{probes.ReasonLocalUDPBlocked}, nil)
		// The UDP-blocked node advertises its LAN address, or nothing at
		// all when its netcheck fails outright (magicsock determineEndpoints
		// returns no endpoints when updateNetInfo fails). With none,
		// no-endpoints leads and hc's own netcheck is beside it; with its
		// LAN address, hc's blocked UDP leads (no mapping on its router
		// could help while it drops all UDP: issue 28) and the private
		// endpoints are beside it.
		checkVerdict(ctx, t, nodes["pub"], "hc", []probes.ReasonID{probes.ReasonPeerUDPBlocked, probes.ReasonNoEndpoints}, func(t *testing.T, v probes.Verdict) {
			beside := probes.ReasonPeerUDPBlocked
			if v.Reason == probes.ReasonPeerUDPBlocked {
				beside = probes.ReasonPrivateEndpointsOnly
			}
			if !slices.Contains(v.Also, beside) {
				t.Errorf("%s also %v lacks %s", v.Reason, v.Also, beside)
			}
		})
	})
	stopTraffic()
	t.Logf("NAT lab done in %v", time.Since(start).Round(time.Second))
}

// checkVerdict runs `tailpath status --json` in n's network namespace and
// requires peer's reason to be one of want, retrying a few seconds (facts
// arrive through map updates), then more.
func checkVerdict(ctx context.Context, t *testing.T, n *natNode, peer string, want []probes.ReasonID, more func(*testing.T, probes.Verdict)) {
	t.Helper()
	var got probes.Verdict
	natWait(ctx, t, n.name+"'s verdict on "+peer, 2*time.Minute, func() (bool, string) {
		var out, errOut string
		var code int
		inNetns(t, n.ns, func() {
			code, out, errOut = tailpathStatus(ctx, "--json", "--socket", n.sock)
		})
		if code != 0 {
			return false, fmt.Sprintf("exit %d: %s", code, errOut)
		}
		var doc struct {
			Peers []struct {
				Name    string         `json:"name"`
				Verdict probes.Verdict `json:"verdict"`
			} `json:"peers"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			return false, err.Error()
		}
		for _, p := range doc.Peers {
			if p.Name == peer {
				got = p.Verdict
				return slices.Contains(want, got.Reason), fmt.Sprintf("%s %v: %s", got.Reason, got.Also, got.Summary)
			}
		}
		return false, "no peer " + peer
	})
	t.Logf("%s sees %s: %s %v: %s", n.name, peer, got.Reason, got.Also, got.Summary)
	if more != nil {
		more(t, got)
	}
}

func hasCheck(v probes.Verdict, field string, st probes.CheckState) bool {
	for _, c := range v.Checks {
		if string(c.Field) == field && c.Mark() == st {
			return true
		}
	}
	return false
}

// pathOf is n's real path to peer, as tailscale status words it: direct,
// peer-relay, relay, idle.
func pathOf(ctx context.Context, t *testing.T, n *natNode, peer string) string {
	st, err := n.lc.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps := lab.FindPeer(st, peer)
	switch {
	case ps == nil:
		return "missing"
	case ps.Active && ps.CurAddr != "":
		return "direct"
	case ps.Active && ps.PeerRelay != "":
		return "peer-relay"
	case ps.Active:
		return "relay"
	}
	return "idle"
}

func tailnetIP(ctx context.Context, t *testing.T, n *natNode) netip.Addr {
	st, err := n.lc.Status(ctx)
	if err != nil || st.Self == nil || len(st.Self.TailscaleIPs) == 0 {
		t.Fatalf("%s: no tailnet address: %v", n.name, err)
	}
	return st.Self.TailscaleIPs[0]
}

// natWait polls cond every 500 ms until it holds or limit passes.
func natWait(ctx context.Context, t *testing.T, what string, limit time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for {
		ok, why := cond()
		if ok {
			return
		}
		last = why
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("waiting for %s: gave up after %v; last: %s", what, limit, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// inNetns runs f on an OS thread moved into network namespace name; the
// thread is discarded afterwards. Sockets f creates stay in name.
func inNetns(t *testing.T, name string, f func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		fd, err := unix.Open("/run/netns/"+name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		f()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatalf("entering network namespace %s: %v", name, err)
	}
}

// startTailscaledIn runs tailscaled in network namespace ns (ip netns
// exec), userspace networking, UDP port 41641, hermetic env.
func startTailscaledIn(t *testing.T, ns, bin, stateDir, sock string, env []string) *daemon {
	t.Helper()
	return runTailscaled(t, filepath.Join(stateDir, "tailscaled.log"), env, "ip", "netns", "exec", ns, bin,
		"--tun=userspace-networking", "--statedir="+stateDir, "--socket="+sock,
		"--port=41641", "--no-logs-no-support", "--syspolicy-file=")
}

func sh(t *testing.T, args ...string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
