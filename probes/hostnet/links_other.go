//go:build !linux

package hostnet

import (
	"fmt"
	"net"
	"net/netip"
	"runtime"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// neighbors is Linux only: the neighbour table is read over rtnetlink.
func neighbors() ([]netip.Addr, error) {
	return nil, fmt.Errorf("reading the neighbour table is Linux only, not %s", runtime.GOOS)
}

// readLinks reads the interfaces into h with the standard library
// (net.Interfaces); the neighbour table is Linux only.
func readLinks(h *probes.HostFacts) {
	ifs, err := interfaces()
	nb, nbErr := neighbors()
	setLinks(h, ifs, err, nb, nbErr)
}

// interfaces lists the interfaces that are up, with their addresses,
// marking tailscaled's own tunnel by name and container or VM bridges.
func interfaces() ([]probes.Interface, error) {
	nifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []probes.Interface
	for _, ni := range nifs {
		if ni.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ni.Addrs()
		if err != nil {
			continue
		}
		ifc := probes.Interface{Name: safetext.New(ni.Name)}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ones, _ := ipn.Mask.Size()
			p := netip.PrefixFrom(ip.Unmap(), ones)
			ifc.Addrs = append(ifc.Addrs, p)
		}
		ifc.Tailscale = IsTailscaleName(ni.Name)
		ifc.Bridge = IsBridgeName(ni.Name)
		out = append(out, ifc)
	}
	return out, nil
}
