package peers

import (
	"net/netip"
	"time"

	"github.com/tailpath/tailpath/probes"
)

// TimelineLen is how many path changes are kept per peer (oldest dropped).
const TimelineLen = 16

// PathChange is one observed change of a peer's path.
type PathChange struct {
	// When is the Snapshot.Time of the first snapshot showing the new path.
	When time.Time
	// Text is the new path in Tailscale's words (Path.Text).
	Text string
	// Kind is the new path's kind.
	Kind probes.PathKind
}

// pathKey is what counts as "the path changed": kind and address, not the
// text, so "offline, last seen 3h ago" turning into "…4h ago" is no change.
type pathKey struct {
	kind  probes.PathKind
	addr  netip.AddrPort
	relay string
	derp  string
}

func keyOf(p *probes.Path) pathKey {
	return pathKey{kind: p.Kind, addr: p.Addr, relay: p.PeerRelay, derp: p.DERPCode}
}

// timeline is a bounded ring of one peer's path changes.
type timeline struct {
	last    pathKey
	changes []PathChange // oldest first, at most TimelineLen
}

// Timelines records path changes per peer across snapshots. Memory is
// bounded: TimelineLen entries per peer, and peers absent from the latest
// snapshot are forgotten.
type Timelines struct {
	byID map[string]*timeline
	seen map[string]bool // scratch for Observe
}

// Observe records every peer whose path differs from the previous snapshot
// (the first sighting counts as a change). O(peers) per snapshot.
func (t *Timelines) Observe(s *probes.Snapshot) {
	if t.byID == nil {
		t.byID = make(map[string]*timeline, len(s.Peers))
	}
	clear(t.seen)
	if t.seen == nil {
		t.seen = make(map[string]bool, len(s.Peers))
	}
	for i := range s.Peers {
		p := &s.Peers[i]
		t.seen[p.ID] = true
		k := keyOf(&p.Path)
		tl, ok := t.byID[p.ID]
		if ok && tl.last == k {
			continue
		}
		if !ok {
			tl = &timeline{}
			t.byID[p.ID] = tl
		}
		tl.last = k
		if len(tl.changes) == TimelineLen {
			copy(tl.changes, tl.changes[1:])
			tl.changes = tl.changes[:TimelineLen-1]
		}
		tl.changes = append(tl.changes, PathChange{When: s.Time, Text: pathText(&p.Path), Kind: p.Path.Kind})
	}
	if len(t.byID) != len(t.seen) {
		for id := range t.byID {
			if !t.seen[id] {
				delete(t.byID, id)
			}
		}
	}
}

// Changes returns peer id's recorded changes, oldest first (nil if none).
// The slice is owned by t: don't modify it.
func (t *Timelines) Changes(id string) []PathChange {
	if tl, ok := t.byID[id]; ok {
		return tl.changes
	}
	return nil
}
