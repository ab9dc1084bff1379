package app

import (
	"context"
	"errors"
	"fmt"

	"tailscale.com/ipn/ipnstate"

	"github.com/tailpath/tailpath/probes"
)

// DaemonTUN asks the tailscaled behind c whether it runs with a kernel TUN:
// LocalAPI's Status.TUN, which tailscaled sets to !IsNetstack
// (ipnlocal.LocalBackend.updateStatusLocked), so false means
// --tun=userspace-networking. It asks without the peer list where the
// client can. It is tune.Inputs.DaemonTUN for `tailpath tune`, the
// dashboard's Tuning pane and `tailpath serve`.
func DaemonTUN(c probes.LocalClient, socket string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		var st *ipnstate.Status
		var err error
		if lc, ok := c.(interface {
			StatusWithoutPeers(context.Context) (*ipnstate.Status, error)
		}); ok {
			st, err = lc.StatusWithoutPeers(ctx)
		} else {
			st, err = c.Status(ctx)
		}
		if err != nil {
			err = probes.ConnectError(err, socket)
			if errors.Is(err, probes.ErrNotRunning) {
				return false, fmt.Errorf("nothing answers on its socket (%w)", probes.ErrNotRunning)
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
		return probes.DefaultSocket()
	}
	return socket
}
