package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"tailscale.com/envknob"
	"tailscale.com/ipn/store/mem"
	"tailscale.com/logtail"
	"tailscale.com/net/netns"
	"tailscale.com/tsnet"
	"tailscale.com/types/key"
	"tailscale.com/types/logger"
)

// NodeEnv is the environment variable that, with the argument NodeArg,
// turns a re-executed tailpath (or test binary) into a lab node child
// process; its value is the node's JSON configuration. See MaybeRunNode.
const NodeEnv = "TAILPATH_LAB_NODE"

// nodeConfig is what a lab node needs to join; it crosses the process
// boundary as JSON in NodeEnv.
type nodeConfig struct {
	// Hostname is the name presented to control ("lab-derp").
	Hostname string `json:"hostname"`
	// ControlURL is the lab control server ("http://127.0.0.1:PORT").
	ControlURL string `json:"control_url"`
	// Dir is the node's private state directory.
	Dir string `json:"dir"`
	// Ephemeral registers the node as ephemeral.
	Ephemeral bool `json:"ephemeral"`
	// Serve runs the traffic HTTP server on tailnet TCP port TrafficPort.
	Serve bool `json:"serve"`
	// LogFile, if set, receives the node's backend logs (appended).
	LogFile string `json:"log_file,omitempty"`
}

// TrafficPort is the tailnet TCP port on which the direct and DERP-only lab
// peers serve the observer's periodic HTTP exchange.
const TrafficPort = 80

// trafficBody is the size in bytes of each traffic reply, so tx/rx rates
// show up in the dashboard without loading a 2-core machine.
const trafficBody = 16 << 10

// childHello is the one JSON line a child writes to stdout once joined.
type childHello struct {
	IP  netip.Addr     `json:"ip,omitzero"`
	Key key.NodePublic `json:"key,omitzero"`
	Err string         `json:"err,omitempty"`
}

// hermetic keeps in-process Tailscale code on loopback and off the
// internet: no netns socket marks, no log uploads, no port mapping probes,
// and only the STUN-learned 127.0.0.1:port advertised as an endpoint (not
// the machine's interface addresses, which would make direct paths use
// whichever local address disco tried first).
func hermetic() {
	envknob.Setenv("TS_DEBUG_OMIT_LOCAL_ADDRS", "1")
	netns.SetEnabled(false)
	logtail.Disable()
	envknob.SetNoLogsNoSupport()
	envknob.Setenv("TS_DISABLE_PORTMAPPER", "1")
	envknob.Setenv("TS_ASSUME_NETWORK_UP_FOR_TEST", "1")
	envknob.Setenv("TS_PANIC_IF_HIT_MAIN_CONTROL", "1")
}

// runningNode is a joined tsnet node, in this process.
type runningNode struct {
	logf logger.Logf
	srv  *tsnet.Server
	ip   netip.Addr
	key  key.NodePublic
	http *http.Server
	wg   sync.WaitGroup
	// udpBound: useUDP bound real UDP sockets (a DERP-only child).
	udpBound bool
}

// startNode joins a tsnet node to the lab and waits until it is Running and
// connected to its home DERP region. logf receives backend logs.
func startNode(ctx context.Context, cfg nodeConfig, logf logger.Logf) (*runningNode, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("lab: node %s: %w", cfg.Hostname, err)
	}
	s := &tsnet.Server{
		Dir:        cfg.Dir,
		Hostname:   cfg.Hostname,
		Ephemeral:  cfg.Ephemeral,
		ControlURL: cfg.ControlURL,
		Logf:       logf,
		UserLogf:   logf,
	}
	if cfg.Ephemeral {
		// tsnet refuses a memory store for non-ephemeral nodes; those
		// keep state in Dir/tailscaled.state.
		s.Store = new(mem.Store)
	}
	n := &runningNode{srv: s, logf: logf}
	st, err := s.Up(ctx)
	if err != nil {
		// tsnet's Close dereferences state that a failed start leaves nil.
		if s.Sys() != nil {
			s.Close()
		}
		return nil, fmt.Errorf("lab: node %s: %w", cfg.Hostname, err)
	}
	for _, ip := range st.TailscaleIPs {
		if ip.Is4() {
			n.ip = ip
		}
	}
	if st.Self != nil {
		n.key = st.Self.PublicKey
	}
	if err := waitHomeDERP(ctx, s); err != nil {
		s.Close()
		return nil, fmt.Errorf("lab: node %s: %w", cfg.Hostname, err)
	}
	if cfg.Serve {
		ln, err := s.Listen("tcp", fmt.Sprintf(":%d", TrafficPort))
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("lab: node %s: listen: %w", cfg.Hostname, err)
		}
		body := []byte(strings.Repeat("tailpath lab traffic\n", trafficBody/21+1))[:trafficBody]
		n.http = &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/plain")
				w.Write(body)
			}),
			ErrorLog:          nil,
			ReadHeaderTimeout: 10 * time.Second,
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.http.Serve(ln)
		}()
	}
	return n, nil
}

// waitHomeDERP blocks until s has chosen a home DERP region and received a
// frame from it; before that, DERP drops frames addressed to s.
func waitHomeDERP(ctx context.Context, s *tsnet.Server) error {
	h := s.Sys().HealthTracker.Get()
	ms := s.Sys().MagicSock.Get()
	for {
		if r := ms.GetLastNetcheckReport(ctx); r != nil && r.PreferredDERP != 0 &&
			!h.GetDERPRegionReceivedTime(r.PreferredDERP).IsZero() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for home DERP connection: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (n *runningNode) close() {
	if n.http != nil {
		n.http.Close()
	}
	n.srv.Close()
	n.wg.Wait()
	n.logf("node closed")
}

// childNode is a lab node running in a child process.
type childNode struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ip    netip.Addr
	key   key.NodePublic
	done  chan struct{} // closed when the process has exited
	err   error         // Wait's result, valid after done
}

// startChild re-executes exe as a lab node with cfg and extra environment
// (e.g. TS_DEBUG_ALWAYS_USE_DERP=1) and waits for it to report it joined.
// The child exits when its stdin closes (our end is closed by close or by
// our death) and, on Linux, when this process dies (Pdeathsig).
func startChild(ctx context.Context, exe string, cfg nodeConfig, extraEnv []string, stderr io.Writer) (*childNode, error) {
	j, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, NodeArg)
	cmd.Env = append(append(os.Environ(), NodeEnv+"="+string(j)), extraEnv...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = childSysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &childNode{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	// Linux's parent-death signal fires when the thread that forked the
	// child exits, not the process, and Go ends threads whose goroutine
	// exits while locked to them. Fork from a locked thread that lives
	// until the child has exited.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err != nil {
			return
		}
		c.err = cmd.Wait()
		close(c.done)
	}()
	if err := <-started; err != nil {
		stdin.Close()
		return nil, fmt.Errorf("lab: starting node %s child %s: %w", cfg.Hostname, exe, err)
	}
	hello := make(chan childHello, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var h childHello
		if sc.Scan() {
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
				h.Err = fmt.Sprintf("bad hello line %q: %v", sc.Text(), err)
			}
		} else {
			h.Err = "exited before joining"
		}
		hello <- h
		io.Copy(io.Discard, stdout)
	}()
	select {
	case h := <-hello:
		if h.Err != "" {
			c.close()
			return nil, fmt.Errorf("lab: node %s child: %s (see its log)", cfg.Hostname, h.Err)
		}
		c.ip, c.key = h.IP, h.Key
		return c, nil
	case <-ctx.Done():
		c.close()
		return nil, fmt.Errorf("lab: node %s child: %w", cfg.Hostname, ctx.Err())
	}
}

// close ends the child: a line on stdin (then EOF) asks it to leave; after
// 5 s it is killed.
func (c *childNode) close() {
	io.WriteString(c.stdin, "leave\n")
	c.stdin.Close()
	select {
	case <-c.done:
		return
	case <-time.After(5 * time.Second):
	}
	c.cmd.Process.Kill()
	<-c.done
}

// NodeArg is the one argument a lab node child is started with. The
// environment alone does not make a process a lab node: NodeEnv survives
// `sudo -E` and `su` without `-`, and a node opens the files and
// directories its configuration names (its state directory, a log file it
// appends to), so a variable left in a user's environment would make root
// run a node writing where that user chose, in place of the command root
// asked for (`tailpath tune --apply`). The argument is chosen by whoever
// starts the process, as the lab does.
const NodeArg = "tailpath-lab-node"

// MaybeRunNode runs this process as a lab node when it was started with
// the single argument NodeArg and NodeEnv is set, and never returns in
// that case: the node joins the lab, prints one JSON line on stdout with
// its Tailscale IP, serves until a line or EOF arrives on stdin (the
// parent's Close, or the parent died), then the process exits with status
// 0, or 1 when joining failed. Otherwise (NodeEnv unset, or other
// arguments) it returns at once. Call it first thing in main (tailpath's
// preMainHooks) and in a test's TestMain.
func MaybeRunNode() {
	v, ok := os.LookupEnv(NodeEnv)
	if !ok || len(os.Args) != 2 || os.Args[1] != NodeArg {
		return
	}
	os.Exit(runNode(v, os.Stdin, os.Stdout))
}

// runNode is MaybeRunNode's body; it returns the exit status.
func runNode(cfgJSON string, stdin io.Reader, stdout io.Writer) int {
	fail := func(err error) int {
		json.NewEncoder(stdout).Encode(childHello{Err: err.Error()})
		return 1
	}
	cfg, err := parseNodeConfig(cfgJSON)
	if err != nil {
		return fail(err)
	}
	hermetic()
	logf := logger.Discard
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err == nil {
			defer f.Close()
			logf = fileLogf(f, cfg.Hostname)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Leave when the parent writes a line or our stdin ends (the parent
	// closed the pipe or died); childUseUDP and childDERPOnly are the
	// lines that ask for something else (Lab.SetDERPOnly).
	udp := make(chan bool, 8)
	go func() {
		r := bufio.NewReader(stdin)
		for {
			line, err := r.ReadString('\n')
			if err == nil {
				switch strings.TrimSpace(line) {
				case childUseUDP:
					udp <- true
					continue
				case childDERPOnly:
					udp <- false
					continue
				}
			}
			cancel()
			return
		}
	}()
	joinCtx, joinCancel := context.WithTimeout(ctx, 60*time.Second)
	n, err := startNode(joinCtx, cfg, logf)
	joinCancel()
	if err != nil {
		return fail(err)
	}
	if err := json.NewEncoder(stdout).Encode(childHello{IP: n.ip, Key: n.key}); err != nil {
		n.close()
		return 1
	}
	for {
		select {
		case on := <-udp:
			n.useUDP(on)
			continue
		case <-ctx.Done():
		}
		break
	}
	logf("stdin closed; leaving the lab")
	n.close()
	return 0
}

// The lines that switch a DERP-only child between UDP and DERP only
// (Lab.SetDERPOnly).
const (
	childUseUDP   = "use-udp"
	childDERPOnly = "derp-only"
)

// useUDP switches the node's direct paths at run time through the knobs
// magicsock reads (envknob.Setenv updates them; wgengine/magicsock
// debugknobs.go). The first time on, it lifts TS_DEBUG_ALWAYS_USE_DERP
// (bindSocket then binds real UDP sockets on Rebind) and ReSTUNs. Off
// sets TS_DEBUG_NEVER_DIRECT_UDP, which drops disco pings on UDP both ways
// (magicsock.go handleDiscoMessage, endpoint.go), so direct paths expire
// and traffic goes back to DERP while the sockets stay bound: setting
// TS_DEBUG_ALWAYS_USE_DERP again would swap in a socket that never
// delivers without closing the real one (bindSocket), and the reader left
// on that one would hold the node open at Close. Whether the endpoints
// reach control is the lab's control server's business (Lab.onMapRequest
// drops them, as the CoreS3's stalled control stream did).
func (n *runningNode) useUDP(on bool) {
	if !on {
		envknob.Setenv("TS_DEBUG_NEVER_DIRECT_UDP", "1")
		n.logf("lab: direct UDP off (TS_DEBUG_NEVER_DIRECT_UDP=1)")
		return
	}
	envknob.Setenv("TS_DEBUG_NEVER_DIRECT_UDP", "")
	if !n.udpBound {
		n.udpBound = true
		envknob.Setenv("TS_DEBUG_ALWAYS_USE_DERP", "")
		ms := n.srv.Sys().MagicSock.Get()
		ms.Rebind()
		ms.ReSTUN("lab: UDP on")
	}
	n.logf("lab: direct UDP on")
}

// parseNodeConfig decodes NodeEnv's value. It fails, naming NodeEnv, on
// bad JSON, a missing hostname, control_url or dir, or a control URL that
// is not http(s)://127.0.0.1 or localhost: a lab node only joins a lab.
func parseNodeConfig(s string) (nodeConfig, error) {
	var cfg nodeConfig
	if err := json.Unmarshal([]byte(s), &cfg); err != nil {
		return nodeConfig{}, fmt.Errorf("bad %s: %w", NodeEnv, err)
	}
	if cfg.Hostname == "" || cfg.ControlURL == "" || cfg.Dir == "" {
		return nodeConfig{}, fmt.Errorf("bad %s: hostname, control_url and dir are required", NodeEnv)
	}
	u, err := url.Parse(cfg.ControlURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") ||
		(u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") {
		return nodeConfig{}, fmt.Errorf("bad %s: control_url %q is not a loopback http(s) URL", NodeEnv, cfg.ControlURL)
	}
	return cfg, nil
}

// fileLogf returns a logger.Logf writing timestamped lines to w.
func fileLogf(w io.Writer, prefix string) logger.Logf {
	var mu sync.Mutex
	return func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "%s %s: %s\n", time.Now().Format("15:04:05.000"), prefix, strings.TrimRight(line, "\n"))
	}
}

// dialTimeout bounds one traffic exchange.
const dialTimeout = 5 * time.Second
