package paste

import (
	"context"
	"errors"
	"time"

	"github.com/tailpath/tailpath/probes/snapshot"
)

// ErrPeerUnnamed: a peer's pasted output names no node (no line of its
// own in a `tailscale status`), so it cannot be the peer's side of any
// path.
var ErrPeerUnnamed = errors.New("the peer's output names no node")

// ReadPeer reads one --peer-snapshot input: a snapshot saved on the peer
// (`tailpath status --save` there), or what the peer's own tailscale
// printed, pasted: its `tailscale status`, whose first line is the
// machine it ran on, with its `tailscale netcheck`, `tailscale version`
// and tailscaled's log lines (what status's "to settle" block asks of a
// peer: probes.SettlePeerSide). It returns that node's side and the file
// it was read as; ErrPeerUnnamed when pasted output holds no line of its
// own node. now dates pasted output that states no time (Parse).
func ReadPeer(ctx context.Context, raw Raw, now time.Time) (*snapshot.PeerSnapshot, *snapshot.File, error) {
	f, err := Parse([]Raw{raw}, now)
	if err != nil {
		return nil, nil, err
	}
	if f.Origin == snapshot.OriginPasted {
		st := f.Status
		if st == nil || st.Self == nil || (len(st.Self.TailscaleIPs) == 0 && st.Self.HostName == "" && st.Self.DNSName == "") {
			return nil, nil, ErrPeerUnnamed
		}
	}
	ps, err := snapshot.PeerSideOf(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	return ps, f, nil
}
