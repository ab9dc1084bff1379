// Package hostnet reads the facts of the host tailpath runs on that the
// diagnosis weighs beside tailscaled's own (probes.HostFacts): its network
// interfaces and their addresses, and, on Linux, what its nftables
// ruleset does with inbound UDP to tailscaled's port (probes/firewall).
// They are tailscaled's host's facts when both run on one machine, which
// the diagnosis checks (one of tailscaled's endpoints must be on an
// interface here). Read-only; no Bubble Tea.
package hostnet

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/firewall"
)

// Start reads this host's facts for self (tailscaled's view of this node,
// which says which addresses and port are its own): the interfaces that
// are up, the neighbour table (Linux: who is on one link with this
// host), and the firewall's verdict for inbound UDP to tailscaled's port
// (Linux; nil elsewhere or when the port is unknown). They never fail:
// what cannot be read is said in the facts.
//
// It makes the reads, none of which needs self (the interfaces, the
// neighbour table, the ruleset; each a netlink dump or a few, under a
// millisecond), on the calling goroutine, so in its thread's network
// namespace (a caller that moved its thread into another namespace reads
// that namespace's host), and returns the function that finishes the
// facts for self: which interface is tailscaled's tunnel, its port and
// the firewall's verdict for it (no I/O). A gather calls Start while its
// Status request is in flight, and the finish once Status has named
// self (GatherOptions.Host), so the reads cost it no time.
func Start(ctx context.Context) func(self probes.Self) *probes.HostFacts {
	h := &probes.HostFacts{At: time.Now()}
	readLinks(h)
	// The ruleset is read whatever the port; judged only when one is
	// known.
	rs := firewall.ReadRuleset()
	return func(self probes.Self) *probes.HostFacts {
		h.Interfaces = markTailscale(h.Interfaces, self.TailscaleIPs)
		if port := Port(self.Endpoints, h.Interfaces); port != 0 && ctx.Err() == nil {
			res, err := rs.InboundUDP(port)
			if !errors.Is(err, firewall.ErrNotSupported) {
				h.Firewall = &probes.FirewallFacts{Port: port, Verdict: string(res.Verdict), Stateful: res.Stateful, Why: safetext.New(res.Why)}
			}
		}
		return h
	}
}

// Reader returns a GatherOptions.Host function that reads at most once
// every maxAge (a dashboard gathers every 2 s; the interfaces and the
// ruleset change rarely), reading again at once when tailscaled's port
// or addresses change. It reads as the gather begins (beside Status) only
// when the last facts are older than maxAge.
func Reader(maxAge time.Duration) func(context.Context) func(probes.Self) *probes.HostFacts {
	var mu sync.Mutex
	var last *probes.HostFacts
	var lastKey string
	return func(ctx context.Context) func(probes.Self) *probes.HostFacts {
		mu.Lock()
		stale := last == nil || time.Since(last.At) >= maxAge
		mu.Unlock()
		var finish func(probes.Self) *probes.HostFacts
		if stale {
			finish = Start(ctx)
		}
		return func(self probes.Self) *probes.HostFacts {
			key := keyOf(self)
			mu.Lock()
			defer mu.Unlock()
			if last != nil && key == lastKey && time.Since(last.At) < maxAge {
				return last
			}
			if finish == nil {
				// Fresh when the gather began; tailscaled's port or
				// addresses changed since.
				finish = Start(ctx)
			}
			last, lastKey = finish(self), key
			return last
		}
	}
}

func keyOf(self probes.Self) string {
	var b strings.Builder
	for _, ep := range self.Endpoints {
		b.WriteString(ep.String() + " ")
	}
	for _, ip := range self.TailscaleIPs {
		b.WriteString(ip.String() + " ")
	}
	return b.String()
}

// setLinks records what readLinks read: the interfaces (or why not) and
// the neighbour table (or why not).
func setLinks(h *probes.HostFacts, ifs []probes.Interface, ifErr error, nb []netip.Addr, nbErr error) {
	h.Interfaces = ifs
	if ifErr != nil {
		h.InterfacesErr = safetext.New(ifErr.Error())
	}
	if nbErr != nil {
		h.NeighborsErr = safetext.New(nbErr.Error())
	} else {
		h.Neighbors, h.NeighborsRead = nb, true
	}
}

// markTailscale marks the interfaces that hold one of tailscaled's
// addresses as its tunnel (interfaces marks those named so).
func markTailscale(ifs []probes.Interface, tailnetIPs []netip.Addr) []probes.Interface {
	for i := range ifs {
		for _, p := range ifs[i].Addrs {
			if slices.Contains(tailnetIPs, p.Addr()) {
				ifs[i].Tailscale = true
			}
		}
	}
	return ifs
}

// IsTailscaleName reports whether an interface name is tailscaled's own
// tunnel's (tailscale0, a macOS utun, Windows' "Tailscale").
func IsTailscaleName(name string) bool {
	return strings.HasPrefix(name, "tailscale") || strings.HasPrefix(name, "utun") || name == "Tailscale"
}

// bridgePrefixes name container and VM bridges: their addresses are no
// LAN and no sign of a NAT in front of the host.
var bridgePrefixes = []string{"docker", "br-", "virbr", "cni", "podman", "lxdbr", "lxcbr", "incusbr", "flannel", "vmnet", "vboxnet"}

// IsBridgeName reports whether an interface name is a container or VM
// bridge's.
func IsBridgeName(name string) bool {
	for _, p := range bridgePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Port is tailscaled's UDP port: that of an endpoint whose address is on
// one of this host's interfaces (magicsock advertises its interface
// addresses with the port it is bound to), else of its first public
// endpoint (a STUN mapping keeps the port on a host with no NAT); 0 when
// neither exists.
func Port(eps []netip.AddrPort, ifs []probes.Interface) uint16 {
	for _, ep := range eps {
		for _, ifc := range ifs {
			if ifc.Tailscale {
				continue
			}
			for _, p := range ifc.Addrs {
				if p.Addr() == ep.Addr().Unmap() && !p.Addr().IsLoopback() {
					return ep.Port()
				}
			}
		}
	}
	for _, ep := range eps {
		if !probes.IsPrivateAddr(ep.Addr()) {
			return ep.Port()
		}
	}
	return 0
}
