package tune

import (
	"fmt"

	"github.com/safchain/ethtool"
	"tailscale.com/net/netkernelconf"
)

// liveFeatures reads an interface's features with ethtool's ioctl
// (SIOCETHTOOL ETHTOOL_GFEATURES, through github.com/safchain/ethtool, the
// library Tailscale's netkernelconf uses).
func liveFeatures(name string) (map[string]bool, error) {
	e, err := ethtool.NewEthtool()
	if err != nil {
		return nil, fmt.Errorf("ethtool: %w", err)
	}
	defer e.Close()
	f, err := e.Features(name)
	if err != nil {
		return nil, fmt.Errorf("ethtool features of %s: %w", name, err)
	}
	return f, nil
}

// liveUDPGRO runs Tailscale's own check, the one behind tailscaled's
// "UDP GRO forwarding is suboptimally configured" warning.
func liveUDPGRO(tun, wan string) GROCheck {
	g := GROCheck{By: "tailscale.com/net/netkernelconf.CheckUDPGROForwarding"}
	warn, err := netkernelconf.CheckUDPGROForwarding(tun, wan)
	switch {
	case err != nil:
		g.Err = err.Error()
	case warn != nil:
		g.Suboptimal, g.Warning = true, warn.Error()
	default:
		// It passes both when the setting is right and when it does not
		// apply; the features say which.
		if f, err := liveFeatures(tun); err == nil && !f[FeatTUNUDPSeg] {
			_, known := f[FeatTUNUDPSeg]
			g.NotApplicable = noTUNUDPSeg(tun, known)
		} else if f, err := liveFeatures(wan); err == nil {
			if _, ok := f[FeatUDPGROForwarding]; !ok {
				g.NotApplicable = wan + " has no " + FeatUDPGROForwarding + " feature to turn on"
			}
		}
	}
	return g
}
