package join

import (
	"net/netip"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// HistoryLen is how many path changes are kept per peer (oldest dropped).
const HistoryLen = 16

// PathChange is one observed change of a peer's path.
type PathChange struct {
	// When is the Snapshot.Time of the first snapshot showing the new path.
	When time.Time `json:"time"`
	// Text is the new path in Tailscale's words (Path.Text, sanitised; the
	// kind when the source gave no text).
	Text safetext.Text `json:"text"`
	// Kind is the new path's kind.
	Kind probes.PathKind `json:"kind"`
}

// pathKey is what counts as "the path changed": kind and address, not the
// text, so "offline, last seen 3h ago" turning into "…4h ago" is no change.
type pathKey struct {
	kind  probes.PathKind
	addr  netip.AddrPort
	relay safetext.Text
	derp  safetext.Text
}

func keyOf(p *probes.Path) pathKey {
	return pathKey{kind: p.Kind, addr: p.Addr, relay: p.PeerRelay, derp: p.DERPCode}
}

// History records path changes per peer across snapshots. Memory is
// bounded: HistoryLen entries per peer, and peers absent from the latest
// snapshot are forgotten. A peer's slice is replaced, never modified, when
// it changes, so slices handed out stay valid.
type History struct {
	byID map[safetext.Text][]PathChange
	last map[safetext.Text]pathKey
	seen map[safetext.Text]bool // scratch for Observe
}

// Observe records every peer whose path differs from the previous snapshot
// (the first sighting counts as a change). O(peers) per snapshot.
func (h *History) Observe(s *probes.Snapshot) {
	if h.byID == nil {
		h.byID = make(map[safetext.Text][]PathChange, len(s.Peers))
		h.last = make(map[safetext.Text]pathKey, len(s.Peers))
		h.seen = make(map[safetext.Text]bool, len(s.Peers))
	}
	clear(h.seen)
	for i := range s.Peers {
		p := &s.Peers[i]
		h.seen[p.ID] = true
		k := keyOf(&p.Path)
		if last, ok := h.last[p.ID]; ok && last == k {
			continue
		}
		h.last[p.ID] = k
		old := h.byID[p.ID]
		drop := max(len(old)+1-HistoryLen, 0)
		next := make([]PathChange, 0, len(old)+1-drop)
		next = append(next, old[drop:]...)
		h.byID[p.ID] = append(next, PathChange{When: s.Time, Text: ChangeText(&p.Path), Kind: p.Path.Kind})
	}
	if len(h.byID) != len(h.seen) {
		for id := range h.byID {
			if !h.seen[id] {
				delete(h.byID, id)
				delete(h.last, id)
			}
		}
	}
}

// Changes returns peer id's recorded changes, oldest first (nil if none).
// The slice is shared: don't modify it.
func (h *History) Changes(id safetext.Text) []PathChange { return h.byID[id] }

// ChangeText is PathText as a PathChange records it: without an offline
// path's relative ", last seen 1m ago", which would be wrong as soon as
// it is read again (the change's time dates it).
func ChangeText(p *probes.Path) safetext.Text {
	t := PathText(p)
	if p.Kind == probes.PathOffline {
		if i := strings.Index(string(t), ", last seen"); i > 0 {
			t = t[:i]
		}
	}
	return t
}

// PathText is the path in Tailscale's words, sanitised, falling back to the
// kind when the source left Text empty ("unknown" without either).
func PathText(p *probes.Path) safetext.Text {
	if p.Text != "" {
		return p.Text
	}
	if p.Kind == "" {
		return "unknown"
	}
	return safetext.New(string(p.Kind)) // a kind decoded from a snapshot file is outside text too
}
