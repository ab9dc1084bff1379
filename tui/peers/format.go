package peers

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
)

// derpCode names a peer's home DERP region: the code from the peer, else the
// code from the snapshot's DERP map, else "#<id>"; "-" when unknown.
func derpCode(p *probes.Peer, regions map[int]probes.Region) string {
	if p.HomeDERPCode != "" {
		return string(p.HomeDERPCode)
	}
	if p.HomeDERP == 0 {
		return "-"
	}
	if r, ok := regions[p.HomeDERP]; ok && r.Code != "" {
		return string(r.Code)
	}
	return "#" + strconv.Itoa(p.HomeDERP)
}

// ReasonComing is the reason of a peer whose verdict's facts are still
// coming (probes.Verdict.Pending: the dashboard's first frame, drawn from
// Status before the netmap, the DERP map and the host's facts arrive).
const ReasonComing = "reason coming…"

// reasonText is the one-phrase reason for the table: the verdict summary,
// else the reason id; ReasonComing while the verdict is pending.
func reasonText(v *probes.Verdict) string {
	if v.Pending {
		return ReasonComing
	}
	if v.Summary != "" {
		return string(v.Summary)
	}
	if v.Reason == "" {
		return "-"
	}
	return string(v.Reason)
}

// PeerSideMarker starts the reason of a verdict that rests on the peer's
// own facts (its NetInfo, the control API or its snapshot).
const PeerSideMarker = "⇄"

// reasonWords is the reason id, then its words, unless the words already
// start with it ("idle: no recent traffic", "offline since …", "direct"):
// the id first, so a row reads the same whether its words fit or not (a
// narrow column shows the id alone), and a verdict that changes reason
// says so ("no-endpoints: …" then "device-no-public-endpoint: …"), as
// `tailpath status` writes it.
func reasonWords(v *probes.Verdict) string {
	words := reasonText(v)
	if r := string(v.Reason); r != "" && r != words && !strings.HasPrefix(words, r+":") && !strings.HasPrefix(words, r+" ") {
		words = r + ": " + words
	}
	return words
}

// reasonCell is the table's reason: reasonWords, marked when it rests on
// the peer's side.
func reasonCell(v *probes.Verdict) string {
	if v.PeerSide {
		return PeerSideMarker + " " + reasonWords(v)
	}
	return reasonWords(v)
}

// peerSide reports whether any verdict of s rests on a peer's own facts.
func peerSide(s *join.Snapshot) bool {
	for i := range s.Peers {
		if s.Peers[i].Verdict.PeerSide {
			return true
		}
	}
	return false
}

// pathRank orders paths relayed-first: DERP relay, peer relay, direct,
// idle, offline, unknown.
func pathRank(k probes.PathKind) int {
	switch k {
	case probes.PathDERP:
		return 0
	case probes.PathPeerRelay:
		return 1
	case probes.PathDirect:
		return 2
	case probes.PathIdle:
		return 3
	case probes.PathOffline:
		return 4
	default:
		return 5
	}
}

// joinAddrs renders addresses comma-separated.
func joinAddrs[T fmt.Stringer](xs []T) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x.String())
	}
	return b.String()
}
