//go:build linux

package hostnet

import (
	"fmt"
	"net/netip"

	"github.com/jsimonetti/rtnetlink/v2"
	"golang.org/x/sys/unix"
)

// onLink are the neighbour states with a link-layer address: the
// neighbour answered on this link (reachable, or so recently: stale,
// delay, probe), or was set by hand (permanent). Incomplete and failed
// entries never got an answer.
const onLink = unix.NUD_REACHABLE | unix.NUD_STALE | unix.NUD_DELAY | unix.NUD_PROBE | unix.NUD_PERMANENT

// neighbors reads this host's neighbour table (ARP and NDP, RTM_GETNEIGH
// over rtnetlink): the addresses with a link-layer address.
func neighbors() ([]netip.Addr, error) {
	c, err := rtnetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("neighbour table: %w", err)
	}
	defer c.Close()
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
