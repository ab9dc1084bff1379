package probes

import (
	"net/netip"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpOpts compares netip values by ==.
var cmpOpts = []cmp.Option{cmpopts.EquateComparable(netip.Addr{}, netip.AddrPort{}, netip.Prefix{})}
