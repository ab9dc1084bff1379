package app

import (
	"bytes"
	"context"
	"net/netip"
	"slices"
	"time"

	"github.com/tailpath/tailpath/probes/hostnet"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// SaveTimeout bounds one snapshot (a gather, and the tuning report): the
// dashboard's S, serve's /snapshot.json.
const SaveTimeout = 15 * time.Second

// SnapshotFile is `tailpath serve`'s /snapshot.json: a fresh capture of
// this node in the format of `tailpath status --save` (probes/snapshot,
// readable by `status --from` and `--peer-snapshot` on another machine),
// carrying in.Latest's history, board and path changes and WhoIs answers
// (snapshot.Options.ReuseWhoIs: no WhoIs per peer), the control API's
// facts of this node's netmap peers when s.ControlAPI is set (never of the
// devices its ACLs hide from it), and in.Tuning; then scrubbed
// (snapshot.Scrub: no keys, no log ids, nothing renamed). Errors are
// Capture's, with the socket named (tailscaled.ConnectError).
func (s *Serve) SnapshotFile(ctx context.Context, in SnapshotInput) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, SaveTimeout)
	defer cancel()
	opts := snapshot.Options{Gather: tailscaled.GatherOptions{All: s.All, Host: hostnet.Start}, Joined: in.Latest, Tuning: in.Tuning, ReuseWhoIs: true}
	if in.Latest != nil {
		opts.Prev = in.Latest.Snapshot
		if len(in.Latency) > 0 {
			// serve's pings go in as the previous snapshot's, which the
			// gather carries on (copies: the latest is shared).
			prev := *opts.Prev
			prev.Peers = slices.Clone(prev.Peers)
			for i := range prev.Peers {
				if d, ok := in.Latency[prev.Peers[i].ID]; ok {
					prev.Peers[i].Latency = d
				}
			}
			opts.Prev = &prev
		}
	}
	if in.TuningErr != nil {
		opts.TuningErr = in.TuningErr.Error()
	}
	if r := s.peerSide; r != nil {
		facts, st := r.Latest()
		opts.Gather.PeerFacts, opts.Gather.APIStatus = facts, &st
	}
	f, _, err := snapshot.Capture(ctx, s.Client, opts)
	if err != nil {
		return nil, tailscaled.ConnectError(err, s.Socket)
	}
	if api := f.ControlAPI; api != nil && api.Facts != nil && f.Status != nil {
		var ids []string
		var addrs []netip.Addr
		for _, ps := range f.Status.Peer {
			if ps != nil {
				ids = append(ids, string(ps.ID))
				addrs = append(addrs, ps.TailscaleIPs...)
			}
		}
		c := *api
		c.Facts = api.Facts.Only(ids, addrs)
		f.ControlAPI = &c
	}
	if f, err = snapshot.Scrub(f); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := snapshot.Write(&b, f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
