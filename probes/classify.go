package probes

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/opt"

	"github.com/tailpath/tailpath/internal/safetext"
)

// RecentHandshake is how old a WireGuard handshake may be and still prove a
// peer is reachable (WireGuard re-handshakes every 2 minutes on a live
// session; one minute of slack).
const RecentHandshake = 3 * time.Minute

// OnlineState returns whether the peer is online as a tri-state, and the
// field that said so (Peer.OnlineSource). PeerStatus.Online is the current
// tailcfg.Node.Online flattened (nil and false both read false), so:
// ps.Online true means online ("Status.Online"); otherwise node (its WhoIs
// answer, possibly cached) tells nil ("control didn't say") from false
// ("WhoIs.Node.Online"); without node, a LastSeen (control fills it only
// for peers that are not online) means offline ("Status.LastSeen"), and
// anything else is unknown (nil, ""). Tailscale's test control server
// leaves Online unset unless its AllOnline is set (which marks every peer
// online, the stopped ones too), so the lab sets it per node itself.
func OnlineState(ps *ipnstate.PeerStatus, node *tailcfg.Node) (*bool, string) {
	if ps != nil && ps.Online {
		return boolp(true), "Status.Online"
	}
	if node != nil {
		if node.Online == nil {
			return nil, ""
		}
		return boolp(false), "WhoIs.Node.Online"
	}
	if ps != nil && !ps.LastSeen.IsZero() {
		return boolp(false), "Status.LastSeen"
	}
	return nil, ""
}

// Classify returns ps's current path in Tailscale's semantics:
//   - Active with CurAddr: PathDirect (Addr = CurAddr).
//   - Active with PeerRelay: PathPeerRelay.
//   - Active with neither: PathDERP via the peer's home region (Relay). Relay
//     alone never makes a path relayed: an idle peer has Relay set too.
//     But when online is explicitly false and there is no handshake within
//     RecentHandshake of now it is PathOffline: Active only says we sent
//     packets recently (a ping to an offline peer does that), not that
//     anything answered, so there is no relayed path to explain.
//   - not Active: PathOffline only when online is explicitly false and there
//     is no handshake within RecentHandshake of now; otherwise PathIdle.
//
// online is the tri-state from OnlineState (nil = unknown). Text is exactly
// what `tailscale status` (v1.102) prints for the peer before ", tx N rx N",
// including its "; offline" suffixes, which it derives from the flattened
// PeerStatus.Online. now is used for "last seen 3h ago". ps must be non-nil.
func Classify(ps *ipnstate.PeerStatus, online *bool, now time.Time) Path {
	var p Path
	switch {
	case ps.Active && ps.CurAddr != "":
		p.Kind = PathDirect
		if ap, err := netip.ParseAddrPort(ps.CurAddr); err == nil {
			p.Addr = ap
		}
	case ps.Active && ps.PeerRelay != "":
		p.Kind = PathPeerRelay
		p.PeerRelay = safetext.New(ps.PeerRelay)
	case ps.Active && !unreachable(ps, online, now):
		p.Kind = PathDERP
		p.DERPCode = safetext.New(ps.Relay)
	default:
		p.Kind = PathIdle
		if unreachable(ps, online, now) {
			p.Kind = PathOffline
		}
	}
	p.Text = StatusText(ps, now)
	return p
}

// unreachable: control says the peer is offline and no WireGuard handshake
// within RecentHandshake contradicts it.
func unreachable(ps *ipnstate.PeerStatus, online *bool, now time.Time) bool {
	return online != nil && !*online && !HandshakeRecent(ps.LastHandshake, now)
}

// HandshakeRecent reports whether t is a WireGuard handshake within
// RecentHandshake before now (zero is none).
func HandshakeRecent(t, now time.Time) bool {
	return !t.IsZero() && now.Sub(t) < RecentHandshake
}

// StatusText is the peer's status column as `tailscale status` v1.102
// prints it (cmd/tailscale/cli/status.go), without the ", tx N rx N" suffix:
// "active; direct 203.0.113.5:41641", `active; relay "tok"`,
// "active; peer-relay …", "idle", "idle; offers exit node", "-",
// "offline, last seen 3h ago", and "; offline…" suffixes when
// PeerStatus.Online is false. Outside strings in it are sanitised.
func StatusText(ps *ipnstate.PeerStatus, now time.Time) safetext.Text {
	var b strings.Builder
	var offline string
	if !ps.Online {
		offline = "; offline" + lastSeenFmt(ps.LastSeen, now)
	}
	anyTraffic := ps.TxBytes != 0 || ps.RxBytes != 0
	if !ps.Active {
		switch {
		case ps.ExitNode:
			b.WriteString("idle; exit node" + offline)
		case ps.ExitNodeOption:
			b.WriteString("idle; offers exit node" + offline)
		case anyTraffic:
			b.WriteString("idle" + offline)
		case !ps.Online:
			b.WriteString("offline" + lastSeenFmt(ps.LastSeen, now))
		default:
			b.WriteString("-")
		}
		return safetext.New(b.String())
	}
	b.WriteString("active; ")
	if ps.ExitNode {
		b.WriteString("exit node; ")
	} else if ps.ExitNodeOption {
		b.WriteString("offers exit node; ")
	}
	switch {
	case ps.Relay != "" && ps.CurAddr == "" && ps.PeerRelay == "":
		fmt.Fprintf(&b, "relay %q", safetext.Clean(ps.Relay)) // cleaned first: %q would spell an escape out
	case ps.CurAddr != "":
		b.WriteString("direct " + ps.CurAddr)
	case ps.PeerRelay != "":
		b.WriteString("peer-relay " + ps.PeerRelay)
	}
	if !ps.Online {
		b.WriteString(offline)
	}
	return safetext.New(b.String())
}

// lastSeenFmt mirrors the CLI's: ", last seen 5m ago", "3h", "2d"; "" when t is zero.
func lastSeenFmt(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := max(now.Sub(t), time.Minute)
	switch {
	case d < time.Hour:
		return fmt.Sprintf(", last seen %dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf(", last seen %dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf(", last seen %dd ago", int(d.Hours()/24))
	}
}

// ViaText is how `tailscale ping` names the path of one pong: "ip:port",
// "DERP(code)", "peer-relay(…)", or the ping type when nothing else is known
// (TSMP). The returned PathKind is "" when the path is unknown.
func ViaText(pr *ipnstate.PingResult, pingType tailcfg.PingType) (safetext.Text, PathKind) {
	switch {
	case pr.PeerRelay != "":
		return safetext.New("peer-relay(" + pr.PeerRelay + ")"), PathPeerRelay
	case pr.DERPRegionID != 0:
		return safetext.New("DERP(" + pr.DERPRegionCode + ")"), PathDERP
	case pr.Endpoint != "":
		return safetext.New(pr.Endpoint), PathDirect
	}
	return safetext.New(string(pingType)), ""
}

func boolp(b bool) *bool { return &b }

// OptBool reads tailcfg's opt.Bool text ("true", "false"; anything else,
// "" included, is unknown): nil when unknown. Gather, pasted netcheck
// output (probes/snapshot) and the lab's control API all read it so.
func OptBool(s string) *bool {
	if v, ok := opt.Bool(s).Get(); ok {
		return &v
	}
	return nil
}

// cleanString sanitises one outside string.
func cleanString(s string) string { return safetext.Clean(s) }
