// Package report is the status document: what `tailpath status` prints
// of a joined snapshot (probes/join), as JSON (Document, written without
// reflection per peer: json.go) or as a table for a terminal or a pipe
// (WriteTable), and, for status --from, what was read (SnapshotInfo,
// SnapshotHeader). status, demo --status and the tests write it through
// here; it does no I/O but the writer it is given.
package report

import (
	"errors"
	"io"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/termcolor"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// Print writes s as a live `tailpath status` does: JSON (WriteJSON)
// when asJSON, else the table (WriteTable) and its "to settle" block
// (WriteSettle). Warnings are not written;
// callers print s.Warnings where they belong. Reused by the demo.
func Print(w io.Writer, s *join.Snapshot, asJSON bool) error {
	if s == nil || s.Snapshot == nil {
		return errors.New("status: no snapshot")
	}
	if asJSON {
		return WriteJSON(w, s)
	}
	if err := WriteTable(w, s, termcolor.Width(w)); err != nil {
		return err
	}
	return WriteSettle(w, s, StepOptions(s, false))
}

// Document is the stable JSON shape of `tailpath status --json`.
type Document struct {
	Time         time.Time `json:"time"`
	BackendState string    `json:"backend_state"`
	// Self carries this node's own verdict (self.verdict,
	// probes.Judge); absent when nothing at this end holds.
	Self     probes.Self     `json:"self"`
	Peers    []Peer          `json:"peers"`
	Board    *join.Board     `json:"board,omitempty"`
	Regions  []probes.Region `json:"derp_regions,omitempty"`
	Warnings []safetext.Text `json:"warnings,omitempty"`
	// ControlAPI is how the control-API read went (state, matches);
	// absent when it was not asked (no credentials, --no-api).
	ControlAPI *probes.APIStatus `json:"control_api,omitempty"`
	// Hidden counts peers left out as `tailscale status` leaves them out
	// (shared-in nodes, Mullvad exit nodes); --all lists them.
	Hidden int `json:"hidden,omitempty"`
	// Snapshot says, for --from, what was read: when it was taken, what
	// inputs were recognised and which lines ignored.
	Snapshot *SnapshotInfo `json:"snapshot,omitempty"`
	// ToSettle is every step that settles an open verdict, most deciding
	// first (probes.StepsOf): the status table's "to settle" block
	// without its limit of three. Each verdict's own candidates and
	// deciders are its settle member (peers[].verdict.settle,
	// self.settle).
	ToSettle []probes.Step `json:"to_settle,omitempty"`
}

// Peer is one peer in status --json: probes.Peer's fields and its
// path changes. The peer is pointed to, not copied (1,000 peers are 0.7 MB).
type Peer struct {
	*probes.Peer
	// PathChanges are the peer's paths as tailpath observed them, oldest
	// first; one snapshot (status) observes one, its path then.
	PathChanges []join.PathChange `json:"path_changes"`
}

// WriteJSON writes s as indented JSON: {"time", "backend_state",
// "self", "peers" (never null; each with "path_changes"), "board" (when a
// board reported: its evidence and the "peer_id" it is, whose verdict then
// includes the board's Device.* checks), "derp_regions" (sorted by id),
// "warnings"}. Field names are the JSON tags of probes' and link's types
// and are stable. Strings in s are already sanitised by tailscaled.Gather;
// JSON escaping keeps any remaining bytes inert.
func WriteJSON(w io.Writer, s *join.Snapshot) error {
	return Encode(w, Of(s))
}

// Of is s in status --json's shape.
func Of(s *join.Snapshot) Document {
	out := Document{
		Time:         s.Time,
		BackendState: string(s.BackendState),
		Self:         s.Self,
		Peers:        make([]Peer, len(s.Peers)),
		Board:        s.Board,
		Warnings:     s.Warnings,
		ControlAPI:   s.ControlAPI,
		Hidden:       s.Hidden,
	}
	for i := range s.Peers {
		p := &s.Peers[i]
		out.Peers[i] = Peer{Peer: p, PathChanges: s.Changes(p.ID)}
	}
	for id := range s.Regions {
		out.Regions = append(out.Regions, s.Regions[id])
	}
	sortRegions(out.Regions)
	out.ToSettle = probes.StepsOf(s.Snapshot, StepOptions(s, false), 0)
	return out
}

// Encode writes out as json.MarshalIndent(out, "", "  ") and a
// newline would, without reflection for each peer (writeFast).
func Encode(w io.Writer, out Document) error {
	return writeFast(w, &out)
}

func sortRegions(rs []probes.Region) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].ID < rs[j-1].ID; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// SnapshotInfo is status --json's "snapshot" object for --from.
type SnapshotInfo struct {
	// Taken is the snapshot's time (TakenFrom says how pasted input
	// dates it); From the inputs named.
	Taken     time.Time `json:"taken"`
	TakenFrom string    `json:"taken_from,omitempty"`
	From      []string  `json:"from"`
	// Origin is "localapi" (saved by tailpath) or "pasted".
	Origin   string                    `json:"origin"`
	Redacted *snapshot.Redaction       `json:"redacted,omitempty"`
	Inputs   []snapshot.Input          `json:"inputs,omitempty"`
	Ignored  []snapshot.Ignored        `json:"ignored,omitempty"`
	Netcheck *probes.DERPLatencyReport `json:"netcheck,omitempty"`
}

// NewSnapshotInfo is what status --from read, for its "snapshot" object:
// file f, read from the inputs names.
func NewSnapshotInfo(f *snapshot.File, names []string) *SnapshotInfo {
	return &SnapshotInfo{Taken: f.Taken, TakenFrom: f.TakenFrom, From: names, Origin: f.Origin, Redacted: f.Redacted, Inputs: f.Inputs, Ignored: f.Ignored, Netcheck: f.Netcheck}
}
