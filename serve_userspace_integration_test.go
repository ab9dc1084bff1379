//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tailscale.com/client/local"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/labtest"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// TestServeUserspaceNetworkingCallers is issue 34's first attack, with
// real tailscaled: in userspace networking (DSM's package default, the
// container image's) tailscaled's netstack hands a tailnet connection to
// the node's own address to 127.0.0.1:PORT, so every peer the ACLs let
// reach serve's port arrives from loopback. Three tailscaled daemons in
// userspace networking share a network namespace with the lab's control
// and DERP: nas runs serve on 127.0.0.1:9473 with the defaults (--allow
// self); bobs-pc is another user's node; laptop is moved to nas's user.
// bobs-pc, dialing nas's tailnet address through its own tailscaled, is
// refused (403, naming itself and no one else) on /snapshot.json and
// /metrics; laptop reads both; curl on loopback in the namespace reads
// too.
func TestServeUserspaceNetworkingCallers(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds tailscaled and runs three in a network namespace; run without -short")
	}
	if os.Geteuid() != 0 {
		t.Skipf("skipping: network namespaces need root (euid %d)", os.Geteuid())
	}
	for _, cmd := range []string{"ip", "curl"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("skipping: needs %s (Debian: iproute2, curl)", cmd)
		}
	}
	tailscaledBin, tailscale := buildTailscale(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	ns := "tp" + randHex(3) + "-us"
	sh(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
	// An interface with a documentation address for the lab's servers
	// (a veth pair inside the namespace: no dummy module needed).
	sh(t, "ip", "-n", ns, "link", "add", "d0", "type", "veth", "peer", "name", "d1")
	sh(t, "ip", "-n", ns, "addr", "add", "198.51.100.1/24", "dev", "d0")
	sh(t, "ip", "-n", ns, "link", "set", "d0", "up")
	sh(t, "ip", "-n", ns, "link", "set", "d1", "up")
	var infra *labtest.Infra
	var ierr error
	inNetns(t, ns, func() { infra, ierr = labtest.StartInfra(netip.MustParseAddr("198.51.100.1"), nil, nil) })
	if ierr != nil {
		t.Fatal(ierr)
	}
	t.Cleanup(infra.Close)

	sockDir, err := os.MkdirTemp("", "tpus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	type tsNode struct {
		sock string
		lc   *local.Client
		d    *daemon
		ip   netip.Addr
		key  key.NodePublic
	}
	nodes := map[string]*tsNode{}
	for _, name := range []string{"nas", "bobs-pc", "laptop"} {
		stateDir := t.TempDir()
		n := &tsNode{sock: filepath.Join(sockDir, name+".sock")}
		n.d = runTailscaled(t, filepath.Join(stateDir, "tailscaled.log"), infra.DaemonEnv(), "ip", "netns", "exec", ns, tailscaledBin,
			"--tun=userspace-networking", "--statedir="+stateDir, "--socket="+n.sock,
			"--port=0", "--no-logs-no-support", "--syspolicy-file=")
		n.lc = &local.Client{Socket: n.sock, UseSocketOnly: true}
		waitSocket(ctx, t, n.lc, n.d)
		up := exec.CommandContext(ctx, tailscale, "--socket", n.sock, "up", "--login-server", infra.ControlURL, "--hostname", name)
		if out, err := up.CombinedOutput(); err != nil {
			t.Fatalf("%s: tailscale up: %v\n%s\n%s", name, err, out, n.d.tail(20))
		}
		st, err := n.lc.Status(ctx)
		if err != nil || st.Self == nil || len(st.Self.TailscaleIPs) == 0 {
			t.Fatalf("%s: no tailnet address: %v", name, err)
		}
		n.ip, n.key = st.Self.TailscaleIPs[0], st.Self.PublicKey
		nodes[name] = n
	}
	nas, bob, laptop := nodes["nas"], nodes["bobs-pc"], nodes["laptop"]
	if err := infra.SetNodeUser(laptop.key, nas.key); err != nil {
		t.Fatal(err)
	}
	// nas sees laptop as its own user's and bobs-pc as another's.
	var nasLogin, bobLogin string
	natWait(ctx, t, "nas to see laptop as its user's node", 60*time.Second, func() (bool, string) {
		self, err1 := nas.lc.WhoIs(ctx, nas.ip.String())
		lw, err2 := nas.lc.WhoIs(ctx, laptop.ip.String())
		bw, err3 := nas.lc.WhoIs(ctx, bob.ip.String())
		if err1 != nil || err2 != nil || err3 != nil {
			return false, fmt.Sprint(err1, err2, err3)
		}
		nasLogin, bobLogin = self.UserProfile.LoginName, bw.UserProfile.LoginName
		return lw.Node.User == self.Node.User && bw.Node.User != self.Node.User, fmt.Sprintf("users: nas %d, laptop %d, bobs-pc %d", self.Node.User, lw.Node.User, bw.Node.User)
	})

	// serve on nas's loopback, in the namespace, with the defaults.
	var ln net.Listener
	var lerr error
	inNetns(t, ns, func() { ln, lerr = net.Listen("tcp4", "127.0.0.1:9473") })
	if lerr != nil {
		t.Fatal(lerr)
	}
	s := &app.Serve{Sources: app.Sources{Client: tailscaled.NewClient(nas.sock), Socket: nas.sock, Interval: 500 * time.Millisecond}, MaxPeers: 100}
	s.Snapshot = s.SnapshotFile
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Run(sctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})

	// A peer reads through its own tailscaled, as a peer's Prometheus or
	// curl would over the tailnet.
	via := func(n *tsNode) *http.Client {
		return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(addr)
			p, _ := strconv.Atoi(port)
			return n.lc.DialTCP(ctx, host, uint16(p))
		}}}
	}
	url := func(path string) string { return "http://" + net.JoinHostPort(nas.ip.String(), "9473") + path }
	get := func(c *http.Client, u string) (int, string, error) {
		rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
		defer rcancel()
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
		res, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), nil
	}
	curl := func(path string) (int, string, error) {
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "curl", "-s", "-w", "\n%{http_code}", "http://127.0.0.1:9473"+path).Output()
		if err != nil {
			return 0, "", err
		}
		i := strings.LastIndexByte(string(out), '\n')
		n, _ := strconv.Atoi(string(out[i+1:]))
		return n, string(out[:i]), nil
	}
	for _, tt := range []struct {
		who  string
		get  func() (int, string, error)
		want int
		says string
	}{
		{"bobs-pc, another user's node: /snapshot.json", func() (int, string, error) { return get(via(bob), url("/snapshot.json")) }, 403, "bobs-pc (" + bobLogin + ", " + bob.ip.String() + " through tailscaled) may not read this server"},
		{"bobs-pc, another user's node: /metrics", func() (int, string, error) { return get(via(bob), url("/metrics")) }, 403, "may not read this server"},
		{"laptop, nas's user's node: /snapshot.json", func() (int, string, error) { return get(via(laptop), url("/snapshot.json")) }, 200, snapshot.Format},
		{"laptop, nas's user's node: /metrics", func() (int, string, error) { return get(via(laptop), url("/metrics")) }, 200, "tailpath_tailscaled_up 1"},
		{"curl on nas's loopback: /snapshot.json", func() (int, string, error) { return curl("/snapshot.json") }, 200, snapshot.Format},
		{"curl on nas's loopback: /metrics", func() (int, string, error) { return curl("/metrics") }, 200, "tailpath_tailscaled_up 1"},
	} {
		var code int
		var body string
		var err error
		// serve knows nas's addresses (the Host) and its peers once it has
		// polled; a path may take a moment: until then 503, 421 or a dial
		// error is asked again.
		for deadline := time.Now().Add(45 * time.Second); ; {
			code, body, err = tt.get()
			if err == nil && code == tt.want && strings.Contains(body, tt.says) {
				break
			}
			if time.Now().After(deadline) || (err == nil && code != 503 && code != 421 && code != tt.want) {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		if err != nil || code != tt.want || !strings.Contains(body, tt.says) {
			t.Errorf("%s: %d %.300q (%v); want %d saying %q", tt.who, code, body, err, tt.want, tt.says)
		}
		if code == 403 && (strings.Contains(body, nasLogin) || strings.Contains(body, "--allow is") || strings.Contains(body, "tailpath_")) {
			t.Errorf("%s: the refusal %q tells more than the caller's own identity", tt.who, body)
		}
	}
}
