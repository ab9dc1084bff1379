package paste

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Plain `tailscale status` (cmd/tailscale/cli/status.go runStatus,
// printPS). One line per node: IP, host name (the MagicDNS name without
// the tailnet's suffix, an "xn--…" name followed by its Unicode form, or
// ("quoted host name")), owner (login before its "@" with the "@",
// "tagged-devices", a headscale user name, a numeric user id, or "-"), OS
// (may be empty), status. Columns were padded with fmt ("%-15s %-20s
// %-12s %-7s ") up to 1.88 and are tab-aligned since 1.90
// (text/tabwriter); only the status column's grammar matters here:
//
//	-                                      online, nothing sent or received
//	offline[, last seen 3h ago]            ", last seen" only since 1.90
//	idle[; exit node|; offers exit node][; offline[, last seen …]]
//	active; [exit node; |offers exit node; ][relay "code"|direct ip:port|peer-relay ip:port:vni:N][; offline[, last seen …]]
//
// then ", tx N rx N" when there was traffic. `peer-relay` exists since
// 1.86. The first line is this node (--self, the default), which never has
// a connection state or traffic; with --self=false, or a line quoted on
// its own, the first line is a peer and this node is unknown.

var (
	// healthItemRE is one message of `tailscale status`'s health block:
	// "#     - msg".
	healthItemRE = lazyRE(`^#\s*-\s+(.+)$`)
	// trafficRE ends a status column: ", tx N rx N".
	trafficRE = lazyRE(`,? tx (\d+) rx (\d+)$`)
	// lastSeenRE is `tailscale status`'s ", last seen 3h ago" (1.90+).
	lastSeenRE = lazyRE(`^, last seen (\d+)([mhd]) ago`)
)

// textStatus is one block of plain `tailscale status` output.
type textStatus struct {
	name  string // the file it came from
	lines []peerLine
	// noSelf: the command line before the block said --self=false, so
	// no line is ours (cmd/tailscale/cli/status.go prints the self line
	// only with --self, true by default). Only the prompt says so: our
	// own line and an idle peer's both read "-".
	noSelf bool
	// fragment: the block is one status line cut before its address and
	// name (parseFragmentLine).
	fragment bool
}

// peerLine is one line of plain `tailscale status`.
type peerLine struct {
	no      int        // line number in its file
	ip      netip.Addr // invalid when the address was a placeholder
	name    string     // DNS base name, or the quoted host name unquoted; "" when redacted
	dnsName bool       // name is a DNS name (not a quoted host name)
	owner   string
	os      string
	status  string // the status column as printed
	col     statusCol
}

// statusCol is the status column read by its grammar.
type statusCol struct {
	dash                     bool
	active, idle             bool
	exitNode, exitNodeOption bool
	relay                    string // relay "code"; "" unknown
	relayRedacted            bool
	direct                   bool
	curAddr                  string // direct's address; "(redacted)" for a placeholder
	peerRelay                string
	offline                  bool
	lastSeen                 time.Duration // 0: no "last seen" printed
	traffic                  bool
	tx, rx                   int64
}

// parseStatusCol reads a status column whole; false when any of it does
// not follow the grammar.
func parseStatusCol(s string) (statusCol, bool) {
	var c statusCol
	if m := trafficRE().FindStringSubmatch(s); m != nil {
		c.traffic = true
		c.tx, _ = strconv.ParseInt(m[1], 10, 64)
		c.rx, _ = strconv.ParseInt(m[2], 10, 64)
		s = strings.TrimSpace(strings.TrimSuffix(s, m[0]))
	}
	// offline reads "; offline[, last seen …]" (or, at the start,
	// "offline[, last seen …]") and returns what follows.
	offline := func(rest string) (string, bool) {
		c.offline = true
		if m := lastSeenRE().FindStringSubmatch(rest); m != nil {
			n, _ := strconv.Atoi(m[1])
			c.lastSeen = time.Duration(n) * map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
			if c.lastSeen == 0 {
				c.lastSeen = time.Minute // the CLI prints at least 1m
			}
			rest = rest[len(m[0]):]
		}
		return rest, true
	}
	switch {
	case s == "-":
		c.dash = true
		return c, true
	case strings.HasPrefix(s, "offline"):
		rest, _ := offline(strings.TrimPrefix(s, "offline"))
		return c, rest == "" && !c.traffic
	case strings.HasPrefix(s, "idle"):
		c.idle = true
		s = strings.TrimPrefix(s, "idle")
		switch {
		case strings.HasPrefix(s, "; exit node"):
			c.exitNode, s = true, strings.TrimPrefix(s, "; exit node")
		case strings.HasPrefix(s, "; offers exit node"):
			c.exitNodeOption, s = true, strings.TrimPrefix(s, "; offers exit node")
		}
		if strings.HasPrefix(s, "; offline") {
			s, _ = offline(strings.TrimPrefix(s, "; offline"))
		}
		return c, s == ""
	case strings.HasPrefix(s, "active;"):
		c.active = true
		s = strings.TrimSpace(strings.TrimPrefix(s, "active;"))
		switch {
		case strings.HasPrefix(s, "exit node;"):
			c.exitNode, s = true, strings.TrimSpace(strings.TrimPrefix(s, "exit node;"))
		case strings.HasPrefix(s, "offers exit node;"):
			c.exitNodeOption, s = true, strings.TrimSpace(strings.TrimPrefix(s, "offers exit node;"))
		}
		path, rest, _ := strings.Cut(s, ";")
		path = strings.TrimSpace(path)
		word, arg, _ := strings.Cut(path, " ")
		switch word {
		case "":
			// "active; " with no path: no home DERP and no direct address.
		case "relay":
			code := arg
			if uq, err := strconv.Unquote(arg); err == nil {
				code = uq
			} else if strings.ContainsAny(arg, ` "`) {
				return c, false
			}
			if isRedacted(code) || code == "" {
				c.relayRedacted = true
			} else {
				c.relay = safetext.Clean(code)
			}
		case "direct":
			ap, ok := parseAddrPortOrPlaceholder(arg)
			if !ok {
				return c, false
			}
			c.direct, c.curAddr = true, ap.String()
			if !ap.IsValid() {
				c.curAddr = "(redacted)"
			}
		case "peer-relay":
			if arg == "" || strings.Contains(arg, " ") {
				return c, false
			}
			c.peerRelay = safetext.Clean(arg)
			if isRedacted(arg) {
				c.peerRelay = "(redacted)"
			}
		default:
			return c, false
		}
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, "offline") {
			rest, _ = offline(strings.TrimPrefix(rest, "offline"))
		}
		return c, rest == ""
	}
	return c, false
}

// isSelf reports whether a first line can be this node: the self line
// never has a connection state or traffic (its Active is never set, and
// its counters are zero), so it reads "-", or "offline" while tailscaled
// is not in the map poll.
func (c statusCol) isSelf() bool {
	return (c.dash || (c.offline && !c.idle && c.lastSeen == 0)) && !c.active && !c.traffic
}

// parsePeerLine reads one line of `tailscale status`. The address may be a
// placeholder (x.y.z.w, 100.xxx.xxx.xxx, [redacted]) and the name a
// redaction: both are then unknown. The status column is found by its
// first word and must follow its grammar to the end.
func parsePeerLine(line string) (peerLine, bool) {
	// The first word is an address: test it before splitting the line
	// (most lines of a long log are no status line).
	first, _, _ := strings.Cut(strings.TrimLeft(line, " \t"), " ")
	if first, _, _ = strings.Cut(first, "\t"); first == "" {
		return peerLine{}, false
	}
	if _, ok := parseAddrOrPlaceholder(first); !ok {
		return peerLine{}, false
	}
	f := strings.Fields(line)
	if len(f) < 4 {
		return peerLine{}, false
	}
	ip, ok := parseAddrOrPlaceholder(f[0])
	if !ok || (ip.IsValid() && !(ip.Is4() || ip.Is6())) {
		return peerLine{}, false
	}
	pl := peerLine{ip: ip}
	i := 1
	switch {
	case strings.HasPrefix(f[1], `("`):
		// ("host name"): the quoted host name of a node without a DNS name.
		j := i
		for j < len(f) && !strings.HasSuffix(f[j], `")`) {
			j++
		}
		if j == len(f) {
			return peerLine{}, false
		}
		q := strings.Join(f[i:j+1], " ")
		uq, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(q, "("), ")"))
		if err != nil {
			return peerLine{}, false
		}
		pl.name = knownName(uq)
		i = j + 1
	default:
		pl.name, pl.dnsName = knownName(f[1]), true
		i = 2
		// "xn--…" names are followed by their Unicode form in parentheses.
		if strings.HasPrefix(f[1], "xn-") && i < len(f) && strings.HasPrefix(f[i], "(") {
			for i < len(f) && !strings.HasSuffix(f[i], ")") {
				i++
			}
			i++
		}
	}
	if i >= len(f) {
		return peerLine{}, false
	}
	pl.owner = f[i]
	i++
	if i >= len(f) {
		return peerLine{}, false
	}
	if !statusStart(f[i]) {
		pl.os = f[i]
		i++
	}
	if i >= len(f) || !statusStart(f[i]) {
		return peerLine{}, false
	}
	pl.status = strings.Join(f[i:], " ")
	col, ok := parseStatusCol(pl.status)
	if !ok {
		return peerLine{}, false
	}
	pl.col = col
	return pl, true
}

// statusStart reports whether w can begin the status column.
func statusStart(w string) bool {
	switch w {
	case "-", "idle", "idle;", "idle,", "active;", "offline", "offline,", "offline;":
		return true
	}
	return false
}

// statusFragment reports whether line is a status line cut before its
// address and name (a quote of part of a line): up to three words (owner,
// OS) and a status column with something only the CLI prints ("active;",
// traffic, "last seen").
func statusFragment(line string) bool {
	if !strings.Contains(line, "active;") && !strings.Contains(line, " rx ") && !strings.Contains(line, "last seen") {
		return false
	}
	f := strings.Fields(line)
	for i := 0; i < len(f) && i <= 3; i++ {
		if !statusStart(f[i]) {
			continue
		}
		s := strings.Join(f[i:], " ")
		c, ok := parseStatusCol(s)
		return ok && (c.active || c.traffic || c.lastSeen > 0)
	}
	return false
}

// parseFragmentLine reads a status line cut before its address and name
// (statusFragment): the OS when a word before the status column is one
// tailscale prints, the status column as a whole line's.
func parseFragmentLine(line string) (peerLine, bool) {
	if !statusFragment(line) {
		return peerLine{}, false
	}
	f := strings.Fields(line)
	for i := 0; i < len(f) && i <= 3; i++ {
		if !statusStart(f[i]) {
			continue
		}
		pl := peerLine{status: strings.Join(f[i:], " ")}
		if i > 0 && knownOS(f[i-1]) {
			pl.os = f[i-1]
		}
		col, ok := parseStatusCol(pl.status)
		if !ok {
			return peerLine{}, false
		}
		pl.col = col
		return pl, true
	}
	return peerLine{}, false
}

// knownOS reports whether w is an OS as tailscale status prints it
// (Hostinfo.OS: version.OS, runtime.GOOS with macOS and iOS renamed).
func knownOS(w string) bool {
	switch strings.ToLower(w) {
	case "linux", "windows", "macos", "ios", "android", "freebsd", "openbsd", "illumos", "solaris", "plan9", "tvos", "js", "wasm":
		return true
	}
	return false
}

// id is the stable id a pasted line's node gets: its address, else its
// name, else the line (the text has no node ids).
func (pl peerLine) id(file string) tailcfg.StableNodeID {
	switch {
	case pl.ip.IsValid():
		return tailcfg.StableNodeID("ip:" + pl.ip.String())
	case pl.name != "":
		return tailcfg.StableNodeID("name:" + strings.ToLower(safetext.Clean(pl.name)))
	}
	return tailcfg.StableNodeID(fmt.Sprintf("line:%s:%d", file, pl.no))
}

// build turns the block into an ipnstate.Status as tailscaled would have
// answered, with only what the text shows: the first line is us when it
// can be (statusCol.isSelf), else us is unknown. Every node gets a
// placeholder node key and an id from its address or name (the text has
// neither). Ages ("last seen 3h ago") count back from taken. offline
// lists the peers the text calls offline.
func (ts *textStatus) build(taken time.Time) (st *ipnstate.Status, offline map[tailcfg.StableNodeID]bool) {
	st = &ipnstate.Status{BackendState: "Running", Peer: map[key.NodePublic]*ipnstate.PeerStatus{}, User: map[tailcfg.UserID]tailcfg.UserProfile{}}
	offline = map[tailcfg.StableNodeID]bool{}
	users := map[string]tailcfg.UserID{}
	for i, pl := range ts.lines {
		ps := pl.peerStatus(ts.name, taken)
		if o := pl.owner; o != "-" && o != "" && !isRedacted(o) {
			uid, ok := users[o]
			if !ok {
				uid = tailcfg.UserID(len(users) + 1)
				users[o] = uid
				st.User[uid] = tailcfg.UserProfile{ID: uid, LoginName: safetext.Clean(o)}
			}
			ps.UserID = uid
		}
		if i == 0 && pl.col.isSelf() && !ts.noSelf {
			st.Self = ps
			st.TailscaleIPs = ps.TailscaleIPs
			continue
		}
		if pl.col.offline {
			offline[ps.ID] = true
		}
		st.Peer[ps.PublicKey] = ps
	}
	if st.Self == nil {
		st.Self = &ipnstate.PeerStatus{}
	}
	return st, offline
}

// selfKnown reports whether the block's first line is this node.
func (ts *textStatus) selfKnown() bool {
	return len(ts.lines) > 0 && ts.lines[0].col.isSelf() && !ts.noSelf
}

// peerStatus is the PeerStatus pl describes.
func (pl peerLine) peerStatus(file string, taken time.Time) *ipnstate.PeerStatus {
	id := pl.id(file)
	ps := &ipnstate.PeerStatus{
		ID:        id,
		PublicKey: placeholderKey(string(id)),
		OS:        safetext.Clean(pl.os),
		Online:    true,
	}
	if pl.ip.IsValid() {
		ps.TailscaleIPs = []netip.Addr{pl.ip}
	}
	name := safetext.Clean(pl.name)
	if pl.dnsName && name != "" {
		ps.HostName, ps.DNSName = name, name+"."
	} else {
		ps.HostName = name
	}
	c := pl.col
	ps.TxBytes, ps.RxBytes = c.tx, c.rx
	if c.offline {
		ps.Online = false
		if c.lastSeen > 0 {
			ps.LastSeen = taken.Add(-c.lastSeen)
		}
	}
	ps.Active = c.active
	ps.ExitNode, ps.ExitNodeOption = c.exitNode, c.exitNodeOption
	ps.Relay = c.relay
	if c.direct {
		ps.CurAddr = c.curAddr
	}
	ps.PeerRelay = c.peerRelay
	return ps
}

// redactedPaths are the path words, as pasted, of the lines whose relay
// region the poster redacted: the PeerStatus cannot hold an unknown
// region (Relay "" is no home region at all), so the words are kept.
func (ts *textStatus) redactedPaths() map[tailcfg.StableNodeID]string {
	out := map[tailcfg.StableNodeID]string{}
	for _, pl := range ts.lines {
		if pl.col.relayRedacted {
			s := trafficRE().ReplaceAllString(pl.status, "")
			out[pl.id(ts.name)] = safetext.Clean(s)
		}
	}
	return out
}
