package peers

import (
	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/probes"
)

// BoardMark follows the name of the peer that is the attached board, in the
// Peers table and the detail header.
const BoardMark = "(board)"

// DeviceEvidenceFrom converts the board's state (devlink.State, built from
// its telemetry frames and log lines) into the evidence
// probes.DiagnoseDevice reads. Endpoints stays -1 when the board has not
// reported them.
func DeviceEvidenceFrom(s *devlink.State) probes.DeviceEvidence {
	return probes.DeviceEvidence{
		TailnetIP:      s.TailnetIP,
		Hostname:       s.Hostname,
		ProbesUsed:     s.ProbesUsed,
		ProbesCap:      s.ProbesCap,
		ProbesDropped:  s.ProbesDropped,
		Endpoints:      s.Endpoints,
		HomeDERP:       s.HomeDERP,
		NearestDERP:    s.NearestDERP,
		HomeLatency:    s.HomeLatency,
		NearestLatency: s.NearestLatency,
		HomeDERPBy:     s.HomeDERPBy,
	}
}

// boardLink joins the latest tailscaled snapshot with the latest board
// state: the peer the board is (probes.DeviceEvidence.Matches) gets the
// device diagnosis. Both panes keep one, so the row and the detail agree.
type boardLink struct {
	raw     *probes.Snapshot // as received; never modified
	dev     probes.DeviceEvidence
	haveDev bool
	// snap is raw, or a copy whose board peer carries the device verdict.
	snap *probes.Snapshot
	// boardID is the Peer.ID linked to the board; "" when none.
	boardID string
}

// setSnapshot stores s and re-links.
func (b *boardLink) setSnapshot(s *probes.Snapshot) {
	b.raw = s
	b.link()
}

// setDevice stores the board's evidence from ev and reports whether it
// changed (events repeat the same state between telemetry frames;
// re-linking only on a change keeps them cheap).
func (b *boardLink) setDevice(ev *devlink.Event) bool {
	d := DeviceEvidenceFrom(&ev.State)
	d.H2Known, d.H2Received, d.H2WindowReturned, d.H2WindowOpen =
		b.dev.H2Known, b.dev.H2Received, b.dev.H2WindowReturned, b.dev.H2WindowOpen
	applyH2Lines(&d, ev.Lines)
	if b.haveDev && d == b.dev {
		return false
	}
	b.dev, b.haveDev = d, true
	b.link()
	return true
}

// link rebuilds snap. The peers slice is copied only when a peer matches,
// since the snapshot is shared with the other panes.
func (b *boardLink) link() {
	b.snap, b.boardID = b.raw, ""
	if b.raw == nil || !b.haveDev {
		return
	}
	for i := range b.raw.Peers {
		p := &b.raw.Peers[i]
		if !b.dev.Matches(p) {
			continue
		}
		s := *b.raw
		s.Peers = append([]probes.Peer(nil), b.raw.Peers...)
		s.Peers[i].Verdict = probes.DiagnoseDevice(p.Verdict, *p, b.dev)
		b.snap, b.boardID = &s, p.ID
		return
	}
}

// applyH2Lines sets d's HTTP/2 flow-control counters from the newest
// telemetry D frame among lines that carries all three (h2rx, h2wu,
// h2win). devlink.State does not keep them, so they come from the event's
// lines and carry over events without such a frame (a frame lost to a
// flood is replaced by the next, 5 s later).
func applyH2Lines(d *probes.DeviceEvidence, lines []devlink.Line) {
	for i := len(lines) - 1; i >= 0; i-- {
		l := &lines[i]
		if l.Kind != devlink.KindTelemetry {
			continue
		}
		at := telemetry.Index(l.Text)
		if at < 0 {
			continue
		}
		fr, err := telemetry.Parse(l.Text[at:])
		if err != nil || fr.Kind != telemetry.KindDisco || !fr.Has("h2rx") || !fr.Has("h2wu") || !fr.Has("h2win") {
			continue
		}
		d.H2Known = true
		d.H2Received = int64(fr.Disco.H2Received)
		d.H2WindowReturned = int64(fr.Disco.H2WindowReturned)
		d.H2WindowOpen = int64(fr.Disco.H2WindowOpen)
		return
	}
}
