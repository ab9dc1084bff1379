package snapshot

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/safetext"
)

var (
	// healthItemRE is one message of `tailscale status`'s health block:
	// "#     - msg".
	healthItemRE = regexp.MustCompile(`^#\s+-\s+(.+)$`)
	// promptRE is a shell prompt running tailscale ("$ tailscale status",
	// "PS C:\> tailscale netcheck", "# sudo tailscale ping nas").
	promptRE = regexp.MustCompile(`^(?:\S*[$#>%]\s*)(?:sudo\s+)?tailscaled?(?:\.exe)?(?:\s|$)`)
	// trafficRE ends a status column: ", tx N rx N".
	trafficRE = regexp.MustCompile(`, tx (\d+) rx (\d+)$`)
	// lastSeenRE is `tailscale status`'s ", last seen 3h ago".
	lastSeenRE = regexp.MustCompile(`, last seen (\d+)([mhd]) ago`)
)

// textStatus is one block of plain `tailscale status` output.
type textStatus struct {
	lines []peerLine
}

// peerLine is one line of plain `tailscale status`: the columns IP,
// Hostname (DNS name without the tailnet's suffix, or ("host name")),
// Owner ("alice@", "tagged-devices", "-"), OS (may be empty) and Status.
type peerLine struct {
	ip      netip.Addr
	name    string // DNS base name, or the quoted host name unquoted
	dnsName bool   // name is a DNS name (not a quoted host name)
	owner   string
	os      string
	status  string
}

// parsePeerLine reads one line of `tailscale status`
// (cmd/tailscale/cli/status.go printPS: tab-aligned columns). The status
// column is found by its first word ("-", "idle", "active;", "offline"), so
// an empty OS column is read as empty.
func parsePeerLine(line string) (peerLine, bool) {
	f := strings.Fields(line)
	if len(f) < 4 {
		return peerLine{}, false
	}
	ip, err := netip.ParseAddr(f[0])
	if err != nil || !(ip.Is4() || ip.Is6()) {
		return peerLine{}, false
	}
	pl := peerLine{ip: ip}
	i := 1
	if strings.HasPrefix(f[1], `("`) {
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
		pl.name = uq
		i = j + 1
	} else {
		pl.name, pl.dnsName = f[1], true
		i = 2
		// "xn--…" names are followed by their Unicode form in parentheses.
		if strings.HasPrefix(pl.name, "xn-") && i < len(f) && strings.HasPrefix(f[i], "(") {
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

// build turns the block into an ipnstate.Status as tailscaled would have
// answered, with only what the text shows: the first line is us. Every
// peer gets a placeholder node key and its address as its id (the text
// has neither). Ages ("last seen 3h ago") count back from taken.
func (ts *textStatus) build(taken time.Time) *ipnstate.Status {
	st := &ipnstate.Status{BackendState: "Running", Peer: map[key.NodePublic]*ipnstate.PeerStatus{}, User: map[tailcfg.UserID]tailcfg.UserProfile{}}
	users := map[string]tailcfg.UserID{}
	for i, pl := range ts.lines {
		ps := pl.peerStatus(taken)
		if o := pl.owner; o != "-" && o != "" {
			uid, ok := users[o]
			if !ok {
				uid = tailcfg.UserID(len(users) + 1)
				users[o] = uid
				st.User[uid] = tailcfg.UserProfile{ID: uid, LoginName: safetext.Clean(o)}
			}
			ps.UserID = uid
		}
		if i == 0 {
			st.Self = ps
			st.TailscaleIPs = ps.TailscaleIPs
			continue
		}
		st.Peer[ps.PublicKey] = ps
	}
	return st
}

// peerStatus is the PeerStatus pl describes.
func (pl peerLine) peerStatus(taken time.Time) *ipnstate.PeerStatus {
	ps := &ipnstate.PeerStatus{
		ID:           tailcfg.StableNodeID("ip:" + pl.ip.String()),
		PublicKey:    placeholderKey(pl.ip),
		OS:           pl.os,
		TailscaleIPs: []netip.Addr{pl.ip},
		Online:       true,
	}
	if pl.dnsName {
		ps.HostName, ps.DNSName = pl.name, pl.name+"."
	} else {
		ps.HostName = pl.name
	}
	s := pl.status
	if m := trafficRE.FindStringSubmatch(s); m != nil {
		ps.TxBytes, _ = strconv.ParseInt(m[1], 10, 64)
		ps.RxBytes, _ = strconv.ParseInt(m[2], 10, 64)
		s = strings.TrimSuffix(s, m[0])
	}
	if m := lastSeenRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
		ps.LastSeen = taken.Add(-time.Duration(n) * unit)
		s = strings.Replace(s, m[0], "", 1)
	}
	if strings.HasPrefix(s, "offline") || strings.Contains(s, "; offline") {
		ps.Online = false
		s = strings.Replace(strings.TrimPrefix(s, "offline"), "; offline", "", 1)
	}
	switch {
	case strings.HasPrefix(s, "active; "):
		ps.Active = true
		s = strings.TrimPrefix(s, "active; ")
		switch {
		case strings.HasPrefix(s, "exit node; "):
			ps.ExitNode, s = true, strings.TrimPrefix(s, "exit node; ")
		case strings.HasPrefix(s, "offers exit node; "):
			ps.ExitNodeOption, s = true, strings.TrimPrefix(s, "offers exit node; ")
		}
		switch {
		case strings.HasPrefix(s, "relay "):
			if code, err := strconv.Unquote(strings.TrimPrefix(s, "relay ")); err == nil {
				ps.Relay = code
			}
		case strings.HasPrefix(s, "direct "):
			if ap, err := netip.ParseAddrPort(strings.TrimPrefix(s, "direct ")); err == nil {
				ps.CurAddr = ap.String()
			}
		case strings.HasPrefix(s, "peer-relay "):
			ps.PeerRelay = strings.TrimPrefix(s, "peer-relay ")
		}
	case strings.HasPrefix(s, "idle; exit node"):
		ps.ExitNode = true
	case strings.HasPrefix(s, "idle; offers exit node"):
		ps.ExitNodeOption = true
	}
	return ps
}

// pingFacts summarises the `tailscale ping` lines to one address.
type pingFacts struct {
	tries, pongs int
	direct       bool
	via          string
	latency      time.Duration
}

var (
	// pongRE is `tailscale ping`'s "pong from NAME (IP[, port]) via X in 35ms".
	pongRE = regexp.MustCompile(`^pong from (\S+) \(([^,)\s]+)(?:, \d+)?\) via (\S+) in (\S+)$`)
	// timedOutRE is `ping "IP" timed out`.
	timedOutRE = regexp.MustCompile(`^ping "([^"]+)" timed out$`)
)

// pingLine reads one line of `tailscale ping` output.
func (p *paste) pingLine(name string, no int, trim string) bool {
	pf := func(ip netip.Addr) *pingFacts {
		f, ok := p.pings[ip]
		if !ok {
			f = &pingFacts{}
			p.pings[ip] = f
			p.pingOrder = append(p.pingOrder, ip)
		}
		p.lastPing = ip
		return f
	}
	if m := pongRE.FindStringSubmatch(trim); m != nil {
		ip, err := netip.ParseAddr(m[2])
		if err != nil {
			return false
		}
		lat, err := time.ParseDuration(m[4])
		if err != nil {
			return false
		}
		f := pf(ip)
		f.tries++
		f.pongs++
		f.via, f.latency = safetext.Clean(m[3]), lat
		if _, err := netip.ParseAddrPort(m[3]); err == nil {
			f.direct = true
		}
		p.addInput(Input{Name: name, Kind: KindPing, First: no, Last: no})
		return true
	}
	if m := timedOutRE.FindStringSubmatch(trim); m != nil {
		ip, err := netip.ParseAddr(m[1])
		if err != nil {
			return false
		}
		pf(ip).tries++
		p.addInput(Input{Name: name, Kind: KindPing, First: no, Last: no})
		return true
	}
	switch strings.TrimPrefix(trim, "error: ") {
	case "direct connection not established", "no reply":
		// The run's end: its pongs (or none) are already counted.
		if p.lastPing.IsValid() {
			p.addInput(Input{Name: name, Kind: KindPing, First: no, Last: no})
			return true
		}
	}
	return false
}

// pingNote words one address's ping facts for the inputs list.
func (f *pingFacts) note(ip netip.Addr) string {
	s := fmt.Sprintf("to %s: %d tries, %d pongs", ip, f.tries, f.pongs)
	if f.via != "" {
		s += ", last via " + f.via
	}
	return s
}
