package tailscaled

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// earlySnapshot is what Status alone shows (GatherOptions.Early): this
// node, every peer and its path, with none of the facts the verdicts read
// (no node from the netmap or WhoIs, no DERP map, no host facts, no
// WireGuard states), marked Pending so that probes.Judge judges nothing
// in it. It carries no memo: the full gather that follows is the next
// gather's previous snapshot, never this one.
func earlySnapshot(st *status, now time.Time, opts GatherOptions) *probes.Snapshot {
	snap := &probes.Snapshot{
		Time:         now,
		BackendState: safetext.New(st.BackendState),
		Regions:      map[int]probes.Region{},
		Pending:      true,
	}
	if s := st.Self; s != nil {
		snap.Self = probes.Self{
			Name:         shortName(s),
			DNSName:      safetext.New(strings.TrimSuffix(s.DNSName, ".")),
			OS:           safetext.New(s.OS),
			TailscaleIPs: slices.Clone(s.TailscaleIPs),
			HomeDERPCode: safetext.New(s.Relay),
			Endpoints:    parseAddrs(s.Addrs),
			Version:      safetext.New(probes.ClientVersion(st.Version)),
		}
	}
	for _, h := range st.Health {
		snap.Self.Health = append(snap.Self.Health, safetext.New(h))
	}
	snap.Peers = make([]probes.Peer, 0, len(st.Peer))
	for _, ps := range st.Peer {
		if ps == nil {
			continue
		}
		if !opts.All && HiddenByCLI(ps) {
			snap.Hidden++
			continue
		}
		snap.Peers = append(snap.Peers, buildPeer(ps, nil, snap.Regions, nil, now))
	}
	slices.SortFunc(snap.Peers, func(a, b probes.Peer) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	return snap
}
