package tune

import (
	"context"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// PeerPath is the path to one peer as tailscaled reports it, with its
// verdict from tailpath's rule table (probes.Judge), for tune to say
// before any arithmetic when it is relayed. The command fills it through
// Inputs.PeerPath (internal/app.TunePeerPath over the LocalAPI), so this
// package never imports probes/tailscaled.
type PeerPath struct {
	// Peer is the peer's name; Chosen says why this one ("--peer", or
	// "the busiest peer: most bytes sent and received since tailscaled
	// started").
	Peer   safetext.Text `json:"peer"`
	Chosen string        `json:"chosen"`
	// Kind is the path's kind in probes' words: "direct", "peer-relay",
	// "relay" (DERP), "idle", "offline", "unknown".
	Kind string `json:"kind"`
	// Text is the path as `tailscale status` words it (`active; relay
	// "fra"`).
	Text safetext.Text `json:"text"`
	// Reason, Summary and Fix are the rule table's verdict on the path.
	Reason  safetext.Text `json:"reason,omitempty"`
	Summary safetext.Text `json:"summary,omitempty"`
	Fix     safetext.Text `json:"fix,omitempty"`
}

// PathTimeout bounds asking tailscaled for the path (a whole gather of
// the tailnet, as tailpath status does).
const PathTimeout = 5 * time.Second

// PathDERP is PeerPath.Kind for a path relayed through DERP
// (probes.PathDERP).
const PathDERP = "relay"

// Relayed reports whether the path goes through a DERP server.
func (p *PeerPath) Relayed() bool { return p != nil && p.Kind == PathDERP }

// peerPath asks in.PeerPath for the peer named by --peer, or the busiest.
func (r *Report) peerPath(ctx context.Context, in Inputs) {
	if in.PeerPath == nil {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, PathTimeout)
	defer cancel()
	p, err := in.PeerPath(dctx, in.Peer)
	if err != nil {
		r.PathErr = safetext.Of(err)
		return
	}
	r.Path = &p
}
