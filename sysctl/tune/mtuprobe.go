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
	// DefaultTunMTU is the MTU tailscaled gives tailscale0 unless told
	// otherwise (tstun's safeTUNMTU). It is also the least Tailscale
	// supports: 1280 is IPv6's minimum, and below it Linux removes IPv6
	// (the fd7a:115c:a1e0::/48 address, peerAPI over IPv6, Funnel) from the
	// interface (tailscale/tailscale#8219, #20739).
	DefaultTunMTU = 1280
	// MinTunMTU is the smallest tunnel MTU tailpath ever advises.
	MinTunMTU = DefaultTunMTU
	// SupportedWire is what a path must carry for Tailscale's smallest
	// supported tunnel packets: 1280 + 80 (tstun.SafeWireMTU).
	SupportedWire = MinTunMTU + TunnelOverhead
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
	// Clamp is the MSS clamp for the router on the path, when the path
	// carries less than SupportedWire; nil otherwise.
	Clamp *MSSClamp `json:"mss_clamp,omitempty"`
	// Trouble is true when full-size tunnel packets do not get through.
	Trouble bool `json:"trouble"`
	// BelowSupported is true when the path carries less than
	// SupportedWire: no tunnel MTU Tailscale supports fits it.
	BelowSupported bool `json:"below_supported,omitempty"`
}

// MSSClamp is the rule that keeps TCP segments through a router within a
// path that carries Wire bytes: MSS = Wire − 40 over IPv4 (20 IP + 20 TCP),
// Wire − 60 over IPv6. The rules lower larger MSS options in SYN and
// SYN-ACK packets the router forwards, and never raise a smaller one.
type MSSClamp struct {
	Wire int `json:"wire_bytes"`
	MSS4 int `json:"mss_ipv4"`
	MSS6 int `json:"mss_ipv6"`
	// NFT are the nft commands (a table of its own, so removing it is
	// `nft delete table inet tailpath_mss`); IPTables the iptables and
	// ip6tables equivalents.
	NFT      []string `json:"nft"`
	IPTables []string `json:"iptables"`
}

// ClampFor returns the MSS clamp for a path that carries wire bytes.
func ClampFor(wire int) MSSClamp {
	c := MSSClamp{Wire: wire, MSS4: wire - 40, MSS6: wire - 60}
	c.NFT = []string{
		"nft add table inet tailpath_mss",
		"nft add chain inet tailpath_mss forward '{ type filter hook forward priority mangle; }'",
		fmt.Sprintf("nft add rule inet tailpath_mss forward meta nfproto ipv4 tcp flags syn tcp option maxseg size gt %d tcp option maxseg size set %d", c.MSS4, c.MSS4),
		fmt.Sprintf("nft add rule inet tailpath_mss forward meta nfproto ipv6 tcp flags syn tcp option maxseg size gt %d tcp option maxseg size set %d", c.MSS6, c.MSS6),
	}
	c.IPTables = []string{
		fmt.Sprintf("iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss %d", c.MSS4),
		fmt.Sprintf("ip6tables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss %d", c.MSS6),
	}
	return c
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
// what full-size tunnel packets need) halving the gap to the byte. Each size gets Tries pings: tailscaled sends a ping bigger
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
	// that did not, to the byte, when it matters: below what full-size
	// tunnel packets need (then the clamp is computed from it).
	need := o.TunMTU + TunnelOverhead
	for firstBad > 0 && lastOK > 0 && lastOK < need && firstBad-lastOK > 1 {
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
	r.judge(o.TunMTU, firstBad)
	return r, nil
}

// tcpProbing is the host-side half of every MTU fix.
const tcpProbing = "set net.ipv4.tcp_mtu_probing=1 on this host (and the peer), so TCP inside the tunnel finds a segment size that passes"

// judge words what LargestWire means for a tunnel of tunMTU (firstBad is
// the smallest size that did not get through, 0 when none failed). It
// never advises a tunnel MTU below MinTunMTU.
func (r *MTUProbe) judge(tunMTU, firstBad int) {
	lastOK, need := r.LargestWire, tunMTU+TunnelOverhead
	switch {
	case lastOK < SupportedWire:
		r.Trouble, r.BelowSupported = true, true
		carries := fmt.Sprintf("carries %d bytes", lastOK)
		if lastOK == 0 {
			carries = fmt.Sprintf("does not carry even %d bytes (small pings go direct)", firstBad)
		}
		r.Verdict = fmt.Sprintf("MTU trouble: the direct path %s, below what Tailscale supports: its smallest tunnel packets need %d bytes on the wire (tunnel MTU %d, IPv6's minimum, + %d), and a lower tunnel MTU takes IPv6 off tailscale0; big packets are dropped and TCP through the tunnel crawls; sysctl buffers will not help",
			carries, SupportedWire, MinTunMTU, TunnelOverhead)
		wan := "correct the WAN MTU of the router on this path to what its link really carries"
		if lastOK >= MinTunMTU {
			wan += fmt.Sprintf(" (a WAN MTU of %d matches what this path carries)", lastOK)
		}
		wan += ": the router then answers big packets with \"fragmentation needed\" and this host's kernel fits tailscaled's packets to the path, instead of the path dropping them unseen"
		r.Fix = wan + "; or clamp TCP MSS on that router, which keeps TCP through it (tailscaled's control and DERP connections too) within the path; and " + tcpProbing
		if lastOK > 0 {
			c := ClampFor(lastOK)
			r.Clamp = &c
		}
	case lastOK < need:
		// A tunnel MTU raised above the default (TS_DEBUG_MTU): going back
		// toward 1280 is supported, and fits this path.
		r.Trouble = true
		r.Verdict = fmt.Sprintf("MTU trouble: the direct path carries %d bytes but tailscale0's %d-byte packets need %d on the wire (MTU %d + %d): they are dropped, and TCP through the tunnel crawls; sysctl buffers will not help",
			lastOK, tunMTU, need, tunMTU, TunnelOverhead)
		r.Fix = fmt.Sprintf("tailscale0's MTU %d was raised (TS_DEBUG_MTU): lower it to %d or less, or unset TS_DEBUG_MTU for the default %d (%d bytes on the wire, which this path carries); or %s",
			tunMTU, lastOK-TunnelOverhead, DefaultTunMTU, SupportedWire, tcpProbing)
	case tunMTU < MinTunMTU:
		// Fits, but only because the tunnel was shrunk below what
		// Tailscale supports: IPv6 is already off tailscale0.
		r.Verdict = fmt.Sprintf("tunnel too small: the direct path carries %d bytes, enough for the default tunnel, yet tailscale0 runs at %d bytes, below IPv6's 1280-byte minimum, so Linux has taken IPv6 (the fd7a:115c:a1e0::/48 address, peerAPI over IPv6, Funnel) off it",
			lastOK, tunMTU)
		r.Fix = "unset TS_DEBUG_MTU in tailscaled's environment and restart it, so tailscale0 gets the default 1280 back"
	default:
		more := ""
		switch {
		case r.Capped:
			more = " (the largest size probed; it may carry more)"
		case firstBad > 0:
			more = fmt.Sprintf(" (not %d)", firstBad)
		}
		r.Verdict = fmt.Sprintf("MTU fine: the direct path carries %d bytes%s, enough for tailscale0's %d-byte packets (%d on the wire); the MTU is not what slows this peer",
			lastOK, more, tunMTU, need)
	}
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
	if c := r.Clamp; c != nil {
		fmt.Fprintf(w, "MSS clamp for a path of %d bytes (MSS %d over IPv4, %d over IPv6), on the router, with nftables:\n", c.Wire, c.MSS4, c.MSS6)
		for _, l := range c.NFT {
			fmt.Fprintln(w, "  "+l)
		}
		fmt.Fprintln(w, "or with iptables:")
		for _, l := range c.IPTables {
			fmt.Fprintln(w, "  "+l)
		}
	}
}
