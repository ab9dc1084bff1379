package paste

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
	"github.com/tailpath/tailpath/probes/snapshot"
)

// tailscaled's log lines, in the wrappers they are pasted in. A line is
// taken apart from the outside in (splitLog), each layer giving what it
// knows, the innermost time winning:
//
//   - docker compose's "service-1  | " prefix;
//   - journald: "Oct 18 07:56:48 host tailscaled[1160]: " (short, and
//     short-precise with microseconds; the year is assumed), short-iso
//     "2026-10-18T07:56:48+0000 host tailscaled[1160]: ", and a bare
//     "tailscaled[1160]: " (journalctl -o cat with the identifier kept);
//   - `docker logs -t`'s RFC 3339 time, then the container's own line;
//   - Go's log package, "2021/03/22 12:08:59" (tailscaled's own, and
//     containers'), also with microseconds;
//   - Windows log files (log/filelogger): "2021-03-22T12:08:59.712-04:00: ";
//   - Go's time.Time.String() as bug reports quote it: "2021-03-22
//     12:08:59.712038879 -0400 -0400:" and its "+0000 UTC:" twin;
//   - RFC 3339 alone.
//
// The message may carry "[v1]"/"[v2]"/"[unexpected]" tags and, from a
// program embedding Tailscale's packages, its own logger prefixes ("…
// net.tailnet.net.wgengine: netcheck: [v1] report: …"): messages are
// found where they start, not only at the line's start.

var (
	composeRE    = lazyRE(`^([\w.-]+)\s+\|\s?`)
	journalRE    = lazyRE(`^([A-Z][a-z]{2} [ 0-9]?\d \d{2}:\d{2}:\d{2}(?:\.\d+)?) ([^\s:]+) ([^:\[\s]+)(?:\[\d+\])?: `)
	journalISORE = lazyRE(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})) ([^\s:]+) ([^:\[\s]+)(?:\[\d+\])?: `)
	identRE      = lazyRE(`^(tailscaled?|tailscale-\w+)\[\d+\]: `)
	goStringRE   = lazyRE(`^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? [+-]\d{4} [A-Za-z0-9+-]+)(?: m=[+-][\d.]+)?:? `)
	goLogRE      = lazyRE(`^(\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) `)
	isoRE        = lazyRE(`^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?):? `)
)

// The tailscaled messages read (wgengine/magicsock, net/netcheck,
// control/controlclient, ipn/ipnlocal, net/portmapper, derp/derphttp,
// wgengine/userspace.go, logtail), wherever they start in the message.
var (
	logNetcheckRE   = lazyRE(`(?:^|\s)netcheck: (?:\[v\d\] )?report: (.*)$`)
	logNetInfoRE    = lazyRE(`(?:^|\s)NetInfo: (NetInfo\{.*)$`)
	logUDPBlockedRE = lazyRE(`UDP is blocked, trying (HTTPS|ICMP)`)
	logEndpointsRE  = lazyRE(`magicsock: endpoints changed: (.*)$`)
	logHomeRE       = lazyRE(`magicsock: home is now derp-(\d+) \(([^)]*)\)`)
	logHomeMoveRE   = lazyRE(`magicsock: home DERP changing from derp-(\d+) \[(\d+)ms\] to derp-(\d+) \[(\d+)ms\]`)
	logDirectRE     = lazyRE(`magicsock: (?:\[v\d\] )?disco: node (\[[^\]\s]{1,16}\]) \S+ now using (\S+)`)
	logDiscoRE      = lazyRE(`magicsock: (?:\[v\d\] )?disco: `)
	logDERPGoneRE   = lazyRE(`magicsock: derp-(\d+) (?:does not know about peer|peer) (\S+?),? (?:gone, .*)?removing route`)
	logDERPRouteRE  = lazyRE(`magicsock: derp route for \S+ (?:set to|changed from)`)
	logHealthRE     = lazyRE(`health\((?:warnable=([^)\s]+)|"([^"]*)")\): (?:error: (.*)|(ok))$`)
	logDERPConnRE   = lazyRE(`magicsock: derp-(\d+) connected`)
	// logpolicy/logpolicy.go: "Program starting: v%v, Go %v: %#v".
	logStartRE     = lazyRE(`Program starting: v(\d+\.\d+\.\d+[-.\w]*)`)
	logDERPFailRE  = lazyRE(`connect to region (\d+) \(([^)]*)\): (.*)$`)
	logProxyRE     = lazyRE(`derphttp: CONNECT dial to (\S+): (.*)$`)
	logUPnPGwRE    = lazyRE(`UPnP discovery response from (\S+), but gateway IP is (\S+)`)
	logPortmapOKRE = lazyRE(`successfully obtained mapping: .*external=(\S+) type=(\w+)`)
	logLinkRE      = lazyRE(`LinkChange: major, rebinding(?:\. New state: |: )(.*)$`)
	logLinkMinorRE = lazyRE(`LinkChange: (?:minor|all links down)`)
	logNetmapRE    = lazyRE(`mapRoutine: netmap received`)
	logControlRE   = lazyRE(`(?:Received error: |PollNetMap: |mapRoutine: |authRoutine: )(.*)$`)
	logUploadRE    = lazyRE(`logtail: upload: (.*)$`)
	derpDistRE     = lazyRE(`^(\d+)v([46]):(\S+)$`)
	// daemonMsgRE is a message of one of tailscaled's subsystems (its
	// logger prefixes), after optional tags: a line of tailscaled's log
	// even when none of the above reads it.
	daemonMsgRE = lazyRE(`^(?:\[(?:v\d|unexpected|RATELIMIT)\] )*(?:boot|magicsock|wgengine|netcheck|control|health|LinkChange|logtail|derphttp|derp|portmapper|portmap|dns|router|monitor|netmon|ipnlocal|ipnserver|ipnext|wg|Rebind|ReSTUN|peerapi|tsdial|logpolicy|tailscaled|netstack|tstun|bootstrapDNS|dnsfallback|taildrop|ssh|Reconfig|LinkMonitor|post-rebind|pm|linkChange|active login|Switching ipn state|Start|Backend|timeSinceLastPong|open-conn-track|flushing log|logtail started|Program starting|envknob|got LocalBackend)[:\s(.]`)
	// midStreamRE marks a stream cut in the middle: EOF before the end
	// (io.ErrUnexpectedEOF) or a reset. A plain "EOF" is a stream that
	// ended, which ipnlocal logs at [v1] as normal.
	midStreamRE = lazyRE(`unexpected EOF|connection reset by peer`)
	// tlsRecordRE is a TLS record that arrived corrupted.
	tlsRecordRE = lazyRE(`tls: bad record MAC|tls: record overflow|decryption failed or bad record mac`)
)

// directSeen is a "now using" line: the daemon picked a direct path.
type directSeen struct {
	at   time.Time
	addr netip.AddrPort
}

// logParts is a log line taken apart.
type logParts struct {
	at      time.Time
	msg     string
	wrapped bool // a log wrapper (time, journal, compose) was found
	daemon  bool // the wrapper names tailscaled
}

// splitLog takes line's wrappers off, from the outside in. The wrapper
// patterns match a prefix only, so the message is never scanned by them.
func (p *paste) splitLog(line string) logParts {
	var lp logParts
	lp.msg = line
	// prefix matches re at the start of msg: its submatches and the rest.
	prefix := func(re *regexp.Regexp, msg string) ([]string, string, bool) {
		loc := re.FindStringSubmatchIndex(msg)
		if loc == nil {
			return nil, "", false
		}
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = msg[loc[2*i]:loc[2*i+1]]
			}
		}
		return m, msg[loc[1]:], true
	}
	prefixIf := func(cond bool, re *regexp.Regexp, msg string) ([]string, string, bool) {
		if !cond {
			return nil, "", false
		}
		return prefix(re, msg)
	}
	for depth := 0; depth < 6; depth++ {
		msg := lp.msg
		if msg == "" {
			return lp
		}
		c := msg[0]
		digit := c >= '0' && c <= '9'
		var t time.Time
		if strings.IndexByte(msg, '|') > 0 {
			if m, rest, ok := prefix(composeRE(), msg); ok && !strings.Contains(m[1], ":") {
				lp.msg, lp.wrapped = rest, true
				lp.daemon = lp.daemon || strings.Contains(m[1], "tailscale")
				continue
			}
		}
		// Each wrapper's first byte is tested before its pattern runs.
		if m, rest, ok := prefixIf(c >= 'A' && c <= 'Z', journalRE(), msg); ok {
			tt, err := time.Parse("Jan _2 15:04:05.999999999", strings.Join(strings.Fields(m[1]), " "))
			if err == nil {
				y := p.now.Year()
				tt = tt.AddDate(y, 0, 0)
				if tt.After(p.now.Add(24 * time.Hour)) {
					tt = tt.AddDate(-1, 0, 0)
				}
				t = tt
				p.yearless = true
			}
			lp.msg = rest
			lp.daemon = lp.daemon || strings.HasPrefix(m[3], "tailscale")
		} else if m, rest, ok := prefixIf(digit, journalISORE(), msg); ok {
			t, lp.msg = parseISO(m[1]), rest
			lp.daemon = lp.daemon || strings.HasPrefix(m[3], "tailscale")
		} else if _, rest, ok := prefixIf(c == 't', identRE(), msg); ok {
			lp.msg, lp.daemon = rest, true
		} else if m, rest, ok := prefixIf(digit, goStringRE(), msg); ok {
			t, lp.msg = parseGoTimeString(m[1]), rest
		} else if m, rest, ok := prefixIf(digit && len(msg) > 4 && msg[4] == '/', goLogRE(), msg); ok {
			t, _ = time.Parse("2006/01/02 15:04:05.999999999", m[1])
			lp.msg = rest
		} else if m, rest, ok := prefixIf(digit, isoRE(), msg); ok {
			t, lp.msg = parseISO(m[1]), rest
		} else {
			return lp
		}
		lp.wrapped = true
		if !t.IsZero() {
			lp.at = t // the innermost time wins: the program's own
		}
	}
	return lp
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

// logLine reads one tailscaled log line; false when it is not one.
func (p *paste) logLine(name string, no int, trim string) bool {
	lp := p.splitLog(trim)
	at, msg := lp.at, lp.msg
	kind := p.logMessage(at, msg)
	if kind == "" {
		// Not a message read here: still a line of tailscaled's log when
		// its wrapper or its subsystem prefix says so.
		if !(lp.daemon || (lp.wrapped && daemonMsgRE().MatchString(msg))) {
			return false
		}
		kind = "other tailscaled lines"
	}
	p.ev.LogLines++
	p.noteTime(at)
	p.logCount[kind]++
	p.addInput(snapshot.Input{Name: name, Kind: KindLog, First: no, Last: no})
	return true
}

// logMessage reads one message and returns the kind it is counted as, ""
// when none of the read messages.
//
// Long on purpose: a table: one case per tailscaled log message, matched in
// order.
func (p *paste) logMessage(at time.Time, msg string) string {
	// find matches re once and keeps its submatches in m.
	var m []string
	find := func(re *regexp.Regexp) bool {
		m = re.FindStringSubmatch(msg)
		return m != nil
	}
	switch {
	case strings.Contains(msg, "report: ") && find(logNetcheckRE()):
		nf := parseNetcheckLog(m[1])
		nf.at = at
		p.logNets = append(p.logNets, nf)
		for _, id := range slices.Sorted(maps.Keys(nf.latency)) {
			p.region(id, "", "")
		}
		if nf.preferred != 0 {
			p.region(nf.preferred, "", "")
		}
		return "netcheck report"
	case strings.Contains(msg, "NetInfo{") && find(logNetInfoRE()):
		nf := parseNetInfo(m[1])
		nf.at = at
		p.logNets = append(p.logNets, nf)
		if nf.preferred != 0 {
			p.region(nf.preferred, "", "")
		}
		return "NetInfo"
	case strings.Contains(msg, "UDP is blocked") && find(logUDPBlockedRE()):
		if ev := &p.ev; at.IsZero() || ev.UDPBlockedAt.IsZero() || !at.Before(ev.UDPBlockedAt) {
			// The newest block line; a STUN endpoint counts only after it.
			ev.UDPBlockedLogged, ev.UDPBlockedAt = "netcheck: UDP is blocked, trying "+m[1], at
			ev.UDPWorkedLogged, ev.UDPWorkedAt = "", time.Time{}
		}
		return "netcheck: UDP blocked"
	case strings.Contains(msg, "endpoints changed") && find(logEndpointsRE()):
		var eps []netip.AddrPort
		var types []string
		for _, part := range strings.Split(m[1], ", ") {
			f := strings.Fields(part)
			if len(f) == 0 {
				continue
			}
			ap, err := netip.ParseAddrPort(f[0])
			if err != nil {
				continue
			}
			eps = append(eps, ap)
			typ := ""
			if len(f) > 1 {
				typ = safetext.Clean(strings.Trim(f[1], "()"))
			}
			types = append(types, typ)
		}
		p.endpoints, p.epTypes = eps, types
		p.stunAfterBlock(at, eps, types)
		return "our endpoints"
	case strings.Contains(msg, "home is now") && find(logHomeRE()):
		if id, _ := strconv.Atoi(m[1]); id > 0 {
			p.homeDERP = p.region(id, m[2], "")
			if p.homeDERP == 0 {
				p.homeDERP = p.region(id, "", "")
			}
		}
		return "home DERP"
	case strings.Contains(msg, "home DERP changing") && find(logHomeMoveRE()):
		if id, err := strconv.Atoi(m[3]); err == nil && id > 0 {
			p.homeDERP = p.region(id, "", "")
		}
		return "home DERP"
	case strings.Contains(msg, "now using") && find(logDirectRE()):
		if ap, err := netip.ParseAddrPort(m[2]); err == nil && !at.IsZero() {
			p.direct[m[1]] = directSeen{at: at, addr: ap}
		}
		return "direct path"
	case strings.Contains(msg, "removing route") && find(logDERPGoneRE()):
		p.peerGone(m[1], m[2], at)
		return "DERP: a peer left a region"
	case strings.Contains(msg, "derp route for") && find(logDERPRouteRE()):
		return "DERP route"
	case strings.Contains(msg, "disco: ") && find(logDiscoRE()):
		return "DISCO"
	case strings.Contains(msg, "health(") && find(logHealthRE()):
		w := safetext.Clean(m[1] + m[2])
		if m[4] == "ok" {
			p.logHealth[w] = ""
		} else {
			p.logHealth[w] = safetext.Clean(m[3])
		}
		return "health"
	case strings.Contains(msg, "Program starting: v") && find(logStartRE()):
		// logpolicy.New logs the daemon's version as it starts; the
		// last start in the log is the version that runs.
		p.version = safetext.Clean(m[1])
		p.daemonArgs(msg)
		return "tailscaled started"
	case strings.Contains(msg, " connected") && find(logDERPConnRE()):
		if id, err := strconv.Atoi(m[1]); err == nil {
			p.derpConnected(id, at)
		}
		return "DERP connection"
	case strings.Contains(msg, "connect to region") && find(logDERPFailRE()):
		id, _ := strconv.Atoi(m[1])
		code := safetext.Clean(knownName(m[2]))
		p.derpError(id, code, m[3], at)
		return "DERP connection failed"
	case strings.Contains(msg, "CONNECT dial") && find(logProxyRE()):
		// derphttp dialNodeUsingProxy logs the proxy's answer whatever it
		// is: 200 is a tunnel made, anything else a refusal.
		if strings.HasPrefix(strings.TrimSpace(m[2]), "200") {
			p.ev.ProxyConnect = safetext.New(clip(safetext.Clean(m[1])))
			return "DERP through a proxy"
		}
		p.ev.ProxyError = safetext.New(clip("CONNECT to " + safetext.Clean(m[1]) + ": " + safetext.Clean(m[2])))
		return "DERP through a proxy failed"
	case strings.Contains(msg, "gateway IP is") && find(logUPnPGwRE()):
		from, err1 := netip.ParseAddr(strings.TrimSuffix(m[1], ","))
		gw, err2 := netip.ParseAddr(m[2])
		if err1 == nil && err2 == nil {
			p.ev.UPnPFrom, p.ev.UPnPGateway = from, gw
		}
		return "port mapping: UPnP from another router"
	case strings.Contains(msg, "obtained mapping") && find(logPortmapOKRE()):
		return "port mapping obtained"
	case strings.Contains(msg, "LinkChange: major") && find(logLinkRE()):
		p.linkChange(at, m[1])
		return "network change"
	case strings.Contains(msg, "LinkChange: ") && find(logLinkMinorRE()):
		return "network change"
	case strings.Contains(msg, "logtail: upload") && find(logUploadRE()):
		p.streamError(at, m[1])
		return "log upload"
	case strings.Contains(msg, "netmap received") && find(logNetmapRE()):
		p.ev.NetmapsReceived++
		p.netmapSince = true
		return "control: netmap received"
	case (strings.Contains(msg, "Received error: ") || strings.Contains(msg, "PollNetMap: ") || strings.Contains(msg, "Routine: ")) && find(logControlRE()):
		p.streamError(at, "PollNetMap: "+strings.TrimPrefix(m[1], "PollNetMap: "))
		return "control connection"
	}
	return p.moreLog(at, msg)
}

// streamError counts a stream cut mid-way (control) and corrupted TLS
// records in an error's text. The same error logged twice at one time
// (controlclient's "[v1] PollNetMap: …" and ipnlocal's "Received error:
// PollNetMap: …") counts once.
func (p *paste) streamError(at time.Time, text string) {
	text = safetext.Clean(text)
	text = strings.TrimPrefix(text, "PollNetMap: ")
	key := at.Truncate(time.Second).String() + " " + text
	if p.seenErrs[key] {
		return
	}
	if p.seenErrs == nil {
		p.seenErrs = map[string]bool{}
	}
	p.seenErrs[key] = true
	if tlsRecordRE().MatchString(text) {
		p.ev.TLSRecordErrors++
		p.ev.TLSRecordError = safetext.New(clip(text))
		p.breakEvent(at, false)
		return
	}
	if midStreamRE().MatchString(text) {
		p.ev.ControlBreaks++
		p.ev.ControlBreak = safetext.New(clip(text))
		p.breakEvent(at, true)
	}
}

// breakEvent adds a cut stream (brk) or a corrupted TLS record to the
// run being read, or starts a new run after a netmap was received or
// more than probes.ControlBreakWindow after the run's last event, and
// keeps the worst run in SelfEvidence.BreakRun. Lines are taken in the
// order read.
func (p *paste) breakEvent(at time.Time, brk bool) {
	r := p.breakRun
	if r == nil || p.netmapSince || (!at.IsZero() && !r.Last.IsZero() && at.Sub(r.Last) > probes.ControlBreakWindow) {
		r = &probes.BreakRun{First: at}
		p.breakRun = r
	}
	p.netmapSince = false
	if brk {
		r.Breaks++
	} else {
		r.TLSErrors++
	}
	if !at.IsZero() {
		r.Last = at
	}
	best := p.ev.BreakRun
	if best == nil || r.Breaks > best.Breaks || (r.Breaks == best.Breaks && r.TLSErrors > best.TLSErrors) {
		c := *r
		p.ev.BreakRun = &c
	}
}

// stunAfterBlock notes a STUN endpoint logged after the newest "UDP is
// blocked" line (magicsock determineEndpoints adds one only from STUN
// replies): evidence UDP worked since.
func (p *paste) stunAfterBlock(at time.Time, eps []netip.AddrPort, types []string) {
	ev := &p.ev
	if ev.UDPBlockedLogged == "" || (!at.IsZero() && !ev.UDPBlockedAt.IsZero() && at.Before(ev.UDPBlockedAt)) {
		return
	}
	for i, t := range types {
		if t == "stun" || t == "stun4localport" {
			ev.UDPWorkedLogged, ev.UDPWorkedAt = eps[i].String()+" ("+t+")", at
			return
		}
	}
}

// derpConnected notes "derp-N connected": magicsock connected to region
// id (wgengine/magicsock/derp.go), so failures logged before it are over.
func (p *paste) derpConnected(id int, at time.Time) {
	if p.derpConnAt == nil {
		p.derpConnAt = map[int]time.Time{}
	}
	p.derpConnAt[id] = at
	i, ok := p.derpErrIdx[id]
	if !ok {
		return
	}
	e := &p.ev.DERPErrors[i]
	if at.IsZero() || e.Last.IsZero() || !at.Before(e.Last) {
		e.Reconnected, e.SinceConnect = true, 0
	}
}

// maxDERPErrors bounds the regions whose failures are kept (a DERP map
// has tens; a hostile paste could name millions).
const maxDERPErrors = 64

// derpError records a failed connection to region id, logged at at.
func (p *paste) derpError(id int, code, text string, at time.Time) {
	text = clip(safetext.Clean(text))
	if i, ok := p.derpErrIdx[id]; ok {
		e := &p.ev.DERPErrors[i]
		e.Count++
		e.Err = safetext.New(text)
		if conn, ok := p.derpConnAt[id]; !ok || at.IsZero() || conn.IsZero() || !at.Before(conn) {
			e.SinceConnect++
			e.Reconnected = false
		}
		if at.After(e.Last) {
			e.Last = at
		}
		return
	}
	if len(p.ev.DERPErrors) >= maxDERPErrors {
		return
	}
	if p.derpErrIdx == nil {
		p.derpErrIdx = map[int]int{}
	}
	p.derpErrIdx[id] = len(p.ev.DERPErrors)
	e := probes.DERPError{Region: id, Code: safetext.New(code), Count: 1, SinceConnect: 1, Err: safetext.New(text), Last: at}
	if conn, ok := p.derpConnAt[id]; ok && !at.IsZero() && !conn.IsZero() && at.Before(conn) {
		e.SinceConnect, e.Reconnected = 0, true // logged out of order: the connect came after
	}
	p.ev.DERPErrors = append(p.ev.DERPErrors, e)
	if id > 0 {
		p.region(id, code, "")
	}
}

// linkStateRE finds netmon's interfaces.State{…} in a LinkChange line
// (net/netmon State.String): "interfaces.State{defaultRoute=eth0 ifs={eth0:[192.168.1.20/24 llu6] wg0:down} v4=true v6=false}";
// 1.102 logs "old: … new: … diff: …", earlier "New state: …".
var (
	linkStateRE = lazyRE(`interfaces\.State\{defaultRoute=(\S*) (?:\([^)]*\) )?ifs=\{([^}]*)\}((?: \w+(?:=\S+)?)*)`)
	linkIfRE    = lazyRE(`([^\s:\[]+):(?:\[([^\]]*)\]|down|nil)`)
)

// linkChange records a major link change and the state it names last.
func (p *paste) linkChange(at time.Time, s string) {
	ev := &p.ev
	ev.LinkChanges++
	if !at.IsZero() {
		if ev.FirstLinkChange.IsZero() || at.Before(ev.FirstLinkChange) {
			ev.FirstLinkChange = at
		}
		if at.After(ev.LastLinkChange) {
			ev.LastLinkChange = at
		}
	}
	all := linkStateRE().FindAllStringSubmatch(s, -1)
	if len(all) == 0 {
		return
	}
	m := all[len(all)-1] // the new state
	ev.DefaultRoute = safetext.Clean(m[1])
	ev.HTTPProxy = ""
	for _, kv := range strings.Fields(m[3]) {
		if v, ok := strings.CutPrefix(kv, "httpproxy="); ok {
			ev.HTTPProxy = clip(safetext.Clean(v))
		}
	}
	ev.Interfaces = nil
	for _, im := range linkIfRE().FindAllStringSubmatch(m[2], -1) {
		ni := probes.NetInterface{Name: safetext.Clean(im[1]), Up: strings.Contains(im[0], "[")}
		for _, f := range strings.Fields(im[2]) {
			if pfx, err := netip.ParsePrefix(f); err == nil {
				ni.Prefixes = append(ni.Prefixes, pfx)
			} else if m, ok := maskedAddr(f); ok {
				ni.Masked = append(ni.Masked, m)
			}
		}
		ev.Interfaces = append(ev.Interfaces, ni)
	}
}

// maskedAddr reads an IPv4 address whose last octets a poster replaced
// with letters or stars ("100.95.x.y/29", "10.0.0.x/24"): the known
// leading octets fix a range (100.95.0.0/16) and nothing more.
func maskedAddr(f string) (probes.MaskedAddr, bool) {
	addr, _, _ := strings.Cut(f, "/")
	parts := strings.Split(addr, ".")
	if len(parts) != 4 {
		return probes.MaskedAddr{}, false
	}
	var known [4]byte
	k := 0
	for k < 4 {
		n, err := strconv.Atoi(parts[k])
		if err != nil || n < 0 || n > 255 {
			break
		}
		known[k] = byte(n)
		k++
	}
	if k == 0 || k == 4 {
		return probes.MaskedAddr{}, false
	}
	for _, p := range parts[k:] {
		if p == "" || strings.Trim(p, "xyzabcdefghijklmnopqrstuvwXYZABCDEFGHIJKLMNOPQRSTUVW*?_") != "" {
			return probes.MaskedAddr{}, false
		}
	}
	pfx, err := netip.AddrFrom4(known).Prefix(8 * k)
	if err != nil {
		return probes.MaskedAddr{}, false
	}
	return probes.MaskedAddr{Text: clip(safetext.Clean(f)), Within: pfx}, true
}

// clip cuts s to 160 bytes (a rune boundary) for evidence text.
func clip(s string) string {
	if len(s) <= 160 {
		return s
	}
	i := 157
	for i > 0 && !isRuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }
