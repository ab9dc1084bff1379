// Package metrics turns what tailpath's sources report (the linked
// tailnet snapshot, the board's state, the host's TCP tuning) into
// Prometheus metrics for `tailpath serve`: per peer the path and the
// reason it is relayed, the DERP regions and NAT facts of this node, the
// board's probe table, heap, home DERP and crashes, and the tuning against
// the bandwidth-delay product. docs/metrics.md lists every family.
//
// The sources write their latest values into a Store as they arrive; a
// Gatherer reads the Store at scrape time and builds the metric families
// directly (github.com/prometheus/client_model's types), reusing one
// scrape's memory for the next: a whole scrape of a 1,000-peer tailnet,
// encoding included, costs about 4 ms of CPU and 0.3 MB (docs/perf.md). Cardinality is bounded: labels are peer names and stable
// ids, DERP region codes, reason ids and fixed words; never endpoint
// addresses or ports. Options.MaxPeers caps the per-peer series.
//
// It reads no source itself (they write into the Store) and imports no UI.
package metrics

import (
	"maps"
	"sync"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// Store holds the latest value of each source and the counters tailpath
// serve keeps itself (path changes per peer, the board's HTTP/2 stalls).
// The zero value is ready; it is safe for concurrent use: the sources'
// goroutines write, scrapes read.
type Store struct {
	mu sync.RWMutex
	// snap is the newest joined snapshot; nil before the first.
	snap *join.Snapshot
	// source is tailscaled's last SourceStatus; sourceSeen false before one.
	source     probes.SourceStatus
	sourceSeen bool
	// board is the board's newest state (never modified once stored); nil
	// before the first event. haveBoard is set by ExpectBoard.
	board     *devlink.State
	haveBoard bool
	// tuning is the newest tuning report and the error gathering it; nil
	// before the first. haveTuning is set by ExpectTuning.
	tuning     *tune.Report
	tuningErr  error
	haveTuning bool

	// changes counts path changes per peer id.
	changes map[safetext.Text]*pathCount
	// latency is the last ping round trip per peer id (SetLatency).
	latency map[safetext.Text]time.Duration
	// h2Stalls counts transitions of the board into an HTTP/2 window stall.
	h2Stalls  int64
	h2Stalled bool
}

// pathCount is one peer's path-change count and the time of the newest
// change counted (join.PathChange.When).
type pathCount struct {
	n    int64
	last time.Time
}

// ExpectBoard says a board is configured (--port): tailpath_board_up is
// exported (0) before its first state arrives.
func (s *Store) ExpectBoard() {
	s.mu.Lock()
	s.haveBoard = true
	s.mu.Unlock()
}

// ExpectTuning says the host's tuning is read: tailpath_tuning_up is
// exported (0) before the first report arrives.
func (s *Store) ExpectTuning() {
	s.mu.Lock()
	s.haveTuning = true
	s.mu.Unlock()
}

// SetSource records tailscaled's status: while Up is false, the tailnet
// series are not exported and tailpath_tailscaled_up is 0.
func (s *Store) SetSource(st probes.SourceStatus) {
	s.mu.Lock()
	s.source, s.sourceSeen = st, true
	s.mu.Unlock()
}

// SetSnapshot records the newest joined snapshot (kept, never modified;
// from tailscaled's source or re-linked after a board change) and counts each peer's path changes since the previous one. A peer's
// first sighting is not a change; peers gone from the snapshot are
// forgotten, as join.History forgets them. O(peers).
func (s *Store) SetSnapshot(ls *join.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap = ls
	if s.changes == nil {
		s.changes = make(map[safetext.Text]*pathCount, len(ls.Peers))
	}
	for i := range ls.Peers {
		id := ls.Peers[i].ID
		ch := ls.Changes(id)
		if len(ch) == 0 {
			continue
		}
		c := s.changes[id]
		if c == nil {
			s.changes[id] = &pathCount{last: ch[len(ch)-1].When}
			continue
		}
		for j := len(ch) - 1; j >= 0 && ch[j].When.After(c.last); j-- {
			c.n++
		}
		c.last = ch[len(ch)-1].When
	}
	if len(s.changes) > len(ls.Peers) || len(s.latency) > 0 {
		seen := make(map[safetext.Text]bool, len(ls.Peers))
		for i := range ls.Peers {
			seen[ls.Peers[i].ID] = true
		}
		for id := range s.changes {
			if !seen[id] {
				delete(s.changes, id)
			}
		}
		// A ping in flight when its peer left may have stored a latency
		// after the peer was forgotten: drop it too.
		for id := range s.latency {
			if !seen[id] {
				delete(s.latency, id)
			}
		}
	}
}

// Latencies returns a copy of the ping round trips SetLatency recorded,
// by peer id; nil when none.
func (s *Store) Latencies() map[safetext.Text]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.latency) == 0 {
		return nil
	}
	return maps.Clone(s.latency)
}

// SetLatency records the round trip of a ping to peer id (a Peer.ID);
// it is exported until a newer one or the peer leaves the snapshot, in
// place of the snapshot's own Peer.Latency.
func (s *Store) SetLatency(id safetext.Text, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latency == nil {
		s.latency = map[safetext.Text]time.Duration{}
	}
	s.latency[id] = d
}

// SetBoard records the board's newest state and the evidence its source
// converted from it once (join.EvidenceFrom, as the Joiner was handed it).
// st must not be modified afterwards (devlink.Event.State is a copy made
// for each event).
func (s *Store) SetBoard(st *devlink.State, ev probes.DeviceEvidence) {
	stalled := ev.H2Stalled()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.board, s.haveBoard = st, true
	if stalled && !s.h2Stalled {
		s.h2Stalls++
	}
	s.h2Stalled = stalled
}

// SetTuning records a reading of the host's tuning; err non-nil means it
// failed (r may then be partial and is not exported).
func (s *Store) SetTuning(r tune.Report, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tuning, s.tuningErr, s.haveTuning = &r, err, true
}

// Tuning returns the newest tuning report and the error reading it; nil,
// nil before the first or without tuning.
func (s *Store) Tuning() (*tune.Report, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tuning, s.tuningErr
}

// Snapshot returns the newest joined snapshot while tailscaled is up, or
// nil and why not ("" reason before the first snapshot).
func (s *Store) Snapshot() (*join.Snapshot, string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case s.sourceSeen && !s.source.Up:
		return nil, string(s.source.Err)
	case s.snap == nil:
		return nil, "no snapshot from tailscaled yet"
	}
	return s.snap, ""
}

// Health is what /healthz reports about each source.
type Health struct {
	// Tailscaled is "up", "down" or "starting" (no answer yet); TailscaledErr
	// says why it is down.
	Tailscaled    string `json:"tailscaled"`
	TailscaledErr string `json:"tailscaled_error,omitempty"`
	// Board is "up", "down" or "" without --port.
	Board string `json:"board,omitempty"`
	// Tuning is "ok", "error" or "" when not read (not Linux, --no-tuning).
	Tuning string `json:"tuning,omitempty"`
}

// Health returns each source's state now.
func (s *Store) Health() Health {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := Health{Tailscaled: "starting"}
	switch {
	case s.sourceSeen && s.source.Up:
		h.Tailscaled = "up"
	case s.sourceSeen:
		h.Tailscaled, h.TailscaledErr = "down", string(s.source.Err)
	}
	if s.haveBoard {
		h.Board = "down"
		if s.board != nil && s.board.Link.Up {
			h.Board = "up"
		}
	}
	if s.haveTuning && s.tuning != nil {
		h.Tuning = "ok"
		if s.tuningErr != nil {
			h.Tuning = "error"
		}
	}
	return h
}
