package snapshot

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

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
)

// Raw is one input as read: its name (a path, "-" for stdin) and bytes.
type Raw struct {
	Name string
	Data []byte
}

// Kinds of pasted input (Input.Kind).
const (
	KindStatusJSON   = "tailscale status --json"
	KindStatusText   = "tailscale status"
	KindNetcheckJSON = "tailscale netcheck --format=json"
	KindNetcheckText = "tailscale netcheck"
	KindPing         = "tailscale ping"
	KindLog          = "tailscaled log"
)

// maxIgnoredKept bounds the ignored lines a File lists (the count is
// still reported).
const maxIgnoredKept = 200

// Parse reads inputs: one saved snapshot (as Read), or pasted text, each
// input possibly several pastes concatenated, detected by content (Windows
// line endings and a byte-order mark are fine):
//
//   - `tailscale status --json` (ipnstate.Status JSON, of any version:
//     fields it lacks are unknown);
//   - `tailscale netcheck --format=json` (or json-line) and the text report
//     of `tailscale netcheck`;
//   - plain `tailscale status` (its first peer line is us, as the CLI
//     prints it) and its `# Health check:` block;
//   - `tailscale ping` output;
//   - tailscaled log lines (plain, with Go's log timestamps, or from
//     journalctl): `netcheck: report:`, `magicsock: endpoints changed:`,
//     `magicsock: home is now derp-N (code)`, `magicsock: disco: node …
//     now using …`, `health(warnable=…): …`.
//
// Evidence an input does not hold stays unknown: plain status text has no
// endpoints, so they are unknown, never empty. The File's Taken is the
// newest time the input states (status JSON's LastWrite and handshakes,
// netcheck's time, log timestamps), else now; Inputs lists what was
// recognised and Ignored the other lines. Errors: ErrNotSnapshot (wrapped
// with the first unrecognised line) when nothing is recognised, ErrCorrupt
// for a document that says what it is but does not decode, ErrTooLarge;
// two saved snapshots, or a snapshot mixed with pasted text, are refused.
func Parse(inputs []Raw, now time.Time) (*File, error) {
	total := 0
	for _, in := range inputs {
		total += len(in.Data)
	}
	if total > MaxSize {
		return nil, fmt.Errorf("%w: more than %d MiB", ErrTooLarge, MaxSize>>20)
	}
	var snaps []*File
	var pasted []Raw
	for _, in := range inputs {
		data := normalize(in.Data)
		if looksLikeSnapshot(data) {
			f, err := decode(data)
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
	return dec.Decode(&head) == nil && head.Format == Format
}

func safeName(s string) string { return safetext.Clean(filepath.Base(s)) }

// paste accumulates what the recognised inputs say.
type paste struct {
	now time.Time

	status     *ipnstate.Status // from JSON, or built from text
	statusFrom string           // KindStatusJSON or KindStatusText
	text       *textStatus      // the last plain-text status block
	health     []string         // `# Health check:` lines
	state      string           // a state description line's BackendState
	netcheck   *netcheckFacts   // the CLI's report (JSON or text)
	logNet     *netcheckFacts   // the daemon's, from its log
	endpoints  []netip.AddrPort // ours, from the daemon's log
	homeDERP   int              // ours, from the daemon's log
	regions    map[int]tailcfg.DERPRegion
	codes      map[string]int // region code → id, where known
	names      map[string]string
	pings      map[netip.Addr]*pingFacts
	pingOrder  []netip.Addr
	lastPing   netip.Addr
	direct     map[string]directSeen // short node key → when "now using" a direct path
	logHealth  map[string]string     // warnable → its error text ("" = ok again)
	logCount   map[string]int        // kind of log line → count
	logNames   map[string]bool
	inputs     []Input
	ignored    []Ignored
	ignoredN   int
	times      []time.Time
	yearless   bool
	firstUnrec string
}

func newPaste(now time.Time) *paste {
	return &paste{now: now, regions: map[int]tailcfg.DERPRegion{}, codes: map[string]int{}, names: map[string]string{},
		pings: map[netip.Addr]*pingFacts{}, direct: map[string]directSeen{}, logHealth: map[string]string{},
		logCount: map[string]int{}, logNames: map[string]bool{}}
}

// read goes through one input line by line.
func (p *paste) read(in Raw) error {
	name := safeName(in.Name)
	data := in.Data
	// Line start offsets.
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var block *blockState
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "{") {
			n, err := p.readJSON(name, data[starts[i]:], i+1)
			if err != nil {
				return err
			}
			if n > 0 {
				i += n - 1
				block = nil
				continue
			}
		}
		kind := p.readLine(name, i+1, line, &block)
		if kind == "" {
			p.ignore(name, i+1, line)
		}
	}
	p.closeBlock(&block)
	return nil
}

// ignore records an unrecognised line (blank ones are not counted).
func (p *paste) ignore(name string, no int, line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	p.ignoredN++
	t := safetext.Clean(line)
	if len(t) > 120 {
		t = t[:120] + "…"
	}
	if p.firstUnrec == "" {
		p.firstUnrec = fmt.Sprintf("%s:%d: %q", name, no, t)
	}
	if len(p.ignored) < maxIgnoredKept {
		p.ignored = append(p.ignored, Ignored{Name: name, Line: no, Text: t})
	}
}

// addInput records a recognised piece, merging it with the previous one
// of the same kind when they touch.
func (p *paste) addInput(in Input) {
	if n := len(p.inputs); n > 0 {
		last := &p.inputs[n-1]
		if last.Name == in.Name && last.Kind == in.Kind && in.First <= last.Last+2 && in.Note == "" {
			last.Last = max(last.Last, in.Last)
			return
		}
	}
	p.inputs = append(p.inputs, in)
}

// readJSON decodes the JSON value starting b (line first of name) and
// returns how many lines it spans; 0 when it is not one JSON value. A
// value that identifies as status or netcheck but does not decode is an
// error; other JSON is left to the line classifier (ignored).
func (p *paste) readJSON(name string, b []byte, first int) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return 0, nil
	}
	end := int(dec.InputOffset())
	span := bytes.Count(b[:end], []byte("\n")) + 1
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return 0, nil
	}
	in := Input{Name: name, First: first, Last: first + span - 1}
	switch {
	case keys["format"] != nil:
		return 0, fmt.Errorf("%s:%d: a saved snapshot inside other text: give it on its own", name, first)
	case keys["BackendState"] != nil || (keys["Self"] != nil && keys["TailscaleIPs"] != nil):
		var st ipnstate.Status
		if err := json.Unmarshal(raw, &st); err != nil {
			return 0, fmt.Errorf("%w: %s:%d: tailscale status --json does not decode: %s", ErrCorrupt, name, first, safetext.Clean(err.Error()))
		}
		p.status, p.statusFrom, p.text = &st, KindStatusJSON, nil
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
			return 0, fmt.Errorf("%w: %s:%d: tailscale netcheck JSON does not decode: %s", ErrCorrupt, name, first, safetext.Clean(err.Error()))
		}
		p.netcheck = nf
		p.noteTime(nf.at)
		for _, id := range slices.Sorted(maps.Keys(nf.latency)) {
			p.region(id, "", "")
		}
		in.Kind = KindNetcheckJSON
		in.Note = "our NAT facts and DERP latencies (measured by the tailscale CLI, not the daemon)"
	default:
		return 0, nil
	}
	p.addInput(in)
	return span, nil
}

// readLine classifies one text line and returns the kind it belongs to,
// "" when unrecognised.
func (p *paste) readLine(name string, no int, line string, block **blockState) string {
	trim := strings.TrimSpace(line)
	b := *block
	// Inside a netcheck report or health block, their own lines first.
	if b != nil && b.kind == KindNetcheckText {
		if p.netcheckLine(b, trim) {
			b.last = no
			return KindNetcheckText
		}
		p.closeBlock(block)
	}
	if b = *block; b != nil && b.kind == "health" {
		if m := healthItemRE.FindStringSubmatch(trim); m != nil {
			p.health = append(p.health, m[1])
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
		return "blank"
	case trim == "Report:":
		p.closeBlock(block)
		*block = &blockState{kind: KindNetcheckText, name: name, first: no, last: no, nc: &netcheckFacts{}}
		return KindNetcheckText
	case trim == "# Health check:":
		p.closeBlock(block)
		*block = &blockState{kind: "health", name: name, first: no, last: no}
		p.health = nil
		return KindStatusText
	case knownNoise(trim):
		return "noise"
	}
	if st, ok := stateLines[trim]; ok {
		p.state = st
		p.addInput(Input{Name: name, Kind: KindStatusText, First: no, Last: no, Note: "tailscaled is " + st})
		return KindStatusText
	}
	if pl, ok := parsePeerLine(line); ok {
		b = *block
		if b == nil || b.kind != KindStatusText {
			p.closeBlock(block)
			b = &blockState{kind: KindStatusText, name: name, first: no, text: &textStatus{}}
			*block = b
		}
		b.text.lines = append(b.text.lines, pl)
		b.last = no
		return KindStatusText
	}
	if header := strings.Fields(trim); len(header) >= 4 && header[0] == "IP" && header[1] == "Hostname" {
		return "noise"
	}
	if p.pingLine(name, no, trim) {
		return KindPing
	}
	if p.logLine(name, no, trim) {
		return KindLog
	}
	return ""
}

// blockState is a multi-line block being read.
type blockState struct {
	kind        string
	name        string
	first, last int
	nc          *netcheckFacts
	text        *textStatus
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
		p.netcheck = b.nc
		p.noteTime(b.nc.at)
		for _, code := range slices.Sorted(maps.Keys(b.nc.regionNames)) {
			p.region(0, code, b.nc.regionNames[code])
		}
		p.addInput(Input{Name: b.name, Kind: KindNetcheckText, First: b.first, Last: b.last,
			Note: "our NAT facts and DERP latencies (measured by the tailscale CLI, not the daemon)"})
	case KindStatusText:
		p.text, p.status, p.statusFrom = b.text, nil, KindStatusText
		p.addInput(Input{Name: b.name, Kind: KindStatusText, First: b.first, Last: b.last,
			Note: fmt.Sprintf("us + %d peers; this format has no endpoints, handshakes or NAT facts", max(len(b.text.lines)-1, 0))})
	case "health":
		p.addInput(Input{Name: b.name, Kind: KindStatusText, First: b.first, Last: b.last, Note: units.Count(len(p.health), "health message", "health messages")})
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
func (p *paste) region(id int, code, name string) int {
	code, name = safetext.Clean(code), safetext.Clean(name)
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
	r.RegionID = id
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
func (p *paste) file() (*File, error) {
	if len(p.inputs) == 0 {
		if p.firstUnrec != "" {
			return nil, fmt.Errorf("%w: nothing recognised (first line: %s)", ErrNotSnapshot, p.firstUnrec)
		}
		return nil, fmt.Errorf("%w: the input is empty", ErrNotSnapshot)
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
	f := &File{Format: Format, Version: Version, Taken: taken, Origin: OriginPasted, Ignored: p.ignored}
	defer func() { f.Inputs = p.inputs }()
	if p.ignoredN > len(p.ignored) {
		f.Warnings = append(f.Warnings, fmt.Sprintf("%d lines ignored; the first %d are listed", p.ignoredN, len(p.ignored)))
	}
	f.TakenFrom = timeNote

	// Status.
	st := p.status
	if st == nil && p.text != nil {
		st = p.text.build(taken)
	}
	if st == nil {
		// An empty self, so that our own facts (a netcheck) still apply.
		st = &ipnstate.Status{BackendState: p.state, Self: &ipnstate.PeerStatus{}}
		f.Warnings = append(f.Warnings, "no tailscale status in the input: no peers to diagnose")
	}
	if p.state != "" && p.statusFrom != KindStatusJSON {
		st.BackendState = p.state
	}
	if p.statusFrom != KindStatusJSON && len(p.health) > 0 {
		st.Health = append(st.Health, p.health...)
	}
	for _, w := range slices.Sorted(maps.Keys(p.logHealth)) {
		if msg := p.logHealth[w]; msg != "" && !slices.Contains(st.Health, msg) {
			st.Health = append(st.Health, msg)
		}
	}
	f.Status = st
	// Region codes from the status (peers' Relay, our own).
	for _, ps := range allPeers(st) {
		if ps.Relay != "" {
			p.region(0, ps.Relay, "")
		}
	}

	// Our own facts: the daemon's log beats the CLI's netcheck for NAT
	// facts; the newer measurement gives the latencies.
	self := &SelfFacts{}
	nat, lat := p.logNet, p.netcheck
	if nat == nil {
		nat = p.netcheck
	}
	if lat == nil || (p.logNet != nil && p.logNet.at.After(lat.at)) {
		lat = p.logNet
	}
	for _, nf := range []*netcheckFacts{p.netcheck, p.logNet} {
		if nf == nil {
			continue
		}
		for code, d := range nf.codeLatency {
			if id, ok := p.codes[code]; ok {
				nf.setLatency(id, d)
			}
		}
	}
	if nat != nil {
		self.NAT = nat.natInfo()
		self.HomeDERP = nat.preferred
		if nat.preferredName != "" && self.HomeDERP == 0 {
			self.HomeDERP = p.region(0, "", nat.preferredName)
		}
	}
	if lat != nil && len(lat.latency) > 0 {
		f.Netcheck = &probes.DERPLatencyReport{At: lat.at, ByRegion: lat.latency}
	}
	if p.homeDERP != 0 {
		self.HomeDERP = p.homeDERP
	}
	self.Endpoints = p.endpoints
	if self.NAT == nil {
		f.Warnings = append(f.Warnings, "no netcheck report (`tailscale netcheck`, or tailscaled's `netcheck: report:` log line) in the input: our NAT facts are unknown")
	}
	if self.NAT != nil || self.HomeDERP != 0 || len(self.Endpoints) > 0 {
		f.Self = self
	}
	if len(p.regions) > 0 {
		dm := &tailcfg.DERPMap{Regions: map[int]*tailcfg.DERPRegion{}}
		for id, r := range p.regions {
			rc := r
			dm.Regions[id] = &rc
		}
		f.DERPMap = dm
	}

	// Per-peer facts: pings, direct paths the daemon logged.
	byIP := map[netip.Addr]*ipnstate.PeerStatus{}
	byKey := map[string]*ipnstate.PeerStatus{}
	for _, ps := range allPeers(st) {
		for _, a := range ps.TailscaleIPs {
			byIP[a] = ps
		}
		if !ps.PublicKey.IsZero() {
			byKey[ps.PublicKey.ShortString()] = ps
		}
	}
	hist := map[string]PeerHistory{}
	for _, ip := range p.pingOrder {
		pf := p.pings[ip]
		ps := byIP[ip]
		if ps == nil || ps == st.Self {
			f.Warnings = append(f.Warnings, fmt.Sprintf("tailscale ping to %s: not a peer in the pasted status, so it is not used", ip))
			continue
		}
		p.inputs = append(p.inputs, Input{Kind: KindPing, Note: pf.note(ip) + "; taken as of the snapshot's time (ping output is not dated)"})
		h := hist[string(ps.ID)]
		h.PingRun = &probes.PingRun{At: taken, Tries: pf.tries, Pongs: pf.pongs, Direct: pf.direct, Via: pf.via}
		h.Latency = pf.latency
		hist[string(ps.ID)] = h
	}
	for short, d := range p.direct {
		ps := byKey[short]
		if ps == nil {
			f.Warnings = append(f.Warnings, fmt.Sprintf("tailscaled log: direct path to node %s at %s: no such peer in the pasted status (tailscale status --json names the keys)", short, d.at.UTC().Format(time.RFC3339)))
			continue
		}
		if taken.Sub(d.at) < probes.LostDirectWindow && taken.Sub(d.at) >= 0 {
			h := hist[string(ps.ID)]
			h.LastDirect, h.LastDirectAddr = d.at, d.addr
			hist[string(ps.ID)] = h
		}
	}
	if len(p.logCount) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(p.logCount)) {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, p.logCount[k]))
		}
		p.inputs = append(p.inputs, Input{Kind: KindLog, Note: strings.Join(parts, ", ")})
	}
	if p.statusFrom == KindStatusText {
		for _, ps := range allPeers(st) {
			if ps != st.Self {
				h := hist[string(ps.ID)]
				h.HandshakeUnknown = true
				hist[string(ps.ID)] = h
			}
		}
	}
	if len(hist) > 0 {
		f.History.Peers = hist
	}
	return f, nil
}

// SelfFacts are our own facts from pasted input (a netcheck report, the
// daemon's log), which a capture reads from the LocalAPI instead. File
// .Diagnose fills what the status left unknown with them.
type SelfFacts struct {
	NAT       *probes.NATInfo  `json:"nat,omitempty"`
	HomeDERP  int              `json:"home_derp,omitempty"`
	Endpoints []netip.AddrPort `json:"endpoints,omitempty"`
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

// placeholderKey is a node key standing in for one plain status text does
// not show, derived from the peer's address so it is stable.
func placeholderKey(a netip.Addr) key.NodePublic {
	sum := sha256.Sum256([]byte("tailpath pasted peer " + a.String()))
	var k key.NodePublic
	k.UnmarshalText([]byte(fmt.Sprintf("nodekey:%x", sum)))
	return k
}

// stateLines are the lines `tailscale status` prints instead of peers when
// tailscaled is not running (cmd/tailscale/cli/status.go).
var stateLines = map[string]string{
	"Tailscale is stopped.": "Stopped",
	"Logged out.":           "NeedsLogin",
	"Machine is not yet approved by tailnet admin.": "NeedsMachineAuth",
}

// knownNoise reports lines that are recognised but say nothing: the
// CLI's warnings and hints, shell prompts running tailscale.
func knownNoise(trim string) bool {
	switch {
	case strings.Trim(trim, "- ") == "" && strings.Contains(trim, "--"),
		strings.HasPrefix(trim, "# Warning: this JSON format is not yet considered a stable interface"),
		strings.HasPrefix(trim, "# To see the full list of exit nodes"),
		strings.HasPrefix(trim, "Log in at: "),
		promptRE.MatchString(trim):
		return true
	}
	return false
}
