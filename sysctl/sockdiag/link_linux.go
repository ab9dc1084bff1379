package sockdiag

import (
	"fmt"
	"net"

	"github.com/jsimonetti/rtnetlink/v2"
	"golang.org/x/sys/unix"
)

// LinkInfo returns the attributes of interface name (MTU, qdisc, drops).
// Errors: ErrNoLink when it does not exist.
func LinkInfo(name string) (Link, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return Link{}, fmt.Errorf("%s: %w (tailscaled not running, or running in userspace-networking mode)", name, ErrNoLink)
	}
	c, err := rtnetlink.Dial(nil)
	if err != nil {
		return Link{}, fmt.Errorf("rtnetlink: %w", err)
	}
	defer c.Close()
	m, err := c.Link.Get(uint32(ifi.Index))
	if err != nil {
		return Link{}, fmt.Errorf("rtnetlink: get link %s: %w", name, err)
	}
	l := Link{Name: name, Index: m.Index, Up: m.Flags&unix.IFF_UP != 0}
	if a := m.Attributes; a != nil {
		l.MTU = a.MTU
		l.Qdisc = a.QueueDisc
		if s := a.Stats64; s != nil {
			l.RxPackets, l.TxPackets = s.RXPackets, s.TXPackets
			l.RxDropped, l.TxDropped = s.RXDropped, s.TXDropped
		} else if s := a.Stats; s != nil {
			l.RxPackets, l.TxPackets = uint64(s.RXPackets), uint64(s.TXPackets)
			l.RxDropped, l.TxDropped = uint64(s.RXDropped), uint64(s.TXDropped)
		}
	}
	return l, nil
}
