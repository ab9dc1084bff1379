package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"

	"tailscale.com/client/local"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/hostnet"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// DaemonTUN asks the tailscaled at socket ("" the platform's default)
// whether it runs with a kernel TUN: LocalAPI's Status.TUN, which
// tailscaled sets to !IsNetstack (ipnlocal.LocalBackend.updateStatusLocked),
// so false means --tun=userspace-networking. It asks without the peer
// list, and on Linux dials the socket once: the LocalAPI client's own
// dialer keeps retrying for the first two seconds of a process
// (safesocket.ConnectContext waits for a tailscaled that may be starting),
// which would make every `tailpath tune` without tailscaled wait that long.
// It is tune.Inputs.DaemonTUN for `tailpath tune`, the dashboard's Tuning
// pane, `tailpath serve` and `status --save`.
func DaemonTUN(socket string) func(context.Context) (bool, error) {
	lc := oneShotClient(socket)
	return func(ctx context.Context) (bool, error) {
		st, err := lc.StatusWithoutPeers(ctx)
		if err != nil {
			return false, daemonErr(err, socket)
		}
		return st.TUN, nil
	}
}

// oneShotClient is a LocalAPI client for socket that, on Linux, dials
// once instead of retrying while a tailscaled may be starting (see
// DaemonTUN).
func oneShotClient(socket string) *local.Client {
	lc := tailscaled.NewClient(socket)
	if runtime.GOOS == "linux" {
		path := DaemonName(socket)
		lc = &local.Client{Socket: path, UseSocketOnly: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}}
	}
	return lc
}

// daemonErr words a LocalAPI error for tune's evidence.
func daemonErr(err error, socket string) error {
	err = tailscaled.ConnectError(err, socket)
	if errors.Is(err, tailscaled.ErrNotRunning) {
		return fmt.Errorf("nothing answers on its socket (%w)", tailscaled.ErrNotRunning)
	}
	return err
}

// TuneDaemon returns in with every question tune asks tailscaled wired to
// the tailscaled at socket ("" the platform's default): Status.TUN
// (DaemonTUN), its version and advertised routes (DaemonPrefs) and the
// path to --peer or the busiest peer (TunePeerPath). It is what `tailpath
// tune`, the dashboard's Tuning pane, `tailpath serve` and `status --save`
// give sysctl/tune, which cannot import probes/tailscaled itself.
//
// One gathering asks tailscaled up to three times; when nothing answers
// on the socket, the first question's answer stands for the others for
// downFor (each failed connect also asks systemd why, which is slow on a
// busy machine).
func TuneDaemon(socket string, in tune.Inputs) tune.Inputs {
	var d downMemo
	tun, prefs, path := DaemonTUN(socket), DaemonPrefs(socket), TunePeerPath(socket)
	in.DaemonTUN = func(ctx context.Context) (bool, error) {
		if err := d.down(); err != nil {
			return false, err
		}
		v, err := tun(ctx)
		d.note(err)
		return v, err
	}
	in.Daemon = DaemonName(socket)
	in.Prefs = func(ctx context.Context) (tune.DaemonPrefs, error) {
		if err := d.down(); err != nil {
			return tune.DaemonPrefs{}, err
		}
		v, err := prefs(ctx)
		d.note(err)
		return v, err
	}
	in.PeerPath = func(ctx context.Context, peer string) (tune.PeerPath, error) {
		if err := d.down(); err != nil {
			return tune.PeerPath{}, err
		}
		v, err := path(ctx, peer)
		d.note(err)
		return v, err
	}
	return in
}

// downFor is how long "nothing answers on tailscaled's socket" stands
// for the next question (a gathering's questions come within it).
const downFor = 2 * time.Second

// downMemo remembers that nothing answered on the socket.
type downMemo struct {
	mu  sync.Mutex
	err error
	at  time.Time
}

func (m *downMemo) down() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil && time.Since(m.at) < downFor {
		return m.err
	}
	return nil
}

func (m *downMemo) note(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if errors.Is(err, tailscaled.ErrNotRunning) {
		m.err, m.at = err, time.Now()
	} else {
		m.err = nil
	}
}

// DaemonPrefs asks the tailscaled at socket for its version
// (Status.Version) and the routes it advertises (LocalAPI prefs: any
// local user with read permission may ask).
func DaemonPrefs(socket string) func(context.Context) (tune.DaemonPrefs, error) {
	lc := oneShotClient(socket)
	return func(ctx context.Context) (tune.DaemonPrefs, error) {
		var dp tune.DaemonPrefs
		st, err := lc.StatusWithoutPeers(ctx)
		if err != nil {
			return dp, daemonErr(err, socket)
		}
		dp.Version = st.Version
		prefs, err := lc.GetPrefs(ctx)
		if err != nil {
			return dp, daemonErr(err, socket)
		}
		dp.AdvertiseRoutes = append(dp.AdvertiseRoutes, prefs.AdvertiseRoutes...)
		return dp, nil
	}
}

// TunePeerPath gathers the tailnet from the tailscaled at socket (as
// `tailpath status` does, this host's facts included) and returns the
// path to the peer named name, or, when name is "", to the busiest peer:
// the most bytes sent and received since tailscaled started. Its verdict
// is the rule table's (probes.Judge, run on the gather).
//
// The Tuning pane and serve read the tuning every few seconds: a gather
// younger than PeerPathReuse is used again rather than asking tailscaled
// for the whole tailnet each time.
func TunePeerPath(socket string) func(ctx context.Context, name string) (tune.PeerPath, error) {
	lc := oneShotClient(socket)
	var mu sync.Mutex
	var last *probes.Snapshot
	var at time.Time
	return func(ctx context.Context, name string) (tune.PeerPath, error) {
		mu.Lock()
		defer mu.Unlock()
		if last == nil || time.Since(at) > PeerPathReuse {
			snap, err := tailscaled.GatherWith(ctx, lc, nil, tailscaled.GatherOptions{Host: hostnet.Start})
			if err != nil {
				return tune.PeerPath{}, daemonErr(err, socket)
			}
			// Judged as every gather is: by the joiner (probes.Judge).
			last, at = join.Of(snap).Snapshot, time.Now()
		}
		return PeerPathOf(last, name)
	}
}

// PeerPathReuse is how long TunePeerPath reuses a gather.
const PeerPathReuse = 30 * time.Second

// PeerPathOf picks the peer named name (host name, MagicDNS name or
// Tailscale IP), or the busiest peer when name is "", from a gathered
// snapshot and words its path for tune.
func PeerPathOf(snap *probes.Snapshot, name string) (tune.PeerPath, error) {
	var p *probes.Peer
	chosen := "named by --peer"
	if name != "" {
		if p = findPeer(snap, name); p == nil {
			return tune.PeerPath{}, fmt.Errorf("no peer named %q in this tailnet (see tailpath status)", name)
		}
	} else {
		chosen = "the busiest peer: most bytes sent and received since tailscaled started"
		var best int64
		for i := range snap.Peers {
			if b := snap.Peers[i].TxBytes + snap.Peers[i].RxBytes; b > best {
				best, p = b, &snap.Peers[i]
			}
		}
		if p == nil {
			return tune.PeerPath{}, errors.New("no peer has carried traffic since tailscaled started; pass --peer NAME")
		}
	}
	v := p.Verdict
	return tune.PeerPath{
		Peer: p.Name, Chosen: chosen, Kind: string(p.Path.Kind), Text: p.Path.Text,
		Reason: safetext.New(string(v.Reason)), Summary: v.Summary, Fix: v.Fix,
	}, nil
}

// DaemonName is how tune's evidence names the tailscaled at socket (""
// means the platform's default).
func DaemonName(socket string) string {
	if socket == "" {
		return tailscaled.DefaultSocket()
	}
	return socket
}
