package probes

import (
	"cmp"
	"encoding/json"
	"net/netip"
	"slices"
	"time"
)

// apiFactsJSON is APIFacts as JSON: every device's record once, with the
// keys Match finds it by. A saved snapshot (probes/snapshot) carries it so
// the control API's facts are matched again exactly as they were live.
type apiFactsJSON struct {
	At      time.Time       `json:"at"`
	Devices int             `json:"devices"`
	Records []apiRecordJSON `json:"records"`
}

// apiRecordJSON is one device's facts: its stable node id, its Tailscale
// addresses, the region name it marked preferred, and the facts as read
// (latencies still keyed by region name).
type apiRecordJSON struct {
	NodeID    string       `json:"node_id,omitempty"`
	Addresses []netip.Addr `json:"addresses,omitempty"`
	Preferred string       `json:"preferred,omitempty"`
	Facts     *PeerSide    `json:"facts"`
}

// MarshalJSON writes f as {"at", "devices", "records": [{"node_id",
// "addresses", "preferred", "facts"}]}, records sorted by node id, then
// first address.
func (f *APIFacts) MarshalJSON() ([]byte, error) {
	out := apiFactsJSON{At: f.At, Devices: f.Devices, Records: []apiRecordJSON{}}
	idx := map[*PeerSide]int{}
	rec := func(s *PeerSide) *apiRecordJSON {
		i, ok := idx[s]
		if !ok {
			i = len(out.Records)
			idx[s] = i
			out.Records = append(out.Records, apiRecordJSON{Preferred: f.preferred[s], Facts: s})
		}
		return &out.Records[i]
	}
	for id, s := range f.byNodeID {
		rec(s).NodeID = id
	}
	for a, s := range f.byAddr {
		r := rec(s)
		r.Addresses = append(r.Addresses, a)
	}
	for i := range out.Records {
		slices.SortFunc(out.Records[i].Addresses, netip.Addr.Compare)
	}
	slices.SortFunc(out.Records, func(a, b apiRecordJSON) int {
		var aa, ba netip.Addr
		if len(a.Addresses) > 0 {
			aa = a.Addresses[0]
		}
		if len(b.Addresses) > 0 {
			ba = b.Addresses[0]
		}
		return cmp.Or(cmp.Compare(a.NodeID, b.NodeID), aa.Compare(ba))
	})
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote. Records without facts are
// skipped; strings are sanitised again (the file came from outside).
func (f *APIFacts) UnmarshalJSON(b []byte) error {
	var in apiFactsJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*f = APIFacts{At: in.At, Devices: in.Devices, byNodeID: map[string]*PeerSide{},
		byAddr: map[netip.Addr]*PeerSide{}, preferred: map[*PeerSide]string{}}
	for _, r := range in.Records {
		s := r.Facts
		if s == nil {
			continue
		}
		if len(s.DERPLatencyMs) > 0 {
			lat := make(map[string]float64, len(s.DERPLatencyMs))
			for k, v := range s.DERPLatencyMs {
				lat[cleanString(k)] = v
			}
			s.DERPLatencyMs = lat
		}
		if r.Preferred != "" {
			f.preferred[s] = cleanString(r.Preferred)
		}
		if id := cleanString(r.NodeID); id != "" {
			f.byNodeID[id] = s
		}
		for _, a := range r.Addresses {
			if a.IsValid() {
				f.byAddr[a.Unmap()] = s
			}
		}
	}
	return nil
}

// Only returns f restricted to the devices found by one of ids (stable
// node ids) or addrs (Tailscale addresses): what the control API says
// about this node's netmap peers, and nothing about the devices its ACLs
// hide from it (`tailpath serve`'s /snapshot.json). Devices stays the
// number the API listed. nil stays nil.
func (f *APIFacts) Only(ids []string, addrs []netip.Addr) *APIFacts {
	if f == nil {
		return nil
	}
	out := &APIFacts{At: f.At, Devices: f.Devices, byNodeID: map[string]*PeerSide{}, byAddr: map[netip.Addr]*PeerSide{},
		preferred: map[*PeerSide]string{}}
	keep := map[*PeerSide]bool{}
	for _, id := range ids {
		if s, ok := f.byNodeID[id]; ok {
			keep[s] = true
		}
	}
	for _, a := range addrs {
		if s, ok := f.byAddr[a.Unmap()]; ok {
			keep[s] = true
		}
	}
	for id, s := range f.byNodeID {
		if keep[s] {
			out.byNodeID[id] = s
		}
	}
	for a, s := range f.byAddr {
		if keep[s] {
			out.byAddr[a] = s
		}
	}
	for s, p := range f.preferred {
		if keep[s] {
			out.preferred[s] = p
		}
	}
	return out
}
