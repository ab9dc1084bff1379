//go:build linux

package main

// The NAT lab with a far DERP region: real tailscaled in network
// namespaces, each behind a hard NAT (so their path is relayed), and one
// DERP region behind a delay element of our own (labtest.DelayRelay, a
// userspace TCP/UDP relay in a namespace of its own: the lab kernel has
// no netem) whose delay the test raises once the nodes have homed there.
// It shows what tailscaled's home DERP rule does with a region that turns
// far (net/netcheck addReportHistoryAndSetPreferredDERP: stickiness by
// report history, then a move), and checks far-home-derp and the Self
// view against it, both ways; then a peer held on the far region
// (`tailscale debug force-prefer-derp`, as a client that picks its home
// wrongly would be). docs/diagnosis.md "Far home DERP on real tailscaled"
// records a run.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
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
)

// farRegions are the far lab's DERP regions: lab1 near but 25 ms away
// (so the nodes first home on lab2, and a move needs 10 ms and a third),
// lab2 behind the delay relay, lab3 a STUN responder only (netcheck needs
// two regions' STUN answers to see a hard NAT), slower than lab1 so it
// never is the best.
var farRegions = []lab.Region{
	{ID: 901, Code: "lab1", Name: "Lab relay 1 (25 ms)", Delay: 25 * time.Millisecond, RelayDelay: 2 * time.Millisecond},
	{ID: 902, Code: "lab2", Name: "Lab relay 2 (behind the delay relay)", RelayDelay: 2 * time.Millisecond},
	{ID: 903, Code: "lab3", Name: "Lab STUN (60 ms, no relay)", STUNOnly: true, Delay: 60 * time.Millisecond},
}

// farDelay is the round trip the relay adds to lab2 once the nodes homed
// there: far by tailpath's thresholds against lab1's 25 ms (at least 2x
// and 30 ms more), and by Tailscale's (10 ms and a third).
const farDelay = 120 * time.Millisecond

// TestNATLabFarDERP: a node whose home region is made far after it homed
// keeps it while its report history holds the region's fast answers
// (tailpath: far-home-derp, this node's own home, with the numbers), then
// moves (far-home-derp no more); a relayed peer held on the far region
// (forced) is its peer's far-home-derp and peer-far-home-derp, the
// extra latency named, and the Self view marks the region far with the
// peer relayed through it.
func TestNATLabFarDERP(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds tailscaled and runs two in network namespaces for about 8 minutes; run without -short")
	}
	if os.Geteuid() != 0 {
		t.Skipf("skipping: network namespaces need root (euid %d)", os.Geteuid())
	}
	for _, cmd := range []string{"ip", "iptables", "sysctl"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("skipping: the NAT lab needs %s (Debian: iproute2, iptables, procps)", cmd)
		}
	}
	start := time.Now()
	tailscaledBin, tailscale := buildTailscale(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	lnet := newLabNet(t, "tp"+randHex(3))
	lnet.wan("far", "198.51.100.30")
	hard := []string{"-t", "nat", "-A", "POSTROUTING", "-o", "wan", "-j", "MASQUERADE", "--random-fully"}
	lnet.router("ra", "ha", "198.51.100.20", "10.1.0", hard)
	lnet.router("rb", "hb", "198.51.100.21", "10.2.0", hard)

	var infra *labtest.Infra
	var ierr error
	inNetns(t, lnet.ns("inet"), func() {
		infra, ierr = labtest.StartInfra(netip.MustParseAddr("198.51.100.1"), farRegions, nil)
	})
	if ierr != nil {
		t.Fatal(ierr)
	}
	t.Cleanup(infra.Close)
	lab2, err := infra.Region(902)
	if err != nil {
		t.Fatal(err)
	}
	farIP := netip.MustParseAddr("198.51.100.30")
	if err := infra.FrontRegion(902, farIP); err != nil {
		t.Fatal(err)
	}
	th := newNSThread(t, lnet.ns("far"))
	var relay *labtest.DelayRelay
	inNetns(t, lnet.ns("far"), func() {
		relay, ierr = labtest.StartDelayRelay(lab2.RelayRoutes(farIP), 0, th.dial)
	})
	if ierr != nil {
		t.Fatal(ierr)
	}
	t.Cleanup(relay.Close)

	sockDir, err := os.MkdirTemp("", "tpfar-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	nodes := map[string]*natNode{}
	for _, name := range []string{"ha", "hb"} {
		n := &natNode{name: name, ns: lnet.ns(name), sock: filepath.Join(sockDir, name+".sock")}
		n.d = startTailscaledIn(t, n.ns, tailscaledBin, t.TempDir(), n.sock, infra.DaemonEnv())
		n.lc = &local.Client{Socket: n.sock, UseSocketOnly: true}
		nodes[name] = n
	}
	for _, n := range nodes {
		waitSocket(ctx, t, n.lc, n.d)
		if out, err := exec.CommandContext(ctx, tailscale, "--socket", n.sock, "up", "--login-server", infra.ControlURL, "--hostname", n.name).CombinedOutput(); err != nil {
			t.Fatalf("%s: tailscale up: %v\n%s\n%s", n.name, err, out, n.d.tail(20))
		}
	}
	ha, hb := nodes["ha"], nodes["hb"]
	home := func(n *natNode) string {
		st, err := n.lc.Status(ctx)
		if err != nil || st.Self == nil {
			return "?"
		}
		return st.Self.Relay
	}
	// Traffic both ways, a TSMP ping a second: paths discovered and kept
	// active (magicsock re-runs netcheck every 20-26 s only while active).
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	for _, p := range [][2]*natNode{{ha, hb}, {hb, ha}} {
		from, ip := p[0], tailnetIP(ctx, t, p[1])
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
	natWait(ctx, t, "both relayed and homed on lab2", 120*time.Second, func() (bool, string) {
		a, b := pathOf(ctx, t, ha, "hb"), pathOf(ctx, t, hb, "ha")
		homeA, homeB := home(ha), home(hb)
		return a == "relay" && b == "relay" && homeA == "lab2" && homeB == "lab2", fmt.Sprintf("paths %s/%s, homes %s/%s", a, b, homeA, homeB)
	})
	t.Logf("joined, relayed, homed on lab2 after %v", time.Since(start).Round(time.Second))

	t.Run("near: no far-home-derp", func(t *testing.T) {
		doc := farStatus(ctx, t, ha, func(d farDoc) (bool, string) {
			return d.Self.View.Home.Home == 902, "home " + fmt.Sprint(d.Self.View.Home.Home)
		})
		if v := doc.verdict(t, "hb"); slices.Contains(v.Also, probes.ReasonFarHomeDERP) {
			t.Errorf("far-home-derp while lab2 is near: %+v", v.Checks)
		}
		if h := doc.Self.View.Home; h.Why != probes.HomeBest || h.Far {
			t.Errorf("home %+v, want lab2 the best", h)
		}
		// Real tailscaled's user metrics: the relayed pings went through DERP.
		if tr := doc.Self.Traffic; tr == nil || tr.Source != "usermetrics" || tr.BytesIn.DERP == 0 || tr.BytesOut.DERP == 0 {
			t.Errorf("traffic %+v, want tailscaled's usermetrics with DERP bytes both ways", tr)
		}
	})

	relay.SetDelay(farDelay)
	madeFar := time.Now()
	t.Logf("lab2 made %v farther at %v", farDelay, madeFar.Format(time.TimeOnly))

	t.Run("made far: stickiness keeps the home, far-home-derp names it", func(t *testing.T) {
		doc := farStatus(ctx, t, ha, func(d farDoc) (bool, string) {
			h := d.Self.View.Home
			return h.Far && d.Self.HomeDERP == 902, fmt.Sprintf("home %d far %v (%s)", d.Self.HomeDERP, h.Far, h.Text)
		})
		h := doc.Self.View.Home
		if h.Why != probes.HomeMoves || h.MovesTo != 901 {
			t.Errorf("home %+v, want it to move to lab1 once its history lets it", h)
		}
		v := doc.verdict(t, "hb")
		if !slices.Contains(v.Also, probes.ReasonFarHomeDERP) {
			t.Fatalf("no far-home-derp while tailscaled keeps far lab2 home: %s %v\n%s", v.Reason, v.Also, checksOf(v))
		}
		c := checkOf(v, "Self.HomeDERP")
		if c == nil || c.Mark() != probes.CheckFail || !strings.Contains(string(c.Value), `"lab2"=`) || !strings.Contains(string(c.Value), `best "lab1"=`) {
			t.Errorf("this node's far home is not the evidence: %+v\n%s", c, checksOf(v))
		}
		t.Logf("%v after: tailscaled's home %s; tailpath: %s; evidence %s = %s (%s)", time.Since(madeFar).Round(time.Second), home(ha), h.Text, c.Field, c.Value, c.Note)
	})

	var moved time.Duration
	t.Run("history aged out: home moves, far-home-derp no more", func(t *testing.T) {
		natWait(ctx, t, "ha's home to move to lab1", 8*time.Minute, func() (bool, string) {
			h := home(ha)
			return h == "lab1", "home " + h
		})
		moved = time.Since(madeFar)
		t.Logf("ha's tailscaled moved home to lab1 %v after lab2 got far: %s", moved.Round(time.Second), logLine(ha.d, "home DERP changing"))
		natWait(ctx, t, "hb's home to move to lab1 too", 2*time.Minute, func() (bool, string) {
			k, code := pathOf(ctx, t, ha, "hb"), home(hb)
			return code == "lab1" && k == "relay", "hb home " + code + ", path " + k
		})
		doc := farStatus(ctx, t, ha, func(d farDoc) (bool, string) {
			p := d.peer("hb")
			return d.Self.HomeDERP == 901 && p != nil && p.Path.DERPCode == "lab1", fmt.Sprintf("home %d", d.Self.HomeDERP)
		})
		if h := doc.Self.View.Home; h.Why != probes.HomeBest || h.Far {
			t.Errorf("home %+v, want lab1 the best", h)
		}
		if v := doc.verdict(t, "hb"); slices.Contains(v.Also, probes.ReasonFarHomeDERP) {
			t.Errorf("far-home-derp after both moved off lab2: %v\n%s", v.Also, checksOf(v))
		}
	})

	t.Run("a relayed peer held on the far region", func(t *testing.T) {
		if out, err := exec.CommandContext(ctx, tailscale, "--socket", hb.sock, "debug", "force-prefer-derp", "902").CombinedOutput(); err != nil {
			t.Fatalf("force-prefer-derp: %v\n%s", err, out)
		}
		doc := farStatus(ctx, t, ha, func(d farDoc) (bool, string) {
			p := d.peer("hb")
			if p == nil {
				return false, "no hb"
			}
			return p.Path.DERPCode == "lab2" && slices.Contains(p.Verdict.Also, probes.ReasonPeerFarHomeDERP),
				fmt.Sprintf("hb relayed via %s, %s %v", p.Path.DERPCode, p.Verdict.Reason, p.Verdict.Also)
		})
		v := doc.verdict(t, "hb")
		if !slices.Contains(v.Also, probes.ReasonFarHomeDERP) {
			t.Errorf("no far-home-derp for a peer homed on the far region: %v\n%s", v.Also, checksOf(v))
		}
		var named *probes.Check
		for i := range v.Checks {
			c := &v.Checks[i]
			if strings.HasSuffix(string(c.Field), "DERPLatency") && c.Mark() == probes.CheckFail && strings.Contains(string(c.Note), "each way through it") {
				named = c
			}
		}
		if named == nil {
			t.Errorf("the extra latency is not named in the evidence:\n%s", checksOf(v))
		} else {
			t.Logf("ha's verdict on hb: %s %v; %s = %s (%s)", v.Reason, v.Also, named.Field, named.Value, named.Note)
		}
		var rv *probes.RegionView
		for i := range doc.Self.View.Regions {
			if doc.Self.View.Regions[i].ID == 902 {
				rv = &doc.Self.View.Regions[i]
			}
		}
		if rv == nil || !rv.Far || rv.Relayed != 1 {
			t.Errorf("the Self view's lab2 %+v, want far with hb relayed through it", rv)
		}
	})
	stop()
	t.Logf("far lab done in %v (home moved %v after lab2 got far)", time.Since(start).Round(time.Second), moved.Round(time.Second))
}

// farDoc is what the far lab reads of `tailpath status --json`.
type farDoc struct {
	Self  probes.Self `json:"self"`
	Peers []struct {
		Name    string         `json:"name"`
		Path    probes.Path    `json:"path"`
		Verdict probes.Verdict `json:"verdict"`
	} `json:"peers"`
}

func (d *farDoc) peer(name string) *struct {
	Name    string         `json:"name"`
	Path    probes.Path    `json:"path"`
	Verdict probes.Verdict `json:"verdict"`
} {
	for i := range d.Peers {
		if d.Peers[i].Name == name {
			return &d.Peers[i]
		}
	}
	return nil
}

func (d *farDoc) verdict(t *testing.T, name string) probes.Verdict {
	t.Helper()
	p := d.peer(name)
	if p == nil {
		t.Fatalf("no peer %s", name)
	}
	return p.Verdict
}

// farStatus runs `tailpath status --json --netcheck` as a process of its
// own in n's network namespace (so its STUN sockets, and the host facts
// it reads, are the node's), until cond holds (a minute at most).
func farStatus(ctx context.Context, t *testing.T, n *natNode, cond func(farDoc) (bool, string)) farDoc {
	t.Helper()
	var doc farDoc
	natWait(ctx, t, n.name+"'s status", 60*time.Second, func() (bool, string) {
		cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.ns, os.Args[0], "status", "--json", "--netcheck", "--socket", n.sock)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if len(out) == 0 {
			return false, fmt.Sprintf("%v: %s", err, stderr.String())
		}
		doc = farDoc{}
		if err := json.Unmarshal(out, &doc); err != nil {
			return false, err.Error()
		}
		if doc.Self.View == nil {
			return false, "no self view"
		}
		return cond(doc)
	})
	return doc
}

func checkOf(v probes.Verdict, field string) *probes.Check {
	for i := range v.Checks {
		if string(v.Checks[i].Field) == field {
			return &v.Checks[i]
		}
	}
	return nil
}

func checksOf(v probes.Verdict) string {
	var b strings.Builder
	for _, c := range v.Checks {
		fmt.Fprintf(&b, "  [%s] %s = %s (%s)\n", c.Mark(), c.Field, c.Value, c.Note)
	}
	return b.String()
}

// logLine is the last line of d's log holding s, "" when none.
func logLine(d *daemon, s string) string {
	b, _ := os.ReadFile(d.logPath)
	last := ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			last = strings.TrimSpace(l)
		}
	}
	return last
}

// labNet is a NAT lab's namespaces: an "internet" bridge (inet) and what
// hangs off it.
type labNet struct {
	t      *testing.T
	prefix string
}

// newLabNet makes the "internet" namespace with its bridge at
// 198.51.100.1 (a fixed MAC: a bridge takes its ports' lowest otherwise,
// and routers that cached the old one lose it).
func newLabNet(t *testing.T, prefix string) *labNet {
	n := &labNet{t: t, prefix: prefix}
	inet := n.add("inet")
	sh(t, "ip", "-n", inet, "link", "add", "br0", "type", "bridge")
	sh(t, "ip", "-n", inet, "link", "set", "br0", "address", "02:00:00:00:17:01")
	sh(t, "ip", "-n", inet, "addr", "add", "198.51.100.1/24", "dev", "br0")
	sh(t, "ip", "-n", inet, "link", "set", "br0", "up")
	return n
}

func (n *labNet) ns(role string) string { return n.prefix + "-" + role }

// add makes namespace role, removed when the test ends.
func (n *labNet) add(role string) string {
	name := n.ns(role)
	sh(n.t, "ip", "netns", "add", name)
	n.t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	sh(n.t, "ip", "-n", name, "link", "set", "lo", "up")
	return name
}

// wan makes namespace role with interface wan on the bridge at addr.
func (n *labNet) wan(role, addr string) {
	t := n.t
	name := n.add(role)
	port := "p" + role
	sh(t, "ip", "link", "add", "wan", "netns", name, "type", "veth", "peer", "name", port, "netns", n.ns("inet"))
	sh(t, "ip", "-n", n.ns("inet"), "link", "set", port, "master", "br0", "up")
	sh(t, "ip", "-n", name, "addr", "add", addr+"/24", "dev", "wan")
	sh(t, "ip", "-n", name, "link", "set", "wan", "up")
}

// router makes router r on the bridge at wanAddr with host h behind it
// on lan.0/24 (lan.1 the router, lan.2 the host), and r's iptables rules.
func (n *labNet) router(r, h, wanAddr, lan string, rules ...[]string) {
	t := n.t
	n.wan(r, wanAddr)
	host := n.add(h)
	sh(t, "ip", "link", "add", "lan", "netns", n.ns(r), "type", "veth", "peer", "name", "eth0", "netns", host)
	sh(t, "ip", "-n", n.ns(r), "addr", "add", lan+".1/24", "dev", "lan")
	sh(t, "ip", "-n", n.ns(r), "link", "set", "lan", "up")
	sh(t, "ip", "-n", host, "addr", "add", lan+".2/24", "dev", "eth0")
	sh(t, "ip", "-n", host, "link", "set", "eth0", "up")
	sh(t, "ip", "-n", host, "route", "add", "default", "via", lan+".1")
	sh(t, "ip", "netns", "exec", n.ns(r), "sysctl", "-qw", "net.ipv4.ip_forward=1")
	for _, args := range rules {
		sh(t, append([]string{"ip", "netns", "exec", n.ns(r), "iptables"}, args...)...)
	}
}

// nsThread is one OS thread kept in a network namespace, on which dials
// run, so the sockets they make are that namespace's.
type nsThread struct {
	reqs chan func()
}

func newNSThread(t *testing.T, name string) *nsThread {
	th := &nsThread{reqs: make(chan func())}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		fd, err := unix.Open("/run/netns/"+name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
			unix.Close(fd)
		}
		ready <- err
		if err != nil {
			return
		}
		for f := range th.reqs {
			f()
		}
	}()
	if err := <-ready; err != nil {
		t.Fatalf("entering network namespace %s: %v", name, err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(th.reqs) }) })
	return th
}

// dial is net.Dial made on the namespace's thread.
func (th *nsThread) dial(network, addr string) (c net.Conn, err error) {
	done := make(chan struct{})
	th.reqs <- func() {
		c, err = net.DialTimeout(network, addr, 10*time.Second)
		close(done)
	}
	<-done
	return c, err
}
