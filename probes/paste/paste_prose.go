package paste

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// Prose and Markdown around known fields: what people write around the
// CLI's output, and the CLI's fields retyped in their own words. A line
// no format reader took is read again with its Markdown taken off (list
// markers, headings, emphasis), each inline code span is tried as a line
// of its own, and `Field: value` pairs of the netcheck report (and
// RouteAll of the prefs) are read wherever they stand: in a bullet, a
// sentence, a table row from a chat.
//
// A fact is never invented: a value counts only in its field's own shape
// (`UDP: true`, `IPv6: no, but OS has support`), as a statement, not in
// a question or a supposition ("I thought UDP: false meant…": a hedge
// before it, a word after it that is not a conjunction). Every fact read
// so is marked as from prose (probes.Self.Prose; its checks say so).

// KindProse is the input kind of fields read from prose.
const KindProse = "prose"

// fromProse is the netcheckFacts origin of fields read from prose.
const fromProse = "prose (the CLI's netcheck fields, in the poster's words)"

var (
	// proseFieldRE finds a known field followed by ":" or "=".
	proseFieldRE = lazyRE(`(?:^|[^\w.-])(UDP|IPv4|IPv6|MappingVariesByDestIP|PortMapping|RouteAll)["*_]*\s*[:=]\s*["*_]*`)
	// proseShapes are each field's values as the CLI prints them.
	proseShapes = map[string]func() *regexp.Regexp{
		"UDP":                   lazyRE(`^(true|false)\b`),
		"MappingVariesByDestIP": lazyRE(`^(true|false)\b`),
		"RouteAll":              lazyRE(`^(true|false)\b`),
		"IPv4":                  lazyRE(`^(yes, \S+[^\s,.;)]|\(no addr found\))`),
		"IPv6":                  lazyRE(`^(yes, \S+[^\s,.;)]|no, but OS has support|no, unavailable in OS|\(no addr found\)|no)\b`),
		"PortMapping":           lazyRE(`^((?:UPnP|NAT-PMP|PCP)(?:, ?(?:UPnP|NAT-PMP|PCP))*|not checked)\b`),
	}
	// markdownRE is a list marker, a heading or a quote at a line's start.
	markdownRE = lazyRE(`^(?:[-*+•]|\d{1,2}[.)]|#{1,6})\s+`)
	// proseRegionRE is a netcheck region line in a bullet: "- fra: 14.1ms (Frankfurt)".
	proseRegionRE = lazyRE(`^[-*+•]\s*([a-z][a-z0-9-]{1,15}):\s*(\d+(?:\.\d+)?m?s)\s*\((?:derp\d+, )?([^()]*)\)$`)
	codeSpanRE    = lazyRE("`([^`]{6,})`")
)

// hedges are words that make what follows a supposition, not a report.
var hedges = []string{"if", "whether", "thought", "think", "assume", "assumed", "assuming", "suppose", "supposed", "expect", "expected",
	"should", "would", "could", "might", "unless", "hope", "hoping", "wonder", "wondering", "instead", "meant", "means", "mean", "maybe", "perhaps"}

// conjunctions may follow a field's value in a sentence that goes on.
var conjunctions = []string{"and", "but", "or", "so", "while", "then", "here", "there", "now", "too", "also", "again", "both", "on", "from",
	"for", "in", "at", "with", "which", "every", "each", "according", "per", "as"}

// proseLine reads a line no format reader took; "" when it holds nothing
// known.
func (p *paste) proseLine(name string, no int, line string, block **blockState) string {
	t := &p.th
	if t.depth > 0 {
		return ""
	}
	if !strings.ContainsAny(line, ":=`|") && !markdownRE().MatchString(line) {
		return ""
	}
	// The line with its Markdown taken off, read again.
	s := stripMarkdown(line)
	if s != line && s != "" {
		t.depth++
		k := p.readLine(name, no, s, block)
		t.depth--
		if k != lineIgnore {
			return k
		}
	}
	// Inline code spans, each as a line of its own.
	kind := ""
	if strings.Contains(s, "`") {
		for _, m := range codeSpanRE().FindAllStringSubmatch(s, 4) {
			span, fence := normLine(m[1])
			if fence || span == "" {
				continue
			}
			if _, ok := parseCommand(span); ok {
				// A command named in a sentence ("`tailscale status`
				// shows relay") is not one run: what follows is not
				// its output.
				continue
			}
			t.depth++
			k := p.readLine(name, no, span, block)
			t.depth--
			if k != lineIgnore && k != lineBlank && k != lineNoise {
				kind = k
			}
		}
		if kind != "" {
			return kind
		}
	}
	if m := proseRegionRE().FindStringSubmatch(line); m != nil {
		if d, err := time.ParseDuration(m[2]); err == nil && d > 0 && d < maxLatency {
			n := p.proseNC()
			if n.regionNames == nil {
				n.regionNames, n.codeLatency = map[string]string{}, map[string]time.Duration{}
			}
			code := safetext.Clean(m[1])
			n.regionNames[code] = safetext.Clean(m[3])
			n.codeLatency[code] = d
			p.addInput(snapshot.Input{Name: name, Kind: KindProse, First: no, Last: no})
			return KindProse
		}
	}
	if strings.HasPrefix(s, "|") {
		return p.tableRow(name, no, s)
	}
	plain := strings.ReplaceAll(strings.ReplaceAll(s, "`", ""), "**", "")
	if p.proseFields(plain) > 0 {
		p.addInput(snapshot.Input{Name: name, Kind: KindProse, First: no, Last: no})
		return KindProse
	}
	return ""
}

// stripMarkdown takes list markers, headings and emphasis off s: a
// marker at its start, and emphasis around all of it (`_…_`, `*…*`) or
// bold at its start (`**UDP**: false`).
func stripMarkdown(s string) string {
	for i := 0; i < 4; i++ {
		t := s
		if loc := markdownRE().FindStringIndex(t); loc != nil {
			t = strings.TrimSpace(t[loc[1]:])
		}
		for _, e := range []string{"**", "__", "*", "_"} {
			if len(t) > 2*len(e) && strings.HasPrefix(t, e) && strings.HasSuffix(t, e) && !strings.HasPrefix(t[len(e):], " ") {
				t = strings.TrimSpace(t[len(e) : len(t)-len(e)])
				break
			}
		}
		if t == s {
			break
		}
		s = t
	}
	if strings.HasPrefix(s, "**") || strings.HasPrefix(s, "__") {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "**", ""), "__", "")
	}
	return strings.TrimSpace(s)
}

// proseFields reads the field: value pairs of s that are statements in
// their fields' shapes, and returns how many.
func (p *paste) proseFields(s string) int {
	n := 0
	for _, loc := range proseFieldRE().FindAllStringSubmatchIndex(s, 8) {
		field := s[loc[2]:loc[3]]
		rest := s[loc[1]:]
		m := proseShapes[field]().FindStringSubmatch(rest)
		if m == nil {
			continue
		}
		val := m[1]
		if !statement(s[:loc[2]], rest[len(m[0]):]) {
			continue
		}
		if p.proseFact(field, val) {
			n++
		}
	}
	return n
}

// statement reports whether a field whose sentence reads before it and
// whose value is followed by after is stated, not asked or supposed.
func statement(before, after string) bool {
	// The clause the field stands in.
	if i := strings.LastIndexAny(before, ".!?;,"); i >= 0 && (i+1 >= len(before) || before[i+1] == ' ') {
		before = before[i+1:]
	}
	low := strings.ToLower(before)
	for _, w := range strings.FieldsFunc(low, func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		if slices.Contains(hedges, w) {
			return false
		}
	}
	a := strings.TrimLeft(after, " ")
	if a == "" {
		return true
	}
	// The sentence's end decides a question.
	end := len(a)
	for i := 0; i < len(a); i++ {
		if c := a[i]; (c == '.' || c == '!' || c == '?' || c == ';') && (i+1 == len(a) || a[i+1] == ' ') {
			end = i
			break
		}
	}
	if end < len(a) && a[end] == '?' {
		return false
	}
	switch c := a[0]; {
	case strings.ContainsRune(",.;:)]|*_\"'!", rune(c)):
		return true
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		w, _, _ := strings.Cut(a, " ")
		w = strings.ToLower(strings.TrimRight(w, ",.;:)"))
		return slices.Contains(conjunctions, w)
	}
	return false
}

// tableRow reads a Markdown table row ("| UDP | true |"): a known field
// in one cell and its value, in its shape, in the next.
func (p *paste) tableRow(name string, no int, s string) string {
	cells := strings.Split(strings.Trim(s, "|"), "|")
	sep := true
	for i := range cells {
		cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`*")
		if strings.Trim(cells[i], ":-") != "" {
			sep = false
		}
	}
	if sep {
		return lineNoise // |---|---|
	}
	n := 0
	for i := 0; i+1 < len(cells); i++ {
		re, ok := proseShapes[cells[i]]
		if !ok {
			continue
		}
		if m := re().FindStringSubmatch(cells[i+1]); m != nil && len(m[0]) == len(cells[i+1]) && p.proseFact(cells[i], m[1]) {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	p.addInput(snapshot.Input{Name: name, Kind: KindProse, First: no, Last: no})
	return KindProse
}

// proseNC is the netcheck report the prose fields go into.
func (p *paste) proseNC() *netcheckFacts {
	t := &p.th
	if t.prose == nil {
		t.prose = &netcheckFacts{from: fromProse}
	}
	return t.prose
}

// proseFact records one field's value read from prose; a field given two
// values is unknown (and stays so).
func (p *paste) proseFact(field, val string) bool {
	t := &p.th
	if t.proseSeen == nil {
		t.proseSeen = map[string]string{}
	}
	if old, ok := t.proseSeen[field]; ok {
		if old != val && old != "!" {
			t.proseSeen[field] = "!"
			t.proseNotes = append(t.proseNotes, fmt.Sprintf("%s given as %q and %q: unknown", field, old, val))
			p.setProse(field, "")
		}
		return true
	}
	t.proseSeen[field] = val
	p.setProse(field, val)
	return true
}

// setProse sets field to val ("" unknown) in the prose report or prefs.
func (p *paste) setProse(field, val string) {
	n := p.proseNC()
	yes, no := boolp(true), boolp(false)
	b := map[string]*bool{"true": yes, "false": no}[val]
	switch field {
	case "UDP":
		n.udp = b
	case "MappingVariesByDestIP":
		n.mapping = b
	case "IPv4":
		if !n.setIPv4(val) {
			n.v4 = nil
		}
	case "IPv6":
		n.ipv6, n.osHasIPv6 = nil, nil
		n.setIPv6(val)
	case "PortMapping":
		n.upnp, n.pmp, n.pcp = nil, nil, nil
		if val != "" && val != "not checked" {
			has := func(s string) *bool { return boolp(strings.Contains(val, s)) }
			n.upnp, n.pmp, n.pcp = has("UPnP"), has("NAT-PMP"), has("PCP")
		}
	case "RouteAll":
		d := p.daemon("prose")
		d.AcceptRoutes = b
		p.th.prosePrefs = true
	}
}

// proseNetcheck is the prose report when it is all the input says of
// our NAT (a real report, the CLI's or the daemon's, decides otherwise),
// with the fields it fills marked as from prose; nil when none.
func (p *paste) proseNetcheck() *netcheckFacts {
	t := &p.th
	n := t.prose
	if n == nil || (n.udp == nil && n.mapping == nil && n.ipv6 == nil && n.v4 == nil && n.upnp == nil && len(n.codeLatency) == 0) {
		return nil
	}
	if len(p.netchecks) > 0 || len(p.logNets) > 0 {
		p.inputs = append(p.inputs, snapshot.Input{Kind: KindProse, Note: "netcheck fields in prose set aside: a netcheck report in the input decides"})
		return nil
	}
	if n.udp != nil && !*n.udp && !n.measured() {
		// The poster's words show no latency and no address: whether the
		// report measured anything (or nothing, as a logged-out node's,
		// whose UDP false means unknown) is not known, so neither is UDP.
		n.udp = nil
		t.proseNotes = append(t.proseNotes, "UDP false with no DERP latency or address beside it: unknown (a report that measured nothing also says false)")
		if n.mapping == nil && n.ipv6 == nil && n.v4 == nil && n.upnp == nil {
			return nil
		}
	}
	return n
}

// proseMarks lists the fields (checks' Field) the prose report filled.
func (p *paste) proseMarks(n *netcheckFacts) []string {
	var out []string
	if n != nil {
		if n.udp != nil || n.nothing {
			out = append(out, "NetInfo.WorkingUDP")
		}
		if n.mapping != nil {
			out = append(out, "NetInfo.MappingVariesByDestIP")
		}
		if n.upnp != nil {
			out = append(out, "NetInfo.HavePortMap")
		}
		if n.ipv6 != nil {
			out = append(out, "NetInfo.WorkingIPv6")
		}
		if len(n.codeLatency) > 0 {
			out = append(out, "NetInfo.DERPLatency")
		}
	}
	if p.th.prosePrefs {
		out = append(out, "Link.Route")
	}
	return out
}

// proseNote words what was read from prose, for the inputs list.
func (p *paste) proseNote(n *netcheckFacts) string {
	t := &p.th
	var parts []string
	for _, f := range []string{"UDP", "IPv4", "IPv6", "MappingVariesByDestIP", "PortMapping", "RouteAll"} {
		if v, ok := t.proseSeen[f]; ok && v != "!" {
			parts = append(parts, f+" "+v)
		}
	}
	if n != nil && len(n.codeLatency) > 0 {
		parts = append(parts, fmt.Sprintf("%d DERP latencies", len(n.codeLatency)))
	}
	s := strings.Join(parts, ", ") + " as the poster wrote them (source: prose)"
	if len(t.proseNotes) > 0 {
		s += "; " + strings.Join(t.proseNotes, "; ")
	}
	return safetext.Clean(clip(s))
}
