package tailscaled

import (
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
)

// regionOf is DERP map region r (id) as probes keeps it: its code and
// name, and what the home DERP choice reads of it: the map's
// HomeParams.RegionScore, NoMeasureNoHome, and whether it relays at all
// (a region of STUN-only nodes does not).
func regionOf(dm *tailcfg.DERPMap, r *tailcfg.DERPRegion, id int) probes.Region {
	reg := probes.RegionOf(id, r)
	reg.NoHome = r.NoMeasureNoHome
	if hp := dm.HomeParams; hp != nil {
		if s, ok := hp.RegionScore[tscompat.RegionID(id)]; ok && s > 0 && s < 1e6 {
			reg.Score = s
		}
	}
	stunOnly := len(r.Nodes) > 0
	for _, n := range r.Nodes {
		if n != nil && !n.STUNOnly {
			stunOnly = false
		}
	}
	reg.STUNOnly = stunOnly
	return reg
}
