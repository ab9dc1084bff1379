package lab

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/net/stun"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/lab/apiserver"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

func TestMain(m *testing.M) {
	// The DERP-only node re-executes this test binary.
	MaybeRunNode()
	os.Exit(m.Run())
}

// startLab starts a lab for t, logging to a file under the test's temp dir
// (kept and named on failure), and closes it at cleanup.
func startLab(t *testing.T) *Lab {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping lab tailnet (starts control, DERP and five tsnet nodes) under -short")
	}
	goroutinesBefore := runtime.NumGoroutine()
	logFile := filepath.Join(t.TempDir(), "lab.log")
	if d := os.Getenv("LAB_TEST_LOG"); d != "" {
		logFile = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	l, err := Start(ctx, Options{
		LogFile: logFile,
		Progress: func(step string) {
			t.Logf("%6.2fs %s", time.Since(start).Seconds(), step)
		},
	})
	if err != nil {
		t.Fatalf("Start: %v (logs in %s)", err, logFile)
	}
	t.Cleanup(func() {
		start := time.Now()
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		// tsnet's Close waits 5 s for LocalAPI connections left open, so
		// a slow Close can mean one was; it is logged, not asserted (a
		// busy machine is slow too; docs/perf.md has the figures).
		t.Logf("Close took %v", time.Since(start).Round(time.Millisecond))
		if l.child != nil {
			select {
			case <-l.child.done:
			default:
				t.Errorf("child node process %d still running after Close", l.child.cmd.Process.Pid)
			}
		}
		// Goroutines wind down asynchronously (timers, closed conns).
		var n int
		for i := 0; i < 50; i++ {
			if n = runtime.NumGoroutine(); n <= goroutinesBefore+2 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if n > goroutinesBefore+2 {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("%d goroutines after Close, %d before Start:\n%s", n, goroutinesBefore, buf)
		}
		if _, err := os.Stat(l.Dir()); !os.IsNotExist(err) {
			t.Errorf("state directory %s left behind after Close (stat: %v)", l.Dir(), err)
		}
	})
	return l
}

// TestLab starts the lab once and checks, in subtests, the raw LocalAPI
// status of each peer, probes' classification and verdicts, the JSON the
// snapshot marshals to, and the observer's LocalAPI socket.
func TestLab(t *testing.T) {
	l := startLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	roles := map[Role]PeerInfo{}
	for _, p := range l.Peers() {
		roles[p.Role] = p
	}
	if len(roles) != 4 {
		t.Fatalf("Peers() = %+v, want one each of direct, derp-only, idle, offline", l.Peers())
	}

	t.Run("raw status", func(t *testing.T) {
		st, err := l.Observer().Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The lab's version is no error: not "1.102.5-ERR-BuildInfo" in a
		// demo's snapshot (versionTransport).
		if strings.Contains(st.Version, "ERR") || !strings.HasSuffix(st.Version, versionSuffix) && !strings.Contains(st.Version, "-t") {
			t.Errorf("observer's version %q", st.Version)
		}
		direct := FindPeer(st, DirectName)
		derp := FindPeer(st, DERPName)
		idle := FindPeer(st, IdleName)
		off := FindPeer(st, OfflineName)
		if direct == nil || derp == nil || idle == nil || off == nil {
			t.Fatalf("observer lists direct=%v derp=%v idle=%v offline=%v", direct != nil, derp != nil, idle != nil, off != nil)
		}
		// A path can be briefly re-validating (CurAddr empty); WaitDirect
		// retries until it is trusted again.
		ap, err := l.WaitDirect(ctx, DirectName)
		if err != nil {
			t.Fatal(err)
		}
		if ap.Addr() != netip.MustParseAddr("127.0.0.1") || ap.Port() == 0 {
			t.Errorf("%s CurAddr = %v, want 127.0.0.1:port", DirectName, ap)
		}
		if !derp.Active || derp.CurAddr != "" || derp.PeerRelay != "" || derp.Relay != "lab1" {
			t.Errorf("%s: Active=%v CurAddr=%q PeerRelay=%q Relay=%q, want Active via relay lab1", DERPName, derp.Active, derp.CurAddr, derp.PeerRelay, derp.Relay)
		}
		if idle.Active || !idle.Online {
			t.Errorf("%s: Active=%v Online=%v, want online and not active", IdleName, idle.Active, idle.Online)
		}
		if off.Active || off.Online || off.LastSeen.IsZero() {
			t.Errorf("%s: Active=%v Online=%v LastSeen=%v, want offline with LastSeen", OfflineName, off.Active, off.Online, off.LastSeen)
		}
		for _, p := range l.Peers() {
			if ps := FindPeer(st, p.Name); len(ps.TailscaleIPs) == 0 || ps.TailscaleIPs[0] != p.TailscaleIP {
				t.Errorf("%s: TailscaleIPs %v, Peers() says %v", p.Name, ps.TailscaleIPs, p.TailscaleIP)
			}
		}
	})

	t.Run("probes verdicts", func(t *testing.T) {
		type row struct {
			Kind     probes.PathKind
			Loopback bool // Path.Addr is 127.0.0.1:port
			DERPCode string
			Reason   probes.ReasonID
			Text     string // prefix of Path.Text
		}
		want := map[string]row{
			DirectName:  {Kind: probes.PathDirect, Loopback: true, Reason: probes.ReasonDirect, Text: "active; direct 127.0.0.1:"},
			DERPName:    {Kind: probes.PathDERP, DERPCode: "lab1", Reason: probes.ReasonNoEndpoints, Text: `active; relay "lab1"`},
			IdleName:    {Kind: probes.PathIdle, Reason: probes.ReasonIdle, Text: "-"},
			OfflineName: {Kind: probes.PathOffline, Reason: probes.ReasonOffline, Text: "offline, last seen "},
		}
		var got map[string]row
		var snap *probes.Snapshot
		// Paths can be re-validating at the instant of one poll; retry.
		for try := 0; try < 10; try++ {
			var err error
			snap, err = tailscaled.Gather(ctx, l.Observer(), nil)
			if err != nil {
				t.Fatal(err)
			}
			probes.Judge(snap, nil) // as the joiner (probes/join) judges a gather
			got = map[string]row{}
			for _, p := range snap.Peers {
				r := row{Kind: p.Path.Kind, DERPCode: string(p.Path.DERPCode), Reason: p.Verdict.Reason}
				r.Loopback = p.Path.Addr.Addr() == netip.MustParseAddr("127.0.0.1") && p.Path.Addr.Port() != 0
				if w, ok := want[string(p.Name)]; ok && strings.HasPrefix(string(p.Path.Text), w.Text) {
					r.Text = w.Text
				} else {
					r.Text = string(p.Path.Text)
				}
				got[string(p.Name)] = r
			}
			if cmp.Equal(want, got) {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Gather paths and verdicts mismatch (-want +got):\n%s", diff)
		}
		for _, p := range snap.Peers {
			if p.Name == DERPName {
				if !p.EndpointsKnown || len(p.Endpoints) != 0 {
					t.Errorf("%s: EndpointsKnown=%v Endpoints=%v, want known and empty", DERPName, p.EndpointsKnown, p.Endpoints)
				}
				if p.HomeDERP != 901 {
					t.Errorf("%s: HomeDERP = %d, want 901", DERPName, p.HomeDERP)
				}
			}
		}
		if snap.Self.HomeDERP != 901 || snap.Self.HomeDERPCode != "lab1" {
			t.Errorf("self home DERP = %d %q, want 901 \"lab1\"", snap.Self.HomeDERP, snap.Self.HomeDERPCode)
		}

		// The JSON `tailpath status --json` prints is these types' tags.
		j, err := json.Marshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Peers []struct {
				Name string `json:"name"`
				Path struct {
					Kind     string `json:"kind"`
					Addr     string `json:"addr"`
					DERPCode string `json:"derp_code"`
				} `json:"path"`
				Verdict struct {
					Reason string `json:"reason"`
				} `json:"verdict"`
			} `json:"peers"`
		}
		if err := json.Unmarshal(j, &doc); err != nil {
			t.Fatal(err)
		}
		byName := map[string]string{}
		for _, p := range doc.Peers {
			byName[p.Name] = p.Path.Kind + " " + p.Path.DERPCode + " " + p.Verdict.Reason
			if p.Name == DirectName && !strings.HasPrefix(p.Path.Addr, "127.0.0.1:") {
				t.Errorf("JSON %s path.addr = %q, want 127.0.0.1:port", p.Name, p.Path.Addr)
			}
		}
		wantJSON := map[string]string{
			DirectName:  "direct  direct",
			DERPName:    "relay lab1 no-endpoints",
			IdleName:    "idle  idle",
			OfflineName: "offline  offline",
		}
		if diff := cmp.Diff(wantJSON, byName); diff != "" {
			t.Errorf("JSON peers (kind derp_code reason) mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("observer socket", func(t *testing.T) {
		if l.ObserverSocket() == "" {
			t.Skip("no Unix socket on this OS")
		}
		snap, err := tailscaled.Gather(ctx, tailscaled.NewClient(l.ObserverSocket()), nil)
		if err != nil {
			t.Fatalf("Gather over %s: %v", l.ObserverSocket(), err)
		}
		if snap.Self.Name != ObserverName || len(snap.Peers) != 4 {
			t.Errorf("over the socket: self %q with %d peers, want %s with 4", snap.Self.Name, len(snap.Peers), ObserverName)
		}
	})

	// A fresh DERP latency measurement (tailscale.com/net/netcheck, STUN
	// only) against the lab's real STUN servers.
	t.Run("MeasureDERPLatency", func(t *testing.T) {
		rep, err := tailscaled.MeasureDERPLatency(ctx, l.DERPMap())
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := rep.ByRegion[901]; !ok || d <= 0 || d > time.Minute {
			t.Errorf("latency to region 901 = %v (present %v), want a loopback round trip; all: %v", d, ok, rep.ByRegion)
		}
		if time.Since(rep.At) > time.Minute {
			t.Errorf("report dated %v", rep.At)
		}
		t.Logf("lab DERP latencies: %v", rep.ByRegion)
	})

	// The peer's side from the lab's control API (each node's own NetInfo
	// through the real tailscale.com/client/tailscale/v2 client): a peer
	// the API says is behind a hard NAT gets a hard-NAT reason resting on
	// the peer side; without the API the same peer keeps today's verdict.
	t.Run("control API: both ends", func(t *testing.T) {
		api, err := controlapi.NewControlAPI(l.ControlAPIConfig())
		if err != nil {
			t.Fatal(err)
		}
		if !l.api.Update(DERPName, func(d *apiserver.Device) {
			d.ClientConnectivity.MappingVariesByDestIP = apiserver.Bool(true)
			d.ClientConnectivity.ClientSupports.UPnP = apiserver.Bool(false)
			d.ClientConnectivity.ClientSupports.PMP = apiserver.Bool(false)
			d.ClientConnectivity.ClientSupports.PCP = apiserver.Bool(false)
		}) {
			t.Fatalf("the lab's API does not list %s", DERPName)
		}
		without, err := tailscaled.Gather(ctx, l.Observer(), nil)
		if err != nil {
			t.Fatal(err)
		}
		with, err := tailscaled.Gather(ctx, l.Observer(), nil)
		if err != nil {
			t.Fatal(err)
		}
		facts, err := api.Fetch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		probes.ApplyPeerFacts(with, facts, probes.APIStatus{State: "ok", At: facts.At})
		probes.Judge(with, nil)
		probes.Judge(without, nil)
		if st := with.ControlAPI; st.Matched != 4 || st.PeersMissing != 0 {
			t.Errorf("API status %+v, want the 4 peers matched", st)
		}
		hard := []probes.ReasonID{probes.ReasonPeerHardNAT, probes.ReasonBothHardNAT, probes.ReasonHardAndFilteringNAT}
		find := func(s *probes.Snapshot) probes.Peer {
			for _, p := range s.Peers {
				if p.Name == DERPName {
					return p
				}
			}
			t.Fatalf("no %s", DERPName)
			return probes.Peer{}
		}
		p := find(with)
		// Its client version is unknown: a test binary reports
		// "x.y.z-ERR-BuildInfo", which names no release (its capability
		// version still says what it understands).
		if p.PeerSide == nil || p.PeerSide.Source != probes.SourceControlAPI || p.PeerSide.CapVersion == 0 ||
			strings.Contains(string(p.PeerSide.ClientVersion), "ERR-BuildInfo") {
			t.Fatalf("%s peer side = %+v, want the API's facts", DERPName, p.PeerSide)
		}
		// The peer's hard NAT shows as a failed check citing the API, and
		// with our own NAT measured easy (the lab's two STUN regions let
		// netcheck judge MappingVariesByDestIP on every report) it is the
		// verdict: the cause rests on the peer's end.
		mapping := func(v probes.Verdict) (probes.Check, bool) {
			i := slices.IndexFunc(v.Checks, func(c probes.Check) bool {
				// Ours is NetInfo.MappingVariesByDestIP; the peer's is named by its source.
				return c.Field != "NetInfo.MappingVariesByDestIP" && strings.HasSuffix(strings.ToLower(string(c.Field)), "mappingvariesbydestip")
			})
			if i < 0 {
				return probes.Check{}, false
			}
			return v.Checks[i], true
		}
		if c, ok := mapping(p.Verdict); !ok || c.Source != probes.SourceControlAPI || !c.Failed || c.Value != "true" {
			t.Errorf("with the API: the peer's NAT check = %+v (found %v), want a failed hard-NAT check from the control API", c, ok)
		}
		if nat := with.Self.NAT; nat == nil || nat.MappingVariesByDestIP == nil || *nat.MappingVariesByDestIP {
			t.Errorf("our NAT = %+v, want MappingVariesByDestIP measured false (two STUN regions)", nat)
		}
		all := append([]probes.ReasonID{p.Verdict.Reason}, p.Verdict.Also...)
		if !slices.Contains(all, probes.ReasonPeerHardNAT) || !p.Verdict.PeerSide && p.Verdict.Reason == probes.ReasonPeerHardNAT {
			t.Errorf("with the API and our NAT easy: %s %v (peer side %v), want peer-hard-nat", p.Verdict.Reason, p.Verdict.Also, p.Verdict.PeerSide)
		}
		q := find(without)
		allq := append([]probes.ReasonID{q.Verdict.Reason}, q.Verdict.Also...)
		if q.Verdict.Reason != probes.ReasonNoEndpoints || slices.ContainsFunc(allq, func(r probes.ReasonID) bool { return slices.Contains(hard, r) }) {
			t.Errorf("without the API: %s %v, want no-endpoints and no hard-NAT reason", q.Verdict.Reason, q.Verdict.Also)
		}
		for _, c := range q.Verdict.Checks {
			if c.Source == probes.SourceControlAPI {
				t.Errorf("without the API a check cites the control API: %+v", c)
			}
		}
		t.Logf("with the API: %s also %v; without: %s also %v", p.Verdict.Reason, p.Verdict.Also, q.Verdict.Reason, q.Verdict.Also)
	})

	// Last, as it stops the DERP-only node: the child leaves when its
	// stdin ends, as when tailpath dies, without the line Close writes.
	t.Run("child exits on stdin EOF", func(t *testing.T) {
		start := time.Now()
		l.child.stdin.Close()
		select {
		case <-l.child.done:
			t.Logf("child exited %v after EOF", time.Since(start).Round(time.Millisecond))
		case <-time.After(time.Minute):
			t.Errorf("child still running a minute after its stdin closed")
		}
	})
}

// TestStartFailureCleansUp checks that a Start failing midway (the child
// node's binary does not exist) returns an actionable error and leaves no
// state directory behind.
func TestStartFailureCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping lab tailnet under -short")
	}
	dir := filepath.Join(t.TempDir(), "lab")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var steps []string
	l, err := Start(ctx, Options{
		Dir:        dir,
		Executable: filepath.Join(t.TempDir(), "no-such-tailpath"),
		Progress:   func(s string) { steps = append(steps, s) },
	})
	if err == nil {
		l.Close()
		t.Fatal("Start succeeded with a missing child executable")
	}
	if !strings.Contains(err.Error(), "lab-derp") || !strings.Contains(err.Error(), "no-such-tailpath") {
		t.Errorf("error %q should name the node and the binary", err)
	}
	if len(steps) < 3 {
		t.Errorf("progress steps before the failure = %q, want DERP, control and observer", steps)
	}
	// Options.Dir is the caller's: kept, but the nodes inside have stopped.
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("caller's Dir removed: %v", err)
	}
}

// TestSTUNDelay checks the lab's STUN responder answers a binding request
// with the sender's address, after the configured delay.
func TestSTUNDelay(t *testing.T) {
	for _, delay := range []time.Duration{0, 30 * time.Millisecond} {
		s, err := startSTUN("127.0.0.1", delay, func(string, ...any) {})
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		tx := stun.NewTxID()
		start := time.Now()
		if _, err := c.WriteToUDPAddrPort(stun.Request(tx), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(s.port()))); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(time.Minute)) // a guard against a hang only
		buf := make([]byte, 1500)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("delay %v: no STUN answer: %v", delay, err)
		}
		took := time.Since(start)
		gotTx, addr, err := stun.ParseResponse(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		if gotTx != tx || addr != c.LocalAddr().(*net.UDPAddr).AddrPort() {
			t.Errorf("delay %v: response tx %x addr %v, want %x %v", delay, gotTx, addr, tx, c.LocalAddr())
		}
		if took < delay {
			t.Errorf("answered after %v, want at least %v", took, delay)
		}
		c.Close()
		s.close()
	}
}

func TestParseNodeConfig(t *testing.T) {
	tests := []struct {
		in      string
		want    nodeConfig
		wantErr string
	}{
		{in: `{"hostname":"lab-derp","control_url":"http://127.0.0.1:8080","dir":"/tmp/x","serve":true}`,
			want: nodeConfig{Hostname: "lab-derp", ControlURL: "http://127.0.0.1:8080", Dir: "/tmp/x", Serve: true}},
		{in: `{"hostname":"a","control_url":"http://localhost:1","dir":"d","ephemeral":true}`,
			want: nodeConfig{Hostname: "a", ControlURL: "http://localhost:1", Dir: "d", Ephemeral: true}},
		{in: ``, wantErr: "bad TAILPATH_LAB_NODE"},
		{in: `{"hostname":"a"}`, wantErr: "hostname, control_url and dir are required"},
		{in: `{"hostname":"a","control_url":"https://controlplane.tailscale.com","dir":"d"}`, wantErr: "not a loopback"},
		{in: `{"hostname":"a","control_url":"file:///etc/passwd","dir":"d"}`, wantErr: "not a loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseNodeConfig(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseNodeConfig: NodeEnv comes from the environment, so any bytes
// must give a config or an error, never a panic, and an accepted config
// always names a loopback control server.
func FuzzParseNodeConfig(f *testing.F) {
	f.Add(`{"hostname":"lab-derp","control_url":"http://127.0.0.1:8080","dir":"/tmp/x","serve":true}`)
	f.Add(`{"hostname":"a","control_url":"http://[::1]:1","dir":"d"}`)
	f.Add(`{"hostname":"a","control_url":"http://127.0.0.1.evil.example","dir":"d"}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := parseNodeConfig(s)
		if err != nil {
			return
		}
		u, perr := url.Parse(cfg.ControlURL)
		if perr != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") {
			t.Fatalf("accepted non-loopback control_url %q", cfg.ControlURL)
		}
	})
}

// TestRunNodeBadConfig: a child started with a bad NodeEnv reports the
// error on its hello line and exits 1, without joining anything.
func TestRunNodeBadConfig(t *testing.T) {
	var out strings.Builder
	code := runNode(`{"hostname":"x"}`, strings.NewReader(""), &out)
	var h childHello
	if err := json.Unmarshal([]byte(out.String()), &h); err != nil {
		t.Fatalf("hello line %q: %v", out.String(), err)
	}
	if code != 1 || !strings.Contains(h.Err, "required") {
		t.Errorf("runNode = %d, hello %+v; want 1 and the error", code, h)
	}
}

// TestStartTimeout: a ctx that ends while nodes are joining (and the child
// is still starting) fails Start with ctx's error and tears down.
func TestStartTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping lab tailnet under -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	l, err := Start(ctx, Options{Dir: filepath.Join(t.TempDir(), "lab")})
	if err == nil {
		l.Close()
		t.Skip("the lab came up within 300 ms; nothing to test")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Start error %v does not wrap context.DeadlineExceeded", err)
	}
	t.Logf("Start gave up %v after a 300 ms deadline", time.Since(start).Round(time.Millisecond))
}

// TestSetDERPOnly: the DERP-only node, switched to UDP, goes direct as the
// CoreS3 did after its fixes, while control still lists no endpoint for
// it (the observer learns its address from its disco pings); switched
// back, its path goes back to DERP, and direct again after that.
func TestSetDERPOnly(t *testing.T) {
	l := startLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	relayed := func(ps *ipnstate.PeerStatus) bool { return ps.Active && ps.CurAddr == "" }
	if _, err := l.WaitFor(ctx, DERPName, "relayed", relayed); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := l.SetDERPOnly(false); err != nil {
		t.Fatal(err)
	}
	ps, err := l.WaitFor(ctx, DERPName, "direct", func(ps *ipnstate.PeerStatus) bool { return ps.CurAddr != "" })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("direct via %s after %v", ps.CurAddr, time.Since(start).Round(100*time.Millisecond))
	if !strings.HasPrefix(ps.CurAddr, "127.0.0.1:") {
		t.Errorf("CurAddr %q, want a loopback address", ps.CurAddr)
	}
	if len(ps.Addrs) != 0 {
		t.Errorf("control lists endpoints %v for %s; they must never reach it", ps.Addrs, DERPName)
	}
	start = time.Now()
	if err := l.SetDERPOnly(true); err != nil {
		t.Fatal(err)
	}
	if _, err := l.WaitFor(ctx, DERPName, "relayed again", relayed); err != nil {
		t.Fatal(err)
	}
	t.Logf("relayed again after %v", time.Since(start).Round(100*time.Millisecond))
	if err := l.SetDERPOnly(false); err != nil {
		t.Fatal(err)
	}
	if _, err := l.WaitFor(ctx, DERPName, "direct again", func(ps *ipnstate.PeerStatus) bool { return ps.CurAddr != "" }); err != nil {
		t.Fatal(err)
	}
}
