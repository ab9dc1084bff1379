package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Ping paths, as a DISCO pong reports them.
const (
	PongDirect    = "direct"
	PongPeerRelay = "peer-relay"
	PongDERP      = "derp"
)

// Pong is one DISCO pong: how it came back and when.
type Pong struct {
	// Path is PongDirect, PongPeerRelay or PongDERP.
	Path string
	// Via is the endpoint in tailscale ping's words ("203.0.113.5:41641",
	// "DERP(fra)", "peer-relay(…)").
	Via     string
	Latency time.Duration
}

// SizedPing sends one DISCO ping whose message is size bytes (0 means the
// smallest), as `tailscale ping --size` does through tailscaled's LocalAPI,
// and returns the pong. A timeout is an error matching
// context.DeadlineExceeded.
type SizedPing func(ctx context.Context, size int) (Pong, error)

// Wire overheads, bytes. A DISCO ping of size bytes is a UDP payload of
// size bytes: on the wire size + 28 over IPv4. A tunnel packet gets
// WireGuard's 32 bytes plus UDP and IP: Tailscale budgets 80 (the IPv6
// worst case) between the TUN MTU and the wire MTU.
const (
	discoIPv4Overhead = 20 + 8
	TunnelOverhead    = 80
	// DefaultTunMTU is the MTU tailscaled gives tailscale0 unless told otherwise.
	DefaultTunMTU = 1280
)

// MTUProbeWire are the on-the-wire sizes the probe climbs, as Tailscale's
// own path-MTU probing picks them (tstun.WireMTUsToProbe): the safe TUN
// MTU, that plus the tunnel overhead, common tunnel and Ethernet sizes,
// jumbo frames.
var MTUProbeWire = []int{1280, 1360, 1400, 1500, 8000, 9000}

// MTUTry is one size tried.
type MTUTry struct {
	// Wire is the packet size on the wire over IPv4, bytes; Size the DISCO
	// message size sent.
	Wire int `json:"wire_bytes"`
	Size int `json:"disco_bytes"`
	// Direct is true when a pong came back over the direct (or peer-relay)
	// UDP path; false when only DERP answered or nothing did.
	Direct bool   `json:"direct"`
	Via    string `json:"via,omitempty"`
	Err    string `json:"error,omitempty"`
}

// MTUProbe is the result of ProbeMTU.
type MTUProbe struct {
	Peer string `json:"peer"`
	// Relayed: even the smallest ping came back only through DERP, so there
	// is no UDP path whose MTU could be measured.
	Relayed bool `json:"relayed"`
	// Via is how the smallest ping came back.
	Via   string   `json:"via"`
	Tries []MTUTry `json:"tries"`
	// LargestWire is the largest packet (bytes on the wire, IPv4) that got
	// through the direct path; 0 when none did.
	LargestWire int `json:"largest_wire_bytes"`
	// Capped is true when the largest size probed got through: the path
	// may carry more.
	Capped bool `json:"capped,omitempty"`
	// TunMTU is the tunnel MTU judged against (tailscale0's, else 1280).
	TunMTU int `json:"tun_mtu"`
	// Verdict says what the sizes mean; Fix what to do about it.
	Verdict string `json:"verdict"`
	Fix     string `json:"fix,omitempty"`
	// Trouble is true when full-size tunnel packets do not get through.
	Trouble bool `json:"trouble"`
}

// MTUProbeOptions tune ProbeMTU.
type MTUProbeOptions struct {
	// TunMTU is this host's tailscale0 MTU; 0 means DefaultTunMTU.
	TunMTU int
	// Tries per size before calling it not direct; 0 means 6.
	Tries int
	// TryTimeout bounds one ping; 0 means 3 s.
	TryTimeout time.Duration
	// Progress, if set, gets a line per ping ("1400 bytes: direct 127.0.0.1:41641 in 1ms").
	Progress func(string)
}

// ProbeMTU finds the largest packet the direct UDP path to peer carries:
// a smallest ping first (through DERP only means the peer is relayed, and
// the probe stops there), then DISCO pings growing through MTUProbeWire
// until one size does not come back directly, then (when that is below
// what full-size tunnel packets need) halving the gap to 8 bytes. Each size gets Tries pings: tailscaled sends a ping bigger
// than the path is known to carry both through DERP and directly, and the
// first pong wins, so a DERP pong alone is tried again. Errors: ping's
// errors when nothing answers at all, ctx's.
func ProbeMTU(ctx context.Context, peer string, ping SizedPing, o MTUProbeOptions) (MTUProbe, error) {
	if o.TunMTU <= 0 {
		o.TunMTU = DefaultTunMTU
	}
	if o.Tries <= 0 {
		o.Tries = 6
	}
	if o.TryTimeout <= 0 {
		o.TryTimeout = 3 * time.Second
	}
	r := MTUProbe{Peer: peer, TunMTU: o.TunMTU}
	try := func(wire int) (MTUTry, error) {
		t := MTUTry{Wire: wire}
		if wire > 0 {
			t.Size = wire - discoIPv4Overhead
		}
		var last error
		for i := 0; i < o.Tries; i++ {
			tctx, cancel := context.WithTimeout(ctx, o.TryTimeout)
			p, err := ping(tctx, t.Size)
			cancel()
			if ctx.Err() != nil {
				return t, ctx.Err()
			}
			label := fmt.Sprintf("%d bytes", wire)
			if wire == 0 {
				label = "smallest ping"
			}
			if err != nil {
				last = err
				t.Err = err.Error()
				if o.Progress != nil {
					o.Progress(fmt.Sprintf("%s: %v", label, err))
				}
				continue
			}
			t.Via, t.Err = p.Via, ""
			if o.Progress != nil {
				o.Progress(fmt.Sprintf("%s: %s %s in %s", label, p.Path, p.Via, roundDur(p.Latency)))
			}
			if p.Path == PongDirect || p.Path == PongPeerRelay {
				t.Direct = true
				return t, nil
			}
		}
		if t.Via == "" && last != nil {
			return t, last
		}
		return t, nil
	}

	base, err := try(0)
	if err != nil && base.Via == "" {
		return r, fmt.Errorf("no pong from %s at all: %w", peer, err)
	}
	r.Via = base.Via
	if !base.Direct {
		r.Relayed = true
		r.Verdict = fmt.Sprintf("relayed: even the smallest ping came back only via %s, so there is no direct UDP path whose MTU could be measured; DERP carries the tunnel over TCP, so the MTU is not what limits this peer, the relay is", base.Via)
		r.Fix = "see why the path is relayed (tailpath status, or the Peers pane), and fix that first"
		return r, nil
	}
	lastOK, firstBad := 0, 0
	for _, wire := range MTUProbeWire {
		t, err := try(wire)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return r, err
		}
		r.Tries = append(r.Tries, t)
		if !t.Direct {
			firstBad = wire
			break
		}
		lastOK = wire
	}
	// Below the first rung: does the IPv4 minimum (576) get through?
	if firstBad > 0 && lastOK == 0 {
		t, err := try(576)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return r, err
		}
		r.Tries = append(r.Tries, t)
		if t.Direct {
			lastOK = 576
		} else {
			firstBad = 576
		}
	}
	// Narrow the gap between the last size that got through and the first
	// that did not, to 8 bytes, when it matters: below what full-size
	// tunnel packets need.
	need := o.TunMTU + TunnelOverhead
	for firstBad > 0 && lastOK > 0 && lastOK < need && firstBad-lastOK > 8 {
		mid := (lastOK + firstBad) / 2
		t, err := try(mid)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return r, err
		}
		r.Tries = append(r.Tries, t)
		if t.Direct {
			lastOK = mid
		} else {
			firstBad = mid
		}
	}
	r.LargestWire = lastOK
	r.Capped = firstBad == 0
	switch {
	case lastOK == 0:
		r.Trouble = true
		r.Verdict = fmt.Sprintf("MTU trouble: small pings go direct but not even a %d-byte packet does; the path drops big packets", firstBad)
		r.Fix = "fix the path's MTU (a VPN or PPPoE link on the way); until then tailscaled falls back to DERP for big packets"
	case lastOK < need:
		r.Trouble = true
		tun := lastOK - TunnelOverhead
		r.Verdict = fmt.Sprintf("MTU trouble: the direct path carries %d bytes but full-size tunnel packets need %d (tailscale0 MTU %d + %d): they are dropped, and TCP through the tunnel crawls; sysctl buffers will not help",
			lastOK, need, o.TunMTU, TunnelOverhead)
		r.Fix = fmt.Sprintf("start tailscaled with TS_DEBUG_MTU=%d on this host (and the peer), or ip link set tailscale0 mtu %d; or set net.ipv4.tcp_mtu_probing=1 so TCP finds the size by itself", max(tun, 576), max(tun, 576))
	default:
		more := ""
		switch {
		case r.Capped:
			more = " (the largest size probed; it may carry more)"
		case firstBad > 0:
			more = fmt.Sprintf(" (not %d)", firstBad)
		}
		r.Verdict = fmt.Sprintf("MTU fine: the direct path carries %d bytes%s, enough for tailscale0's %d-byte packets (%d on the wire); the MTU is not what slows this peer",
			lastOK, more, o.TunMTU, need)
	}
	return r, nil
}

// WriteText prints the probe for a terminal.
func (r MTUProbe) WriteText(w io.Writer) {
	fmt.Fprintf(w, "MTU probe to %s (DISCO pings through tailscaled, like tailscale ping --size)\n", r.Peer)
	fmt.Fprintf(w, "  smallest ping: via %s\n", r.Via)
	for _, t := range r.Tries {
		res := "direct via " + t.Via
		switch {
		case !t.Direct && t.Via != "":
			res = "NOT direct (only " + t.Via + " answered)"
		case !t.Direct:
			res = "no answer"
		}
		fmt.Fprintf(w, "  %5d bytes on the wire (%d-byte ping): %s\n", t.Wire, t.Size, res)
	}
	if r.LargestWire > 0 {
		fmt.Fprintf(w, "largest packet through the direct path: %d bytes\n", r.LargestWire)
	}
	fmt.Fprintln(w, r.Verdict)
	if r.Fix != "" {
		fmt.Fprintln(w, "do: "+r.Fix)
	}
}
