// Package paste reads what people paste (`tailscale status`, `netcheck`,
// `ping`, tailscaled's log, `tailscale debug derp`, the host's tools,
// prose and Markdown, saved snapshots among them, detected by content)
// into a snapshot.File, which probes/snapshot then diagnoses the same way
// as a capture. It imports probes/snapshot; the file format, capture,
// replay and redaction stay there.
//
// The API: Parse(inputs, now) reads one or more inputs (ReadInput reads
// a file, stdin or a serve URL into a Raw); ReadPeer reads a peer's
// snapshot or pasted output as that peer's side. docs/snapshots.md lists
// what is read and its bounds (MaxPastedLines, MaxLineBytes).
package paste

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// Raw is one input as read: its name (a path, "-" for stdin) and bytes.
type Raw struct {
	Name string
	Data []byte
}

// Kinds of pasted input (snapshot.Input.Kind).
const (
	KindStatusJSON   = "tailscale status --json"
	KindStatusText   = "tailscale status"
	KindNetcheckJSON = "tailscale netcheck --format=json"
	KindNetcheckText = "tailscale netcheck"
	KindPing         = "tailscale ping"
	KindLog          = "tailscaled log"
	KindVersion      = "tailscale version"
)

// Bounds on pasted text (Parse), past which it is refused with an error
// wrapping snapshot.ErrTooLarge that names the bound: as a snapshot file is
// bounded by MaxSize bytes and MaxPeers peers, so is what people paste,
// and by lines, whose reading costs most. docs/snapshots.md lists them.
const (
	// MaxPastedLines bounds the lines of text read, across the inputs
	// (lines inside a JSON document are the document's, counted by
	// MaxSize): hours of a busy tailscaled's log.
	MaxPastedLines = 100000
	// MaxLineBytes bounds one line of text (a JSON document on one line
	// is not text, and is bounded by MaxSize).
	MaxLineBytes = 64 << 10
	// maxJSONScan bounds, as a multiple of an input's size, what the
	// search for JSON documents may read: a line opening with "{" is
	// decoded from there on, and a value that never ends reads to the
	// end of the input.
	maxJSONScan = 4
)

// maxIgnoredKept bounds the ignored lines a File lists (the count is
// still reported).
const maxIgnoredKept = 200

// Parse reads inputs: one saved snapshot (snapshot.Decode), or pasted text, each
// input possibly several pastes concatenated, detected by content (Windows
// line endings and a byte-order mark are fine):
//
//   - `tailscale status --json` (ipnstate.Status JSON, of any version:
//     fields it lacks are unknown);
//   - `tailscale netcheck --format=json` (or json-line) and the text report
//     of `tailscale netcheck`;
//   - plain `tailscale status` of CLIs 1.50 to 1.104 (its first line is
//     us when it can be: the self line has no connection state or
//     traffic) and its `# Health check:` block;
//   - `tailscale ping` output, which stands on its own: each target
//     becomes a peer, its runs kept in order;
//   - tailscaled log lines in every wrapper (journald, docker, Windows
//     log files, Go and RFC 3339 times, programs embedding tailscale's
//     packages; see paste_log.go).
//
// Text is read as people paste it: UTF-16, typographic quotes, non-
// breaking spaces, tabs, Markdown quotes and fences, shell prompts and
// `time` output, lines re-wrapped at 80 columns; placeholders and
// redactions (x.y.z.w, [redacted], <ip>) are unknown values.
//
// Evidence an input does not hold stays unknown: plain status text has no
// endpoints, so they are unknown, never empty. The File's Taken is the
// newest time the input states (status JSON's LastWrite and handshakes,
// netcheck's time, log timestamps), else now; Inputs lists what was
// recognised and Ignored the other lines. Errors: ErrNotSnapshot (wrapped
// with the first unrecognised line) when nothing is recognised, ErrCorrupt
// for a document that says what it is but does not decode, ErrTooLarge;
// two saved snapshots, or a snapshot mixed with pasted text, are refused.
func Parse(inputs []Raw, now time.Time) (*snapshot.File, error) {
	total := 0
	for _, in := range inputs {
		total += len(in.Data)
	}
	if total > snapshot.MaxSize {
		return nil, fmt.Errorf("%w: more than %d MiB", snapshot.ErrTooLarge, snapshot.MaxSize>>20)
	}
	var snaps []*snapshot.File
	var pasted []Raw
	for _, in := range inputs {
		data := normalize(decodeText(in.Data))
		if looksBinary(data) {
			return nil, fmt.Errorf("%w: %s is binary, not text", snapshot.ErrNotSnapshot, safeName(in.Name))
		}
		if looksLikeSnapshot(data) {
			f, err := snapshot.Decode(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", safeName(in.Name), err)
			}
			snaps = append(snaps, f)
			continue
		}
		pasted = append(pasted, Raw{Name: in.Name, Data: data})
	}
	switch {
	case len(snaps) > 1:
		return nil, errors.New("several saved snapshots given: diagnose one at a time (a peer's goes to --peer-snapshot)")
	case len(snaps) == 1 && len(pasted) > 0:
		return nil, errors.New("a saved snapshot and pasted text given together: diagnose them one at a time")
	case len(snaps) == 1:
		return snaps[0], nil
	}
	p := newPaste(now)
	for _, in := range pasted {
		if err := p.read(in); err != nil {
			return nil, err
		}
	}
	// Two machines' output in one paste (paste_machines.go).
	if s := p.splitMachines(); s != nil {
		return parseMachines(pasted, s, now)
	}
	return p.file()
}

// normalize drops a UTF-8 byte-order mark and turns CRLF and lone CR
// line endings into LF.
func normalize(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

// looksLikeSnapshot reports whether b is one JSON object naming Format.
func looksLikeSnapshot(b []byte) bool {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	var head struct {
		Format string `json:"format"`
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	return dec.Decode(&head) == nil && head.Format == snapshot.Format
}

func safeName(s string) string { return safetext.Clean(filepath.Base(s)) }

// paste accumulates what the recognised inputs say.
type paste struct {
	now time.Time

	status     *ipnstate.Status // from JSON
	statusFrom string           // KindStatusJSON or KindStatusText: the newest
	texts      []*textStatus    // plain-text status blocks, in order
	health     []string         // `# Health check:` lines
	state      string           // a state description line's BackendState
	version    string           // this node's version (`tailscale version`, tailscaled's start line)
	stateNote  string           // its words
	netchecks  []*netcheckFacts // the CLI's reports (JSON or text), in order
	logNets    []*netcheckFacts // the daemon's, from its log
	endpoints  []netip.AddrPort // ours, from the daemon's log
	epTypes    []string         // their types ("stun", "local", …)
	homeDERP   int              // ours, from the daemon's log
	regions    map[int]tailcfg.DERPRegion
	codes      map[string]int // region code → id, where known
	names      map[string]string
	selfIP     netip.Addr            // "IP is local Tailscale IP"
	direct     map[string]directSeen // short node key → when "now using" a direct path
	logHealth  map[string]string     // warnable → its error text ("" = ok again)
	logCount   map[string]int        // kind of log line → count
	logNames   map[string]bool
	ev         probes.SelfEvidence // our own trouble, from the log and the CLI
	inputs     []snapshot.Input
	ignored    []snapshot.Ignored
	ignoredN   int
	times      []time.Time
	yearless   bool
	firstUnrec string
	textPaths  map[tailcfg.StableNodeID]string // status lines whose path a redaction hides: their words
	seenErrs   map[string]bool                 // control errors counted, by time and text
	derpErrIdx map[int]int                     // region → its index in ev.DERPErrors
	derpConnAt map[int]time.Time               // region → its last "derp-N connected"
	// breakRun is the run of control stream breaks being read;
	// netmapSince says a netmap was received after its last event.
	breakRun    *probes.BreakRun
	netmapSince bool

	// noSelfNext: the last command line was `tailscale status
	// --self=false`, so the status block after it has no line of ours.
	noSelfNext bool

	// Bounds (MaxPastedLines, MaxPeers): text lines read, status lines
	// kept; overCap says the first bound passed, which read returns.
	textLines   int
	statusLines int
	overCap     string

	// Ping output: targets in order, the run being read, the command
	// line it follows.
	pingTargets []*pingTarget
	curTarget   *pingTarget
	curRun      *pingRun
	pingCmd     *pingCmd

	// th is what the readers of a whole thread read (paste_thread.go).
	th threadState

	// Whose output each line is (paste_machines.go): the inputs' names
	// in order, the one being read, the signs of a machine read so far.
	inputNames []string
	inputNo    int
	marks      []machineMark
}

func newPaste(now time.Time) *paste {
	return &paste{now: now, regions: map[int]tailcfg.DERPRegion{}, codes: map[string]int{}, names: map[string]string{},
		direct: map[string]directSeen{}, logHealth: map[string]string{},
		logCount: map[string]int{}, logNames: map[string]bool{}}
}

// Line kinds readLine returns that are recognised but are no input.
const (
	lineBlank  = "blank"
	lineNoise  = "noise"
	lineCmd    = "command"
	lineIgnore = ""
)

// read goes through one input line by line.
func (p *paste) read(in Raw) error {
	name := safeName(in.Name)
	p.inputNo = len(p.inputNames)
	p.inputNames = append(p.inputNames, name)
	data := in.Data
	lines := newPasteLines(data)
	var block *blockState
	// What the search for JSON documents may still read (maxJSONScan).
	jsonBudget := maxJSONScan*len(data) + 1<<20
	i := 0
	for ; lines.has(i); i++ {
		if p.overCap != "" {
			return fmt.Errorf("%w: %s:%d: %s", snapshot.ErrTooLarge, name, i, p.overCap)
		}
		raw := lines.line(i)
		if strings.HasPrefix(strings.TrimSpace(raw), "{") {
			n, scanned, err := p.readJSON(name, data[lines.offset(i):], i+1)
			if err != nil {
				return err
			}
			if n > 0 {
				i += n - 1
				p.closeBlock(&block)
				continue
			}
			if jsonBudget -= scanned; jsonBudget < 0 {
				return fmt.Errorf("%w: %s:%d: the lines opening with \"{\" read as JSON that never ends, more than %d times the input's size; paste each tailscale --json output whole, or as text", snapshot.ErrTooLarge, name, i+1, maxJSONScan)
			}
		}
		// HuJSON, a keyed JSON object, a YAML DERP map (paste_derpmap.go).
		if n, err := p.readDoc(name, data, lines, i, &jsonBudget); err != nil || n > 0 {
			if err != nil {
				return err
			}
			i += n - 1
			p.closeBlock(&block)
			continue
		}
		if len(raw) > MaxLineBytes {
			return fmt.Errorf("%w: %s:%d: a line of %d KiB; tailpath reads lines of at most %d KiB (tailscale and tailscaled write far shorter ones)", snapshot.ErrTooLarge, name, i+1, len(raw)>>10, MaxLineBytes>>10)
		}
		if p.textLines++; p.textLines > MaxPastedLines {
			return fmt.Errorf("%w: %s:%d: more than %d lines of text; paste the part that matters (the status, a netcheck, the log around the trouble)", snapshot.ErrTooLarge, name, i+1, MaxPastedLines)
		}
		line, fence := normLine(raw)
		if fence {
			continue
		}
		// A line re-wrapped at 80 columns: its rest on the next line.
		if lines.has(i + 1) {
			if joined, ok := p.unwrap(line, lines.line(i+1), block); ok {
				if p.readLine(name, i+1, joined, &block) != lineIgnore {
					i++
					continue
				}
			}
		}
		if kind := p.readLine(name, i+1, line, &block); kind == lineIgnore {
			p.ignore(name, i+1, raw)
		}
	}
	p.closeBlock(&block)
	p.endPing()
	if p.overCap != "" {
		return fmt.Errorf("%w: %s:%d: %s", snapshot.ErrTooLarge, name, i, p.overCap)
	}
	return nil
}

// pasteLines is an input's lines, found as they are asked for, so that
// reading stops where a bound stops it without splitting the rest.
type pasteLines struct {
	s      string // the input without its final newline
	starts []int  // where each line found so far starts
	done   bool   // every line is found
}

func newPasteLines(data []byte) *pasteLines {
	return &pasteLines{s: strings.TrimSuffix(string(data), "\n"), starts: []int{0}}
}

// has reports whether the input has line i (from 0).
func (l *pasteLines) has(i int) bool {
	for len(l.starts) <= i && !l.done {
		last := l.starts[len(l.starts)-1]
		j := strings.IndexByte(l.s[last:], '\n')
		if j < 0 {
			l.done = true
			break
		}
		l.starts = append(l.starts, last+j+1)
	}
	return i < len(l.starts)
}

// line is line i, without its newline; has(i) must be true.
func (l *pasteLines) line(i int) string {
	if l.has(i + 1) {
		return l.s[l.starts[i] : l.starts[i+1]-1]
	}
	return l.s[l.starts[i]:]
}

// offset is where line i starts in the input; has(i) must be true.
func (l *pasteLines) offset(i int) int { return l.starts[i] }

// unwrap joins line and the next raw line when line looks cut at a
// forum's or terminal's width (up to 80 columns) and only the two
// together are recognised: the next line alone is not, and line alone is
// not, or is of the same kind.
func (p *paste) unwrap(line, nextRaw string, block *blockState) (string, bool) {
	n := utf8.RuneCountInString(line)
	if n < 40 || n > 80 {
		return "", false
	}
	next, fence := normLine(nextRaw)
	if fence || next == "" || len(nextRaw) > 0 && nextRaw[0] == '\t' && block != nil {
		return "", false
	}
	if next == "{" || strings.HasPrefix(next, `{"`) || strings.HasPrefix(next, `{ "`) {
		return "", false // a JSON document opens: `… | jq '.Peer[]'` then its output
	}
	if r, _ := utf8.DecodeRuneInString(next); unicode.IsUpper(r) && len(next) > 1 && unicode.IsLower(rune(next[1])) {
		return "", false // a sentence, not the rest of a line
	}
	if p.dryRun(next, block) != lineIgnore {
		return "", false
	}
	alone := p.dryRun(line, block)
	if alone != lineIgnore && !continuation(next) {
		// A whole line and a sentence after it: not one line.
		return "", false
	}
	seps := []string{" ", ""}
	if n == 80 {
		seps = []string{"", " "} // a terminal's hard wrap cuts mid-word
	}
	for _, sep := range seps {
		j := line + sep + next
		if k := p.dryRun(j, block); k != lineIgnore && k != lineBlank && k != lineNoise && (alone == lineIgnore || alone == k) {
			return j, true
		}
	}
	return "", false
}

// continuation reports whether s looks like the rest of a cut line of
// machine text rather than words of its own: it starts with a digit or
// punctuation, or its first word holds "=", ":", ",", ")" or "]"
// ("derpdist=1v4:12ms", "0ms", `firewallmode="nft"}`).
func continuation(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsLetter(r) {
		return true
	}
	w, _, _ := strings.Cut(s, " ")
	return strings.ContainsAny(w, "=:,)]}")
}

// dryRun is the kind readLine would give line, without keeping anything.
func (p *paste) dryRun(line string, block *blockState) string {
	q := newPaste(p.now)
	var b *blockState
	if block != nil {
		c := *block
		if c.nc != nil {
			nc := *c.nc
			c.nc = &nc
		}
		if c.text != nil {
			c.text = &textStatus{}
		}
		c.host = c.host.clone()
		b = &c
	}
	return q.readLine("", 1, line, &b)
}

// ignore records an unrecognised line (blank ones are not counted).
func (p *paste) ignore(name string, no int, line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	p.ignoredN++
	p.markProse(no, line)
	t := safetext.Clean(line)
	if len(t) > 120 {
		t = t[:120] + "…"
	}
	if p.firstUnrec == "" {
		p.firstUnrec = fmt.Sprintf("%s:%d: %q", name, no, t)
	}
	if len(p.ignored) < maxIgnoredKept {
		p.ignored = append(p.ignored, snapshot.Ignored{Name: name, Line: no, Text: t})
	}
}

// addInput records a recognised piece, merging it with the previous one
// of the same kind when they touch.
func (p *paste) addInput(in snapshot.Input) {
	if n := len(p.inputs); n > 0 {
		last := &p.inputs[n-1]
		if last.Name == in.Name && last.Kind == in.Kind && in.First <= last.Last+2 && in.Note == "" && last.Name != "" {
			last.Last = max(last.Last, in.Last)
			return
		}
	}
	p.inputs = append(p.inputs, in)
}

// jsonObjectEnd returns where the JSON object b opens (after blanks) ends:
// past the bracket that closes its first one, strings skipped; -1 when
// none does. It reads each byte once and keeps nothing, and judges no
// more than where the object ends: json.Unmarshal judges the rest.
func jsonObjectEnd(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	if i == len(b) || b[i] != '{' {
		return -1
	}
	depth, inString := 0, false
	for ; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// readJSON decodes the JSON value starting b (line first of name) and
// returns how many lines it spans; 0 when it is not one JSON value, with
// how many bytes of b the attempt read. A value that identifies as status
// or netcheck but does not decode is an error, and so is a status of more
// than MaxPeers peers; other JSON is left to the line classifier
// (ignored).
func (p *paste) readJSON(name string, b []byte, first int) (int, int, error) {
	end := jsonObjectEnd(b)
	if end < 0 {
		return 0, len(b), nil
	}
	raw := b[:end]
	span := bytes.Count(raw, []byte("\n")) + 1
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return 0, end, nil
	}
	in := snapshot.Input{Name: name, First: first, Last: first + span - 1}
	switch {
	case keys["format"] != nil:
		return 0, 0, fmt.Errorf("%s:%d: a saved snapshot inside other text: give it on its own", name, first)
	case keys["BackendState"] != nil || (keys["Self"] != nil && keys["TailscaleIPs"] != nil):
		var st ipnstate.Status
		if err := json.Unmarshal(raw, &st); err != nil {
			return 0, 0, fmt.Errorf("%w: %s:%d: tailscale status --json does not decode: %s", snapshot.ErrCorrupt, name, first, safetext.Clean(err.Error()))
		}
		if len(st.Peer) > snapshot.MaxPeers {
			return 0, 0, fmt.Errorf("%w: %s:%d: tailscale status --json of %d peers; tailpath reads at most %d, as in a saved snapshot", snapshot.ErrTooLarge, name, first, len(st.Peer), snapshot.MaxPeers)
		}
		p.status, p.statusFrom = &st, KindStatusJSON
		p.statusKeys(keys)
		in.Kind = KindStatusJSON
		in.Note = units.Count(len(st.Peer), "peer", "peers")
		for _, ps := range st.Peer {
			if ps != nil {
				p.noteTime(ps.LastWrite)
				p.noteTime(ps.LastHandshake)
			}
		}
	case keys["UDP"] != nil && (keys["PreferredDERP"] != nil || keys["RegionLatency"] != nil || keys["MappingVariesByDestIP"] != nil):
		nf, err := netcheckFromJSON(raw)
		if err != nil {
			return 0, 0, fmt.Errorf("%w: %s:%d: tailscale netcheck JSON does not decode: %s", snapshot.ErrCorrupt, name, first, safetext.Clean(err.Error()))
		}
		nf.from = KindNetcheckJSON
		p.netchecks = append(p.netchecks, nf)
		p.noteTime(nf.at)
		for _, id := range slices.Sorted(maps.Keys(nf.latency)) {
			p.region(id, "", "")
		}
		in.Kind = KindNetcheckJSON
		in.Note = nf.note()
	default:
		kind, note, ok := p.moreJSON(raw, keys)
		if !ok {
			return 0, end, nil
		}
		in.Kind, in.Note = kind, note
	}
	p.addInput(in)
	return span, 0, nil
}

// readLine classifies one normalised text line and returns the kind it
// belongs to: an input kind, lineBlank, lineNoise or lineCmd (recognised,
// no input of their own), lineIgnore when unrecognised.
func (p *paste) readLine(name string, no int, line string, block **blockState) string {
	trim := line
	b := *block
	// Inside a netcheck report or health block, their own lines first.
	if b != nil && b.kind == KindNetcheckText {
		if p.netcheckLine(b, trim) {
			b.last = no
			return KindNetcheckText
		}
		p.closeBlock(block)
	}
	if b = *block; b != nil && b.host != nil {
		if p.moreBlockLine(name, no, b, trim) {
			return b.kind
		}
		p.closeBlock(block)
	}
	if b = *block; b != nil && b.kind == "health" {
		if m := healthItemRE().FindStringSubmatch(trim); m != nil {
			p.health = append(p.health, safetext.Clean(m[1]))
			b.last = no
			return KindStatusText
		}
		p.closeBlock(block)
	}
	switch {
	case trim == "":
		if b = *block; b != nil && b.kind == KindStatusText {
			p.closeBlock(block)
		}
		return lineBlank
	case trim == "Report:":
		p.closeBlock(block)
		*block = &blockState{kind: KindNetcheckText, name: name, first: no, last: no, nc: &netcheckFacts{from: KindNetcheckText}}
		return KindNetcheckText
	case trim == "# Health check:":
		p.closeBlock(block)
		*block = &blockState{kind: "health", name: name, first: no, last: no}
		p.health = nil
		return KindStatusText
	case knownNoise(trim):
		return lineNoise
	case isTimeLine(trim):
		return lineNoise
	case isBarePrompt(trim):
		p.markPrompt(no, trim)
		return lineNoise
	}
	if c, ok := parseCommand(trim); ok {
		p.markPrompt(no, trim)
		p.command(c, block)
		return lineCmd
	}
	if st, ok := stateLines[trim]; ok {
		p.state, p.stateNote = st, trim
		p.addInput(snapshot.Input{Name: name, Kind: KindStatusText, First: no, Last: no, Note: "tailscaled is " + st})
		return KindStatusText
	}
	if m := unexpectedStateRE().FindStringSubmatch(trim); m != nil {
		p.state, p.stateNote = safetext.Clean(m[1]), trim
		p.addInput(snapshot.Input{Name: name, Kind: KindStatusText, First: no, Last: no, Note: "tailscaled is " + p.state})
		return KindStatusText
	}
	if strings.HasPrefix(trim, "failed to connect to local tailscaled") || strings.HasPrefix(trim, "failed to connect to local Tailscale") {
		p.state, p.stateNote = "NoState", "the tailscale CLI could not reach tailscaled"
		p.addInput(snapshot.Input{Name: name, Kind: KindStatusText, First: no, Last: no, Note: "tailscaled is not running (the CLI could not reach it)"})
		return KindStatusText
	}
	if m := longVersionRE().FindStringSubmatch(trim); m != nil {
		// `tailscale version` (cmd/tailscale/cli/version.go): its
		// "long version:" line names the exact build.
		p.version = safetext.Clean(m[1])
		p.addInput(snapshot.Input{Name: name, Kind: KindVersion, First: no, Last: no, Note: "this node runs " + p.version})
		return KindVersion
	}
	if pl, ok := parsePeerLine(trim); ok {
		pl.no = no
		b = *block
		if b == nil || b.kind != KindStatusText {
			p.closeBlock(block)
			b = &blockState{kind: KindStatusText, name: name, first: no, text: &textStatus{name: name, noSelf: p.noSelfNext}}
			p.noSelfNext = false
			*block = b
		}
		b.text.lines = append(b.text.lines, pl)
		b.last = no
		if p.statusLines++; p.statusLines > snapshot.MaxPeers+1 && p.overCap == "" {
			p.overCap = fmt.Sprintf("more than %d lines of tailscale status; tailpath reads at most %d peers and this node, as in a saved snapshot", snapshot.MaxPeers+1, snapshot.MaxPeers)
		}
		return KindStatusText
	}
	if header := strings.Fields(trim); len(header) >= 4 && header[0] == "IP" && header[1] == "Hostname" {
		return lineNoise
	}
	if p.pingLine(name, no, trim) {
		return KindPing
	}
	if p.cliLine(name, no, trim) {
		return KindNetcheckText
	}
	if p.logLine(name, no, trim) {
		return KindLog
	}
	if pl, ok := parseFragmentLine(trim); ok {
		// A quote of part of a status line: its peer has no address or
		// name, but its path is what the CLI printed. It joins no
		// block: no other line can be this node.
		pl.no = no
		p.closeBlock(block)
		b := &blockState{kind: KindStatusText, name: name, first: no, last: no,
			text: &textStatus{name: name, noSelf: true, lines: []peerLine{pl}, fragment: true}}
		*block = b
		p.closeBlock(block)
		return KindStatusText
	}
	if k := p.moreLine(name, no, trim, block); k != "" {
		return k
	}
	return lineIgnore
}

// command notes a shell command line: `tailscale ping` starts ping runs,
// `tailscale status` a new status block.
func (p *paste) command(c command, block **blockState) {
	p.cmdFacts(c)
	if c.tool != "tailscale" {
		return
	}
	sub, _, _ := c.sub()
	switch sub {
	case "ping":
		p.closeBlock(block)
		p.pingCommand(c)
	case "status", "netcheck":
		p.closeBlock(block)
		p.endPing()
	}
	// `tailscale status --self=false`: the block that follows has no
	// line of ours.
	p.noSelfNext = false
	if sub == "status" {
		_, _, flags := c.sub()
		for _, f := range flags {
			// Go's flag package parses a bool flag's value with
			// strconv.ParseBool.
			if name, v, ok := strings.Cut(f, "="); ok && name == "self" {
				if b, err := strconv.ParseBool(v); err == nil {
					p.noSelfNext = !b
				}
			}
		}
	}
}

// endPing ends the ping run being read (a new command or input follows).
func (p *paste) endPing() {
	p.curRun, p.curTarget, p.pingCmd = nil, nil, nil
}

// blockState is a multi-line block being read.
type blockState struct {
	kind        string
	name        string
	first, last int
	nc          *netcheckFacts
	text        *textStatus
	host        *hostAcc // a host tool's block (paste_host.go)
}

// closeBlock finishes the open block.
func (p *paste) closeBlock(block **blockState) {
	b := *block
	*block = nil
	if b == nil {
		return
	}
	switch b.kind {
	case KindNetcheckText:
		b.nc.finish()
		p.netchecks = append(p.netchecks, b.nc)
		p.noteTime(b.nc.at)
		for _, code := range slices.Sorted(maps.Keys(b.nc.regionNames)) {
			p.region(0, code, b.nc.regionNames[code])
		}
		p.addInput(snapshot.Input{Name: b.name, Kind: KindNetcheckText, First: b.first, Last: b.last, Note: b.nc.note()})
	case KindStatusText:
		p.texts = append(p.texts, b.text)
		p.statusFrom = KindStatusText
		n := len(b.text.lines)
		note := fmt.Sprintf("us + %s; this format has no endpoints, handshakes or NAT facts", units.Count(n-1, "peer", "peers"))
		switch {
		case b.text.fragment:
			note = "a status line cut before its address and name: a peer with no name, its path as printed; this format has no endpoints, handshakes or NAT facts"
		case b.text.noSelf:
			note = fmt.Sprintf("%s, no line for us (the command said --self=false); this format has no endpoints, handshakes or NAT facts",
				units.Count(n, "peer", "peers"))
		case !b.text.selfKnown():
			note = fmt.Sprintf("%s, no line for us (the first has a connection state or traffic, which our own never has); this format has no endpoints, handshakes or NAT facts",
				units.Count(n, "peer", "peers"))
		}
		p.addInput(snapshot.Input{Name: b.name, Kind: KindStatusText, First: b.first, Last: b.last, Note: note})
	case "health":
		p.addInput(snapshot.Input{Name: b.name, Kind: KindStatusText, First: b.first, Last: b.last, Note: units.Count(len(p.health), "health message", "health messages")})
	default:
		p.closeMore(b)
	}
}

// noteTime records a time the input states (for Taken).
func (p *paste) noteTime(t time.Time) {
	if !t.IsZero() && t.Year() > 2000 {
		p.times = append(p.times, t)
	}
}

// region records what is known of a DERP region: its id (0 unknown), code
// and name. Regions known only by code get ids from syntheticRegion.
// Redactions are never codes or names: they return 0.
func (p *paste) region(id int, code, name string) int {
	code, name = safetext.Clean(knownName(code)), safetext.Clean(knownName(name))
	if id == 0 && code == "" && name == "" {
		return 0
	}
	if id == 0 && code != "" {
		if known, ok := p.codes[code]; ok {
			id = known
		}
	}
	if id == 0 && code == "" && name != "" {
		for rid, r := range p.regions {
			if r.RegionName == name {
				return rid
			}
		}
	}
	if id == 0 {
		id = syntheticRegion
		for {
			if _, used := p.regions[id]; !used {
				break
			}
			id++
		}
	}
	r := p.regions[id]
	r.RegionID = tscompat.RegionID(id)
	if code != "" {
		if old, ok := p.codes[code]; ok && old != id && old >= syntheticRegion {
			// The code was known only by a synthetic id: move it.
			delete(p.regions, old)
		}
		r.RegionCode = code
		p.codes[code] = id
	}
	if name != "" {
		r.RegionName = name
	}
	p.regions[id] = r
	return id
}

// syntheticRegion is the first id given to a region the input names only
// by its code (`tailscale netcheck`'s text report).
const syntheticRegion = 10000

// file assembles the File.
//
// Long on purpose: the pasted pieces merged into one file in their precedence
// order, each step overriding what the ones before it filled.
func (p *paste) file() (*snapshot.File, error) {
	if len(p.inputs) == 0 {
		if p.firstUnrec != "" {
			return nil, fmt.Errorf("%w: nothing recognised (first line: %s)", snapshot.ErrNotSnapshot, p.firstUnrec)
		}
		return nil, fmt.Errorf("%w: the input is empty", snapshot.ErrNotSnapshot)
	}
	taken := p.now
	timeNote := "the input states no time: ages are counted from now"
	if len(p.times) > 0 {
		taken = slices.MaxFunc(p.times, time.Time.Compare)
		timeNote = "the newest time the input states"
		if p.yearless {
			timeNote += " (journal lines carry no year: " + strconv.Itoa(taken.Year()) + " assumed)"
		}
	}
	f := &snapshot.File{Format: snapshot.Format, Version: snapshot.Version, Taken: taken, Origin: snapshot.OriginPasted, Ignored: p.ignored}
	defer func() { f.Inputs = p.inputs }()
	if p.ignoredN > len(p.ignored) {
		f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("%d lines ignored; the first %d are listed", p.ignoredN, len(p.ignored))))
	}
	f.TakenFrom = timeNote

	// Status: the newest of status JSON and the text blocks.
	st := p.status
	offline := map[tailcfg.StableNodeID]bool{}
	// lastSeenAgo: status text says "last seen 3d ago", so the LastSeen
	// built from it is no more precise than that.
	lastSeenAgo := map[tailcfg.StableNodeID]time.Duration{}
	if p.statusFrom == KindStatusText || st == nil {
		if ts := p.mergedText(f); ts != nil {
			st, offline = ts.build(taken)
			p.textPaths = ts.redactedPaths()
			for _, ps := range st.Peer {
				if !ps.LastSeen.IsZero() {
					lastSeenAgo[ps.ID] = taken.Sub(ps.LastSeen)
				}
			}
		}
	}
	if st == nil && len(p.pingTargets) > 0 {
		st = &ipnstate.Status{BackendState: "Running", Self: &ipnstate.PeerStatus{}, Peer: map[key.NodePublic]*ipnstate.PeerStatus{}}
	}
	if st == nil && len(p.th.frags) > 0 {
		// Peers cut from `tailscale status --json` (one entry, or `jq
		// '.Peer[]'`'s objects one after another) stand on their own as
		// ping output does: they become the peers (mergeFragments), and
		// this node is unknown.
		st = &ipnstate.Status{BackendState: p.state, Self: &ipnstate.PeerStatus{}, Peer: map[key.NodePublic]*ipnstate.PeerStatus{}}
		if p.th.selfFrag == nil {
			f.Warnings = append(f.Warnings, "tailscale status --json's peer entries without its Self: this node's own facts (name, addresses, state) are unknown")
		}
	}
	if st == nil {
		// An empty self, so that our own facts (a netcheck) still apply.
		st = &ipnstate.Status{BackendState: p.state, Self: &ipnstate.PeerStatus{}}
		if p.state != "" {
			f.Warnings = append(f.Warnings, safetext.New("tailscale status says tailscaled is "+p.state+": no peers to diagnose"))
		} else {
			f.Warnings = append(f.Warnings, "no tailscale status or ping in the input: no peers to diagnose")
		}
	}
	if st.Self == nil {
		st.Self = &ipnstate.PeerStatus{}
	}
	if p.state != "" && p.statusFrom != KindStatusJSON {
		st.BackendState = p.state
	}
	if p.selfIP.IsValid() && len(st.Self.TailscaleIPs) == 0 {
		st.Self.TailscaleIPs = []netip.Addr{p.selfIP}
		st.TailscaleIPs = st.Self.TailscaleIPs
	}
	if p.statusFrom != KindStatusJSON && len(p.health) > 0 {
		st.Health = append(st.Health, p.health...)
	}
	have := make(map[string]bool, len(st.Health))
	for _, h := range st.Health {
		have[h] = true
	}
	for _, w := range slices.Sorted(maps.Keys(p.logHealth)) {
		if msg := p.logHealth[w]; msg != "" && !have[msg] {
			st.Health = append(st.Health, msg)
			have[msg] = true
		}
	}
	handshakes := p.mergeFragments(st)
	f.Status = st
	hist := map[string]snapshot.PeerHistory{}
	p.pingPeers(f, st, taken, hist)
	// Region codes from the status (peers' Relay, our own).
	for _, ps := range allPeers(st) {
		if ps.Relay != "" {
			p.region(0, ps.Relay, "")
		}
	}

	// Region ids tied to the codes the paths name (paste_thread.go).
	p.linkRegions()

	// Our own facts; netcheck fields in prose when no report says more.
	prose := p.proseNetcheck()
	if prose != nil {
		p.netchecks = append(p.netchecks, prose)
	}
	self := p.selfFacts(f)
	switch {
	case self.NAT == nil && self.Evidence != nil && self.Evidence.NetcheckEmpty:
		f.Warnings = append(f.Warnings, "the netcheck report measured nothing: our NAT facts are unknown")
	case self.NAT == nil:
		f.Warnings = append(f.Warnings, "no netcheck report (`tailscale netcheck`, or tailscaled's `netcheck: report:` log line) in the input: our NAT facts are unknown")
	}
	if self.NAT != nil || self.HomeDERP != 0 || len(self.Endpoints) > 0 || self.Evidence != nil {
		f.Self = self
	}
	if len(p.regions) > 0 {
		dm := &tailcfg.DERPMap{Regions: map[tscompat.RegionID]*tailcfg.DERPRegion{}}
		for id, r := range p.regions {
			rc := r
			dm.Regions[tscompat.RegionID(id)] = &rc
		}
		f.DERPMap = dm
	}

	// Per-peer facts: direct paths the daemon logged, offline words.
	byKey := map[string]*ipnstate.PeerStatus{}
	for _, ps := range allPeers(st) {
		if !ps.PublicKey.IsZero() {
			byKey[ps.PublicKey.ShortString()] = ps
		}
	}
	for short, d := range p.direct {
		ps := byKey[short]
		if ps == nil {
			f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("tailscaled log: direct path to node %s at %s: no such peer in the pasted status (tailscale status --json names the keys)", short, d.at.UTC().Format(time.RFC3339))))
			continue
		}
		if taken.Sub(d.at) < probes.LostDirectWindow && taken.Sub(d.at) >= 0 {
			h := hist[string(ps.ID)]
			h.LastDirect, h.LastDirectAddr = d.at, d.addr
			hist[string(ps.ID)] = h
		}
	}
	for id := range offline {
		h := hist[string(id)]
		h.Offline = true
		hist[string(id)] = h
	}
	for id, ago := range lastSeenAgo {
		h := hist[string(id)]
		h.LastSeenAgo = ago
		hist[string(id)] = h
	}
	for id, text := range p.textPaths {
		h := hist[string(id)]
		h.PathText = text
		hist[string(id)] = h
	}
	if len(p.logCount) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(p.logCount)) {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, p.logCount[k]))
		}
		p.inputs = append(p.inputs, snapshot.Input{Kind: KindLog, Note: strings.Join(parts, ", ")})
	}
	if p.statusFrom != KindStatusJSON {
		for _, ps := range allPeers(st) {
			if ps != st.Self {
				h := hist[string(ps.ID)]
				h.HandshakeUnknown = true
				hist[string(ps.ID)] = h
			}
		}
	}
	p.finishThread(f, st, prose, handshakes, hist)
	if len(hist) > 0 {
		f.History.Peers = make(map[safetext.Text]snapshot.PeerHistory, len(hist))
		for id, h := range hist {
			f.History.Peers[safetext.New(id)] = h
		}
	}
	return f, nil
}

// mergedText is the pasted status text: one block, or several of the same
// node merged (a later line of a node replaces an earlier one). Blocks of
// different nodes (their first lines name different selves) are not
// merged: the last is used, with a warning.
func (p *paste) mergedText(f *snapshot.File) *textStatus {
	if len(p.texts) == 0 {
		return nil
	}
	last := p.texts[len(p.texts)-1]
	selfOf := func(ts *textStatus) string {
		if !ts.selfKnown() {
			return ""
		}
		return string(ts.lines[0].id(ts.name))
	}
	out := &textStatus{name: last.name}
	// No block has a line of ours, and one says so (--self=false): no
	// merged line is ours either.
	for _, ts := range p.texts {
		out.noSelf = out.noSelf || ts.noSelf
	}
	for _, ts := range p.texts {
		if ts.selfKnown() {
			out.noSelf = false
		}
	}
	idx := map[tailcfg.StableNodeID]int{}
	for _, ts := range p.texts {
		if a, b := selfOf(ts), selfOf(last); a != "" && b != "" && a != b {
			f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("tailscale status of two nodes (%s and %s): the last is used; diagnose the other on its own", strings.TrimPrefix(a, "ip:"), strings.TrimPrefix(b, "ip:"))))
			continue
		}
		for i, pl := range ts.lines {
			if i == 0 && ts.selfKnown() && len(out.lines) > 0 && out.lines[0].col.isSelf() {
				out.lines[0] = pl
				continue
			}
			id := pl.id(ts.name)
			if j, ok := idx[id]; ok {
				out.lines[j] = pl
				continue
			}
			if i == 0 && ts.selfKnown() && len(out.lines) > 0 {
				// Our own line goes first.
				out.lines = append([]peerLine{pl}, out.lines...)
				for k := range idx {
					idx[k]++
				}
				idx[id] = 0
				continue
			}
			idx[id] = len(out.lines)
			out.lines = append(out.lines, pl)
		}
	}
	return out
}

// pingPeers adds what the ping output says to st: each target is matched
// to a status peer by address, else by name; a target the status lacks
// becomes a peer of its own (ping output stands on its own). A target
// that is us is skipped.
func (p *paste) pingPeers(f *snapshot.File, st *ipnstate.Status, taken time.Time, hist map[string]snapshot.PeerHistory) {
	targets := mergeTargets(p.pingTargets)
	byIP := map[netip.Addr]*ipnstate.PeerStatus{}
	byName := map[string]*ipnstate.PeerStatus{}
	for _, ps := range allPeers(st) {
		for _, a := range ps.TailscaleIPs {
			byIP[a] = ps
		}
		if n := strings.ToLower(shortHost(ps)); n != "" {
			byName[n] = ps
		}
	}
	for _, t := range targets {
		ps := byIP[t.ip]
		if ps == nil && t.name != "" {
			ps = byName[strings.ToLower(t.name)]
		}
		if ps != nil && ps == st.Self {
			f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("tailscale ping %s: that is this node, not a peer", t.note())))
			continue
		}
		ev := t.evidence(taken)
		note := t.note() + "; taken as of the snapshot's time (ping output is not dated)"
		if len(ev.notes) > 0 {
			note += "; " + strings.Join(ev.notes, "; ")
		}
		pingOnly := ps == nil
		if ps == nil {
			ps = t.peerStatus(ev)
			if st.Peer == nil {
				st.Peer = map[key.NodePublic]*ipnstate.PeerStatus{}
			}
			st.Peer[ps.PublicKey] = ps
			if ps.Relay != "" {
				p.region(0, ps.Relay, "")
			}
			if ev.noPath {
				note += "; not in a pasted status, and no DISCO ping names a path, so its path is unknown"
			} else {
				note += "; not in a pasted status, so its path is the last pong's"
			}
		}
		p.inputs = append(p.inputs, snapshot.Input{Kind: KindPing, Note: note})
		h := hist[string(ps.ID)]
		if pingOnly {
			h.PathText = ev.pathText()
			h.PathUnknown = ev.noPath
		}
		h.PingRun = ev.run
		h.ICMPReply = ev.icmp
		h.Latency = ev.latency
		if ev.wasDirect {
			h.LastDirect, h.LastDirectAddr = taken, ev.lastDirect
		}
		hist[string(ps.ID)] = h
	}
}

// mergeTargets merges the targets that name one peer (the same address,
// or the same name where an address is unknown), keeping run order.
func mergeTargets(ts []*pingTarget) []*pingTarget {
	var out []*pingTarget
	byIP := map[netip.Addr]*pingTarget{}
	byName := map[string]*pingTarget{}
	for _, t := range ts {
		name := strings.ToLower(t.name)
		into := byIP[t.ip]
		if into == nil && name != "" {
			if o := byName[name]; o != nil && (!t.ip.IsValid() || !o.ip.IsValid()) {
				into = o
			}
		}
		if into == nil {
			c := *t
			c.runs = slices.Clone(t.runs)
			into = &c
			out = append(out, into)
		} else {
			into.fill(t.name, t.ip)
			into.runs = append(into.runs, t.runs...)
		}
		if into.ip.IsValid() {
			byIP[into.ip] = into
		}
		if n := strings.ToLower(into.name); n != "" {
			byName[n] = into
		}
	}
	return out
}

// peerStatus is the PeerStatus a ping target the status lacks stands for:
// active (a ping makes it so), online when the last run got a pong, on
// the path the last DISCO pong came over.
func (t *pingTarget) peerStatus(ev pingEvidence) *ipnstate.PeerStatus {
	id := "name:" + strings.ToLower(t.name)
	if t.ip.IsValid() {
		id = "ip:" + t.ip.String()
	} else if t.name == "" {
		id = "ping:unknown"
	}
	ps := &ipnstate.PeerStatus{ID: tailcfg.StableNodeID(id), PublicKey: placeholderKey(id), HostName: t.name, Active: true, Online: ev.answered}
	if t.ip.IsValid() {
		ps.TailscaleIPs = []netip.Addr{t.ip}
	}
	switch ev.pathKind {
	case probes.PathDirect:
		ps.CurAddr = ev.curAddr
	case probes.PathDERP:
		ps.Relay = ev.derpCode
	case probes.PathPeerRelay:
		ps.PeerRelay = ev.peerRelay
	}
	return ps
}

// shortHost is a PeerStatus's name as tailscale status and ping print it.
func shortHost(ps *ipnstate.PeerStatus) string {
	if n, _, _ := strings.Cut(ps.DNSName, "."); n != "" {
		return n
	}
	return ps.HostName
}

// allPeers is st's self and peers, sorted by ID for determinism.
func allPeers(st *ipnstate.Status) []*ipnstate.PeerStatus {
	var out []*ipnstate.PeerStatus
	if st.Self != nil {
		out = append(out, st.Self)
	}
	peers := slices.Collect(maps.Values(st.Peer))
	slices.SortFunc(peers, func(a, b *ipnstate.PeerStatus) int {
		if a == nil || b == nil {
			return 0
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for _, ps := range peers {
		if ps != nil {
			out = append(out, ps)
		}
	}
	return out
}

// placeholderKey is a node key standing in for one plain text does not
// show, derived from the node's pasted id so it is stable.
func placeholderKey(id string) key.NodePublic {
	sum := sha256.Sum256([]byte("tailpath pasted peer " + id))
	var k key.NodePublic
	k.UnmarshalText([]byte(fmt.Sprintf("nodekey:%x", sum)))
	return k
}

// stateLines are the lines `tailscale status` prints instead of peers when
// tailscaled is not running (cmd/tailscale/cli/status.go
// isRunningOrStarting).
var stateLines = map[string]string{
	"Tailscale is stopped.": "Stopped",
	"Logged out.":           "NeedsLogin",
	"Machine is not yet approved by tailnet admin.": "NeedsMachineAuth",
}

// unexpectedStateRE is isRunningOrStarting's "unexpected state: NoState".
var unexpectedStateRE = lazyRE(`^unexpected state: (\w+)$`)

// knownNoise reports lines that are recognised but say nothing: the
// CLI's warnings and hints, log file headers.
func knownNoise(trim string) bool {
	switch {
	case strings.Trim(trim, "- ") == "" && strings.Contains(trim, "--"),
		strings.HasPrefix(trim, "# Warning: this JSON format is not yet considered a stable interface"),
		strings.HasPrefix(trim, "# To see the full list of exit nodes"),
		strings.HasPrefix(trim, "Log in at: "),
		strings.HasPrefix(trim, "(logID "):
		return true
	}
	return false
}

// longVersionRE is `tailscale version`'s "long version:" line
// (cmd/tailscale/cli/version.go: "  long version: 1.86.2-tc47caa10d-gf5d087d04").
var longVersionRE = lazyRE(`^long version: v?(\d+\.\d+\.\d+[-.\w]*)$`)
