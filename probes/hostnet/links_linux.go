//go:build linux

package hostnet

import (
	"fmt"
	"net/netip"

	"github.com/jsimonetti/rtnetlink/v2"
	"golang.org/x/sys/unix"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// onLink are the neighbour states with a link-layer address: the
// neighbour answered on this link (reachable, or so recently: stale,
// delay, probe), or was set by hand (permanent). Incomplete and failed
// entries never got an answer.
const onLink = unix.NUD_REACHABLE | unix.NUD_STALE | unix.NUD_DELAY | unix.NUD_PROBE | unix.NUD_PERMANENT

// readLinks reads this host's interfaces and its neighbour table into h
// over one rtnetlink socket: one dump of the links, one of every address,
// one of the neighbours. (net.Interfaces and each interface's Addrs open a
// socket per call and dump every address of the host for each
// interface: on a NAS with a veth per container, dozens of dumps.)
func readLinks(h *probes.HostFacts) {
	c, err := rtnetlink.Dial(nil)
	if err != nil {
		setLinks(h, nil, err, nil, fmt.Errorf("neighbour table: %w", err))
		return
	}
	defer c.Close()
	ifs, ifErr := interfacesOf(c)
	nb, nbErr := neighborsOf(c)
	setLinks(h, ifs, ifErr, nb, nbErr)
}

// interfacesOf lists the interfaces that are up with their addresses, in
// the kernel's order, each address as net.Interface.Addrs gives it: an
// IPv4 or IPv6 address's local address (IFA_LOCAL, the point-to-point
// link's own end) where it has one, else IFA_ADDRESS, with its prefix
// length (net/interface_linux.go, newAddr).
func interfacesOf(c *rtnetlink.Conn) ([]probes.Interface, error) {
	links, err := c.Link.List()
	if err != nil {
		return nil, err
	}
	addrs, err := c.Address.List()
	if err != nil {
		return nil, err
	}
	byIndex := map[uint32][]netip.Prefix{}
	for _, a := range addrs {
		if a.Attributes == nil || (a.Family != unix.AF_INET && a.Family != unix.AF_INET6) {
			continue
		}
		raw := a.Attributes.Local
		if raw == nil {
			raw = a.Attributes.Address
		}
		ip, ok := netip.AddrFromSlice(raw)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if bits := int(a.PrefixLength); bits <= ip.BitLen() {
			byIndex[a.Index] = append(byIndex[a.Index], netip.PrefixFrom(ip, bits))
		}
	}
	var out []probes.Interface
	for _, l := range links {
		if l.Flags&unix.IFF_UP == 0 || l.Attributes == nil {
			continue
		}
		out = append(out, probes.Interface{
			Name:      safetext.New(l.Attributes.Name),
			Addrs:     byIndex[l.Index],
			Tailscale: IsTailscaleName(l.Attributes.Name),
			Bridge:    IsBridgeName(l.Attributes.Name),
		})
	}
	return out, nil
}

// neighborsOf reads this host's neighbour table (ARP and NDP,
// RTM_GETNEIGH): the addresses with a link-layer address.
func neighborsOf(c *rtnetlink.Conn) ([]netip.Addr, error) {
	msgs, err := c.Neigh.List()
	if err != nil {
		return nil, fmt.Errorf("neighbour table: %w", err)
	}
	var out []netip.Addr
	for _, m := range msgs {
		if m.State&onLink == 0 || m.Attributes == nil || len(m.Attributes.LLAddress) == 0 {
			continue
		}
		if a, ok := netip.AddrFromSlice(m.Attributes.Address); ok {
			out = append(out, a.Unmap())
		}
	}
	return out, nil
}
