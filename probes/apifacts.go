package probes

import (
	"net/netip"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// APIFacts is one read of the tailnet's devices from the control API,
// ready to match against netmap peers (Match).
type APIFacts struct {
	// At is when the read finished.
	At time.Time `json:"at"`
	// Devices is how many devices the API listed.
	Devices int `json:"devices"`
	// byNodeID and byAddr index the devices' facts by stable node id
	// ("nXXXXCNTRL", PeerStatus.ID) and by Tailscale address.
	byNodeID map[string]*PeerSide
	byAddr   map[netip.Addr]*PeerSide
	// preferred is the name of the region each device marked preferred.
	preferred map[*PeerSide]string
}

// source is the unresolved record Match would use for p (for counting).
func (f *APIFacts) source(p *Peer) *PeerSide {
	s, ok := f.byNodeID[string(p.ID)]
	for i := 0; !ok && i < len(p.TailscaleIPs); i++ {
		s, ok = f.byAddr[p.TailscaleIPs[i].Unmap()]
	}
	return s
}

// Match returns the API's facts for peer p: by stable node id, else by any
// of its Tailscale addresses; nil when the API did not list it. The
// latencies come keyed by region code and HomeDERP set, by regions (the
// API names regions by their names).
func (f *APIFacts) Match(p *Peer, regions map[int]Region) *PeerSide {
	if f == nil {
		return nil
	}
	s := f.source(p)
	if s == nil {
		return nil
	}
	return s.resolveRegions(regions, f.preferred[s])
}

// APIStatus says how the control-API source is doing; it travels in
// Snapshot.PeerSideAPI.
type APIStatus struct {
	// State is "off" (no credentials, or --no-api), "ok", "pending" (no
	// answer yet), or "error".
	State string `json:"state"`
	// At is when the facts in use were read; zero when none.
	At time.Time `json:"at,omitzero"`
	// Err is the last error, actionable and free of key material.
	Err safetext.Text `json:"err,omitempty"`
	// Matched is how many listed peers the API's devices matched;
	// PeersMissing how many listed peers the API does not know;
	// DevicesUnmatched how many devices are not in our netmap (they may be
	// hidden from us by ACLs, or be ourselves).
	Matched          int `json:"matched"`
	PeersMissing     int `json:"peers_missing"`
	DevicesUnmatched int `json:"devices_unmatched"`
}

// NewAPIFacts returns the facts of a read of the control API that finished
// at at and listed devices devices, holding no device's facts yet (Add).
func NewAPIFacts(at time.Time, devices int) *APIFacts {
	return &APIFacts{At: at, Devices: devices, byNodeID: map[string]*PeerSide{}, byAddr: map[netip.Addr]*PeerSide{},
		preferred: map[*PeerSide]string{}}
}

// Add records one device's facts s, found by its stable node id (none
// when "") and by each of its Tailscale addresses, with the name of the
// DERP region it marked preferred ("" when none). s's latencies stay keyed
// by region name until Match resolves them.
func (f *APIFacts) Add(s *PeerSide, nodeID string, addrs []netip.Addr, preferred string) {
	if preferred != "" {
		f.preferred[s] = preferred
	}
	if nodeID != "" {
		f.byNodeID[nodeID] = s
	}
	for _, a := range addrs {
		f.byAddr[a.Unmap()] = s
	}
}

// MatchPeerFacts merges the control API's facts into every peer's
// PeerSide and returns st with the match counts; the verdicts are not
// redone (ApplyPeerFacts does that too). facts may be nil (none
// read yet).
func MatchPeerFacts(snap *Snapshot, facts *APIFacts, st APIStatus) *APIStatus {
	if facts == nil {
		return &st
	}
	used := make(map[*PeerSide]bool, len(snap.Peers))
	for i := range snap.Peers {
		p := &snap.Peers[i]
		api := facts.Match(p, snap.Regions)
		if api == nil {
			st.PeersMissing++
			continue
		}
		st.Matched++
		used[facts.source(p)] = true
		p.PeerSide = MergePeerSide(p.PeerSide, api)
	}
	st.DevicesUnmatched = max(facts.Devices-len(used), 0)
	return &st
}

// ApplyPeerFacts merges the control API's facts (read beside Gather, as
// `tailpath status` does) into snap's peers and sets snap.ControlAPI: more
// evidence for the joiner's Judge. It must be called once per snapshot.
func ApplyPeerFacts(snap *Snapshot, facts *APIFacts, st APIStatus) {
	snap.ControlAPI = MatchPeerFacts(snap, facts, st)
}

// resolveRegions returns s with its latencies rekeyed from region names
// (as the API gives them) to region codes, and HomeDERP set to the region
// named preferred.
func (s *PeerSide) resolveRegions(regions map[int]Region, preferred string) *PeerSide {
	if len(s.DERPLatencyMs) == 0 {
		return s
	}
	out := *s
	out.DERPLatencyMs = make(map[string]float64, len(s.DERPLatencyMs))
	for name, ms := range s.DERPLatencyMs {
		key := name
		for id, r := range regions {
			if string(r.Name) == name || string(r.Code) == name {
				key = regionKey(regions, id)
				if name == preferred {
					out.HomeDERP = id
				}
			}
		}
		out.DERPLatencyMs[key] = ms
	}
	return &out
}
