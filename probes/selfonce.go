package probes

import (
	"slices"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// selfOnce holds what judging one gather's peers reads of this node
// alone (its NAT, its DERP latencies, the DERP map), worked out by the
// first peer that needs it and read by every other: Judge's peers share
// one Self, regions and time, so a 10,000-peer gather need not work out
// this node's NAT, its best DERP region or its own home's distance
// 10,000 times (BenchmarkJudgePoll10k). A nil *selfOnce (Diagnose, a
// board's verdict, SettleOf) works each out afresh.
//
// What it holds is shared between verdicts: strings, and slices capped
// at their length, so that an append copies.
type selfOnce struct {
	// nat, natEv: diag.selfNAT.
	natDone bool
	nat     natState
	natEv   natEvidence
	// port: diag.ourPort.
	port string
	// bestID, bestLat: bestDERP.
	bestDone bool
	bestID   int
	bestLat  time.Duration
	// home: what farOwnHome found when the relay region is not this
	// node's home.
	homeDone bool
	home     farHome
	// regionOf: diag.relayRegion's region id by DERP code; relays:
	// farRelay's words by region id.
	regionOf map[safetext.Text]regionID
	relays   map[int]*farRelayWords
	// natW: natWords' last words by NAT-type reason.
	natW map[ReasonID][]string
}

// farHome is farOwnHome's outcome: the check it recorded (none, info or
// failed), its result, and the far region it measured when it holds.
type farHome struct {
	checks []Check
	res    result
	far    farDERP
}

// farRelayWords are what farRelay says of one relay region, from fresh
// latencies: the region's latency beside the best one's, the note of
// its check, and far-home-derp's result.words when it is far.
type farRelayWords struct {
	vsBest string
	note   safetext.Text
	words  []string
}

// selfNATOnce is d.selfNAT, worked out once per gather.
func (d *diag) selfNATOnce() (natState, natEvidence) {
	o := d.once
	if o == nil {
		return d.selfNAT()
	}
	if !o.natDone {
		o.nat, o.natEv = d.selfNAT()
		o.natDone = true
	}
	return o.nat, o.natEv
}

// ourPortOnce is d.ourPort, worked out once per gather.
func (d *diag) ourPortOnce() string {
	o := d.once
	if o == nil {
		return d.ourPort()
	}
	if o.port == "" {
		o.port = d.ourPort()
	}
	return o.port
}

// bestDERP is the region with the lowest latency in this node's NAT
// facts (the lowest id among equals); 0 when none is measured.
func (d *diag) bestDERP() (int, time.Duration) {
	if o := d.once; o != nil && o.bestDone {
		return o.bestID, o.bestLat
	}
	bestID, bestLat := 0, time.Duration(0)
	if nat := d.self.NAT; nat != nil {
		for id, l := range nat.DERPLatency {
			if bestID == 0 || l < bestLat || (l == bestLat && id < bestID) {
				bestID, bestLat = id, l
			}
		}
	}
	if o := d.once; o != nil {
		o.bestID, o.bestLat, o.bestDone = bestID, bestLat, true
	}
	return bestID, bestLat
}

// regionID is a region's id, and whether the DERP map holds it.
type regionID struct {
	id int
	ok bool
}

// regionOfCode is the id of the region whose code is code in d.regions
// (ok false when none has it), worked out once per code per gather.
func (d *diag) regionOfCode(code safetext.Text) (int, bool) {
	o := d.once
	if o != nil {
		if r, ok := o.regionOf[code]; ok {
			return r.id, r.ok
		}
	}
	var r regionID
	for id, reg := range d.regions {
		if reg.Code == code {
			r = regionID{id, true}
			break
		}
	}
	if o != nil {
		if o.regionOf == nil {
			o.regionOf = map[safetext.Text]regionID{}
		}
		o.regionOf[code] = r
	}
	return r.id, r.ok
}

// natWords is the result.words of NAT-type reason id: variant, vars,
// then {cli}; the same words as the last verdict of the gather that held
// id, when they are (its vars are mostly this node's: its port, its
// services), else new ones.
func (d *diag) natWords(id ReasonID, variant string, vars []string, cli string) []string {
	o := d.once
	if o != nil {
		if w := o.natW[id]; len(w) == len(vars)+3 && w[0] == variant && slices.Equal(w[1:len(w)-2], vars) && w[len(w)-1] == cli {
			return w
		}
	}
	w := make([]string, 0, len(vars)+3)
	w = append(append(append(w, variant), vars...), "{cli}", cli)
	if o != nil {
		if o.natW == nil {
			o.natW = map[ReasonID][]string{}
		}
		o.natW[id] = w
	}
	return w
}
