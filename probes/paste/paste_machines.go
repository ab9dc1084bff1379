package paste

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"tailscale.com/ipn/ipnstate"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// Two machines in one paste. A thread often holds the poster's own
// `tailscale status`, netcheck and log, then the same from the other end
// ("on the other side:"). The first machine is this node; what another
// machine printed is that peer's own end of the path, the evidence the
// live path reads from the peer's node (its NetInfo, endpoints, home DERP
// and version: probes.PeerSide), never this node's.
//
// The signs that the lines after them are another machine's, read as the
// input is parsed:
//   - a `tailscale status` block whose first line (its own) is another
//     node than an earlier block's;
//   - a shell prompt naming another host (`tom@vps:~$ tailscale netcheck`);
//   - a line of prose introducing output, ending in ":" ("On the other
//     side:", "Then from the VPS:", "from node B:"): a generic one ("the
//     other machine", "the peer") or one naming a node the paste knows
//     (a status line's name, a prompt's host).
//
// A second netcheck report alone is no sign: `tailscale netcheck --every`
// prints several of one machine. Each machine's lines are then read on
// their own (the others' blanked, so line numbers stay), and another
// machine's facts become the PeerSide of the peer that is that machine in
// this node's status (by Tailscale address, else name). Output of a
// machine no peer is stays out of this node's facts: a warning names its
// lines and what they held.

// machineMark is a sign of whose output the lines after it are.
type machineMark struct {
	input int // the input's index among the pasted ones
	no    int
	host  string // a prompt's host or the node prose names; "" generic
	// noun: prose named the other end with a noun ("node B", "the
	// other machine"): another machine even when the name is unknown.
	noun  bool
	prose bool
}

// pasteMachine is one machine whose output the paste holds.
type pasteMachine struct {
	names    []string // lower-case host names
	ips      []netip.Addr
	status   bool // a status block of its own was seen
	prompted bool // a prompt named it
	// crowd: the machines past maxMachines, together, all set aside.
	crowd bool
}

// maxMachines bounds the machines a paste is read as (each is read
// again on its own); the output of more is set aside together.
const maxMachines = 8

func (m *pasteMachine) named(n string) bool {
	return n != "" && slices.Contains(m.names, strings.ToLower(n))
}

func (m *pasteMachine) addName(n string) {
	if n = strings.ToLower(n); n != "" && len(m.names) < 16 && !slices.Contains(m.names, n) {
		m.names = append(m.names, n)
	}
}

// machineSwitch: from line no of input on, the lines are machine's.
type machineSwitch struct {
	input, no, machine int
}

// machineSplit is where each machine's lines are in the pasted inputs.
type machineSplit struct {
	machines []*pasteMachine
	switches []machineSwitch // in input order
}

// walk calls fn with the machine of each line of input i (n lines), in
// order, stepping through the switches once.
func (s *machineSplit) walk(i, n int, fn func(no, m int)) {
	k, m := 0, 0
	for no := 1; no <= n; no++ {
		for k < len(s.switches) && (s.switches[k].input < i || s.switches[k].input == i && s.switches[k].no <= no) {
			m = s.switches[k].machine
			k++
		}
		fn(no, m)
	}
}

// Prompts and prose naming a machine.
var (
	// promptHostRE is the host of a bash/zsh prompt: "tom@desktop:~$ ",
	// "[root@vps ~]# ", "tom@mbp ~ % ".
	promptHostRE = lazyRE(`^(?:\([\w.-]+\) )?\[?[\w.-]+@([A-Za-z0-9][\w-]*)(?:\.[\w.-]+)?(?:[: \]]|$)`)
	// otherMachineRE is prose naming the other end without its name.
	otherMachineRE = lazyRE(`(?i)\b(?:(?:on|from|at|in) (?:the )?(?:other|second|remote|far|peer's) (?:machine|side|end|node|host|box|server|computer|device|one|peer)|(?:on|from|at) the peer|the other side|other end)\b`)
	// namedMachineRE is prose naming a node: "from the VPS", "on node B".
	namedMachineRE = lazyRE(`(?i)\b(?:on|from|at) (?:the |my )?((?:node|host|machine|server|box|peer) )?([A-Za-z0-9][\w.-]*)`)
)

// promptHost is the host a shell prompt at the start of line names, or "".
func promptHost(line string) string {
	if !strings.Contains(line, "@") {
		return ""
	}
	m := promptHostRE().FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// proseMarker reads a line of prose introducing another machine's output:
// short, ending in ":", no question. ok false when it is none.
func proseMarker(line string) (mk machineMark, ok bool) {
	s := strings.TrimSpace(line)
	s = strings.TrimRight(s, "*_` ")
	if len(s) < 4 || len(s) > 100 || s[len(s)-1] != ':' || strings.ContainsAny(s, "?{}[]=|") {
		return mk, false
	}
	s = strings.TrimLeft(s, "#>*-_ ")
	if otherMachineRE().MatchString(s) {
		return machineMark{prose: true, noun: true}, true
	}
	for _, m := range namedMachineRE().FindAllStringSubmatch(s, -1) {
		name := strings.TrimRight(m[2], ".:-")
		switch strings.ToLower(name) {
		case "the", "my", "a", "an", "both", "each", "this", "it", "here", "there", "output", "tailscale", "logs", "log":
			continue
		}
		return machineMark{prose: true, host: strings.ToLower(name), noun: m[1] != ""}, true
	}
	return mk, false
}

// markProse records an ignored line that introduces a machine's output.
func (p *paste) markProse(no int, line string) {
	if len(line) == 0 || !strings.Contains(line, ":") {
		return
	}
	if mk, ok := proseMarker(line); ok && len(p.marks) < maxMarks {
		mk.input, mk.no = p.inputNo, no
		p.marks = append(p.marks, mk)
	}
}

// markPrompt records a prompt's host.
func (p *paste) markPrompt(no int, line string) {
	if h := promptHost(line); h != "" && len(p.marks) < maxMarks {
		p.marks = append(p.marks, machineMark{input: p.inputNo, no: no, host: h})
	}
}

// maxMarks bounds the signs kept (a long log with prompts in it).
const maxMarks = 1000

// splitMachines works out whose each line is; nil when the paste holds
// one machine's output.
//
// Long on purpose: one pass in order (the names the paste knows, the signs
// of each machine, the switches between them), each step reading the
// tables the ones before it built.
func (p *paste) splitMachines() *machineSplit {
	if len(p.marks) == 0 && len(p.texts) < 2 {
		return nil
	}
	// The names the paste knows: every status line's, every prompt's.
	known := map[string]bool{}
	for _, ts := range p.texts {
		for _, pl := range ts.lines {
			if pl.name != "" {
				known[strings.ToLower(pl.name)] = true
			}
		}
	}
	type event struct {
		machineMark
		self *peerLine
	}
	var evs []event
	for _, mk := range p.marks {
		if mk.host != "" && !mk.prose {
			known[mk.host] = true
		}
		evs = append(evs, event{machineMark: mk})
	}
	for _, ts := range p.texts {
		if len(evs) >= 2*maxMarks {
			break // the first thousands of signs decide; later blocks stay where they fall
		}
		if ts.selfKnown() && !ts.fragment {
			pl := ts.lines[0]
			evs = append(evs, event{machineMark: machineMark{input: p.inputIndex(ts.name), no: pl.no}, self: &pl})
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.input, b.input), cmp.Compare(a.no, b.no))
	})
	s := &machineSplit{machines: []*pasteMachine{{}}}
	cur := 0
	find := func(f func(*pasteMachine) bool) int {
		for i, m := range s.machines {
			if f(m) {
				return i
			}
		}
		return -1
	}
	add := func() int {
		if len(s.machines) == maxMachines {
			last := s.machines[maxMachines-1]
			last.crowd = true
			return maxMachines - 1
		}
		s.machines = append(s.machines, &pasteMachine{})
		return len(s.machines) - 1
	}
	for _, e := range evs {
		to := cur
		switch {
		case e.self != nil:
			pl := e.self
			to = find(func(m *pasteMachine) bool {
				return pl.ip.IsValid() && slices.Contains(m.ips, pl.ip) || !pl.ip.IsValid() && m.named(pl.name)
			})
			if to < 0 && !s.machines[cur].status {
				to = cur
			}
			if to < 0 {
				to = find(func(m *pasteMachine) bool { return !m.status && m.named(pl.name) })
			}
			if to < 0 {
				to = add()
			}
			m := s.machines[to]
			m.status = true
			if pl.ip.IsValid() && len(m.ips) < 16 && !slices.Contains(m.ips, pl.ip) {
				m.ips = append(m.ips, pl.ip)
			}
			m.addName(pl.name)
		case !e.prose:
			// A prompt: its host is the machine's name.
			to = find(func(m *pasteMachine) bool { return m.named(e.host) })
			if to < 0 && !s.machines[cur].prompted {
				to = cur
			}
			if to < 0 {
				to = add()
			}
			s.machines[to].addName(e.host)
			s.machines[to].prompted = true
		case e.host != "" && known[e.host]:
			// A name when this machine has none yet is its own name:
			// only a machine known by another name can be left for it.
			to = find(func(m *pasteMachine) bool { return m.named(e.host) })
			if to < 0 && len(s.machines[cur].names) == 0 {
				to = cur
			}
			if to < 0 {
				to = add()
			}
			s.machines[to].addName(e.host)
		case e.noun:
			// "the other machine": of two, the other one; else a new one.
			switch {
			case !p.contentSince(s, e.input, e.no):
				continue // nothing of this machine read yet: no switch
			case len(s.machines) == 2:
				to = 1 - cur
			default:
				to = add()
			}
		default:
			continue // prose naming something that is no node
		}
		if to == cur {
			continue
		}
		at := p.boundary(s, e.input, e.no)
		if n := len(s.switches); n > 0 && s.switches[n-1].input == e.input && s.switches[n-1].no >= at {
			s.switches[n-1].machine = to
		} else {
			s.switches = append(s.switches, machineSwitch{input: e.input, no: at, machine: to})
		}
		cur = to
	}
	if len(s.switches) == 0 {
		return nil
	}
	return s
}

// inputIndex is the index of the pasted input named name.
func (p *paste) inputIndex(name string) int {
	if i := slices.Index(p.inputNames, name); i >= 0 {
		return i
	}
	return 0
}

// lastContent is the last line before no of input that a reader took
// (an input's last line), 0 when none.
func (p *paste) lastContent(input, no int) int {
	last := 0
	for _, in := range p.inputs {
		if in.Name != "" && p.inputIndex(in.Name) == input && in.Last < no {
			last = max(last, in.Last)
		}
	}
	return last
}

// boundary is where a switch seen at line no starts: after the last
// line a reader took before it, so the prose and prompt lines that
// introduce the output go with it.
func (p *paste) boundary(s *machineSplit, input, no int) int {
	at := p.lastContent(input, no) + 1
	for _, sw := range s.switches {
		if sw.input == input && sw.no > at && sw.no <= no {
			at = sw.no
		}
	}
	return min(at, no)
}

// contentSince reports whether a reader took a line between the last
// switch and line no of input.
func (p *paste) contentSince(s *machineSplit, input, no int) bool {
	from := 1
	if n := len(s.switches); n > 0 && s.switches[n-1].input == input {
		from = s.switches[n-1].no
	} else if n > 0 && s.switches[n-1].input > input {
		return false
	}
	for _, in := range p.inputs {
		if in.Name != "" && p.inputIndex(in.Name) == input && in.First >= from && in.First < no {
			return true
		}
	}
	return false
}

// view is the pasted inputs with every line not of machine m blanked.
func (s *machineSplit) view(pasted []Raw, m int) []Raw {
	out := make([]Raw, len(pasted))
	for i, in := range pasted {
		lines := strings.SplitAfter(string(in.Data), "\n")
		var b strings.Builder
		b.Grow(len(in.Data))
		s.walk(i, len(lines), func(no, mm int) {
			l := lines[no-1]
			if mm == m {
				b.WriteString(l)
			} else if strings.HasSuffix(l, "\n") {
				b.WriteByte('\n')
			}
		})
		out[i] = Raw{Name: in.Name, Data: []byte(b.String())}
	}
	return out
}

// ranges words the lines of machine m: "thread.txt:7-23".
func (s *machineSplit) ranges(pasted []Raw, m int) string {
	var parts []string
	for i, in := range pasted {
		n := strings.Count(strings.TrimSuffix(string(in.Data), "\n"), "\n") + 1
		start := 0
		end := func(no int) {
			r := strconv.Itoa(start)
			if no-1 > start {
				r += "-" + strconv.Itoa(no-1)
			}
			if len(parts) < 20 {
				parts = append(parts, safeName(in.Name)+":"+r)
			}
			start = 0
		}
		s.walk(i, n, func(no, mm int) {
			switch mine := mm == m; {
			case mine && start == 0:
				start = no
			case !mine && start != 0:
				end(no)
			}
		})
		if start != 0 {
			end(n + 1)
		}
	}
	return strings.Join(parts, ", ")
}

// parseMachines reads each machine's lines on its own: the first
// machine's are this node's File, each other's becomes the PeerSide of
// the peer that machine is (File.PeerSides), or is set aside with a
// warning.
func parseMachines(pasted []Raw, s *machineSplit, now time.Time) (*snapshot.File, error) {
	read := func(m int) (*paste, error) {
		p := newPaste(now)
		for _, in := range s.view(pasted, m) {
			if err := p.read(in); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
	pa, err := read(0)
	if err != nil {
		return nil, err
	}
	f, err := pa.file()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(pasted))
	for i, in := range pasted {
		names[i] = safeName(in.Name)
	}
	order := func(in snapshot.Input) int { return slices.Index(names, in.Name) }
	for k := 1; k < len(s.machines); k++ {
		pk, err := read(k)
		if err != nil {
			return nil, err
		}
		where := s.ranges(pasted, k)
		fk, err := pk.file()
		if err != nil {
			// Nothing recognised: its lines stay listed as ignored.
			f.Ignored = append(f.Ignored, pk.ignored...)
			continue
		}
		peer, how := s.peerOf(f, fk, k)
		label := "another machine's output, set aside"
		if peer != nil {
			label = "peer " + shortHost(peer) + "'s own output (its end of the path)"
		}
		var kinds []string
		for _, in := range fk.Inputs {
			if in.Name != "" && !slices.Contains(kinds, in.Kind) {
				kinds = append(kinds, in.Kind)
			}
			if in.Note == "" {
				in.Note = label
			} else {
				in.Note = label + ": " + theirNote.Replace(in.Note)
			}
			f.Inputs = append(f.Inputs, in)
		}
		f.Ignored = append(f.Ignored, fk.Ignored...)
		what := strings.Join(kinds, ", ")
		if what == "" {
			what = "no output tailpath reads"
		}
		if peer == nil {
			f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("%s holds another machine's output (%s; %s), and no peer of this node's status is that machine: set aside, not read as this node's; diagnose it on its own (tailpath status --from with those lines)", where, s.machines[k].describe(), what)))
			continue
		}
		ps, err := snapshot.PeerSideOf(context.Background(), fk)
		if err != nil {
			f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("%s is peer %s's own output (%s) but does not diagnose (%v): set aside", where, shortHost(peer), what, err)))
			continue
		}
		if sideEmpty(ps.Side) {
			f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("%s is peer %s's own output (%s, %s) and says nothing of its end of the path (no netcheck, endpoints, home DERP or version)", where, shortHost(peer), how, what)))
			continue
		}
		if f.PeerSides == nil {
			f.PeerSides = map[safetext.Text]*probes.PeerSide{}
		}
		id := safetext.New(string(peer.ID))
		f.PeerSides[id] = probes.MergePeerSide(f.PeerSides[id], ps.Side)
		f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("%s is peer %s's own output (%s): read as its end of the path, not this node's", where, shortHost(peer), how)))
	}
	// The inputs and ignored lines in the order of the paste; the
	// summaries without a line after them.
	slices.SortStableFunc(f.Inputs, func(a, b snapshot.Input) int {
		if (a.Name == "") != (b.Name == "") {
			if a.Name == "" {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(order(a), order(b)), cmp.Compare(a.First, b.First))
	})
	slices.SortStableFunc(f.Ignored, func(a, b snapshot.Ignored) int {
		return cmp.Or(cmp.Compare(slices.Index(names, a.Name), slices.Index(names, b.Name)), cmp.Compare(a.Line, b.Line))
	})
	if len(f.Ignored) > maxIgnoredKept {
		f.Ignored = f.Ignored[:maxIgnoredKept]
	}
	return f, nil
}

// theirNote words another machine's input note as its own, not ours.
var theirNote = strings.NewReplacer("us + ", "itself + ", "our ", "its ", "no line for us", "no line of its own", "this node runs", "it runs")

// describe names machine m as the paste did.
func (m *pasteMachine) describe() string {
	var parts []string
	for _, n := range m.names {
		parts = append(parts, safetext.Clean(n))
	}
	for _, a := range m.ips {
		parts = append(parts, a.String())
	}
	if len(parts) == 0 {
		return "unnamed"
	}
	if m.crowd {
		return "more machines than tailpath tells apart, among them " + strings.Join(parts[:min(len(parts), 4)], " ")
	}
	return strings.Join(parts, " ")
}

// peerOf is the peer of f's status that machine k (read as fk) is: by a
// Tailscale address of its own status line, else by a name (its status
// line's, its prompt's, the prose's); when the paste names it no way
// and this node's status has one peer, that peer. how says which.
func (s *machineSplit) peerOf(f, fk *snapshot.File, k int) (*ipnstate.PeerStatus, string) {
	if f.Status == nil || s.machines[k].crowd {
		return nil, ""
	}
	var peers []*ipnstate.PeerStatus
	for _, ps := range allPeers(f.Status) {
		if ps != f.Status.Self {
			peers = append(peers, ps)
		}
	}
	m := s.machines[k]
	ips := slices.Clone(m.ips)
	names := slices.Clone(m.names)
	if st := fk.Status; st != nil && st.Self != nil {
		ips = append(ips, st.Self.TailscaleIPs...)
		if n := shortHost(st.Self); n != "" {
			names = append(names, strings.ToLower(n))
		}
	}
	for _, ps := range peers {
		for _, a := range ps.TailscaleIPs {
			if slices.Contains(ips, a) {
				return ps, "its own status line has the peer's address " + a.String()
			}
		}
	}
	for _, ps := range peers {
		for _, n := range names {
			if strings.EqualFold(shortHost(ps), n) || strings.EqualFold(ps.HostName, n) {
				return ps, "named " + safetext.Clean(n) + " as the peer is"
			}
		}
	}
	if len(ips) == 0 && len(names) == 0 && len(peers) == 1 {
		return peers[0], "the only peer of this node's status, and the paste calls it the other end"
	}
	return nil, ""
}

// sideEmpty reports whether s holds no fact of the peer's end.
func sideEmpty(s *probes.PeerSide) bool {
	if s == nil {
		return true
	}
	c := s.ClientSupports
	return len(s.Endpoints) == 0 && s.NoNAT == nil && s.MappingVariesByDestIP == nil && s.HavePortMap == nil &&
		s.HomeDERP == 0 && len(s.DERPLatencyMs) == 0 && c.UDP == nil && c.IPv6 == nil && c.UPnP == nil && c.PMP == nil && c.PCP == nil &&
		s.ClientVersion == "" && s.CapVersion == 0
}
