package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"

	"tailscale.com/client/local"

	"github.com/tailpath/tailpath/probes/localapi"
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
	lc := localapi.NewClient(socket)
	if runtime.GOOS == "linux" {
		path := DaemonName(socket)
		lc = &local.Client{Socket: path, UseSocketOnly: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}}
	}
	return func(ctx context.Context) (bool, error) {
		st, err := lc.StatusWithoutPeers(ctx)
		if err != nil {
			err = localapi.ConnectError(err, socket)
			if errors.Is(err, localapi.ErrNotRunning) {
				return false, fmt.Errorf("nothing answers on its socket (%w)", localapi.ErrNotRunning)
			}
			return false, err
		}
		return st.TUN, nil
	}
}

// DaemonName is how tune's evidence names the tailscaled at socket (""
// means the platform's default).
func DaemonName(socket string) string {
	if socket == "" {
		return localapi.DefaultSocket()
	}
	return socket
}
