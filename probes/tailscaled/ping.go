package tailscaled

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// pingGap is the pause between pings that did not go direct, and
// pingTryTimeout bounds one ping (`tailscale ping --timeout 5s`); vars for tests.
var (
	pingGap        = time.Second
	pingTryTimeout = 5 * time.Second
)

// Ping runs `tailscale ping`'s loop against peer's first Tailscale IP (IPv4
// preferred) and calls emit (from the calling goroutine) once per try:
//
//   - PingDISCO: ping until a pong comes over a direct UDP path, at most
//     maxTries times (≤0 means DefaultPingTries) and maxTime in total (≤0
//     means DefaultPingTime), one second apart; each pong reports Latency and
//     Via ("203.0.113.5:41641", "DERP(tok)", "peer-relay(…)"). A try that
//     times out (5 s) reports Err "timeout" and the loop goes on.
//   - PingTSMP: one ping through WireGuard. If it times out the only
//     result has Done and Err "timeout", and Ping returns ErrNoReply.
//
// The last PingResult has Done set; when a DISCO run got no direct pong it
// is an extra result with Err "direct connection not established" and Ping
// returns ErrNoDirect. A LocalAPI failure or a ping error from the daemon (pr.Err)
// ends the run with Done and returns the error (through ConnectError).
// Cancelling ctx ends the run and returns ctx.Err(). emit may be nil.
func Ping(ctx context.Context, c LocalClient, peer probes.Peer, kind probes.PingKind, maxTries int, maxTime time.Duration, emit func(probes.PingResult)) error {
	return PingWith(ctx, c, peer, kind, PingOptions{Tries: maxTries, Time: maxTime}, emit)
}

// PingOptions bound a PingWith run; zero values take Ping's defaults.
type PingOptions struct {
	// Tries is the most pings (DefaultPingTries); Time bounds the run
	// (DefaultPingTime).
	Tries int
	Time  time.Duration
	// Gap is the pause between pings that did not go direct (1 s, as
	// `tailscale ping`); TryTimeout bounds one ping (5 s).
	Gap, TryTimeout time.Duration
	// Finish lets a ping still out when Time ends wait for its answer up
	// to TryTimeout: Time then stops new pings, not one on its way, so a
	// run's last ping is answered or times out on its own, never cut off
	// by the run's end. Only ctx cuts one off (Err "cancelled").
	Finish bool
}

// PingWith is Ping with its bounds set (the bounded probe of `status
// --probe` pings faster and waits less per ping than `tailscale ping`).
func PingWith(ctx context.Context, c LocalClient, peer probes.Peer, kind probes.PingKind, o PingOptions, emit func(probes.PingResult)) error {
	if emit == nil {
		emit = func(probes.PingResult) {}
	}
	maxTries, maxTime := o.Tries, o.Time
	if maxTries <= 0 {
		maxTries = probes.DefaultPingTries
	}
	if maxTime <= 0 {
		maxTime = probes.DefaultPingTime
	}
	gap, tryTimeout := o.Gap, o.TryTimeout
	if gap <= 0 {
		gap = pingGap
	}
	if tryTimeout <= 0 {
		tryTimeout = pingTryTimeout
	}
	var ptype tailcfg.PingType
	switch kind {
	case probes.PingDISCO, "":
		kind, ptype = probes.PingDISCO, tailcfg.PingDisco
	case probes.PingTSMP:
		ptype, maxTries = tailcfg.PingTSMP, 1
	default:
		err := fmt.Errorf("ping %s: unknown ping kind %q (want %q or %q)", peer.Name, kind, probes.PingDISCO, probes.PingTSMP)
		emit(probes.PingResult{PeerID: peer.ID, Kind: kind, Try: 1, Done: true, Err: safetext.Of(err)})
		return err
	}
	ip, ok := pingAddr(peer)
	if !ok {
		err := fmt.Errorf("ping %s: peer has no Tailscale IP", peer.Name)
		emit(probes.PingResult{PeerID: peer.ID, Kind: kind, Try: 1, Done: true, Err: safetext.Of(err)})
		return err
	}
	parent := ctx
	outer, cancel := context.WithTimeout(ctx, maxTime)
	defer cancel()

	// A try's own deadline: under the run's (outer), or with Finish only
	// under ctx, so the run's end does not cut off a ping on its way.
	tryParent := outer
	if o.Finish {
		tryParent = parent
	}
	for try := 1; ; try++ {
		last := try >= maxTries
		tctx, tcancel := context.WithTimeout(tryParent, tryTimeout)
		pr, err := c.Ping(tctx, ip, ptype)
		timedOut := tctx.Err() != nil && tryParent.Err() == nil
		tcancel()
		res := probes.PingResult{PeerID: peer.ID, Kind: kind, Try: try}
		switch {
		case err != nil && parent.Err() != nil:
			res.Done, res.Err = true, "cancelled"
			emit(res)
			return parent.Err()
		case err != nil && !o.Finish && outer.Err() != nil:
			res.Done, res.Err = true, "timeout"
			emit(res)
			if kind == probes.PingDISCO {
				return probes.ErrNoDirect
			}
			return outer.Err()
		case err != nil && timedOut && kind == probes.PingTSMP:
			res.Done, res.Err = true, "timeout"
			emit(res)
			return probes.ErrNoReply
		case err != nil && timedOut:
			res.Err = "timeout"
		case err != nil:
			err = ConnectError(err, socketOf(c))
			res.Done, res.Err = true, safetext.Of(err)
			emit(res)
			return err
		case pr == nil:
			err = ConnectError(&jsonSyntaxError{errors.New("empty ping reply")}, socketOf(c))
			res.Done, res.Err = true, safetext.Of(err)
			emit(res)
			return err
		case pr.Err != "":
			res.Done, res.Err = true, safetext.New(pr.Err)
			emit(res)
			return errors.New(string(res.Err))
		default:
			res.Latency = time.Duration(pr.LatencySeconds * float64(time.Second))
			res.Via, res.Path = probes.ViaText(pr, ptype)
			if kind == probes.PingTSMP || res.Path == probes.PathDirect {
				res.Done = true
				emit(res)
				return nil
			}
		}
		emit(res)
		if last {
			emit(probes.PingResult{PeerID: peer.ID, Kind: kind, Try: try, Done: true, Err: safetext.Of(probes.ErrNoDirect)})
			return probes.ErrNoDirect
		}
		select {
		case <-outer.Done():
			if parent.Err() != nil {
				emit(probes.PingResult{PeerID: peer.ID, Kind: kind, Try: try, Done: true, Err: "cancelled"})
				return parent.Err()
			}
			emit(probes.PingResult{PeerID: peer.ID, Kind: kind, Try: try, Done: true, Err: safetext.Of(probes.ErrNoDirect)})
			return probes.ErrNoDirect
		case <-time.After(gap):
		}
	}
}

func pingAddr(p probes.Peer) (netip.Addr, bool) {
	for _, a := range p.TailscaleIPs {
		if a.Is4() {
			return a, true
		}
	}
	if len(p.TailscaleIPs) > 0 && p.TailscaleIPs[0].IsValid() {
		return p.TailscaleIPs[0], true
	}
	return netip.Addr{}, false
}
