package peers

import (
	"github.com/tailpath/tailpath/devlink"
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
