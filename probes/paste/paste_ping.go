package paste

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// `tailscale ping` output (cmd/tailscale/cli/ping.go runPing, the same
// format strings from v1.50 to v1.104):
//
//	pong from NAME (IP[, PEERAPIPORT]) via VIA in LATENCY
//	ping "IP" timed out
//	direct connection not established   (until-direct run ended without a direct pong)
//	no reply                            (every ping of the run timed out)
//	IP is local Tailscale IP
//	hit peerapi of IP (NAME) at URL in LATENCY
//
// VIA is "ip:port" (direct), "DERP(code)", "peer-relay(ip:port:vni:N)"
// (1.86+), or the ping type when the pong names no path: "TSMP" or
// "ICMP" (tailcfg.PingTSMP/PingICMP). A DISCO run stops at its first
// direct pong; --tsmp and --icmp stop after one pong. Only DISCO pongs say
// how magicsock reaches the peer.

var (
	pongRE     = lazyRE(`^pong from (\S+) \(([^,)]*)(?:, (\d+))?\) via (\S+) in (\S+)$`)
	timedOutRE = lazyRE(`^ping "([^"]*)" timed out$`)
	localIPRE  = lazyRE(`^(\S+) is local Tailscale IP$`)
	peerAPIRE  = lazyRE(`^hit peerapi of (\S+) \(([^)]*)\) at \S+ in (\S+)$`)
	viaDERPRE  = lazyRE(`^DERP\((.*)\)$`)
	viaRelayRE = lazyRE(`^peer-relay\((.*)\)$`)
)

// Ping kinds, as tailcfg.PingType names them.
const (
	pingDisco   = "disco"
	pingTSMP    = "TSMP"
	pingICMP    = "ICMP"
	pingPeerAPI = "peerapi"
)

// minDiscoTries is how many DISCO pings a run without a direct pong must
// have sent to say anything about a direct path: the first pong usually
// comes through DERP while magicsock is still sending its DISCO pings to
// the peer's endpoints (magicsock endpoint.discoPing, and the CLI's own
// help: "The first ping or so will likely go over DERP"), so a lone DERP
// pong of `tailscale ping -c 1` is not a failed run.
const minDiscoTries = 3

// pingTarget is one peer named by ping output: its name and address as
// far as the text shows them (a placeholder leaves one unknown) and its
// runs in the order pasted.
type pingTarget struct {
	name string
	ip   netip.Addr
	runs []*pingRun
}

// pingRun is one run of `tailscale ping` (one command's output).
type pingRun struct {
	kind         string // pingDisco, pingTSMP, pingICMP, pingPeerAPI
	tries, pongs int
	// direct: a pong came over a direct UDP path (directAddr, invalid
	// when the address was a placeholder).
	direct     bool
	directAddr netip.AddrPort
	// The last pong's path: via as printed (sanitised), and what it names.
	via       string
	viaKind   probes.PathKind // "" when the pong names no path (TSMP, ICMP)
	derpCode  string          // DERP(code): the code, "" when redacted
	peerRelay string
	latency   time.Duration
	// ended is how the run ended when the text shows it: "direct" (a
	// direct pong ends an until-direct run), "direct connection not
	// established", "no reply"; "" when the text stops before.
	ended string
}

// pingCmd is the `tailscale ping` command line the next output belongs to.
type pingCmd struct {
	target string // as typed: a name, an address or a placeholder
	kind   string
}

// pingCommand notes a `tailscale ping …` command line: the runs after it
// are of its target and kind.
func (p *paste) pingCommand(c command) {
	_, target, flags := c.sub()
	pc := &pingCmd{target: safetext.Clean(target), kind: pingDisco}
	for _, f := range flags {
		switch strings.SplitN(f, "=", 2)[0] {
		case "tsmp":
			pc.kind = pingTSMP
		case "icmp":
			pc.kind = pingICMP
		case "peerapi":
			pc.kind = pingPeerAPI
		}
	}
	p.curRun, p.curTarget = nil, nil
	p.pingCmd = pc
}

// target finds or adds the target named (name, ip): the current run's
// when it matches, else one of the pasted command, else a new one.
func (p *paste) target(name string, ip netip.Addr) *pingTarget {
	match := func(t *pingTarget) bool {
		if t == nil {
			return false
		}
		if ip.IsValid() && t.ip.IsValid() {
			return ip == t.ip
		}
		if name != "" && t.name != "" {
			return strings.EqualFold(name, t.name)
		}
		return true // one side knows neither: the same run's lines
	}
	if t := p.curTarget; match(t) {
		t.fill(name, ip)
		return t
	}
	t := &pingTarget{}
	if pc := p.pingCmd; pc != nil {
		if a, err := netip.ParseAddr(pc.target); err == nil {
			t.ip = a
		} else if !isRedacted(pc.target) {
			t.name = pc.target
		}
		if !match(t) {
			t = &pingTarget{}
		}
	}
	t.fill(name, ip)
	p.pingTargets = append(p.pingTargets, t)
	if len(p.pingTargets) > snapshot.MaxPeers && p.overCap == "" {
		p.overCap = fmt.Sprintf("tailscale ping of more than %d targets; tailpath reads at most %d peers, as in a saved snapshot", snapshot.MaxPeers, snapshot.MaxPeers)
	}
	p.curTarget, p.curRun = t, nil
	return t
}

func (t *pingTarget) fill(name string, ip netip.Addr) {
	if t.name == "" {
		t.name = name
	}
	if !t.ip.IsValid() {
		t.ip = ip
	}
}

// run is the run the next line of t belongs to: the current one while it
// has not ended, else a new one of the pasted command's kind.
func (p *paste) run(t *pingTarget, kind string) *pingRun {
	if r := p.curRun; r != nil && r.ended == "" && (kind == "" || r.kind == kind) && len(t.runs) > 0 && t.runs[len(t.runs)-1] == r {
		return r
	}
	if kind == "" {
		kind = pingDisco
		if p.pingCmd != nil {
			kind = p.pingCmd.kind
		}
	}
	r := &pingRun{kind: kind}
	t.runs = append(t.runs, r)
	p.curRun = r
	return r
}

// pingLine reads one line of `tailscale ping` output; false when it is not
// one.
func (p *paste) pingLine(name string, no int, trim string) bool {
	if !strings.HasPrefix(trim, "pong from ") && !strings.HasPrefix(trim, `ping "`) && !strings.Contains(trim, " is local Tailscale IP") &&
		!strings.HasPrefix(trim, "hit peerapi") && !strings.Contains(trim, "direct connection not established") && !strings.HasSuffix(trim, "no reply") {
		return false
	}
	if m := pongRE().FindStringSubmatch(trim); m != nil {
		return p.pong(name, no, m)
	}
	if m := timedOutRE().FindStringSubmatch(trim); m != nil {
		ip, ok := parseAddrOrPlaceholder(m[1])
		if !ok {
			return false
		}
		t := p.target("", ip)
		r := p.run(t, "")
		r.tries++
		p.addInput(snapshot.Input{Name: name, Kind: KindPing, First: no, Last: no})
		return true
	}
	if m := localIPRE().FindStringSubmatch(trim); m != nil {
		ip, ok := parseAddrOrPlaceholder(m[1])
		if !ok {
			return false
		}
		if ip.IsValid() {
			p.selfIP = ip
		}
		p.addInput(snapshot.Input{Name: name, Kind: KindPing, First: no, Last: no, Note: "our own address"})
		return true
	}
	if m := peerAPIRE().FindStringSubmatch(trim); m != nil {
		ip, ok := parseAddrOrPlaceholder(m[1])
		if !ok {
			return false
		}
		t := p.target(knownName(safetext.Clean(m[2])), ip)
		r := p.run(t, pingPeerAPI)
		r.tries++
		r.pongs++
		if d, err := time.ParseDuration(m[3]); err == nil && d > 0 {
			r.latency = d
		}
		r.ended = "pong"
		p.addInput(snapshot.Input{Name: name, Kind: KindPing, First: no, Last: no})
		return true
	}
	switch msg := strings.TrimPrefix(trim, "error: "); msg {
	case "direct connection not established", "no reply":
		// The run's end: its pongs (or none) are already counted.
		if r := p.curRun; r != nil && r.ended == "" {
			r.ended = msg
			p.addInput(snapshot.Input{Name: name, Kind: KindPing, First: no, Last: no})
			return true
		}
	}
	return false
}

// pong reads one "pong from …" line (pongRE's match m).
func (p *paste) pong(name string, no int, m []string) bool {
	ip, ok := parseAddrOrPlaceholder(m[2])
	if !ok {
		return false
	}
	node := knownName(safetext.Clean(m[1]))
	via := safetext.Clean(m[4])
	kind := pingDisco
	switch via {
	case pingTSMP, pingICMP:
		kind = via
	}
	t := p.target(node, ip)
	if kind == pingDisco && p.pingCmd != nil && p.pingCmd.kind != pingDisco && p.curRun == nil {
		kind = p.pingCmd.kind
	}
	r := p.run(t, kind)
	r.tries++
	r.pongs++
	r.via, r.viaKind, r.derpCode, r.peerRelay = via, "", "", ""
	switch {
	case kind != pingDisco:
		// TSMP, ICMP: the pong went through WireGuard and names no path.
		r.ended = "pong"
	case viaDERPRE().MatchString(via):
		r.viaKind = probes.PathDERP
		r.derpCode = knownName(viaDERPRE().FindStringSubmatch(via)[1])
		if isRedacted(viaDERPRE().FindStringSubmatch(via)[1]) {
			r.via = "DERP(?)"
		}
	case viaRelayRE().MatchString(via):
		r.viaKind = probes.PathPeerRelay
		r.peerRelay = viaRelayRE().FindStringSubmatch(via)[1]
	default:
		ap, ok := parseAddrPortOrPlaceholder(via)
		if !ok {
			return false
		}
		r.viaKind, r.direct, r.directAddr = probes.PathDirect, true, ap
		if !ap.IsValid() {
			r.via = "(redacted address)"
		}
		r.ended = "direct"
	}
	if d, err := time.ParseDuration(m[5]); err == nil && d > 0 && d < time.Hour {
		r.latency = d
	}
	p.addInput(snapshot.Input{Name: name, Kind: KindPing, First: no, Last: no})
	return true
}

// pingEvidence is what one target's runs say, for its peer.
type pingEvidence struct {
	run        *probes.PingRun // the last DISCO run that says something; nil if none
	lastDirect netip.AddrPort  // a direct pong of an earlier run, when the last is not direct
	wasDirect  bool
	latency    time.Duration
	answered   bool // the last run got a pong
	lastRun    *pingRun
	// The path the last pong showed (DISCO only).
	pathKind  probes.PathKind
	derpCode  string
	curAddr   string
	peerRelay string
	notes     []string
	// noPath: only TSMP or ICMP runs, whose pongs name the ping type,
	// not a path (cmd/tailscale/cli/ping.go runPing): the path is unknown.
	noPath bool
	// icmp and tsmp: whether the last --icmp and --tsmp runs got a pong
	// (nil: none pasted).
	icmp, tsmp *bool
}

// evidence sums up t's runs as of taken (ping output is not dated). The
// last DISCO run is the peer's ping run; a direct pong in an earlier run
// when the last has none is a direct path lost (direct → timed out → DERP
// only); TSMP and ICMP pongs give latency and an answer, not a path.
func (t *pingTarget) evidence(taken time.Time) pingEvidence {
	var ev pingEvidence
	var disco []*pingRun
	for _, r := range t.runs {
		if r.latency > 0 && r.pongs > 0 {
			ev.latency = r.latency
		}
		switch r.kind {
		case pingICMP:
			ev.icmp = boolp(r.pongs > 0)
		case pingTSMP:
			ev.tsmp = boolp(r.pongs > 0)
		}
		if r.kind != pingDisco {
			what := "went through WireGuard and was answered"
			if r.pongs == 0 {
				what = "got no reply through WireGuard"
			}
			ev.notes = append(ev.notes, fmt.Sprintf("%s ping %s; it is not a DISCO ping and names no path", article(r.kind), what))
			continue
		}
		disco = append(disco, r)
	}
	if n := len(t.runs); n > 0 {
		ev.answered = t.runs[n-1].pongs > 0
		ev.lastRun = t.runs[n-1]
	}
	if len(disco) == 0 {
		ev.noPath = len(t.runs) > 0
		return ev
	}
	last := disco[len(disco)-1]
	if last.pongs > 0 {
		ev.pathKind, ev.derpCode, ev.peerRelay = last.viaKind, last.derpCode, last.peerRelay
		if last.direct {
			ev.curAddr = last.directAddr.String()
			if !last.directAddr.IsValid() {
				ev.curAddr = "(redacted)"
			}
		}
	}
	if !last.direct {
		for i := len(disco) - 2; i >= 0; i-- {
			if disco[i].direct {
				ev.wasDirect, ev.lastDirect = true, disco[i].directAddr
				break
			}
		}
	}
	switch {
	case last.direct || last.tries >= minDiscoTries:
		ev.run = &probes.PingRun{At: taken, Tries: last.tries, Pongs: last.pongs, Direct: last.direct, Via: safetext.New(last.via), TSMPReply: ev.tsmp}
	default:
		ev.notes = append(ev.notes, fmt.Sprintf("the last DISCO run sent %d ping(s) and got no direct pong: too few to say anything of a direct path (the first pong usually comes through DERP)", last.tries))
	}
	return ev
}

// note words t's runs for the inputs list.
func (t *pingTarget) note() string {
	who := t.name
	if t.ip.IsValid() {
		if who != "" {
			who += " "
		}
		who += t.ip.String()
	}
	if who == "" {
		who = "a peer whose name and address are redacted"
	}
	var runs []string
	for _, r := range t.runs {
		s := fmt.Sprintf("%d tries, %d pongs", r.tries, r.pongs)
		if r.kind != pingDisco {
			s = r.kind + ": " + s
		}
		switch {
		case r.direct:
			s += ", direct"
		case r.via != "":
			s += ", last via " + r.via
		}
		if r.ended != "" && r.ended != "direct" && r.ended != "pong" {
			s += " (" + r.ended + ")"
		}
		runs = append(runs, s)
	}
	if len(runs) > 1 {
		return fmt.Sprintf("to %s: %d runs, in order: %s", who, len(runs), strings.Join(runs, "; then "))
	}
	return fmt.Sprintf("to %s: %s", who, strings.Join(runs, ""))
}

// pathText is the path column of a peer only ping output names: the
// last pong's words ("ping: via DERP(nyc)"), or what the last run got.
func (ev pingEvidence) pathText() string {
	r := ev.lastRun
	switch {
	case r == nil:
		return ""
	case r.pongs == 0:
		return fmt.Sprintf("ping: no reply (%d tries)", r.tries)
	case r.kind != pingDisco:
		return "ping: " + r.kind + " pong (names no path)"
	}
	return "ping: via " + r.via
}

func article(w string) string {
	if w != "" && strings.ContainsRune("AEFHILMNORSXaeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}
