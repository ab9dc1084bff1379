package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/internal/metrics"
	"github.com/tailpath/tailpath/internal/secretfile"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// serveFlags are tailpath serve's flags.
type serveFlags struct {
	// listen is the address to serve on (an IP and port; "localhost" too).
	listen string
	// socket is tailscaled's LocalAPI socket; "" is the platform default.
	socket string
	// interval is how often tailscaled's status is polled.
	interval time.Duration
	// all also reports the peers `tailscale status` hides.
	all bool
	// port is the board: "" none, "auto", a path, or "-" for a capture on stdin.
	port string
	// baud is the board's serial speed in bits per second.
	baud int
	// maxPeers caps the peers with per-peer series.
	maxPeers int
	// pingEvery is how often each active peer gets a latency ping; 0 never.
	pingEvery time.Duration
	// noTuning leaves the host's TCP tuning out.
	noTuning bool
	// bandwidth and rtt are the tuning target, as for tailpath tune; ""
	// measures (or takes tune's defaults).
	bandwidth, rtt string
	// root treats this directory as / for the tuning (a sandbox copy).
	root string
	// allow lists the tailnet callers who may read: "self", logins,
	// tag:name (app.ParseAllow).
	allow string
	// scraper lists the tailnet nodes that are Prometheus: they may read,
	// with a request budget of their own (app.ParseAllow's syntax).
	scraper string
	// tokenFile holds a bearer token that lets any caller read.
	tokenFile string
	// noSnapshot turns /snapshot.json off.
	noSnapshot bool
	api        apiFlags
}

// defaultListen is serve's address when --listen is not given: loopback
// only.
const defaultListen = "127.0.0.1:9473"

const serveUsage = `usage: tailpath serve [--listen 127.0.0.1:9473] [--allow self] [--scraper tag:monitoring] [--token-file F] [--no-snapshot] [--port auto|PATH] [--max-peers 1000] [--socket PATH]

Runs the dashboard's sources headless (tailscaled, an optional board on
--port, the control API when credentials are set, this host's TCP tuning
on Linux) and serves them over HTTP for Prometheus:

  /metrics        per-peer paths and why each is relayed, DERP regions and
                  NAT facts, the board's health, the tuning (docs/metrics.md)
  /snapshot.json  this node's snapshot (as tailpath status --save writes it,
                  without keys or log ids; --no-snapshot turns it off)
  /healthz        200 while serve runs, with each source's state

It listens on loopback unless --listen names another address: an IP
literal (this node's tailnet address, or 0.0.0.0 for every interface),
never a host name (localhost aside) and never a bare ":9473".

Who may read: this machine's users on loopback; tailnet nodes --allow
names, each identified by tailscaled (WhoIs), also when tailscaled's
userspace networking hands their connection to loopback: "self" (the
nodes of this node's user, the default), a user's login, tag:name; and
any caller presenting the bearer token in --token-file. Everyone else gets
403 (401 with a token file); a request whose Host is not this server's
gets 421. Prometheus (the token's bearer, or a node --scraper names) has a
request budget no other caller can use up; any other caller may have 2
requests in flight (429 past that).
tailscaled restarting or the board being unplugged does not stop it; the
metrics say so.`

// serveShort is `tailpath serve`'s line in tailpath's usage.
const serveShort = "Prometheus metrics of paths, reasons, the board and tuning, for a fleet"

func serveCommand() *cli.Command {
	var f serveFlags
	fs := cli.NewFlagSet("tailpath serve")
	fs.StringVar(&f.listen, "listen", defaultListen, "address to serve on: an IP and port (loopback unless named here)")
	fs.StringVar(&f.socket, "socket", "", "tailscaled LocalAPI socket (default "+tailscaled.DefaultSocket()+")")
	fs.DurationVar(&f.interval, "interval", 2*time.Second, "how often to poll tailscaled's status")
	fs.BoolVar(&f.all, "all", false, "also report the peers 'tailscale status' hides (shared-in nodes, Mullvad exit nodes)")
	fs.StringVar(&f.port, "port", "", `CoreS3 serial port: "auto", a path, or "-" for a capture on stdin (default: no board)`)
	fs.IntVar(&f.baud, "baud", 115200, "serial speed in bits per second")
	fs.IntVar(&f.maxPeers, "max-peers", metrics.DefaultMaxPeers, "at most this many peers get per-peer series (relayed ones first); the rest are counted in tailpath_series_dropped_total")
	fs.DurationVar(&f.pingEvery, "ping-every", time.Minute, "TSMP-ping each active peer this often for its latency, one at a time (at least 1m; 0: never; idle peers are never pinged)")
	fs.BoolVar(&f.noTuning, "no-tuning", false, "leave this host's TCP tuning out")
	fs.StringVar(&f.bandwidth, "bandwidth", "", "tuning target throughput, e.g. 400Mbit (default: measured from tailnet connections, else 1Gbit)")
	fs.StringVar(&f.rtt, "rtt", "", "tuning target round trip, e.g. 20ms (default: measured from tailnet connections, else 20ms)")
	fs.StringVar(&f.root, "root", "", "read the tuning from this directory as / (a sandbox copy of /proc/sys; for tests)")
	fs.StringVar(&f.allow, "allow", app.AllowSelf, `tailnet callers who may read, comma-separated: "self" (nodes of this node's user), logins (alice@example.com), tags (tag:monitoring)`)
	fs.StringVar(&f.scraper, "scraper", "", `tailnet nodes that are Prometheus, in --allow's syntax (tag:monitoring): they may read, with a request budget of their own`)
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding a bearer token (its first line) that lets any caller read, e.g. Prometheus from outside the tailnet (a regular file readable by its owner only)")
	fs.BoolVar(&f.noSnapshot, "no-snapshot", false, "do not serve /snapshot.json (404)")
	f.api.register(fs)
	return &cli.Command{
		Name:  "serve",
		Short: serveShort,
		Usage: serveUsage,
		Flags: fs,
		Run:   f.run,
	}
}

// minPingEvery is the shortest --ping-every: one TSMP ping keeps a peer
// active in tailscaled for 45 s (magicsock's sessionActiveTimeout), so a
// shorter period would hold idle peers on a path of serve's making.
const minPingEvery = time.Minute

// run serves until ctx ends (SIGINT, SIGTERM).
func (f *serveFlags) run(ctx context.Context, args []string, stdio cli.IO) error {
	if err := cli.NoArgs(args); err != nil {
		return err
	}
	if err := checkListen(f.listen); err != nil {
		return cli.UsageErrorf("--listen %v", err)
	}
	if f.interval <= 0 {
		return cli.UsageErrorf("--interval must be positive")
	}
	if f.maxPeers < 1 {
		return cli.UsageErrorf("--max-peers %d: want at least 1", f.maxPeers)
	}
	if f.pingEvery < 0 {
		return cli.UsageErrorf("--ping-every must not be negative (0 turns pings off)")
	}
	if f.pingEvery > 0 && f.pingEvery < minPingEvery {
		return cli.UsageErrorf("--ping-every %v: at least %v (0 turns pings off): tailscaled keeps a peer active for 45 s after the last packet it sent, so pinging more often would keep every peer active and its path would be serve's own doing", f.pingEvery, minPingEvery)
	}
	allow, err := app.ParseAllow(f.allow)
	if err != nil {
		return cli.UsageErrorf("--allow %v", err)
	}
	acc := &app.Access{Allow: allow}
	if f.scraper != "" {
		if acc.Scraper, err = app.ParseAllow(f.scraper); err != nil {
			return cli.UsageErrorf("--scraper %v", err)
		}
	}
	if f.tokenFile != "" {
		if acc.Token, err = secretfile.Read(f.tokenFile, "--token-file"); err != nil {
			return cli.UsageError{Err: err}
		}
	}
	s := &app.Serve{
		Sources: app.Sources{
			Client:   tailscaled.NewClient(f.socket),
			Socket:   f.socket,
			Interval: f.interval,
			All:      f.all,
		},
		PingEvery: f.pingEvery,
		MaxPeers:  f.maxPeers,
		Log:       stdio.Stderr,
		Access:    acc,
	}
	if !f.noSnapshot {
		s.Snapshot = s.SnapshotFile
	}
	if !f.noTuning && (runtime.GOOS == "linux" || f.root != "") {
		in, err := f.tuneInputs()
		if err != nil {
			return err
		}
		s.Tuning = &tune.Control{Inputs: in}
	}
	api, err := f.api.open()
	if err != nil {
		return cli.UsageError{Err: err}
	}
	s.ControlAPI = api
	if f.port != "" {
		src := &devlink.Source{}
		if f.port == "-" {
			src.Replay = stdio.Stdin
		} else {
			src.Link = &devlink.Link{Port: f.port, Baud: f.baud}
		}
		s.Device = src
	}

	ln, err := app.Listen(f.listen, "--listen", stdio.Stderr)
	if err != nil {
		return err
	}
	return s.Run(ctx, ln)
}

// tuneInputs are the tuning target from --bandwidth, --rtt and --root.
func (f *serveFlags) tuneInputs() (tune.Inputs, error) {
	in := tune.Inputs{BandwidthSource: "flag --bandwidth", RTTSource: "flag --rtt"}
	if f.bandwidth != "" {
		bw, err := sysctl.ParseBandwidth(f.bandwidth)
		if err != nil {
			return in, cli.UsageErrorf("--bandwidth %v", err)
		}
		in.Bandwidth = bw
	}
	if f.rtt != "" {
		d, err := sysctl.ParseRTT(f.rtt)
		if err != nil {
			return in, cli.UsageErrorf("--rtt %v", err)
		}
		in.RTT = d
	}
	if f.root != "" {
		in.Host, in.Sandbox = sysctl.AtRoot(f.root), true
	} else {
		// Whether tailnet TCP is the kernel's at all (userspace networking),
		// the routes it forwards and the path to the busiest peer.
		in = app.TuneDaemon(f.socket, in)
	}
	return in, nil
}

// checkListen accepts "IP:port" and "localhost:port" (port 0 picks a free
// one). A bare ":port" is refused: it would listen on every interface
// without saying so; so is a host name, which could resolve to any
// address.
func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want IP:port, e.g. %s", addr, defaultListen)
	}
	if port == "" {
		return fmt.Errorf("%q: no port (e.g. %s)", addr, defaultListen)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		// A port name ("http") would be looked up; a number out of range
		// fails only at listen time, as a runtime failure (exit 1).
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535 (e.g. %s)", addr, port, defaultListen)
	}
	switch {
	case host == "":
		return fmt.Errorf("%q listens on every interface; name the address: 127.0.0.1%s (this machine only), this node's tailnet IP, or 0.0.0.0%s for every interface", addr, addr, addr)
	case strings.EqualFold(host, "localhost"):
		return nil
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return fmt.Errorf("%q: %q is not an IP address; name the address to listen on (a host name could resolve anywhere)", addr, host)
	}
	return nil
}
