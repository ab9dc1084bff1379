// Package lab runs a hermetic tailnet of real Tailscale code on loopback:
// Tailscale's test control server, two real DERP servers with STUN (and a
// third, STUN-only region), and
// tsnet nodes (one in a child process forced onto DERP). tailpath demo
// draws the dashboard over it; integration tests diagnose it and join a
// real tailscaled to it. Nothing leaves 127.0.0.1: no log uploads, no
// port-mapping probes, no contact with Tailscale's servers.
//
// The lab's peers, as the observer sees them once Start returns:
//
//	lab-direct   active; direct 127.0.0.1:PORT   (in process, HTTP traffic every 2 s)
//	lab-derp     active; relay "lab1"            (child process, TS_DEBUG_ALWAYS_USE_DERP=1:
//	                                              binds no UDP, advertises no endpoints;
//	                                              SetDERPOnly(false) lets it go direct,
//	                                              its endpoints still kept from control)
//	lab-idle     -                               (path idle: online, never exchanged traffic,
//	                                              so tailscale status prints "-")
//	lab-offline  offline, last seen 1m ago       (joined, then stopped; control marks it
//	                                              Online=false, LastSeen=the stop time)
//
// Every node homes on DERP region 901 "lab1" (902 "lab2" is NoMeasureNoHome;
// 903 "lab3" is STUN only, 20 ms away, so netcheck can judge the NAT
// mapping from two regions) and advertises only its STUN-learned 127.0.0.1:port, so these words are
// the same on every run and machine, apart from ports and the age.
//
// Tailscale's test control server leaves Node.Online unset unless its
// AllOnline is set, which marks every peer online, stopped ones included.
// So the lab marks each node Online=true when it first sends a map update
// (outside nodes such as a real tailscaled included) and the stopped node
// Online=false, so "offline" means what it says.
package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"tailscale.com/client/local"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/tsnet"
	"tailscale.com/tstest/integration/testcontrol"
	"tailscale.com/types/key"
	"tailscale.com/types/logger"

	"github.com/tailpath/tailpath/probes/lab/apiserver"
)

// Role is what a lab node is there to show.
type Role string

const (
	// RoleObserver is the node the dashboard watches (its LocalAPI is Lab.Observer).
	RoleObserver Role = "observer"
	// RoleDirect exchanges traffic with the observer over a direct UDP path.
	RoleDirect Role = "direct"
	// RoleDERP runs in a child process with TS_DEBUG_ALWAYS_USE_DERP=1: it
	// binds no UDP and advertises no endpoints, so its traffic goes through
	// DERP (the embedded-client case; verdict no-endpoints).
	RoleDERP Role = "derp-only"
	// RoleIdle joined and is online but never exchanges traffic: path idle.
	RoleIdle Role = "idle"
	// RoleOffline joined, then was stopped; control reports it offline with
	// LastSeen set to the moment it stopped.
	RoleOffline Role = "offline"
)

// Host names of the lab's nodes.
const (
	ObserverName = "lab-observer"
	DirectName   = "lab-direct"
	DERPName     = "lab-derp"
	IdleName     = "lab-idle"
	OfflineName  = "lab-offline"
)

// MagicDNSDomain is the lab tailnet's DNS suffix (".invalid" is reserved, so
// it can never resolve outside the lab).
const MagicDNSDomain = "lab.invalid"

// PeerInfo describes one lab node other than the observer.
type PeerInfo struct {
	// Name is the node's host name (PeerStatus.HostName), e.g. "lab-derp".
	Name string
	Role Role
	// TailscaleIP is the node's IPv4 tailnet address (100.64.0.0/10).
	TailscaleIP netip.Addr
}

// Options configure Start. The zero value is a working lab.
type Options struct {
	// Progress, if set, is called with a short line for each step as the
	// lab comes up ("DERP+STUN up: …", "control up at …", "node lab-direct
	// joined (100.64.0.2)", …). It is called from Start's goroutine.
	Progress func(step string)
	// LogFile, if set, receives every lab component's logs (control, DERP,
	// nodes, the child node), appended. Empty discards them, so a TUI can
	// draw over the same terminal.
	LogFile string
	// Dir is the parent of the lab's state directories; "" uses a new
	// temporary directory, removed by Close.
	Dir string
	// Executable is the binary re-executed for the DERP-only child node; it
	// must call MaybeRunNode first thing. "" means os.Executable().
	Executable string
	// TrafficInterval is how often the observer exchanges a small HTTP
	// request with the direct and DERP-only peers; 0 means 2 s.
	TrafficInterval time.Duration
	// Regions are the DERP regions; nil means DefaultRegions.
	Regions []Region
}

// Lab is a running lab tailnet. Methods are safe for concurrent use.
type Lab struct {
	opts    Options
	dir     string
	ownDir  bool
	logf    logger.Logf
	logFile *os.File

	// ControlURL is the control server's base URL
	// ("http://127.0.0.1:PORT"), for `tailscale up --login-server URL` (no
	// auth key is needed). Set by Start, then only read.
	ControlURL string
	// Control is the control server (Tailscale's testcontrol), for tests
	// that change what it hands the nodes (internal/labtest:
	// SetPeerEndpoints). Set by Start.
	Control *testcontrol.Server
	// Nodes are the in-process tsnet nodes by host name (ObserverName,
	// DirectName, IdleName), for tests that listen on the observer or dial
	// from a peer over the tailnet (internal/labtest: Listen, HTTPClient).
	// Set by Start, then only read.
	Nodes map[string]*tsnet.Server

	derp    *DERP
	derpMap *tailcfg.DERPMap

	controlHTTP *http.Server
	// api serves the control API's device list (controlapi.go) on the
	// control server's address, behind apiKey.
	api    *apiserver.Server
	apiKey string

	observer   *runningNode
	observerLC *local.Client
	// observerTransport carries observerLC's requests; observerDial
	// connects to the observer's in-memory LocalAPI listener.
	observerTransport *http.Transport
	observerDial      func(ctx context.Context, network, addr string) (net.Conn, error)
	inproc            []*runningNode
	child             *childNode
	peers             []PeerInfo

	sockPath string
	sockLn   net.Listener

	cancel context.CancelFunc
	// loops counts traffic loops and the socket server (with its proxied
	// connections); wg counts the control server.
	loops sync.WaitGroup
	wg    sync.WaitGroup

	mu      sync.Mutex
	offline map[key.NodePublic]bool
	marked  map[key.NodePublic]bool
	// withheld are nodes whose endpoints control drops (the DERP-only
	// child's).
	withheld map[key.NodePublic]bool
	closed   bool
	closeErr error
}

// Start brings up the lab: DERP+STUN, control, the five nodes, traffic and
// the observer's LocalAPI socket, then waits until the observer sees a
// direct path to lab-direct and a relayed one to lab-derp. It reports each
// step to opts.Progress. On error everything started so far is torn down.
// Expect about 4 s on loopback (the DERP-only child's netcheck waits ~3 s
// for UDP); ctx bounds the whole start.
//
// Start changes process-wide settings, as Tailscale's own tests do:
// netns.SetEnabled(false), logtail.Disable, and envknobs that keep
// Tailscale code in this process off the network beyond loopback
// (TS_NO_LOGS_NO_SUPPORT, TS_DISABLE_PORTMAPPER, TS_DEBUG_OMIT_LOCAL_ADDRS,
// TS_PANIC_IF_HIT_MAIN_CONTROL, TS_ASSUME_NETWORK_UP_FOR_TEST). Run it in a
// process that is not also a real Tailscale client.
//
// Long on purpose: one start-up sequence, each step's failure tearing down what
// the steps before it started through the one deferred Close above.
func Start(ctx context.Context, opts Options) (l *Lab, err error) {
	hermetic()
	if opts.TrafficInterval <= 0 {
		opts.TrafficInterval = 2 * time.Second
	}
	if opts.Regions == nil {
		opts.Regions = DefaultRegions
	}
	if opts.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("lab: finding tailpath's own binary for the child node: %w", err)
		}
		opts.Executable = exe
	}
	l = &Lab{
		opts:     opts,
		logf:     logger.Discard,
		offline:  map[key.NodePublic]bool{},
		marked:   map[key.NodePublic]bool{},
		withheld: map[key.NodePublic]bool{},
		Nodes:    map[string]*tsnet.Server{},
	}
	started := l
	defer func() {
		if err != nil {
			started.Close()
		}
	}()
	progress := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		l.logf("lab: %s", msg)
		if opts.Progress != nil {
			opts.Progress(msg)
		}
	}
	if opts.LogFile != "" {
		f, err := os.OpenFile(opts.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("lab: log file: %w", err)
		}
		l.logFile = f
		l.logf = fileLogf(f, "lab")
	}
	if opts.Dir == "" {
		d, err := os.MkdirTemp("", "tailpath-lab-")
		if err != nil {
			return nil, fmt.Errorf("lab: state directory: %w", err)
		}
		l.dir, l.ownDir = d, true
	} else {
		if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("lab: state directory: %w", err)
		}
		l.dir = opts.Dir
	}

	// DERP and STUN.
	l.derp, err = StartDERP(opts.Regions, "127.0.0.1", l.prefixed("derp"))
	if err != nil {
		return nil, err
	}
	l.derpMap = l.derp.Map
	var codes []string
	for _, r := range opts.Regions {
		codes = append(codes, r.Code)
	}
	progress("DERP+STUN up: %d regions %v on 127.0.0.1", len(opts.Regions), codes)

	// Control.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("lab: control listen: %w", err)
	}
	l.ControlURL = "http://" + ln.Addr().String()
	l.Control = &testcontrol.Server{
		DERPMap:         l.derpMap,
		MagicDNSDomain:  MagicDNSDomain,
		Logf:            l.prefixed("control"),
		ExplicitBaseURL: l.ControlURL,
		HoldMapRequest:  l.onMapRequest,
	}
	l.apiKey = newAPIKey()
	l.api = apiserver.New(l.apiKey, "", "")
	l.api.SetSource(l.apiDevices)
	l.controlHTTP = &http.Server{
		Handler:           apiHandler(l.api, l.Control),
		ErrorLog:          log.New(logWriter{l.prefixed("control-http")}, "", 0),
		ReadHeaderTimeout: 30 * time.Second,
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.controlHTTP.Serve(ln)
	}()
	progress("control up at %s", l.ControlURL)

	nodeCfg := func(name string, serve bool) nodeConfig {
		return nodeConfig{
			Hostname:   name,
			ControlURL: l.ControlURL,
			Dir:        filepath.Join(l.dir, name),
			Ephemeral:  true,
			Serve:      serve,
			LogFile:    opts.LogFile,
		}
	}
	startIn := func(cfg nodeConfig) (*runningNode, error) {
		n, err := startNode(ctx, cfg, l.prefixed(cfg.Hostname))
		if err != nil {
			return nil, err
		}
		l.inproc = append(l.inproc, n)
		l.Nodes[cfg.Hostname] = n.srv
		return n, nil
	}

	// The DERP-only child first, in the background: it cannot STUN, so
	// netcheck waits about 3 s for UDP before it settles on DERP; the
	// in-process nodes join meanwhile.
	var childLog io.Writer = io.Discard
	if l.logFile != nil {
		childLog = l.logFile
	}
	type childResult struct {
		c   *childNode
		err error
	}
	childCh := make(chan childResult, 1)
	go func() {
		c, err := startChild(ctx, opts.Executable, nodeCfg(DERPName, true),
			[]string{"TS_DEBUG_ALWAYS_USE_DERP=1"}, childLog)
		childCh <- childResult{c, err}
	}()
	childWaited := false
	defer func() {
		// Runs before the Close above: a failed Start must not leave the
		// child starting behind it.
		// (l is already nil here on error; use started.)
		if !childWaited {
			if r := <-childCh; r.c != nil {
				started.child = r.c
			}
		}
	}()
	progress("node %s starting in a child process (DERP only, no UDP)", DERPName)

	// The observer, then its peers.
	l.observer, err = startIn(nodeCfg(ObserverName, false))
	if err != nil {
		return nil, err
	}
	tsLC, err := l.observer.srv.LocalClient()
	if err != nil {
		return nil, fmt.Errorf("lab: observer LocalAPI: %w", err)
	}
	// Our own transport, so Close can drop its idle connections: tsnet's
	// Close waits up to 5 s for LocalAPI connections that were dialed but
	// never used (http.Transport dials ahead under concurrent requests).
	l.observerTransport = &http.Transport{DialContext: tsLC.Dial}
	l.observerDial = tsLC.Dial
	l.observerLC = &local.Client{Dial: tsLC.Dial, Transport: versionTransport{l.observerTransport}, OmitAuth: true}
	progress("node %s joined (%s): the node the dashboard watches", ObserverName, l.observer.ip)

	direct, err := startIn(nodeCfg(DirectName, true))
	if err != nil {
		return nil, err
	}
	progress("node %s joined (%s)", DirectName, direct.ip)

	idle, err := startIn(nodeCfg(IdleName, false))
	if err != nil {
		return nil, err
	}
	progress("node %s joined (%s): online, no traffic", IdleName, idle.ip)

	// The offline node is not ephemeral: a real control server would
	// delete a stopped ephemeral node instead of listing it offline.
	offCfg := nodeCfg(OfflineName, false)
	offCfg.Ephemeral = false
	off, err := startNode(ctx, offCfg, l.prefixed(OfflineName))
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.offline[off.key] = true
	l.mu.Unlock()
	off.close()
	if n := l.Control.Node(off.key); n != nil {
		stopped := time.Now()
		n.Online = ptr(false)
		n.LastSeen = &stopped
		l.Control.UpdateNode(n)
	}
	progress("node %s joined (%s), then stopped: control lists it offline", OfflineName, off.ip)

	r := <-childCh
	childWaited = true
	if r.err != nil {
		return nil, r.err
	}
	l.child = r.c
	l.mu.Lock()
	l.withheld[l.child.key] = true
	l.mu.Unlock()
	progress("node %s joined (%s): child process, DERP only, no UDP endpoints", DERPName, l.child.ip)
	l.peers = []PeerInfo{
		{Name: DirectName, Role: RoleDirect, TailscaleIP: direct.ip},
		{Name: DERPName, Role: RoleDERP, TailscaleIP: l.child.ip},
		{Name: IdleName, Role: RoleIdle, TailscaleIP: idle.ip},
		{Name: OfflineName, Role: RoleOffline, TailscaleIP: off.ip},
	}

	// Traffic and the LocalAPI socket.
	tctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	for _, p := range l.peers {
		if p.Role == RoleDirect || p.Role == RoleDERP {
			l.loops.Add(1)
			go func() {
				defer l.loops.Done()
				l.trafficLoop(tctx, p)
			}()
		}
	}
	if runtime.GOOS != "windows" {
		if err := l.serveSocket(tctx); err != nil {
			return nil, err
		}
	}
	progress("traffic: observer fetches %d KiB from %s and %s every %v", trafficBody>>10, DirectName, DERPName, opts.TrafficInterval)

	if err := l.WaitPeers(ctx); err != nil {
		return nil, err
	}
	ap, err := l.WaitDirect(ctx, DirectName)
	if err != nil {
		return nil, err
	}
	progress("path to %s: direct %s", DirectName, ap)
	code, err := l.WaitRelay(ctx, DERPName)
	if err != nil {
		return nil, err
	}
	progress("path to %s: relay %q", DERPName, code)
	return l, nil
}

// onMapRequest is testcontrol's HoldMapRequest hook: it marks a node
// Online=true the first time it sends a map update. Only non-streaming
// update requests are used (MapRequest.ReadOnly is always false since
// capability version 68), so the node's own update, processed right
// after, cannot be overwritten by ours.
func (l *Lab) onMapRequest(req *tailcfg.MapRequest) func() {
	if req.Stream && req.Version >= 68 {
		return nil
	}
	l.mu.Lock()
	withhold := l.withheld[req.NodeKey]
	l.mu.Unlock()
	if withhold {
		// The DERP-only node's endpoints never reach control (the
		// CoreS3 case: its control stream stalled before it could
		// announce them), even once it uses UDP (DERPNodeUsesUDP).
		req.Endpoints = nil
	}
	l.mu.Lock()
	skip := l.offline[req.NodeKey] || l.marked[req.NodeKey] || l.closed
	l.mu.Unlock()
	if skip {
		return nil
	}
	n := l.Control.Node(req.NodeKey)
	if n == nil {
		return nil
	}
	l.mu.Lock()
	l.marked[req.NodeKey] = true
	l.mu.Unlock()
	if n.Online == nil {
		n.Online = ptr(true)
		l.Control.UpdateNode(n)
	}
	return nil
}

// trafficLoop fetches a small HTTP reply from p over the tailnet every
// TrafficInterval, so the observer and p both see the peer Active.
func (l *Lab) trafficLoop(ctx context.Context, p PeerInfo) {
	hc := l.observer.srv.HTTPClient()
	hc.Timeout = dialTimeout
	defer hc.CloseIdleConnections()
	url := fmt.Sprintf("http://%s:%d/", p.TailscaleIP, TrafficPort)
	t := time.NewTicker(l.opts.TrafficInterval)
	defer t.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		res, err := hc.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		if err != nil && ctx.Err() == nil {
			l.logf("lab: traffic to %s: %v", p.Name, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// prefixed returns a Logf for one component.
func (l *Lab) prefixed(component string) logger.Logf {
	if l.logFile == nil {
		return logger.Discard
	}
	return fileLogf(l.logFile, component)
}

// Observer is the LocalAPI client of the node the dashboard watches (in
// memory, full read/write permission). Stop whatever streams from it (IPN
// bus watchers, a probes Source) before Close, which otherwise waits up to
// 5 s for those LocalAPI connections.
func (l *Lab) Observer() *local.Client { return l.observerLC }

// ObserverSocket is a Unix socket path serving the observer's LocalAPI,
// so `tailpath status --socket PATH` and `tailscale --socket PATH status`
// work against the lab; "" on Windows.
func (l *Lab) ObserverSocket() string { return l.sockPath }

// Peers lists the lab's nodes other than the observer, in start order:
// direct, DERP-only, idle, offline.
func (l *Lab) Peers() []PeerInfo { return slices.Clone(l.peers) }

// DERPMap is the lab's DERP map (what control sends every node).
func (l *Lab) DERPMap() *tailcfg.DERPMap { return l.derpMap.Clone() }

// Dir is the lab's state directory.
func (l *Lab) Dir() string { return l.dir }

// Close stops traffic, every node (the child process included), control
// and DERP, and removes the state directory if Start created it. It waits
// for the lab's goroutines and child to exit. Safe to call more than once.
func (l *Lab) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return l.closeErr
	}
	l.closed = true
	l.mu.Unlock()

	if l.cancel != nil {
		l.cancel()
	}
	if l.sockLn != nil {
		l.sockLn.Close()
	}
	t0 := time.Now()
	// No LocalAPI connection may outlive this point: tsnet's Close waits
	// up to 5 s for open LocalAPI connections.
	l.loops.Wait()
	if l.observerTransport != nil {
		l.observerTransport.CloseIdleConnections()
	}
	var wg sync.WaitGroup
	if l.child != nil {
		wg.Go(l.child.close)
	}
	for _, n := range l.inproc {
		wg.Go(n.close)
	}
	wg.Wait()
	l.logf("lab: close: nodes stopped in %v", time.Since(t0).Round(time.Millisecond))
	if l.controlHTTP != nil {
		l.controlHTTP.Close()
	}
	if l.derp != nil {
		l.derp.Close()
	}
	l.wg.Wait()
	l.logf("lab: close: control, DERP and goroutines done in %v", time.Since(t0).Round(time.Millisecond))
	var errs []error
	if l.ownDir {
		errs = append(errs, os.RemoveAll(l.dir))
	}
	if l.logFile != nil {
		errs = append(errs, l.logFile.Close())
	}
	l.closeErr = errors.Join(errs...)
	return l.closeErr
}

// SetDERPOnly switches the DERP-only node (DERPName) between DERP only
// (true, as it starts) and UDP (false), as the CoreS3 went direct after
// its fixes and back to DERP when its probe table filled: its magicsock
// binds UDP and STUNs, or stops delivering UDP (the child sets
// TS_DEBUG_ALWAYS_USE_DERP and rebinds), while its endpoints never reach
// control. With UDP, disco finds the direct path as the board's did: the
// node pings the observer's endpoints, which control lists, and the
// observer learns the node's address from those pings (magicsock's
// handlePingLocked adds a ping's source as a candidate endpoint), so the
// observer's path goes direct with no endpoint in the netmap; without
// UDP that path expires and traffic goes back to DERP. It returns once
// the request is sent; WaitFor the path.
func (l *Lab) SetDERPOnly(derpOnly bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.child == nil {
		return errors.New("lab: no DERP-only node running")
	}
	line := childUseUDP
	if derpOnly {
		line = childDERPOnly
	}
	if _, err := io.WriteString(l.child.stdin, line+"\n"); err != nil {
		return fmt.Errorf("lab: switching %s's UDP: %w", DERPName, err)
	}
	return nil
}

// PeerStatus returns the observer's current status of the peer whose host
// name is name; it fails if the observer does not list it.
func (l *Lab) PeerStatus(ctx context.Context, name string) (*ipnstate.PeerStatus, error) {
	st, err := l.observerLC.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("lab: observer status: %w", err)
	}
	if ps := FindPeer(st, name); ps != nil {
		return ps, nil
	}
	return nil, fmt.Errorf("lab: observer does not list peer %q", name)
}

// FindPeer returns st's peer with host name name, or nil.
func FindPeer(st *ipnstate.Status, name string) *ipnstate.PeerStatus {
	for _, ps := range st.Peer {
		if ps.HostName == name {
			return ps
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
