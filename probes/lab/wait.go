package lab

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"tailscale.com/ipn/ipnstate"
)

// pollEvery is how often the Wait helpers poll the observer's Status.
const pollEvery = 100 * time.Millisecond

// WaitPeers waits until the observer lists every lab peer. It fails with
// ctx's error, naming the missing peers.
func (l *Lab) WaitPeers(ctx context.Context) error {
	var missing []string
	for {
		st, err := l.observerLC.Status(ctx)
		if err == nil {
			missing = missing[:0]
			for _, p := range l.peers {
				if FindPeer(st, p.Name) == nil {
					missing = append(missing, p.Name)
				}
			}
			if len(missing) == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lab: observer still lacks peers %v: %w", missing, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// WaitFor polls the observer's status of peer name until cond holds on two
// polls in a row (100 ms apart), and returns that status. what names the
// awaited state in the error, which wraps ctx's error on timeout.
func (l *Lab) WaitFor(ctx context.Context, name, what string, cond func(*ipnstate.PeerStatus) bool) (*ipnstate.PeerStatus, error) {
	held := 0
	var last *ipnstate.PeerStatus
	for {
		ps, err := l.PeerStatus(ctx, name)
		if err == nil {
			last = ps
			if cond(ps) {
				held++
				if held >= 2 {
					return ps, nil
				}
			} else {
				held = 0
			}
		}
		select {
		case <-ctx.Done():
			seen := "not listed"
			if last != nil {
				seen = fmt.Sprintf("active=%v curaddr=%q peerrelay=%q relay=%q", last.Active, last.CurAddr, last.PeerRelay, last.Relay)
			}
			return nil, fmt.Errorf("lab: waiting for %s to be %s (last seen %s): %w", name, what, seen, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// WaitDirect waits until the observer has a trusted direct UDP path to
// peer name (PeerStatus.CurAddr set) and returns that ip:port.
func (l *Lab) WaitDirect(ctx context.Context, name string) (netip.AddrPort, error) {
	ps, err := l.WaitFor(ctx, name, "direct", func(ps *ipnstate.PeerStatus) bool {
		return ps.Active && ps.CurAddr != ""
	})
	if err != nil {
		return netip.AddrPort{}, err
	}
	ap, err := netip.ParseAddrPort(ps.CurAddr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("lab: %s CurAddr %q: %w", name, ps.CurAddr, err)
	}
	return ap, nil
}

// WaitRelay waits until the observer sends to peer name through DERP
// (Active, CurAddr and PeerRelay empty) and returns the DERP region code.
func (l *Lab) WaitRelay(ctx context.Context, name string) (string, error) {
	ps, err := l.WaitFor(ctx, name, "relayed", func(ps *ipnstate.PeerStatus) bool {
		return ps.Active && ps.CurAddr == "" && ps.PeerRelay == "" && ps.Relay != ""
	})
	if err != nil {
		return "", err
	}
	return ps.Relay, nil
}
