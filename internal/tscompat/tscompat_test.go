package tscompat

import (
	"strconv"
	"strings"
	"testing"

	"tailscale.com/ipn"
	"tailscale.com/tailcfg"
)

// derpRegionID stands for v1.104's tailcfg.DERPRegionID (int64).
type derpRegionID int64

func TestIntRegionID(t *testing.T) {
	const beyond32 = 5_000_000_000        // beyond int32: a 32-bit int cannot hold it
	const maxJS = derpRegionID(1<<53 - 1) // the largest id tailcfg.DERPRegionID.IsValid allows
	// wide is v where an int holds it (64-bit), else 0.
	wide := func(v int64) int {
		if strconv.IntSize == 64 {
			return int(v)
		}
		return 0
	}
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"int", IntRegionID(902), 902},
		{"module type", IntRegionID(RegionID(7)), 7},
		{"int64 type", IntRegionID(derpRegionID(1)), 1},
		{"zero", IntRegionID(derpRegionID(0)), 0},
		{"beyond int32", IntRegionID(derpRegionID(beyond32)), wide(beyond32)},
		{"largest valid", IntRegionID(maxJS), wide(int64(maxJS))},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: IntRegionID = %d, want %d (%d-bit int)", tc.name, tc.got, tc.want, strconv.IntSize)
		}
	}
}

// TestBitsAreTheModules: the spelled-out bits are v1.102's named ones
// (and v1.104's Obsolete ones, whose values the module reserves).
func TestBitsAreTheModules(t *testing.T) {
	if got := strings.TrimPrefix(ipn.NotifyWatchOpt(NotifyInitialNetMap).String(), "ipn."); got != "NotifyInitialNetMap" && got != "ObsoleteNotifyInitialNetMap" {
		t.Errorf("NotifyInitialNetMap (1<<3) is %q in this module", got)
	}
	if got := strings.TrimPrefix(ipn.NotifyWatchOpt(NotifyRateLimit).String(), "ipn."); got != "NotifyRateLimit" && got != "ObsoleteNotifyRateLimit" {
		t.Errorf("NotifyRateLimit (1<<8) is %q in this module", got)
	}
	if NodeAttrOnlyTCP443 != "only-tcp-443" {
		t.Errorf("NodeAttrOnlyTCP443 = %q", NodeAttrOnlyTCP443)
	}
	// The module's own region-id type converts both ways.
	dm := tailcfg.DERPMap{Regions: map[RegionID]*tailcfg.DERPRegion{RegionID(900): {RegionID: 900}}}
	for id, r := range dm.Regions {
		if IntRegionID(id) != 900 || IntRegionID(r.RegionID) != 900 {
			t.Errorf("region %v read as %d", id, IntRegionID(id))
		}
	}
	var _ ipn.NotifyWatchOpt = NotifyInitialNetMap
}
