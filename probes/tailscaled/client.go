// Package tailscaled reads the local tailscaled through its LocalAPI and
// turns the answers into probes' typed evidence (probes.Snapshot, Peer,
// Path), diagnosed by probes' pure functions; it runs active pings and
// keeps a reconnecting Source for the dashboard and serve. It never
// imports the TUI.
//
// Entry points:
//   - NewClient(socket) builds a LocalAPI client; anything satisfying
//     LocalClient works (a tsnet.Server's LocalClient() does).
//   - Gather(ctx, c, prev) takes one Snapshot.
//   - MeasureDERPLatency(ctx, derpMap) measures fresh DERP latencies (STUN).
//   - NewSource(c, opts).Run(ctx) streams probes.Events (snapshots, source
//     status, pings).
//   - Ping(ctx, c, peer, kind, tries, maxTime, emit) runs `tailscale ping`'s loop.
//   - EndpointChanges(ctx, c, ip) reads the daemon's per-peer endpoint-change log.
//   - ConnectError(err, socket) turns a LocalAPI error into an actionable message.
//
// probes/probestest serves hand-written LocalAPI fixtures (probes/testdata)
// on a unix socket for tests.
package tailscaled

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"syscall"

	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/paths"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
)

// LocalClient is the part of tailscaled's LocalAPI that tailpath reads. All
// calls need only read permission. *local.Client satisfies it, so does the
// client of an in-process tsnet.Server.
type LocalClient interface {
	// Status is GET /localapi/v0/status: self, peers, path fields, counters.
	Status(ctx context.Context) (*ipnstate.Status, error)
	// WhoIs is GET /localapi/v0/whois?addr=: the tailcfg.Node (Endpoints,
	// HomeDERP, Online, Hostinfo.NetInfo) behind a Tailscale IP.
	WhoIs(ctx context.Context, remoteAddr string) (*apitype.WhoIsResponse, error)
	// CurrentDERPMap is GET /localapi/v0/derpmap.
	CurrentDERPMap(ctx context.Context) (*tailcfg.DERPMap, error)
	// WatchIPNBus streams ipn.Notify messages until ctx ends or the daemon goes.
	WatchIPNBus(ctx context.Context, mask ipn.NotifyWatchOpt) (*local.IPNBusWatcher, error)
	// Ping is POST /localapi/v0/ping: one DISCO, TSMP or ICMP ping.
	Ping(ctx context.Context, ip netip.Addr, pingtype tailcfg.PingType) (*ipnstate.PingResult, error)
}

var _ LocalClient = (*local.Client)(nil)

// NewClient returns a LocalAPI client for the tailscaled listening on the
// unix socket (or Windows named pipe) socket; "" means the platform default
// (DefaultSocket). It does not connect until the first call.
//
// On Unix it dials the socket once per request: local.Client's default,
// safesocket.ConnectContext, retries a missing or refusing socket every
// 250 ms while the process is under 2 s old, in case tailscaled is still
// starting (tailscaledStillStarting in tailscale.com/safesocket), so
// `tailpath status` took 2.5 s to say tailscaled is not running. tailpath's
// own loops (the Source's reconnects) do the waiting. Windows (a named
// pipe) and macOS without a socket (the GUI app's TCP port) keep the
// default.
func NewClient(socket string) *local.Client {
	c := &local.Client{}
	if socket != "" {
		c.Socket, c.UseSocketOnly = socket, true
	}
	if runtime.GOOS == "windows" || (runtime.GOOS == "darwin" && socket == "") {
		return c
	}
	path := cmp.Or(socket, paths.DefaultTailscaledSocket())
	c.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != "local-tailscaled.sock:80" { // as local.Client's own dialer
			return nil, fmt.Errorf("unexpected URL address %q", addr)
		}
		return dialSocket(ctx, path)
	}
	// local.Client's own transport keeps http.DefaultMaxIdleConnsPerHost
	// (2) connections open: of a gather's whoisParallel WhoIs at once,
	// the others each dialled a connection of their own, which tailscaled
	// accepts and identifies (ipnserver's per-connection actor) before
	// answering. Enough are kept for all of them.
	c.Transport = &http.Transport{DialContext: c.Dial, MaxIdleConnsPerHost: whoisParallel + 2}
	return c
}

// dialSocket connects to tailscaled's unix socket, once.
var dialSocket = func(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}

// socketOf is c's socket path for messages: Socket of a *local.Client, else "".
func socketOf(c LocalClient) string {
	if lc, ok := c.(*local.Client); ok {
		return lc.Socket
	}
	return ""
}

// DefaultSocket is the platform's default tailscaled socket path, for
// messages ("/var/run/tailscale/tailscaled.sock" on Linux).
func DefaultSocket() string { return paths.DefaultTailscaledSocket() }

// Errors ConnectError wraps, testable with errors.Is.
var (
	// ErrNotRunning: nothing listens on the socket (missing or refused).
	ErrNotRunning = errors.New("tailscaled not running")
	// ErrPermission: the LocalAPI or its socket refused us.
	ErrPermission = errors.New("permission denied")
	// ErrBadReply: tailscaled answered with something we could not parse.
	ErrBadReply = errors.New("malformed LocalAPI reply")
)

// actionableError is an error whose text is already a full sentence for a
// person, wrapping a sentinel and the original cause.
type actionableError struct {
	msg   string
	kind  error
	cause error
}

func (e *actionableError) Error() string   { return e.msg }
func (e *actionableError) Unwrap() []error { return []error{e.kind, e.cause} }

// localAPIError is ConnectError's wrapping of an error it could not
// classify: "tailscaled LocalAPI: " and the cause.
type localAPIError struct{ err error }

func (e *localAPIError) Error() string { return "tailscaled LocalAPI: " + cleanString(e.err.Error()) }
func (e *localAPIError) Unwrap() error { return e.err }

// ConnectError rewrites an error from a LocalAPI call into one actionable
// line, in the style of Tailscale's CLI, and wraps ErrNotRunning,
// ErrPermission or ErrBadReply (test with errors.Is). socket is shown in the
// message ("" shows the default path). Other errors come back wrapped with
// "tailscaled LocalAPI: ". nil stays nil. An error ConnectError already
// returned comes back as it is, so callers may apply it again.
func ConnectError(err error, socket string) error {
	if err == nil {
		return nil
	}
	var ae *actionableError
	var le *localAPIError
	if errors.As(err, &ae) || errors.As(err, &le) {
		return err
	}
	if socket == "" {
		socket = DefaultSocket()
	}
	switch {
	case local.IsAccessDeniedError(err):
		return &actionableError{
			msg:   fmt.Sprintf("tailscaled refused the request (permission denied: %s); run as root or let your user operate it with `sudo tailscale set --operator=$USER`", errText(err)),
			kind:  ErrPermission,
			cause: err,
		}
	case isDialPermission(err):
		return &actionableError{
			msg:   fmt.Sprintf("permission denied connecting to local tailscaled (socket %s); run with sudo or give your user access to the socket", socket),
			kind:  ErrPermission,
			cause: err,
		}
	case isNotRunning(err):
		return &actionableError{
			msg:   fmt.Sprintf("failed to connect to local tailscaled (socket %s); is it running? Start it (e.g. `sudo systemctl start tailscaled`) or pass --socket", socket),
			kind:  ErrNotRunning,
			cause: err,
		}
	case isBadReply(err):
		return &actionableError{
			msg:   fmt.Sprintf("tailscaled (socket %s) sent a reply tailpath could not parse (%s); is that socket a tailscaled of a compatible version?", socket, errText(err)),
			kind:  ErrBadReply,
			cause: err,
		}
	}
	return &localAPIError{err}
}

// errText is err's text as one sanitised line cut to at most 160 bytes.
func errText(err error) string {
	return safetext.Cut(cleanString(strings.Join(strings.Fields(err.Error()), " ")), 160)
}

func isNotRunning(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) || errors.Is(err, os.ErrNotExist) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return true
	}
	// local.Client's own wording when the dial fails.
	return strings.Contains(err.Error(), "Failed to connect to local Tailscale daemon")
}

func isDialPermission(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial" && errors.Is(err, os.ErrPermission)
}

func isBadReply(err error) bool {
	var se *jsonSyntaxError
	if errors.As(err, &se) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "failed to unmarshal JSON") || strings.Contains(s, "invalid character") ||
		strings.Contains(s, "unexpected end of JSON") || strings.Contains(s, "cannot unmarshal")
}

// jsonSyntaxError marks a reply tailpath itself failed to interpret.
type jsonSyntaxError struct{ err error }

func (e *jsonSyntaxError) Error() string { return e.err.Error() }
func (e *jsonSyntaxError) Unwrap() error { return e.err }
