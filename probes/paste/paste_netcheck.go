package paste

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// netcheckFacts are what a netcheck report says: from `tailscale
// netcheck` (JSON or text, the CLI's own measurement), tailscaled's
// `netcheck: report:` log line or its `control: NetInfo: NetInfo{…}` (the
// daemon's). nil booleans are unknown.
type netcheckFacts struct {
	from                 string // KindNetcheckText, KindNetcheckJSON, fromLog, fromNetInfo
	at                   time.Time
	udp, ipv6, osHasIPv6 *bool
	mapping              *bool
	upnp, pmp, pcp       *bool
	havePortMap          *bool // NetInfo's "active-" (a mapping is held)
	v4                   *bool // a public IPv4 address was found
	preferred            int   // region id; 0 unknown
	preferredName        string
	latency              map[int]time.Duration
	codeLatency          map[string]time.Duration // text report, by code
	regionNames          map[string]string        // text report: code → name
	latencyRedacted      bool
	nearestUnknown       bool // "Nearest DERP: unknown (no response to latency probes)"
	// nothing: the report measured nothing (UDP false, no public address,
	// no DERP latency): its UDP is unknown, not false.
	nothing bool
}

// Report origins beside the Kind* of the CLI's.
const (
	fromLog     = "tailscaled log (netcheck: report)"
	fromNetInfo = "tailscaled log (control: NetInfo)"
)

// maxLatency bounds a believable DERP round trip; others are dropped.
const maxLatency = time.Hour

// natInfo is the facts as probes reads NetInfo, marked FromCLI when the
// CLI measured them (its own socket, not tailscaled's). UPnP, PMP and PCP say
// which port-mapping services answered; whether a mapping is held
// (HavePortMap) is a separate fact only NetInfo states ("portmap=active-…").
// A report from which it cannot be known leaves it unknown
// (PortMapUnknown) when a service answered or one was not checked: a
// service that answers need not map (a side router, a double NAT); when
// all three are known not to answer, no mapping can exist.
func (n *netcheckFacts) natInfo() *probes.NATInfo {
	out := &probes.NATInfo{WorkingUDP: n.udp, WorkingIPv6: n.ipv6, MappingVariesByDestIP: n.mapping, UPnP: n.upnp, PMP: n.pmp, PCP: n.pcp,
		FromCLI: n.from == KindNetcheckText || n.from == KindNetcheckJSON || n.from == fromProse}
	if n.havePortMap != nil {
		out.HavePortMap = *n.havePortMap
	} else {
		for _, b := range []*bool{n.upnp, n.pmp, n.pcp} {
			if b == nil || *b {
				out.PortMapUnknown = true
			}
		}
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

// regions is how many DERP regions the report lists a latency for.
func (n *netcheckFacts) regions() int {
	return max(len(n.latency), len(n.codeLatency))
}

// measured reports whether the report reached anything: a DERP region
// (a preferred one or a latency) or a public address.
func (n *netcheckFacts) measured() bool {
	return n.preferred != 0 || n.preferredName != "" || len(n.latency) > 0 || len(n.codeLatency) > 0 ||
		(n.v4 != nil && *n.v4) || n.latencyRedacted
}

// finish decides, once the report is read, whether it measured nothing:
// UDP false, no public address, no DERP latency (the CLI's "no response to
// latency probes"): with no DERP map, as when tailscaled is logged out,
// netcheck has nothing to probe, so its UDP false means unknown.
func (n *netcheckFacts) finish() {
	if n.udp != nil && !*n.udp && !n.measured() {
		n.nothing, n.udp = true, nil
	}
}

// note words the report for the inputs list.
func (n *netcheckFacts) note() string {
	if n.nothing {
		return "it measured nothing (UDP false, no address, no DERP latency): UDP is unknown, not blocked"
	}
	if n.from == fromLog || n.from == fromNetInfo {
		return "our NAT facts (measured by tailscaled)"
	}
	return "our NAT facts and DERP latencies (measured by the tailscale CLI from a socket of its own, not tailscaled's: a hard NAT there is not the daemon's)"
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
		GlobalV4              string
		RegionLatency         map[string]int64
		RegionV4Latency       map[string]int64
		RegionV6Latency       map[string]int64
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	n := &netcheckFacts{at: r.Now, udp: r.UDP, ipv6: r.IPv6, osHasIPv6: r.OSHasIPv6, mapping: r.MappingVariesByDestIP,
		upnp: r.UPnP, pmp: r.PMP, pcp: r.PCP, preferred: max(r.PreferredDERP, 0)}
	if r.GlobalV4 != "" && r.GlobalV4 != "<nil>" {
		n.v4 = boolp(true)
	}
	for _, m := range []map[string]int64{r.RegionLatency, r.RegionV4Latency, r.RegionV6Latency} {
		for k, ns := range m {
			if id, err := strconv.Atoi(k); err == nil {
				n.setLatency(id, time.Duration(ns))
			}
		}
	}
	n.finish()
	return n, nil
}

var (
	// ncItemRE is one "* Key: value" line of the text report.
	ncItemRE = lazyRE(`^\*\s*([A-Za-z0-9 ]+):\s*(.*)$`)
	// ncRegionRE is one "- code: 12.3ms (derpN, Name)" latency line; the
	// latency is empty for a region that did not answer.
	ncRegionRE = lazyRE(`^-\s*(\S+):\s*(\S*)\s*\((?:derp\d+, )?(.*)\)$`)
)

// parseReportTime reads the text report's "* Time:": tstime.DateSpTimeNanoZ
// in local time (1.100+: "2026-01-20 16:23:27.4256533+01:00"), RFC 3339
// with nanoseconds (1.78 to 1.98: "2026-01-20T15:23:27.4256533Z"), or Go's
// time.Time.String() ("2026-01-20 15:23:27.4256533 +0000 UTC").
func parseReportTime(s string) time.Time {
	if t := parseISO(s); !t.IsZero() {
		return t
	}
	return parseGoTimeString(s)
}

// goTimeStringRE is time.Time.String(), with or without its monotonic
// "m=+1.23" reading.
var goTimeStringRE = lazyRE(`^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? [+-]\d{4} [A-Za-z0-9+-]+)(?: m=[+-][\d.]+)?$`)

func parseGoTimeString(s string) time.Time {
	m := goTimeStringRE().FindStringSubmatch(s)
	if m == nil {
		return time.Time{}
	}
	// The zone's abbreviation repeats the offset ("-0500 -0500") or names
	// it ("+0000 UTC"): the offset alone dates it.
	i := strings.LastIndexByte(m[1], ' ')
	t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700", m[1][:i])
	if err != nil {
		return time.Time{}
	}
	return t
}

// netcheckLine reads one line of `tailscale netcheck`'s text report
// (cmd/tailscale/cli/netcheck.go printReport; 1.50 to 1.68 also print
// "HairPinning", 1.78 and later "Time") into b.nc. A placeholder or
// redaction leaves its field unknown.
func (p *paste) netcheckLine(b *blockState, trim string) bool {
	n := b.nc
	if m := ncRegionRE().FindStringSubmatch(trim); m != nil {
		code, name := safetext.Clean(knownName(m[1])), safetext.Clean(knownName(m[3]))
		if code == "" {
			n.latencyRedacted = true
			return true
		}
		if n.regionNames == nil {
			n.regionNames, n.codeLatency = map[string]string{}, map[string]time.Duration{}
		}
		n.regionNames[code] = name
		if d, err := time.ParseDuration(m[2]); err == nil && d > 0 && d < maxLatency {
			n.codeLatency[code] = d
		} else if isRedacted(m[2]) {
			n.latencyRedacted = true
		}
		return true
	}
	m := ncItemRE().FindStringSubmatch(trim)
	if m == nil {
		return false
	}
	key, val := m[1], strings.TrimSpace(m[2])
	redacted := isRedacted(val)
	switch key {
	case "Time":
		n.at = parseReportTime(val)
	case "UDP":
		if !redacted {
			n.udp = probes.OptBool(val)
		}
	case "IPv4":
		n.setIPv4(val)
	case "CaptivePortal", "HairPinning":
	case "IPv6":
		n.setIPv6(val)
	case "MappingVariesByDestIP":
		if !redacted {
			n.mapping = probes.OptBool(val)
		}
	case "PortMapping":
		switch {
		case val == "not checked", val == "binary built without portmapper support", redacted:
		default:
			has := func(s string) *bool { return boolp(strings.Contains(val, s)) }
			n.upnp, n.pmp, n.pcp = has("UPnP"), has("NAT-PMP"), has("PCP")
		}
	case "Nearest DERP":
		switch {
		case strings.HasPrefix(val, "unknown"):
			n.nearestUnknown = true
		case val == "[none]", redacted, val == "":
			if redacted {
				n.latencyRedacted = true
			}
		case strings.HasSuffix(val, "(region not found in map)"):
			if id, err := strconv.Atoi(strings.Fields(val)[0]); err == nil && id > 0 {
				n.preferred = id
			}
		default:
			n.preferredName = safetext.Clean(val)
		}
	case "DERP latency":
		if redacted {
			n.latencyRedacted = true
		}
	default:
		return false
	}
	return true
}

// parseNetcheckLog reads the fields of tailscaled's concise netcheck
// report (net/netcheck logConciseReport): "udp=true v6=false v6os=true
// mapvarydest=false portmap=UM v4a=… derp=1 derpdist=1v4:12ms,2v4:40ms";
// 1.50 to 1.66 also print "hair=". Empty values are opt.Bool's unknown, as
// tailscaled prints them when nothing answered.
func parseNetcheckLog(s string) *netcheckFacts {
	n := &netcheckFacts{from: fromLog}
	for _, kv := range strings.Fields(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch k {
		case "udp":
			n.udp = probes.OptBool(v)
		case "v4":
			if b := probes.OptBool(v); b != nil && !*b {
				n.v4 = b
			}
		case "v4a":
			if _, err := netip.ParseAddrPort(v); err == nil {
				n.v4 = boolp(true)
			}
		case "v6":
			n.ipv6 = probes.OptBool(v)
		case "v6os":
			n.osHasIPv6 = probes.OptBool(v)
		case "mapvarydest":
			n.mapping = probes.OptBool(v)
		case "portmap":
			n.upnp, n.pmp, n.pcp, _ = portmapLetters(v)
		case "derp":
			if id, err := strconv.Atoi(v); err == nil && id > 0 {
				n.preferred = id
			}
		case "derpdist":
			for _, e := range strings.Split(v, ",") {
				m := derpDistRE().FindStringSubmatch(e)
				if m == nil {
					continue
				}
				id, err1 := strconv.Atoi(m[1])
				d, err2 := time.ParseDuration(m[3])
				if err1 != nil || err2 != nil {
					continue
				}
				n.setLatency(id, d)
			}
		}
	}
	n.finish()
	return n
}

// portmapLetters reads a concise port-mapping summary (net/netcheck and
// tailcfg conciseOptBool): one letter per service that answered (U UPnP,
// M NAT-PMP, C PCP), "" for a no, "_" unknown, "x" invalid; "?" none
// checked; NetInfo prefixes "active-" when a mapping is held. Letters are
// sure; the others are known false only when nothing is unknown.
func portmapLetters(v string) (upnp, pmp, pcp, active *bool) {
	if strings.HasPrefix(v, "active-") {
		active, v = boolp(true), strings.TrimPrefix(v, "active-")
	}
	if v == "?" {
		return nil, nil, nil, active
	}
	sure := !strings.ContainsAny(v, "_x")
	get := func(c string) *bool {
		if strings.Contains(v, c) {
			return boolp(true)
		}
		if sure {
			return boolp(false)
		}
		return nil
	}
	return get("U"), get("M"), get("C"), active
}

// netInfoRE reads tailcfg.NetInfo.String() as control logs it
// ("control: NetInfo: NetInfo{varies=false hairpin= ipv6=false
// ipv6os=true udp=true icmpv4=false derp=#1 portmap=active-UM link=""
// firewallmode="ipt-default"}"; "hairpin=" until 1.90), also when a pager
// cut it ("firew>").
var netInfoKVRE = lazyRE(`(\w+)=("[^"]*"|[^ }>]*)`)

// parseNetInfo reads the fields of a NetInfo{…} string.
func parseNetInfo(s string) *netcheckFacts {
	n := &netcheckFacts{from: fromNetInfo}
	for _, ix := range netInfoKVRE().FindAllStringSubmatchIndex(s, -1) {
		k, v := s[ix[2]:ix[3]], s[ix[4]:ix[5]]
		if ix[1] < len(s) && s[ix[1]] == '>' {
			continue // a pager cut the value: "derp=#1>" may have been #12
		}
		switch k {
		case "varies":
			n.mapping = probes.OptBool(v)
		case "ipv6":
			n.ipv6 = probes.OptBool(v)
		case "ipv6os":
			n.osHasIPv6 = probes.OptBool(v)
		case "udp":
			n.udp = probes.OptBool(v)
		case "derp":
			if id, err := strconv.Atoi(strings.TrimPrefix(v, "#")); err == nil && id > 0 {
				n.preferred = id
			}
		case "portmap":
			n.upnp, n.pmp, n.pcp, n.havePortMap = portmapLetters(v)
			// tailcfg NetInfo.portMapSummary prints "active-" exactly
			// when HavePortMap is set; any other value ("?", "x", the
			// letters alone) holds no mapping.
			if n.havePortMap == nil {
				n.havePortMap = boolp(false)
			}
		}
	}
	// NetInfo carries no addresses or latencies: a false UDP with no home
	// region reached is as empty as the concise report's.
	if n.udp != nil && !*n.udp && n.preferred == 0 {
		n.nothing, n.udp = true, nil
	}
	return n
}

// spreadOf lists the facts that reports (in time order) disagree on,
// each report's value with its time; reports that measured nothing say
// nothing of UDP.
func spreadOf(reports []*netcheckFacts) []probes.FactSpread {
	facts := []struct {
		name string
		get  func(*netcheckFacts) *bool
	}{
		{"UDP", func(n *netcheckFacts) *bool { return n.udp }},
		{"MappingVariesByDestIP", func(n *netcheckFacts) *bool { return n.mapping }},
		{"IPv6", func(n *netcheckFacts) *bool { return n.ipv6 }},
	}
	var out []probes.FactSpread
	for _, f := range facts {
		var vals []probes.TimedReport
		seen := map[bool]bool{}
		for _, r := range reports {
			b := f.get(r)
			if b == nil || r.nothing {
				continue
			}
			seen[*b] = true
			vals = append(vals, probes.TimedReport{At: r.at, Value: strconv.FormatBool(*b), From: r.from})
		}
		if len(seen) == 2 {
			fs := probes.FactSpread{Fact: f.name}
			for _, v := range vals {
				if v.Value == "true" {
					fs.True++
				} else {
					fs.False++
				}
			}
			fs.Values = vals[max(len(vals)-probes.MaxSpreadValues, 0):]
			out = append(out, fs)
		}
	}
	return out
}

// spreadNote words a spread for the inputs list.
func spreadNote(s []probes.FactSpread) string {
	var parts []string
	for _, f := range s {
		parts = append(parts, fmt.Sprintf("%s true ×%d, false ×%d", f.Fact, f.True, f.False))
	}
	return "reports disagree: " + strings.Join(parts, "; ") + " (unknown, not the last report's)"
}

// The CLI's own lines around a netcheck report (cmd/tailscale/cli/netcheck.go
// runNetcheck), with or without log.Printf's time.
var (
	cliNoDERPMapRE = lazyRE(`(?:^|\s)(No DERP map from tailscaled; using default\.|Failed to fetch a DERP map, so netcheck cannot continue\.)`)
	cliUDPTestRE   = lazyRE(`(?:^|\s)netcheck: UDP test failure: (.*)$`)
)

// cliLine reads one of the CLI's netcheck lines; false when it is not one.
func (p *paste) cliLine(name string, no int, trim string) bool {
	if !strings.Contains(trim, "DERP map") && !strings.Contains(trim, "UDP test failure") {
		return false
	}
	switch {
	case cliNoDERPMapRE().MatchString(trim):
		p.ev.NoDERPMap = true
		p.addInput(snapshot.Input{Name: name, Kind: KindNetcheckText, First: no, Last: no, Note: "tailscaled had no DERP map (not logged in)"})
	case cliUDPTestRE().MatchString(trim):
		p.ev.UDPTestFailure = safetext.New(clip(safetext.Clean(cliUDPTestRE().FindStringSubmatch(trim)[1])))
		p.addInput(snapshot.Input{Name: name, Kind: KindNetcheckText, First: no, Last: no, Note: "the CLI could not send its UDP test"})
	default:
		return false
	}
	return true
}

func boolp(b bool) *bool { return &b }

// setIPv4 reads the report's IPv4 line ("yes, 198.51.100.7:41641" or
// "(no addr found)", cmd/tailscale/cli/netcheck.go printReport); false
// when val is neither.
func (n *netcheckFacts) setIPv4(val string) bool {
	switch {
	case strings.HasPrefix(val, "yes"):
		n.v4 = boolp(true)
	case val == "(no addr found)":
		n.v4 = boolp(false)
	default:
		return false
	}
	return true
}

// setIPv6 reads the report's IPv6 line ("yes, [2001:db8::7]:41641",
// "no, but OS has support", "no, unavailable in OS", "no"; printReport);
// an IPv6 of "(no addr found)" is yes: netcheck found IPv6 works.
func (n *netcheckFacts) setIPv6(val string) {
	yes, no := boolp(true), boolp(false)
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
}
