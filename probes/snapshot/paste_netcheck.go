package snapshot

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// netcheckFacts are what a netcheck report says: from `tailscale
// netcheck` (JSON or text, the CLI's own measurement) or tailscaled's
// `netcheck: report:` log line (the daemon's). nil booleans are unknown.
type netcheckFacts struct {
	at                   time.Time
	udp, ipv6, osHasIPv6 *bool
	mapping              *bool
	upnp, pmp, pcp       *bool
	preferred            int    // region id; 0 unknown
	preferredName        string // region name (text report)
	latency              map[int]time.Duration
	codeLatency          map[string]time.Duration // text report, by code
	regionNames          map[string]string        // text report: code → name
}

// maxLatency bounds a believable DERP round trip; others are dropped.
const maxLatency = time.Hour

// natInfo is the facts as probes reads NetInfo. HavePortMap is true when
// a port-mapping service answered (tailscaled then maps a port).
func (n *netcheckFacts) natInfo() *probes.NATInfo {
	out := &probes.NATInfo{WorkingUDP: n.udp, WorkingIPv6: n.ipv6, MappingVariesByDestIP: n.mapping, UPnP: n.upnp, PMP: n.pmp, PCP: n.pcp}
	for _, b := range []*bool{n.upnp, n.pmp, n.pcp} {
		switch {
		case b == nil:
			out.PortMapUnknown = true
		case *b:
			out.HavePortMap = true
		}
	}
	if out.HavePortMap {
		out.PortMapUnknown = false
	}
	if len(n.latency) > 0 {
		out.DERPLatency = n.latency
	}
	return out
}

// setLatency records a region's latency (best of IPv4/IPv6).
func (n *netcheckFacts) setLatency(id int, d time.Duration) {
	if d <= 0 || d > maxLatency || id <= 0 {
		return
	}
	if n.latency == nil {
		n.latency = map[int]time.Duration{}
	}
	if old, ok := n.latency[id]; !ok || d < old {
		n.latency[id] = d
	}
}

// netcheckFromJSON reads `tailscale netcheck --format=json`
// (net/netcheck.Report). Fields an older version lacks stay unknown.
func netcheckFromJSON(raw []byte) (*netcheckFacts, error) {
	var r struct {
		Now                   time.Time
		UDP                   *bool
		IPv6                  *bool
		OSHasIPv6             *bool
		MappingVariesByDestIP *bool
		UPnP, PMP, PCP        *bool
		PreferredDERP         int
		RegionLatency         map[string]int64
		RegionV4Latency       map[string]int64
		RegionV6Latency       map[string]int64
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	n := &netcheckFacts{at: r.Now, udp: r.UDP, ipv6: r.IPv6, osHasIPv6: r.OSHasIPv6, mapping: r.MappingVariesByDestIP,
		upnp: r.UPnP, pmp: r.PMP, pcp: r.PCP, preferred: max(r.PreferredDERP, 0)}
	for _, m := range []map[string]int64{r.RegionLatency, r.RegionV4Latency, r.RegionV6Latency} {
		for k, ns := range m {
			if id, err := strconv.Atoi(k); err == nil {
				n.setLatency(id, time.Duration(ns))
			}
		}
	}
	return n, nil
}

var (
	// ncItemRE is one "* Key: value" line of the text report.
	ncItemRE = regexp.MustCompile(`^\*\s+([A-Za-z0-9 ]+):\s*(.*)$`)
	// ncRegionRE is one "- code: 12.3ms (derpN, Name)" latency line; the
	// latency is empty for a region that did not answer.
	ncRegionRE = regexp.MustCompile(`^-\s+(\S+):\s+(\S*)\s*\((?:derp\d+, )?(.*)\)$`)
)

// netcheckTimeLayout is the text report's "* Time:" (tstime.DateSpTimeNanoZ).
const netcheckTimeLayout = "2006-01-02 15:04:05.999999999Z07:00"

// netcheckLine reads one line of `tailscale netcheck`'s text report
// (cmd/tailscale/cli/netcheck.go printReport) into b.nc.
func (p *paste) netcheckLine(b *blockState, trim string) bool {
	n := b.nc
	if m := ncRegionRE.FindStringSubmatch(trim); m != nil {
		code, name := safetext.Clean(m[1]), safetext.Clean(m[3])
		if n.regionNames == nil {
			n.regionNames, n.codeLatency = map[string]string{}, map[string]time.Duration{}
		}
		n.regionNames[code] = name
		if d, err := time.ParseDuration(m[2]); err == nil && d > 0 && d < maxLatency {
			n.codeLatency[code] = d
		}
		return true
	}
	m := ncItemRE.FindStringSubmatch(trim)
	if m == nil {
		return false
	}
	key, val := m[1], strings.TrimSpace(m[2])
	yes, no := boolp(true), boolp(false)
	switch key {
	case "Time":
		if t, err := time.Parse(netcheckTimeLayout, val); err == nil {
			n.at = t
		}
	case "UDP":
		n.udp = probes.OptBool(val)
	case "IPv4", "CaptivePortal", "HairPinning":
	case "IPv6":
		switch {
		case strings.HasPrefix(val, "yes"), val == "(no addr found)":
			n.ipv6 = yes
		case val == "no, but OS has support":
			n.ipv6, n.osHasIPv6 = no, yes
		case val == "no, unavailable in OS":
			n.ipv6, n.osHasIPv6 = no, no
		case val == "no":
			n.ipv6 = no
		}
	case "MappingVariesByDestIP":
		n.mapping = probes.OptBool(val)
	case "PortMapping":
		switch val {
		case "not checked", "binary built without portmapper support":
		default:
			has := func(s string) *bool { return boolp(strings.Contains(val, s)) }
			n.upnp, n.pmp, n.pcp = has("UPnP"), has("NAT-PMP"), has("PCP")
		}
	case "Nearest DERP":
		switch {
		case strings.HasPrefix(val, "unknown"), val == "[none]":
		case strings.HasSuffix(val, "(region not found in map)"):
			if id, err := strconv.Atoi(strings.Fields(val)[0]); err == nil && id > 0 {
				n.preferred = id
			}
		default:
			n.preferredName = safetext.Clean(val)
		}
	case "DERP latency":
	default:
		return false
	}
	return true
}

func boolp(b bool) *bool { return &b }
