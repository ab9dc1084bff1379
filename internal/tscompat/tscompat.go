// Package tscompat is the one place that names what differs between the
// tailscale.com module versions tailpath reads the daemon with: v1.102.5,
// which it builds against, and v1.104, which users' tailscaled runs and
// which the module moves to once it can be built here (it needs Go 1.27.4
// and a gVisor version the module proxy does not serve).
//
// Between the two (tailcfg/derpmap.go, tailcfg/tailcfg.go, ipn/backend.go
// at v1.104.7):
//
//   - A DERP region id is typed tailcfg.DERPRegionID (int64) in the DERP
//     map (Regions, HomeParams.RegionScore), a node's HomeDERP, NetInfo's
//     PreferredDERP, netcheck.Report and PingResult.DERPRegionID; v1.102
//     types them int. The JSON is the same number either way.
//   - Capability constants live in tailcfg/nodecap and tailcfg/peercap;
//     tailcfg keeps deprecated aliases (tailcfg.NodeAttrOnlyTCP443 =
//     nodecap.OnlyTCP443).
//   - The IPN bus's NotifyInitialNetMap is ObsoleteNotifyInitialNetMap and
//     NotifyRateLimit ObsoleteNotifyRateLimit: ipn.ValidateNotifyWatchOpt
//     refuses both, so the LocalAPI answers a watch asking for either with
//     400 and the reason as text (RefusedNetMapText). ipn.Notify has no
//     NetMap field any more.
//
// Code elsewhere converts through this package instead of naming those
// types and constants, so it compiles against both versions and the move
// changes the lines below (docs/architecture.md lists them).
package tscompat

import "tailscale.com/tailcfg"

// RegionID is the module's type for a DERP region id: int in v1.102,
// tailcfg.DERPRegionID (int64) from v1.104. Use it to build tailcfg values
// (tailcfg.DERPMap{Regions: map[tscompat.RegionID]…}, DERPRegion.RegionID)
// and IntRegionID to read them.
type RegionID = int

// IntRegionID converts a DERP region id of the module's type (int or
// tailcfg.DERPRegionID) to tailpath's int. An id that does not fit in an
// int (beyond 2³¹-1 on a 32-bit platform; tailcfg.DERPRegionID allows up
// to 2⁵³-1) comes back 0, tailpath's "unknown", rather than wrapped into
// another region's id.
func IntRegionID[T ~int | ~int64](id T) int {
	if int64(int(id)) != int64(id) {
		return 0
	}
	return int(id)
}

// NodeAttrOnlyTCP443 is the node attribute that restricts a node to TCP
// 443 (no UDP, every path through DERP): tailcfg.NodeAttrOnlyTCP443 in
// v1.102, nodecap.OnlyTCP443 from v1.104 (where the tailcfg name is a
// deprecated alias).
const NodeAttrOnlyTCP443 = tailcfg.NodeAttrOnlyTCP443

// NodeAttrRandomizeClientPort is the node attribute (the policy file's
// randomizeClientPort) that makes magicsock bind a random UDP port,
// ignoring --port (wgengine/userspace.go Reconfig):
// tailcfg.NodeAttrRandomizeClientPort in v1.102, nodecap.RandomizeClientPort
// in v1.104 (the tailcfg name a deprecated alias).
const NodeAttrRandomizeClientPort = tailcfg.NodeAttrRandomizeClientPort

// NotifyInitialNetMap asks the IPN bus for a first message carrying the
// whole netmap (ipn.Notify.NetMap): every peer's tailcfg.Node at once.
// v1.102 names it ipn.NotifyInitialNetMap and sends the netmap on every
// platform; v1.104 renames it ObsoleteNotifyInitialNetMap, keeps the bit
// reserved (never reused) and refuses a watch that sets it. Spelled as its
// value so it compiles against both, and untyped (it combines with any
// ipn.NotifyWatchOpt) so that tscompat imports no tailscale.com/ipn, which
// brings net/http: probes imports tscompat and no network package.
const NotifyInitialNetMap = 1 << 3

// NotifyRateLimit is v1.102's ipn.NotifyRateLimit (v1.104:
// ObsoleteNotifyRateLimit, refused like NotifyInitialNetMap). tailpath
// does not ask for it; the fake daemon (probes/probestest) refuses it as
// v1.104 does.
const NotifyRateLimit = 1 << 8

// RefusedNetMapText and RefusedRateLimitText are what a v1.104 LocalAPI
// answers (400, text/plain, from ipn.ValidateNotifyWatchOpt through
// localapi's serveWatchIPNBus) to a watch-ipn-bus request whose mask sets
// NotifyInitialNetMap or NotifyRateLimit.
const (
	RefusedNetMapText    = "the NotifyInitialNetMap IPN bus subscription bit is no longer supported; seed from NotifyInitialStatus instead"
	RefusedRateLimitText = "the NotifyRateLimit IPN bus subscription bit is no longer supported"
)
