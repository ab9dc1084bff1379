package snapshot

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
)

// ErrNoPeer: no peer of the snapshot is the node a peer snapshot was
// taken on.
var ErrNoPeer = errors.New("no peer matches")

// PeerSnapshot is a snapshot saved on a peer, reduced to the peer's own
// end of the path (its self facts) and what identifies it.
type PeerSnapshot struct {
	// ID, IPs and Name are the node the snapshot was taken on.
	ID   safetext.Text
	IPs  []netip.Addr
	Name safetext.Text
	// Side is its end of the path as it measured it (Source
	// probes.SourcePeerSnapshot, At the snapshot's time).
	Side *probes.PeerSide
}

// PeerSideOf diagnoses f, a snapshot saved on a peer (`tailpath status
// --save` there), and returns that node's own facts: its endpoints, NAT
// type, UDP, port mapping, home DERP and DERP latencies (keyed by region
// code), client version, and whether it has no NAT (its interfaces, when
// read there). Facts f does not hold stay unknown.
func PeerSideOf(ctx context.Context, f *File) (*PeerSnapshot, error) {
	ls, err := f.Diagnose(ctx)
	if err != nil {
		return nil, err
	}
	self := ls.Self
	side := &probes.PeerSide{Source: probes.SourcePeerSnapshot, At: f.Taken, Endpoints: self.Endpoints, HomeDERP: self.HomeDERP,
		NoNAT: probes.NoNAT(self)}
	if f.Status != nil {
		v, _, _ := strings.Cut(f.Status.Version, " ")
		side.ClientVersion = safetext.New(v)
	}
	if side.ClientVersion == "" {
		// Pasted output: its `tailscale version` (or tailscaled's start line).
		side.ClientVersion = self.Version
	}
	if n := selfNode(f); n != nil {
		side.CapVersion = int(n.Cap)
	}
	if n := self.NAT; n != nil {
		side.MappingVariesByDestIP = n.MappingVariesByDestIP
		if n.FromCLI && n.MappingVariesByDestIP != nil && *n.MappingVariesByDestIP {
			// The CLI's netcheck measured from a socket of its own, not
			// tailscaled's: its hard NAT decides nothing (probes.cliHard).
			side.MappingVariesByDestIP = nil
		}
		if !n.PortMapUnknown {
			side.HavePortMap = boolp(n.HavePortMap)
		}
		side.ClientSupports = probes.ClientSupports{UDP: n.WorkingUDP, IPv6: n.WorkingIPv6, UPnP: n.UPnP, PMP: n.PMP, PCP: n.PCP}
		if len(n.DERPLatency) > 0 {
			side.DERPLatencyMs = map[string]float64{}
			for id, d := range n.DERPLatency {
				k := "region " + strconv.Itoa(id)
				if r, ok := ls.Regions[id]; ok && r.Code != "" {
					k = string(r.Code)
				}
				side.DERPLatencyMs[k] = float64(d) / float64(time.Millisecond)
			}
		}
	}
	ps := &PeerSnapshot{IPs: self.TailscaleIPs, Name: self.Name, Side: side}
	if f.Status != nil && f.Status.Self != nil {
		ps.ID = safetext.New(string(f.Status.Self.ID))
	}
	return ps, nil
}

// selfNode is the WhoIs node of f's own first Tailscale IP, if saved.
func selfNode(f *File) *tailcfg.Node {
	if f.Status == nil || len(f.Status.TailscaleIPs) == 0 && (f.Status.Self == nil || len(f.Status.Self.TailscaleIPs) == 0) {
		return nil
	}
	ips := f.Status.TailscaleIPs
	if f.Status.Self != nil && len(f.Status.Self.TailscaleIPs) > 0 {
		ips = f.Status.Self.TailscaleIPs
	}
	for _, w := range f.WhoIs {
		if w.Addr == ips[0].String() {
			return w.Node
		}
	}
	return nil
}

// ApplyPeer merges peer's facts into the matching peer of ls (by stable
// node id, else a Tailscale address, else its name, ignoring case) the
// way the control API's facts are merged (probes.MergePeerSide: the newer
// source wins, the older is kept), and links the
// result as ls was linked (board, path changes). It returns the new
// joined snapshot and the name of the peer matched; ErrNoPeer when none
// matches (a redacted snapshot matches only a redacted one of the same
// redaction, never an unredacted one). ls is not modified.
func ApplyPeer(ls *join.Snapshot, peer *PeerSnapshot) (*join.Snapshot, safetext.Text, error) {
	raw := *ls.Snapshot
	raw.Peers = slices.Clone(ls.Peers)
	at := -1
	for i := range raw.Peers {
		if peer.ID != "" && raw.Peers[i].ID == peer.ID {
			at = i
			break
		}
	}
	for i := range raw.Peers {
		for _, a := range peer.IPs {
			if at < 0 && slices.Contains(raw.Peers[i].TailscaleIPs, a) {
				at = i
			}
		}
	}
	for i := range raw.Peers {
		if at < 0 && peer.Name != "" && strings.EqualFold(string(raw.Peers[i].Name), string(peer.Name)) {
			at = i
		}
	}
	if at < 0 {
		return nil, "", fmt.Errorf("%w the peer snapshot's node (%s, id %s, %v)", ErrNoPeer, peer.Name, peer.ID, peer.IPs)
	}
	p := &raw.Peers[at]
	p.PeerSide = probes.MergePeerSide(p.PeerSide, peer.Side)
	var l join.Joiner
	if ls.Board != nil {
		l.SetEvidence(ls.Board.Evidence)
	}
	changes := map[safetext.Text][]join.PathChange{}
	for _, q := range raw.Peers {
		changes[q.ID] = ls.Changes(q.ID)
	}
	return l.SetSnapshot(&raw).WithChanges(changes), p.Name, nil
}

// boolp is a pointer to b.
func boolp(b bool) *bool { return &b }
