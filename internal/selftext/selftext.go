// Package selftext words this node's own end of every path (probes.Self
// and the view probes.Judge wrote of it, probes.SelfView) as the rows the
// Self tab and status's self block show: NAT, home DERP and every
// region, traffic by path, health, UDP receive, versions and known bugs.
// Pure: the Self pane (tui/selfpane) styles and fits the rows, status
// prints them; both show the same words.
package selftext

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
)

// Mark says how a row reads: trouble, fine or neither.
type Mark int

const (
	Plain Mark = iota
	Good
	Bad
)

// Row is one line of a section: a short label and its words.
type Row struct {
	Label string
	Text  safetext.Text
	Mark  Mark
}

// Section is one part of the Self tab.
type Section struct {
	Title string
	Rows  []Row
}

// Input is what the rows are made of.
type Input struct {
	Self    *probes.Self
	Regions map[int]probes.Region
	// Now is the clock ages are counted on: the snapshot's time when
	// replaying one, so ages are the snapshot's.
	Now time.Time
	// Ours is tailpath's own version ("" leaves it out).
	Ours string
	// Brief names the known bugs that only match the version in one row
	// (status); those whose symptom shows here keep a row each.
	Brief bool
}

// Sections words in.Self; an unknown fact reads "unknown", never a guess.
func Sections(in Input) []Section {
	s := in.Self
	v := s.View
	if v == nil {
		v = &probes.SelfView{}
	}
	return []Section{
		{"NAT", natRows(s, v)},
		{"DERP", derpRows(s, v, in.Regions)},
		{"Traffic", trafficRows(s.Traffic, in.Now)},
		{"Health", healthRows(s, v)},
		{"Versions", versionRows(s, v, in.Ours, in.Brief)},
	}
}

func tri(b *bool, yes, no string) string {
	switch {
	case b == nil:
		return "unknown"
	case *b:
		return yes
	}
	return no
}

func natRows(s *probes.Self, v *probes.SelfView) []Row {
	n := s.NAT
	if n == nil {
		return []Row{{Label: "NAT", Text: "unknown: tailscaled has reported no netcheck (NetInfo) yet"}}
	}
	udp := Row{Label: "UDP", Text: safetext.New(tri(n.WorkingUDP, "works (STUN answered)", "no STUN answer"))}
	if n.WorkingUDP != nil {
		udp.Mark = Good
		if !*n.WorkingUDP {
			udp.Mark = Bad
		}
	}
	if s.OnlyTCP443 {
		udp = Row{Label: "UDP", Text: "off by policy (only-tcp-443): every path goes through DERP", Mark: Bad}
	}
	mapping := Row{Label: "mapping", Text: safetext.New("varies by destination: " + tri(n.MappingVariesByDestIP, "yes (hard NAT)", "no (easy NAT)"))}
	if n.MappingVariesByDestIP != nil && *n.MappingVariesByDestIP {
		mapping.Mark = Bad
	}
	pm := "none held"
	if n.PortMapUnknown {
		pm = "unknown"
	} else if n.HavePortMap {
		pm = "held"
	}
	var ans []string
	for _, p := range []struct {
		name string
		b    *bool
	}{{"UPnP", n.UPnP}, {"NAT-PMP", n.PMP}, {"PCP", n.PCP}} {
		ans = append(ans, p.name+" "+tri(p.b, "yes", "no"))
	}
	rows := []Row{udp, mapping,
		{Label: "port map", Text: safetext.New(pm + " (answered: " + strings.Join(ans, ", ") + ")")},
		{Label: "public", Text: safetext.New(publicAddrs(s.Endpoints, n.WorkingIPv6))},
	}
	if v.Caveat != "" {
		rows = append(rows, Row{Label: "caveat", Text: v.Caveat})
	}
	return rows
}

// publicAddrs are the advertised endpoints' public addresses, IPv4 then
// IPv6 (Self.Endpoints: tailscaled's STUN-learned and mapped ones).
func publicAddrs(eps []netip.AddrPort, v6 *bool) string {
	var v4s, v6s []string
	seen := map[netip.Addr]bool{}
	for _, ep := range eps {
		a := ep.Addr().Unmap()
		if seen[a] || !a.IsGlobalUnicast() || a.IsPrivate() || cgnat.Contains(a) {
			continue
		}
		seen[a] = true
		if a.Is4() {
			v4s = append(v4s, a.String())
		} else {
			v6s = append(v6s, a.String())
		}
	}
	four, six := "unknown", "unknown"
	if len(v4s) > 0 {
		four = strings.Join(v4s, " ")
	} else if eps != nil {
		four = "none advertised"
	}
	if len(v6s) > 0 {
		six = strings.Join(v6s, " ")
	} else if v6 != nil && !*v6 {
		six = "none (no IPv6)"
	} else if eps != nil {
		six = "none advertised"
	}
	return "IPv4 " + four + " · IPv6 " + six
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func derpRows(s *probes.Self, v *probes.SelfView, regions map[int]probes.Region) []Row {
	h := v.Home
	home := Row{Label: "home", Text: h.Text}
	if h.Text == "" {
		home.Text = "unknown"
	}
	switch {
	case h.Far || h.Why == probes.HomeUnreachable:
		home.Mark = Bad
	case h.Why == probes.HomeBest:
		home.Mark = Good
	}
	rows := []Row{home}
	for _, r := range v.Regions {
		if r.NoHome && r.Latency == 0 {
			continue
		}
		rows = append(rows, Row{Label: "  " + string(r.Code), Text: safetext.New(regionText(r)), Mark: regionMark(r)})
	}
	if ch := s.Traffic; ch != nil && ch.HomeChanges != nil {
		rows = append(rows, Row{Label: "moves", Text: safetext.New(strconv.FormatInt(*ch.HomeChanges, 10) + " home changes since tailscaled started")})
	}
	return rows
}

// RegionText is one region's latency and marks: "25 ms (reported 24 ms)
// home, best, far, 2 relayed".
func regionText(r probes.RegionView) string {
	var b strings.Builder
	if r.Latency > 0 {
		b.WriteString(probes.LatencyText(r.Latency))
	} else if r.Unreachable {
		b.WriteString("unreachable (no reply in the last report)")
	} else {
		b.WriteString("not measured")
	}
	if r.Reported > 0 {
		b.WriteString(" (tailscaled reported " + probes.LatencyText(r.Reported) + ")")
	}
	var tags []string
	if r.Home {
		tags = append(tags, "home")
	}
	if r.Best {
		tags = append(tags, "best")
	}
	if r.Far {
		tags = append(tags, "far")
	}
	if r.STUNOnly {
		tags = append(tags, "STUN only")
	}
	if r.Score > 0 && r.Score != 1 {
		tags = append(tags, "score ×"+strconv.FormatFloat(r.Score, 'g', 3, 64))
	}
	if r.Relayed > 0 {
		tags = append(tags, units.Count(r.Relayed, "peer", "peers")+" relayed")
	}
	if len(tags) > 0 {
		b.WriteString("  " + strings.Join(tags, ", "))
	}
	return b.String()
}

func regionMark(r probes.RegionView) Mark {
	switch {
	case r.Unreachable || (r.Far && (r.Home || r.Relayed > 0)):
		return Bad
	case r.Home && !r.Far:
		return Good
	}
	return Plain
}

func trafficRows(t *probes.Traffic, now time.Time) []Row {
	switch {
	case t == nil:
		return []Row{{Label: "by path", Text: "unknown: no counters from tailscaled here"}}
	case !t.Known():
		return []Row{{Label: "by path", Text: t.Err}}
	}
	pair := func(in, out int64) string { return units.Bytes(in) + " in, " + units.Bytes(out) + " out" }
	rows := []Row{
		{Label: "direct", Text: safetext.New(pair(t.BytesIn.Direct, t.BytesOut.Direct) + rateText(t.Rates, func(r *probes.TrafficRates) float64 { return r.BytesIn.Direct + r.BytesOut.Direct }))},
		{Label: "DERP", Text: safetext.New(pair(t.BytesIn.DERP, t.BytesOut.DERP) + rateText(t.Rates, func(r *probes.TrafficRates) float64 { return r.BytesIn.DERP + r.BytesOut.DERP }))},
		{Label: "peer relay", Text: safetext.New(pair(t.BytesIn.PeerRelay, t.BytesOut.PeerRelay) + rateText(t.Rates, func(r *probes.TrafficRates) float64 { return r.BytesIn.PeerRelay + r.BytesOut.PeerRelay }))},
	}
	share := Row{Label: "DERP share"}
	if d := t.DERPShare(); d < 0 {
		share.Text = "unknown (nothing moved yet)"
	} else {
		share.Text = safetext.New(strconv.Itoa(int(d*100+0.5)) + "% of bytes since tailscaled started went through DERP (" + t.Source + ", read " + units.Ago(now, t.At) + ")")
		if d >= 0.5 {
			share.Mark = Bad
		}
	}
	return append(rows, share)
}

func rateText(r *probes.TrafficRates, f func(*probes.TrafficRates) float64) string {
	if r == nil {
		return ""
	}
	return " · now " + units.Rate(f(r))
}

func healthRows(s *probes.Self, v *probes.SelfView) []Row {
	udp := Row{Label: "UDP receive", Text: v.UDPReceive.Text}
	switch v.UDPReceive.State {
	case "ok":
		udp.Mark = Good
	case "stopped", "blocked":
		udp.Mark = Bad
	case "":
		udp.Text = "unknown"
	}
	rows := []Row{udp}
	if len(v.Health) == 0 && len(s.Health) == 0 {
		return append(rows, Row{Label: "warnings", Text: "none from tailscaled", Mark: Good})
	}
	for _, h := range v.Health {
		t := string(h.Warning)
		if h.Reason != "" {
			t += " → " + string(h.Reason) + ": " + string(h.Summary)
			if h.Fix != "" {
				t += "; fix: " + string(h.Fix)
			}
		}
		rows = append(rows, Row{Label: "warning", Text: safetext.New(t), Mark: Bad})
	}
	return rows
}

func versionRows(s *probes.Self, v *probes.SelfView, ours string, brief bool) []Row {
	var rows []Row
	if ours != "" {
		rows = append(rows, Row{Label: "tailpath", Text: safetext.New(ours)})
	}
	daemon := s.Version
	if daemon == "" {
		daemon = "unknown"
	}
	rows = append(rows, Row{Label: "tailscaled", Text: daemon})
	if s.Version == "" {
		return rows
	}
	if !slices.ContainsFunc(v.Bugs, func(b probes.BugMatch) bool { return b.Hit || b.FixedIn != "" }) {
		return append(rows, Row{Label: "known bugs", Text: "none known for this version (open bugs, which every version has, are named only when their symptom shows)", Mark: Good})
	}
	var quiet []string
	for _, b := range v.Bugs {
		if !b.Hit && b.FixedIn == "" {
			// An open bug with no symptom here matches every current
			// version: naming it says nothing of this node.
			continue
		}
		if brief && !b.Hit {
			quiet = append(quiet, b.ID)
			continue
		}
		t := b.ID + " (" + b.Issue
		if b.FixedIn != "" {
			t += ", fixed in " + b.FixedIn
		} else {
			t += ", not fixed yet"
		}
		t += "): "
		if !b.Hit {
			// A version in range is no diagnosis: most nodes in range
			// never meet the bug (probes.KnownBug).
			t += "this version is in its range, no symptom seen here. "
		}
		t += b.Symptom
		if b.Hit {
			t += " — its symptom shows here"
		}
		t += "; workaround: " + b.Workaround
		m, label := Plain, "in range"
		if b.Hit {
			m, label = Bad, "known bug"
		}
		rows = append(rows, Row{Label: label, Text: safetext.New(t), Mark: m})
	}
	if len(quiet) > 0 {
		rows = append(rows, Row{Label: "known bugs", Text: safetext.New(units.Count(len(quiet), "matches", "match") + " this version, no symptom here: " + strings.Join(quiet, ", ") + " (--json self.view.known_bugs)")})
	}
	return rows
}
