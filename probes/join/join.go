// Package join joins what tailpath's sources say about one tailnet into a
// joined snapshot, and judges it: tailscaled's snapshot (probes), the
// attached board's state (devlink) matched to the peer it is, and every
// peer's path changes as observed across snapshots; probes.Judge then
// writes every verdict over the whole of it (the board's peer with the
// board's own evidence). The dashboard's Peers and Detail panes render
// it; `tailpath status --json` and `tailpath demo --status --json` print
// it. It does no I/O and imports no UI.
package join

import (
	"maps"
	"slices"
	"sync"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// Snapshot is one joined view. It is immutable once returned: the Joiner
// builds a new one for every change, so it may be handed to another
// goroutine (the dashboard) without copying.
type Snapshot struct {
	// Snapshot is tailscaled's, judged: a copy whose peers and self carry
	// their verdicts (probes.Judge), the board's peer with the device
	// diagnosis; the source's snapshot is never modified.
	*probes.Snapshot
	// Board is the attached board's evidence and the peer it is; nil when
	// no board has reported.
	Board *Board
	// changes are the path changes by Peer.ID.
	changes map[safetext.Text][]PathChange
	// poll: judged by a poll's Joiner, so no peer carries its Settle
	// (SettleOf works it out).
	poll bool
}

// Board is the attached board as linked to the tailnet.
type Board struct {
	// PeerID is the Peer.ID the board is (probes.DeviceEvidence.Matches);
	// "" when no peer matches its tailnet IP or host name.
	PeerID safetext.Text `json:"peer_id,omitempty"`
	// Evidence is what the board says about itself (from its telemetry
	// frames and log lines).
	Evidence probes.DeviceEvidence `json:"evidence"`
}

// BoardID is the Peer.ID of the attached board, "" when none is linked.
func (s *Snapshot) BoardID() safetext.Text {
	if s == nil || s.Board == nil {
		return ""
	}
	return s.Board.PeerID
}

// SettleOf is what would settle peer i's verdict (s.Peers[i]): the
// Settle it carries, or, from a poll's Joiner, worked out now for this
// one peer (probes.SettleOf); nil when the verdict is settled.
func (s *Snapshot) SettleOf(i int) *probes.Settle {
	if s == nil || s.Snapshot == nil || i < 0 || i >= len(s.Peers) {
		return nil
	}
	if !s.poll {
		return s.Peers[i].Verdict.Settle
	}
	var board *probes.DeviceEvidence
	if s.Board != nil {
		board = &s.Board.Evidence
	}
	return probes.SettleOf(s.Snapshot, i, board)
}

// Changes returns peer id's path changes, oldest first (nil when the peer
// is not in the snapshot). The first is the path the peer had when it was
// first seen. The slice is shared: don't modify it.
func (s *Snapshot) Changes(id safetext.Text) []PathChange {
	if s == nil {
		return nil
	}
	return s.changes[id]
}

// Joiner keeps the latest tailscaled snapshot, the board's latest evidence
// and the path history, and joins them. The zero value is ready; it is
// safe for concurrent use (the dashboard feeds it from the tailscaled and
// board sources' goroutines).
type Joiner struct {
	// Poll judges as a poll does (probes.JudgePoll): every verdict, and
	// no peer's Settle, which Snapshot.SettleOf works out for the one
	// peer shown (the dashboard's Detail) and serve's /metrics never
	// reads. Set it before the first snapshot; a one-shot command (status)
	// leaves it false and gets every Settle.
	Poll bool
	// Owned: the snapshots given to SetSnapshot are the Joiner's to judge
	// in place (a one-shot command, which keeps no other reference to
	// them), so the first judgement of each copies none of its peers.
	// A 1,000-peer status copied 1,000 Peers (4 ms, docs/perf.md) to
	// keep a snapshot nobody else reads. Set it before the first
	// snapshot.
	Owned bool

	mu      sync.Mutex
	raw     *probes.Snapshot
	dev     probes.DeviceEvidence
	haveDev bool
	history History
	cur     *Snapshot
	// inPlace: raw is Owned and not judged yet.
	inPlace bool
}

// SetSnapshot records s (which the Joiner keeps and never modifies) and
// its path changes, and returns the new joined snapshot.
func (l *Joiner) SetSnapshot(s *probes.Snapshot) *Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.raw, l.inPlace = s, l.Owned
	if !s.Pending {
		// A pending snapshot's paths are Status's alone, read again in
		// the full gather that follows: the history starts there, so
		// a path told more exactly by the node is not a change.
		l.history.Observe(s)
	}
	l.rejoin()
	return l.cur
}

// SetDevice records the board's state and, when its evidence changed,
// returns the new joined snapshot and true. Board events repeat the same
// state between telemetry frames; they cost a comparison. Before the first
// tailscaled snapshot it records the evidence and returns nil, false.
func (l *Joiner) SetDevice(st *devlink.State) (*Snapshot, bool) {
	return l.SetEvidence(EvidenceFrom(st))
}

// SetEvidence is SetDevice for evidence already converted from a board's
// state (a saved snapshot's board, probes/snapshot).
func (l *Joiner) SetEvidence(d probes.DeviceEvidence) (*Snapshot, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.haveDev && d == l.dev {
		return nil, false
	}
	l.dev, l.haveDev = d, true
	if l.raw == nil {
		return nil, false
	}
	l.rejoin()
	return l.cur, true
}

// Snapshot returns the latest joined snapshot; nil before the first
// tailscaled snapshot.
func (l *Joiner) Snapshot() *Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

// rejoin builds cur from raw, the board's evidence and the history:
// the one place a gather is judged. probes.Judge writes every verdict
// (and the tailnet-wide facts) into a copy of raw's peers, the board's
// peer judged with the board's evidence too; raw itself, which its
// source keeps, is never written (but for Owned's first judgement).
func (l *Joiner) rejoin() {
	judged := *l.raw
	if !l.inPlace {
		judged.Peers = slices.Clone(l.raw.Peers)
	}
	l.inPlace = false
	s := &Snapshot{Snapshot: &judged, changes: maps.Clone(l.history.byID)}
	var dev *probes.DeviceEvidence
	if l.haveDev {
		dev = &l.dev
		s.Board = &Board{Evidence: l.dev}
	}
	judge := probes.Judge
	if l.Poll {
		judge = probes.JudgePoll
	}
	s.poll = l.Poll
	if i := judge(&judged, dev); i >= 0 {
		s.Board.PeerID = judged.Peers[i].ID
	}
	l.cur = s
}

// WithChanges returns a copy of s whose path changes are changes' for the
// peers changes lists (a saved snapshot's history, probes/snapshot); the
// other peers keep theirs. s is not modified.
func (s *Snapshot) WithChanges(changes map[safetext.Text][]PathChange) *Snapshot {
	out := *s
	out.changes = maps.Clone(s.changes)
	if out.changes == nil {
		out.changes = map[safetext.Text][]PathChange{}
	}
	for id, chs := range changes {
		if len(chs) > 0 {
			out.changes[id] = chs
		}
	}
	return &out
}

// Of joins s alone: no board, and each peer's only path change is its
// current path. For tests and one-shot uses that have no Joiner.
func Of(s *probes.Snapshot) *Snapshot {
	var l Joiner
	return l.SetSnapshot(s)
}

// EvidenceFrom converts the board's state (devlink.State, built from its
// telemetry frames and log lines) into the evidence probes.Judge
// reads. Endpoints stays -1 when the board has not reported them.
func EvidenceFrom(s *devlink.State) probes.DeviceEvidence {
	return probes.DeviceEvidence{
		TailnetIP:      s.TailnetIP,
		Hostname:       s.Hostname.String(),
		ProbesUsed:     s.ProbesUsed,
		ProbesCap:      s.ProbesCap,
		ProbesDropped:  s.ProbesDropped,
		Endpoints:      s.Endpoints,
		HomeDERP:       s.HomeDERP,
		NearestDERP:    s.NearestDERP,
		HomeLatency:    s.HomeLatency,
		NearestLatency: s.NearestLatency,
		HomeDERPBy:     s.HomeDERPBy.String(),
		// The control stream's HTTP/2 flow control (D frame h2rx/h2wu/h2win).
		H2Known:          s.H2Known,
		H2Received:       s.H2Received,
		H2WindowReturned: s.H2WindowReturned,
		H2WindowOpen:     s.H2WindowOpen,
		// The board's DERP relay connection (microlink lines, R frames).
		RelayKnown:        s.Relay.Known,
		RelayUp:           s.Relay.Connected,
		RelayWasUp:        s.Relay.WasUp,
		RelayAttempts:     s.Relay.Attempts,
		DiscoDecryptFails: s.DiscoDecryptFails,
		DiscoDecryptRecent: func() (out [8]probes.DecryptFailure) {
			for i, f := range s.DecryptFailures {
				out[i] = probes.DecryptFailure{At: f.At, From: f.From}
			}
			return out
		}(),
	}
}
