package labtest

import (
	"fmt"
	"net/netip"

	"github.com/tailpath/tailpath/internal/tscompat"
)

// RegionAddrs are where a region of the infra's DERP map listens: its
// DERP server's TCP address (invalid for a STUN-only region) and its STUN
// server's UDP address.
type RegionAddrs struct {
	DERP, STUN netip.AddrPort
}

// Region returns where region id listens now.
func (in *Infra) Region(id int) (RegionAddrs, error) {
	r := in.DERPMap.Regions[tscompat.RegionID(id)]
	if r == nil || len(r.Nodes) == 0 {
		return RegionAddrs{}, fmt.Errorf("lab: no DERP region %d", id)
	}
	n := r.Nodes[0]
	ip, err := netip.ParseAddr(n.IPv4)
	if err != nil {
		return RegionAddrs{}, fmt.Errorf("lab: region %d: %w", id, err)
	}
	var a RegionAddrs
	if n.DERPPort > 0 {
		a.DERP = netip.AddrPortFrom(ip, uint16(n.DERPPort))
	}
	if n.STUNPort > 0 {
		a.STUN = netip.AddrPortFrom(ip, uint16(n.STUNPort))
	}
	return a, nil
}

// FrontRegion puts region id behind addr in the DERP map: its node's
// address (IPv4, host name, STUN test address) becomes addr, its ports
// stay, so every node reaches the region through whatever listens there
// (a DelayRelay forwarding those ports to the region's real address, from
// Region before the call). Call it before any node joins: the map is
// the one the control server hands out, read as it is.
func (in *Infra) FrontRegion(id int, addr netip.Addr) error {
	r := in.DERPMap.Regions[tscompat.RegionID(id)]
	if r == nil || !addr.Is4() {
		return fmt.Errorf("lab: cannot front region %d with %v", id, addr)
	}
	for _, n := range r.Nodes {
		n.IPv4, n.HostName, n.STUNTestIP = addr.String(), addr.String(), addr.String()
	}
	return nil
}

// RelayRoutes are the routes a DelayRelay on addr needs to front a
// region at a (FrontRegion): the same ports on addr, to a's.
func (a RegionAddrs) RelayRoutes(addr netip.Addr) []RelayRoute {
	var rs []RelayRoute
	if a.DERP.IsValid() {
		rs = append(rs, RelayRoute{Listen: netip.AddrPortFrom(addr, a.DERP.Port()), Target: a.DERP})
	}
	if a.STUN.IsValid() {
		rs = append(rs, RelayRoute{UDP: true, Listen: netip.AddrPortFrom(addr, a.STUN.Port()), Target: a.STUN})
	}
	return rs
}
