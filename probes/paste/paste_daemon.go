package paste

import (
	"encoding/json"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// How tailscaled runs here, and the daemon's lines beyond those
// paste_log.go reads: its command line (the "Program starting" line's
// arguments, a tailscaled command typed), its prefs (`tailscale debug
// prefs` as JSON, a `Prefs{…}` string, `tailscale up`/`set` flags),
// cmd/containerboot's lines, magicsock's peer-relay lines, the
// portmapper's refusals and DERP servers' "peer gone" notices.

// Kinds of input these readers add.
const (
	KindPrefs       = "tailscale debug prefs"
	KindDaemonFlags = "tailscaled flags"
)

var (
	// goStringsRE is a Go %#v []string: `[]string{"tailscaled", "--port=41641"}`.
	goStringsRE = lazyRE(`\[\]string\{(.*)\}`)
	goQuotedRE  = lazyRE(`"(?:[^"\\]|\\.)*"`)
	// prefsStringRE is ipn.Prefs.Pretty (ipn/prefs.go): "Prefs{ra=false dns=true want=true … nf=on …}".
	prefsStringRE = lazyRE(`Prefs\{([^{}]*)`)
	// containerbootRE is cmd/containerboot's log line: its "boot: " prefix
	// before Go's log time (log.SetPrefix in main.go run).
	containerbootRE = lazyRE(`^boot: \d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? (.*)$`)
	// relayMgrRE is magicsock's relayManager lines (wgengine/magicsock
	// relaymanager.go, logged with debug logging).
	relayMgrRE = lazyRE(`magicsock: relayManager: (sent alloc request|alloc request timed out|alloc request canceled|got alloc response|handshake timed out|got relayed pong from \S+)`)
	// portmapRefusedRE is net/portmapper's lines for a router that
	// answered and refused a mapping (portmapper.go, upnp.go).
	portmapRefusedRE = lazyRE(`portmapper: (failed to get PCP mapping: .*|PMP probe failed due result code: .*|createOrGetMapping: .*|addAnyPortMapping: errcode=.*|UPnP returned (?:unspecified|loopback) external IP .*)$`)
)

// daemon is the Daemon being filled; it notes where a fact came from.
func (p *paste) daemon(from string) *probes.Daemon {
	t := &p.th
	t.daemonSet = true
	if from != "" && len(t.daemon.From) < 8 && !contains(t.daemon.From, from) {
		t.daemon.From = append(t.daemon.From, from)
	}
	return &t.daemon
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// daemonArgs reads the arguments tailscaled logged as it started
// (logpolicy/logpolicy.go "Program starting: v%v, Go %v: %#v" with
// os.Args; cmd/tailscaled/tailscaled_windows.go "Program starting: v%v:
// %#v" on Windows).
func (p *paste) daemonArgs(msg string) {
	m := goStringsRE().FindStringSubmatch(msg)
	if m == nil {
		return
	}
	var args []string
	for _, q := range goQuotedRE().FindAllString(m[1], 64) {
		if s, err := strconv.Unquote(q); err == nil {
			args = append(args, s)
		}
	}
	if len(args) == 0 {
		return
	}
	windows := !strings.Contains(msg, ", Go ") || strings.HasSuffix(strings.ToLower(args[0]), ".exe")
	p.daemonFlags(args[1:], windows, "tailscaled's start line")
}

// daemonFlags reads tailscaled's flags: --port, --tun, --state, --socket.
// With no --port, tailscaled binds 41641 on Windows and port 0 (OS-
// assigned) elsewhere (cmd/tailscaled/tailscaled.go defaultPort), unless
// its environment sets PORT.
func (p *paste) daemonFlags(args []string, windows bool, from string) {
	d := p.daemon(from)
	port := -1
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		name, val, joined := strings.Cut(a, "=")
		if !joined && i+1 < len(args) && (name == "port" || name == "tun" || name == "state" || name == "socket" || name == "statedir") {
			i++
			val = args[i]
		}
		switch name {
		case "port":
			if n, err := strconv.ParseUint(val, 10, 16); err == nil {
				port = int(n)
			}
		case "tun":
			d.Userspace = boolp(val == "userspace-networking")
		case "state":
			if strings.HasPrefix(val, "kube:") {
				d.Kubernetes, d.Container = true, true
			}
		}
	}
	switch {
	case port >= 0:
		d.Port, d.PortKnown = uint16(port), true
	case windows:
		d.Port, d.PortKnown = 41641, true
	default:
		d.Port, d.PortKnown = 0, true
	}
}

// cmdFacts reads what a typed command says of tailscaled: `tailscaled
// …` its flags, `tailscale up`/`set` its prefs (--accept-routes,
// --exit-node, --netfilter-mode), `kubectl` that the output is a pod's.
func (p *paste) cmdFacts(c command) {
	switch c.tool {
	case "tailscaled":
		p.daemonFlags(c.args, false, "a tailscaled command line")
	case "kubectl":
		p.th.kubectl = true
	case "tailscale":
		sub, _, flags := c.sub()
		if sub != "up" && sub != "set" {
			return
		}
		for i, f := range flags {
			name, val, joined := strings.Cut(f, "=")
			switch name {
			case "accept-routes":
				b := true
				if joined {
					if v, err := strconv.ParseBool(val); err == nil {
						b = v
					}
				}
				p.daemon("`tailscale " + sub + "` on the command line").AcceptRoutes = boolp(b)
			case "exit-node":
				if !joined {
					val = flagValue(c.args, "--exit-node", i)
				}
				p.daemon("`tailscale " + sub + "` on the command line").ExitNode = safetext.New(val)
			case "netfilter-mode":
				if joined {
					p.daemon("`tailscale " + sub + "` on the command line").NetfilterMode = safetext.Clean(val)
				}
			}
		}
	}
}

// flagValue is the word after a flag given as "--name value".
func flagValue(args []string, flag string, _ int) string {
	for i, a := range args {
		if (a == flag || a == strings.TrimPrefix(flag, "-")) && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// prefsJSON reads `tailscale debug prefs` (ipn.Prefs as JSON): RouteAll,
// the exit node, NetfilterMode (preftype: 0 off, 1 nodivert, 2 on).
func (p *paste) prefsJSON(raw []byte) (string, bool) {
	var pr struct {
		RouteAll      *bool
		ExitNodeID    string
		ExitNodeIP    string
		NetfilterMode *int
	}
	if json.Unmarshal(raw, &pr) != nil {
		return "", false
	}
	d := p.daemon("`tailscale debug prefs`")
	var parts []string
	if pr.RouteAll != nil {
		d.AcceptRoutes = pr.RouteAll
		parts = append(parts, "accept-routes "+strconv.FormatBool(*pr.RouteAll))
	}
	if ex := cmpStr(pr.ExitNodeIP, pr.ExitNodeID); ex != "" {
		d.ExitNode = safetext.New(ex)
		parts = append(parts, "exit node "+safetext.Clean(ex))
	}
	if pr.NetfilterMode != nil {
		if m, ok := map[int]string{0: "off", 1: "nodivert", 2: "on"}[*pr.NetfilterMode]; ok {
			d.NetfilterMode = m
			parts = append(parts, "netfilter-mode "+m)
		}
	}
	return "this node's prefs: " + strings.Join(parts, ", "), true
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// prefsString reads a `Prefs{…}` string (`tailscale debug prefs
// --pretty`, tailscaled's log): ra= (RouteAll), exit=, nf=.
func (p *paste) prefsString(s string) bool {
	m := prefsStringRE().FindStringSubmatch(s)
	if m == nil || !strings.Contains(m[1], "ra=") {
		return false
	}
	d := p.daemon("a Prefs{…} line")
	for _, kv := range strings.Fields(m[1]) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch k {
		case "ra":
			if b, err := strconv.ParseBool(v); err == nil {
				d.AcceptRoutes = boolp(b)
			}
		case "exit":
			if v != "" && v != "<nil>" && !isRedacted(v) {
				d.ExitNode = safetext.New(v)
			}
		case "nf":
			switch v {
			case "on", "off", "nodivert":
				d.NetfilterMode = v
			}
		}
	}
	return true
}

// daemonLine reads a line of cmd/containerboot or a Prefs{…} string
// standing alone; "" when it is neither.
func (p *paste) daemonLine(name string, no int, trim string) string {
	if strings.HasPrefix(trim, "boot: ") {
		if m := containerbootRE().FindStringSubmatch(trim); m != nil {
			// containerboot runs tailscaled in a container image; with
			// TS_USERSPACE (its default) it passes --tun=userspace-networking
			// (cmd/containerboot/tailscaled.go tailscaledArgs).
			p.daemon("cmd/containerboot's lines").Container = true
			p.ev.LogLines++
			p.logCount["containerboot"]++
			p.addInput(snapshot.Input{Name: name, Kind: KindLog, First: no, Last: no})
			return KindLog
		}
	}
	if strings.Contains(trim, "Prefs{") && p.prefsString(trim) {
		p.addInput(snapshot.Input{Name: name, Kind: KindPrefs, First: no, Last: no, Note: "this node's prefs (Prefs{…})"})
		return KindPrefs
	}
	return ""
}

// moreLog reads the daemon's messages paste_log.go does not: the
// peer-relay allocation lines and the portmapper's refusals; "" when it
// is neither.
func (p *paste) moreLog(at time.Time, msg string) string {
	switch {
	case strings.Contains(msg, "relayManager: "):
		m := relayMgrRE().FindStringSubmatch(msg)
		if m == nil {
			return ""
		}
		t := p.thread()
		if t.PeerRelay == nil {
			t.PeerRelay = &probes.PeerRelayLog{}
		}
		r := t.PeerRelay
		switch {
		case m[1] == "sent alloc request":
			r.AllocSent++
		case m[1] == "alloc request timed out":
			r.AllocTimedOut++
		case m[1] == "got alloc response":
			r.AllocOK++
		case m[1] == "handshake timed out":
			r.HandshakeTimedOut++
		case strings.HasPrefix(m[1], "got relayed pong"):
			r.RelayedPongs++
		}
		r.Last = safetext.New(clip(safetext.Clean(m[1])))
		return "peer relay"
	case strings.Contains(msg, "portmapper: "):
		m := portmapRefusedRE().FindStringSubmatch(msg)
		if m == nil {
			return ""
		}
		t := p.thread()
		t.PortmapRefusals++
		t.PortmapRefused = safetext.New(clip(safetext.Clean(m[1])))
		return "port mapping refused"
	case strings.Contains(msg, "Prefs{") && p.prefsString(msg):
		return "prefs"
	}
	return ""
}

// peerGone notes "derp-N does not know about peer [key]".
func (p *paste) peerGone(region, node string, at time.Time) {
	id, err := strconv.Atoi(region)
	if err != nil || id <= 0 {
		return
	}
	node = safetext.Clean(strings.TrimSuffix(node, ","))
	t := p.thread()
	for i := range t.PeersGone {
		if g := &t.PeersGone[i]; g.Region == id && string(g.Node) == node {
			g.Count++
			if at.After(g.At) {
				g.At = at
			}
			return
		}
	}
	if len(t.PeersGone) < 64 {
		t.PeersGone = append(t.PeersGone, probes.PeerGone{Region: id, Node: safetext.New(node), At: at, Count: 1})
	}
	p.region(id, "", "")
}

// thread is the ThreadFacts being filled.
func (p *paste) thread() *probes.ThreadFacts { return &p.th.thread }

// statusKeys reads what a whole `tailscale status --json` says of how
// tailscaled runs: TUN false is userspace networking (ipnstate.Status
// .TUN; absent in old versions, so only a present key counts).
func (p *paste) statusKeys(keys map[string]json.RawMessage) {
	if raw, ok := keys["TUN"]; ok {
		var tun bool
		if json.Unmarshal(raw, &tun) == nil {
			p.daemon("tailscale status --json").Userspace = boolp(!tun)
		}
	}
}

// podAddr is this node's own address in its pod, where the log shows
// it: a private endpoint tailscaled logged as local.
func (p *paste) podAddr() netip.Addr {
	for i, ep := range p.endpoints {
		if i < len(p.epTypes) && p.epTypes[i] == "local" && ep.Addr().Is4() && ep.Addr().IsPrivate() {
			return ep.Addr()
		}
	}
	return netip.Addr{}
}
