//go:build !linux

package tune

import (
	"errors"
	"runtime"
)

// errNoEthtool says interface features are read on Linux only.
var errNoEthtool = errors.New("interface offloads are read on Linux only (ethtool); this is " + runtime.GOOS)

// liveFeatures is Linux only.
func liveFeatures(string) (map[string]bool, error) { return nil, errNoEthtool }

// liveUDPGRO is Linux only.
func liveUDPGRO(string, string) GROCheck {
	return GROCheck{By: "tailscale.com/net/netkernelconf.CheckUDPGROForwarding", Err: errNoEthtool.Error()}
}
