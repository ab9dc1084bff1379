package snapshot

import (
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// Log line prefixes: journalctl's short and short-iso forms, Go's log
// package, a bare ISO 8601 time.
var (
	journalRE    = regexp.MustCompile(`^([A-Z][a-z]{2} [ 0-9]?\d \d{2}:\d{2}:\d{2}) \S+ [^:\[\s]+(?:\[\d+\])?: (.*)$`)
	journalISORE = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})) \S+ [^:\[\s]+(?:\[\d+\])?: (.*)$`)
	goLogRE      = regexp.MustCompile(`^(\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) (.*)$`)
	isoRE        = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?):? (.*)$`)
)

// The tailscaled messages read (wgengine/magicsock, net/netcheck,
// ipn/ipnlocal), after an optional "[v1] ".
var (
	logNetcheckRE  = regexp.MustCompile(`^netcheck: (?:\[v\d\] )?report: (.*)$`)
	logEndpointsRE = regexp.MustCompile(`^magicsock: endpoints changed: (.*)$`)
	logHomeRE      = regexp.MustCompile(`^magicsock: home is now derp-(\d+) \(([^)]*)\)$`)
	logHomeMoveRE  = regexp.MustCompile(`^magicsock: home DERP changing from derp-(\d+) \[(\d+)ms\] to derp-(\d+) \[(\d+)ms\]`)
	logDirectRE    = regexp.MustCompile(`^magicsock: (?:\[v\d\] )?disco: node (\[[^\]\s]{1,16}\]) \S+ now using (\S+)`)
	logHealthRE    = regexp.MustCompile(`^health\(warnable=([^)\s]+)\): (?:error: (.*)|(ok))$`)
	logDERPConnRE  = regexp.MustCompile(`^magicsock: derp-(\d+) connected`)
	derpDistRE     = regexp.MustCompile(`^(\d+)v([46]):(\S+)$`)
)

// directSeen is a "now using" line: the daemon picked a direct path.
type directSeen struct {
	at   time.Time
	addr netip.AddrPort
}

// logTime splits a log line into its time (zero when it has none) and
// message.
func (p *paste) logTime(line string) (time.Time, string) {
	if m := journalRE.FindStringSubmatch(line); m != nil {
		t, err := time.Parse("Jan _2 15:04:05", strings.Join(strings.Fields(m[1]), " "))
		msg := m[2]
		if t2, rest := p.logTime(msg); !t2.IsZero() {
			return t2, rest
		}
		if err != nil {
			return time.Time{}, msg
		}
		y := p.now.Year()
		t = t.AddDate(y, 0, 0)
		if t.After(p.now.Add(24 * time.Hour)) {
			t = t.AddDate(-1, 0, 0)
		}
		p.yearless = true
		return t, msg
	}
	if m := journalISORE.FindStringSubmatch(line); m != nil {
		t := parseISO(m[1])
		if t2, rest := p.logTime(m[2]); !t2.IsZero() {
			return t2, rest
		}
		return t, m[2]
	}
	if m := goLogRE.FindStringSubmatch(line); m != nil {
		t, err := time.Parse("2006/01/02 15:04:05.999999999", m[1])
		if err != nil {
			return time.Time{}, m[2]
		}
		return t, m[2]
	}
	if m := isoRE.FindStringSubmatch(line); m != nil {
		return parseISO(m[1]), m[2]
	}
	return time.Time{}, line
}

// parseISO reads the ISO 8601 forms logs use; zero if none fits.
func parseISO(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999-0700", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999-0700", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// logLine reads one tailscaled log line.
func (p *paste) logLine(name string, no int, trim string) bool {
	at, msg := p.logTime(trim)
	msg = strings.TrimPrefix(strings.TrimPrefix(msg, "[v1] "), "[v2] ")
	kind := ""
	switch {
	case logNetcheckRE.MatchString(msg):
		nf := parseNetcheckLog(logNetcheckRE.FindStringSubmatch(msg)[1])
		nf.at = at
		if p.logNet == nil || !at.Before(p.logNet.at) {
			p.logNet = nf
		}
		for _, id := range slices.Sorted(maps.Keys(nf.latency)) {
			p.region(id, "", "")
		}
		kind = "netcheck report"
	case logEndpointsRE.MatchString(msg):
		var eps []netip.AddrPort
		for _, part := range strings.Split(logEndpointsRE.FindStringSubmatch(msg)[1], ", ") {
			if f := strings.Fields(part); len(f) > 0 {
				if ap, err := netip.ParseAddrPort(f[0]); err == nil {
					eps = append(eps, ap)
				}
			}
		}
		p.endpoints = eps
		kind = "our endpoints"
	case logHomeRE.MatchString(msg):
		m := logHomeRE.FindStringSubmatch(msg)
		id, _ := strconv.Atoi(m[1])
		if id > 0 {
			p.homeDERP = p.region(id, m[2], "")
		}
		kind = "home DERP"
	case logHomeMoveRE.MatchString(msg):
		m := logHomeMoveRE.FindStringSubmatch(msg)
		if id, err := strconv.Atoi(m[3]); err == nil && id > 0 {
			p.homeDERP = p.region(id, "", "")
		}
		kind = "home DERP"
	case logDirectRE.MatchString(msg):
		m := logDirectRE.FindStringSubmatch(msg)
		if ap, err := netip.ParseAddrPort(m[2]); err == nil && !at.IsZero() {
			p.direct[m[1]] = directSeen{at: at, addr: ap}
		}
		kind = "direct path"
	case logHealthRE.MatchString(msg):
		m := logHealthRE.FindStringSubmatch(msg)
		w := safetext.Clean(m[1])
		if m[3] == "ok" {
			p.logHealth[w] = ""
		} else {
			p.logHealth[w] = safetext.Clean(m[2])
		}
		kind = "health"
	case logDERPConnRE.MatchString(msg):
		kind = "DERP connection"
	default:
		return false
	}
	p.noteTime(at)
	p.logCount[kind]++
	p.addInput(Input{Name: name, Kind: KindLog, First: no, Last: no})
	return true
}

// parseNetcheckLog reads the fields of tailscaled's concise netcheck
// report (net/netcheck logConciseReport): "udp=true v6=false v6os=true
// mapvarydest=false portmap=UM v4a=… derp=1 derpdist=1v4:12ms,2v4:40ms".
func parseNetcheckLog(s string) *netcheckFacts {
	n := &netcheckFacts{}
	for _, kv := range strings.Fields(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch k {
		case "udp":
			n.udp = probes.OptBool(v)
		case "v6":
			n.ipv6 = probes.OptBool(v)
		case "v6os":
			n.osHasIPv6 = probes.OptBool(v)
		case "mapvarydest":
			n.mapping = probes.OptBool(v)
		case "portmap":
			// One letter per service that answered (U UPnP, M NAT-PMP, C
			// PCP), "" for a no, "_" unknown, "x" invalid, "?" none
			// checked: letters are sure; the others are known false only
			// when nothing is unknown.
			if v == "?" {
				continue
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
			n.upnp, n.pmp, n.pcp = get("U"), get("M"), get("C")
		case "derp":
			if id, err := strconv.Atoi(v); err == nil && id > 0 {
				n.preferred = id
			}
		case "derpdist":
			for _, e := range strings.Split(v, ",") {
				m := derpDistRE.FindStringSubmatch(e)
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
	return n
}
