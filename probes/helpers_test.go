package probes

import (
	"net/netip"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpOpts compares netip values by ==.
var cmpOpts = []cmp.Option{cmpopts.EquateComparable(netip.Addr{}, netip.AddrPort{}, netip.Prefix{})}

// fixtureNow is the clock for fixture tests; fixture timestamps are around it.
var fixtureNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
