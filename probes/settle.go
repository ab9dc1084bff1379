package probes

import (
	"math/bits"
	"slices"

	"github.com/tailpath/tailpath/internal/safetext"
)

// What would settle an open verdict: the reasons that remain possible
// (candidates) and the unknown facts that decide between them (deciders),
// worked out from the reason table itself, once per verdict, from the
// same evidence the verdict was judged on (diag.settle, called by
// diagnose; this node's by diagnoseSelf).
//
// A rule of the path's kind is a candidate when it is neither ruled out
// (its facts are known and its check did not hold) nor refuted (a fact of
// the input refutes it): it stays possible because a fact it needs, or a
// fact that would refute it, is unknown. Those facts are its deciders.
// A rule whose check held while a needed fact was unknown (the table's
// walk records it: diag.needUnknown) is one; the others are found by
// openers below, one per cause, each saying which unknown facts keep its
// rule possible given what is known (ours known easy rules out a hard NAT
// here, whatever the port mapping). A verdict is open when a candidate
// ranks before its reason in the table (it would take the reason's
// place): unexplained and disco-unanswered when anything is unknown, a
// cause when a more fundamental one might hold.
//
// Each decider is one fact as a person fetches it: one command on one end
// reveals all its fields (SettleFacts). The command, per platform, and
// how its output joins the evidence are in settle_ask.go.

// SettleFact names one unknown fact as tailpath asks for it: the rule
// table's fields one command reveals (Decider.Fields).
type SettleFact string

const (
	// SettleDISCORun: a DISCO ping run from this node to the peer
	// (`tailscale ping`, or tailpath's probe): pongs, and whether one came
	// directly (PingRun).
	SettleDISCORun SettleFact = "disco-run"
	// SettleSession: this node's WireGuard session with the peer (its
	// last handshake: `tailscale status --json`).
	SettleSession SettleFact = "session"
	// SettleSelfNAT: this node's tailscaled's own view of its network:
	// NAT type, port mapping, UDP, IPv6 (NetInfo) and its endpoints with
	// their types (tailscaled's log).
	SettleSelfNAT SettleFact = "self-nat"
	// SettleSelfVersion: this node's Tailscale version.
	SettleSelfVersion SettleFact = "self-version"
	// SettlePeerSide: the peer's own end: its NAT type, port mapping,
	// UDP, endpoints and version, as the peer measured them.
	SettlePeerSide SettleFact = "peer-side"
	// SettleInterfaces: this host's interfaces and neighbours (one LAN or
	// two behind one NAT).
	SettleInterfaces SettleFact = "self-interfaces"
)

// End is which end of a path holds a fact.
type End string

const (
	// EndSelf: this node (the one whose status was pasted, or that runs
	// tailpath).
	EndSelf End = "self"
	// EndPeer: the peer at the other end of the path.
	EndPeer End = "peer"
)

// settleFacts describes each fact: its end, its words, the rule table's
// fields it reveals, and what tailpath runs itself, live, to learn it.
var settleFacts = []struct {
	fact     SettleFact
	end      End
	what     string
	tailpath string
	fields   []string
}{
	{SettleDISCORun, EndSelf, "a DISCO ping run to the peer: does any pong come directly?", TailpathProbe,
		[]string{"PingRun"}},
	{SettlePeerSide, EndPeer, "the peer's own end: its NAT type, port mapping, UDP, endpoints and version", TailpathControlAPI,
		[]string{"Peer.NetInfo.MappingVariesByDestIP", "Peer.NetInfo.HavePortMap", "Peer.NetInfo.WorkingUDP", "Peer.Endpoints", "WhoIs.Node.Endpoints", "Peer.Hostinfo.IPNVersion"}},
	{SettleSelfNAT, EndSelf, "this node's own NAT type, port mapping, UDP and endpoints, as tailscaled measured them", "",
		[]string{"NetInfo.MappingVariesByDestIP", "NetInfo.HavePortMap", "NetInfo.WorkingUDP", "NetInfo.WorkingUDP | Log.Netcheck", "NetInfo.WorkingIPv6", "Self.Endpoints", "Self.PortMapAddr"}},
	{SettleSession, EndSelf, "this node's WireGuard session with the peer (its last handshake)", "",
		[]string{"IPNBus.PeerState | Status.LastHandshake | PingRun", "Status.LastHandshake", "Status.BackendState", "Self.OS"}},
	{SettleSelfVersion, EndSelf, "this node's Tailscale version", "",
		[]string{"Self.Version"}},
	{SettleInterfaces, EndSelf, "this host's interfaces and neighbours: one LAN with the peer, or two behind one NAT", TailpathHost,
		[]string{"Host.Interfaces"}},
}

// What tailpath runs itself, live, to learn a fact (Decider.Tailpath).
const (
	// TailpathProbe: its bounded DISCO probe (`status --probe`, P).
	TailpathProbe = "probe"
	// TailpathControlAPI: the control API's device list (a read-only
	// key: TAILSCALE_API_KEY).
	TailpathControlAPI = "control-api"
	// TailpathHost: this host's interfaces, read live (Linux).
	TailpathHost = "host"
)

// settleOrder is a fact's place among equally deciding ones: this end
// first (the person asking can run it), then the other.
func settleOrder(f SettleFact) int {
	for i := range settleFacts {
		if settleFacts[i].fact == f {
			return i
		}
	}
	return len(settleFacts)
}

// settleFactOf is the fact a rule-table field belongs to; "" when no
// command reveals it (a board's telemetry, tailpath's own observations).
func settleFactOf(field string) SettleFact {
	for i := range settleFacts {
		if slices.Contains(settleFacts[i].fields, field) {
			return settleFacts[i].fact
		}
	}
	switch field {
	case "Self.Version | Peer.Hostinfo.IPNVersion":
		return SettleSelfVersion
	}
	return ""
}

// factSet is a set of SettleFacts, bit i for settleFacts[i]: what the
// openers and the walk of candidates pass around, so that judging a
// gather's thousands of open verdicts builds no slice until the Settle
// itself (BenchmarkJudge10k).
type factSet uint8

// The facts as factSet bits, in settleFacts' order (TestFactBits).
const (
	fsDISCORun factSet = 1 << iota
	fsPeerSide
	fsSelfNAT
	fsSession
	fsSelfVersion
	fsInterfaces
)

// bitOf is f's bit (0 for "" or a fact settleFacts does not list).
func bitOf(f SettleFact) factSet {
	if i := settleOrder(f); i < len(settleFacts) {
		return 1 << i
	}
	return 0
}

// list is s's facts in settleFacts' order, from the arena when judging a
// gather.
func (s factSet) list(a *checkArena) []SettleFact {
	if s == 0 {
		return nil
	}
	out := take(a, &a.facts, bits.OnesCount8(uint8(s)))
	for i := range settleFacts {
		if s&(1<<i) != 0 {
			out = append(out, settleFacts[i].fact)
		}
	}
	return out
}

// cand is a Candidate while settle works: its open facts as a set.
type cand struct {
	id    ReasonID
	holds bool
	open  factSet
}

// Settle is what would settle an open verdict: the reasons still possible
// and the facts that decide between them, most deciding first.
type Settle struct {
	// Candidates are the reasons still possible, in the table's order,
	// the verdict's own first when it is a cause that holds on what is
	// known (the others would take its place).
	Candidates []Candidate `json:"candidates"`
	// Deciders are the unknown facts, most deciding first.
	Deciders []Decider `json:"deciders"`
}

// Candidate is one reason still possible.
type Candidate struct {
	Reason ReasonID `json:"reason"`
	// Holds: the verdict's own reason, which holds on what is known.
	Holds bool `json:"holds,omitempty"`
	// Open are the facts that would confirm or refute it.
	Open []SettleFact `json:"open,omitempty"`
}

// Decider is one unknown fact that decides between candidates.
type Decider struct {
	Fact SettleFact `json:"fact"`
	// End is which end holds it.
	End End `json:"end"`
	// What says what it is; Fields are the rule table's fields it fills.
	What   string   `json:"what"`
	Fields []string `json:"fields"`
	// Decides are the candidates it confirms or refutes.
	Decides []ReasonID `json:"decides"`
	// Tailpath is what tailpath runs itself, live, to learn it
	// (TailpathProbe, TailpathControlAPI, TailpathHost); "" when it must
	// come from End.
	Tailpath string `json:"tailpath,omitempty"`
	// Ask is the command that reveals it on End's platform, whose output
	// tailpath reads; nil when there is none (NoAsk says why). Others
	// are the same fact on platforms End's OS may also be (a Linux peer
	// may be a Synology or a container).
	Ask    *Ask   `json:"ask,omitempty"`
	Others []Ask  `json:"others,omitempty"`
	NoAsk  string `json:"no_ask,omitempty"`
}

// pendingNeed is a rule whose check held while a fact it needs was
// unknown (diag.needUnknown).
type pendingNeed struct {
	id    ReasonID
	field string
}

// settle works out what would settle v, the verdict d judged; nil when v
// is settled. It records nothing in d's checks.
func (d *diag) settle(v *Verdict) *Settle {
	kind := d.p.Path.Kind
	if kind == PathUnknown {
		return d.settlePathUnknown()
	}
	if kind != PathDERP && kind != PathPeerRelay {
		return nil
	}
	keep := len(d.checks)
	defer func() { d.checks = d.checks[:keep] }()
	d.refuters = d.scratchOf().refBuf[:0]
	// The reason the candidates would displace, and its place.
	reason, limit := v.Reason, len(rules)
	if reason == ReasonPeerRelay {
		reason = ""
		for _, a := range v.Also {
			if roleCause(a) {
				reason = a
				break
			}
		}
	}
	if roleCause(reason) {
		limit = rank(reason)
	} else {
		reason = ""
	}
	var buf [maxCands]cand
	cands := buf[:0]
	if reason != "" {
		cands = append(cands, cand{id: reason, holds: true, open: d.refuterFacts(rule(reason))})
	}
	if open := d.bugCandidate(v); open != 0 {
		cands = append(cands, cand{id: ReasonKnownClientBug, open: open})
	}
	for _, i := range rulesOf(kind).rest {
		r := &rules[i]
		if r.Role != RoleCause || i >= limit || d.wasRefuted(r.ID) || hasReason(v.Also, r.ID) {
			continue
		}
		if open := d.openFacts(i); open != 0 && len(cands) < maxCands {
			cands = append(cands, cand{id: r.ID, open: open})
		}
	}
	if len(cands) == 0 || (len(cands) == 1 && cands[0].holds) {
		return nil
	}
	return d.deciders(cands)
}

// roleCause reports whether id is a rule of the table's whose role is
// RoleCause (RuleOf's, without copying the row).
func roleCause(id ReasonID) bool {
	i, ok := ruleIndex[id]
	return ok && rules[i].Role == RoleCause
}

// maxCands bounds the candidates of one verdict: more than the reason
// table's causes of any path kind, with the verdict's own and a known bug.
const maxCands = 48

// selfSettle is what would settle this node's own verdict (v, nil when
// none holds): the self rules that would hold but for a fact unknown, and
// a known bug its version would rule in or out. nil when nothing is open.
func (d *diag) selfSettle(v *Verdict) *Settle {
	var buf [maxCands]cand
	cands := buf[:0]
	if v != nil && rule(v.Reason).Role == RoleCause {
		cands = append(cands, cand{id: v.Reason, holds: true})
	}
	if open := d.bugCandidate(v); open != 0 {
		cands = append(cands, cand{id: ReasonKnownClientBug, open: open})
	}
	for _, pn := range d.pending {
		f := bitOf(settleFactOf(pn.field))
		if f == 0 || (v != nil && (pn.id == v.Reason || hasReason(v.Also, pn.id))) {
			continue
		}
		cands = addOpen(cands, pn.id, f)
	}
	if len(cands) == 0 || (len(cands) == 1 && cands[0].holds) {
		return nil
	}
	return d.deciders(cands)
}

// addOpen adds fact f to the candidate id in cs (adding the candidate).
func addOpen(cs []cand, id ReasonID, f factSet) []cand {
	for i := range cs {
		if cs[i].id == id && !cs[i].holds {
			cs[i].open |= f
			return cs
		}
	}
	if len(cs) == cap(cs) {
		return cs
	}
	return append(cs, cand{id: id, open: f})
}

// deciders ranks the facts that keep cands open: by how many candidates
// each decides, then this end before the other, then settleFacts' order.
// Its slices come from the gather's arena when judging one (Judge).
func (d *diag) deciders(cands []cand) *Settle {
	a := d.arena
	if a == nil {
		a = &checkArena{alone: true}
	}
	var all factSet
	var decides [8]int // one per settleFacts row (TestFactBits)
	for _, c := range cands {
		all |= c.open
		for i := range settleFacts {
			if c.open&(1<<i) != 0 {
				decides[i]++
			}
		}
	}
	s := takeOne(a, &a.settles)
	s.Candidates = take(a, &a.cands, len(cands))
	for _, c := range cands {
		s.Candidates = append(s.Candidates, Candidate{Reason: c.id, Holds: c.holds, Open: c.open.list(a)})
	}
	s.Deciders = take(a, &a.deciders, bits.OnesCount8(uint8(all)))
	for i := range settleFacts {
		if all&(1<<i) == 0 {
			continue
		}
		dc := d.decider(settleFacts[i].fact)
		dc.Decides = take(a, &a.reasons, decides[i])
		for _, c := range cands {
			if c.open&(1<<i) != 0 {
				dc.Decides = append(dc.Decides, c.id)
			}
		}
		s.Deciders = append(s.Deciders, dc)
	}
	// Most deciding first; settleFacts' order (this end first) among
	// equals: the slice is built in that order, and the sort is stable.
	slices.SortStableFunc(s.Deciders, func(a, b Decider) int { return len(b.Decides) - len(a.Decides) })
	return s
}

// decider describes fact f for the peer d judges, with its command.
func (d *diag) decider(f SettleFact) Decider {
	out := Decider{Fact: f}
	if i := settleOrder(f); i < len(settleFacts) {
		sf := &settleFacts[i]
		out.End, out.What, out.Fields, out.Tailpath = sf.end, sf.what, sf.fields, sf.tailpath
	}
	os := d.self.OS
	if out.End == EndPeer {
		os = d.p.OS
	}
	out.Ask, out.Others, out.NoAsk = askFor(f, PlatformOf(string(os)), pingTarget(d.p))
	return out
}

// openFacts are the unknown facts that keep rule r (rules[i]) possible for the path
// d judges (0: r is ruled out, or holds): the facts of its opener, of a
// check that held on an unknown need, and of its refuters that are
// unknown.
func (d *diag) openFacts(i int) factSet {
	r := &rules[i]
	// A fact of the input that refutes r rules it out, whatever its own
	// check would find (diag.judge).
	d.judging = r.ID
	for i := range r.Refutes {
		if d.refutesNow(&r.Refutes[i]) {
			return 0
		}
	}
	var out factSet
	for _, pn := range d.pending {
		if pn.id == r.ID {
			out |= bitOf(settleFactOf(pn.field))
		}
	}
	if op := openerAt[i]; op != nil {
		out |= op(d)
	}
	if out != 0 {
		out |= d.refuterFacts(r)
	}
	return out
}

// refutesNow reports whether refuter f holds on the evidence d judges.
// A refuter's answer is the same for every rule it refutes, but for one
// marked perRule (the known-bug refuter reads the rule being judged), so
// each is worked out once per verdict (diag.refuters).
func (d *diag) refutesNow(f *Refuter) bool {
	if f.perRule {
		_, _, _, ok := f.refutes(d)
		return ok
	}
	for _, m := range d.refuters {
		if m.id == f.ID {
			return m.ok
		}
	}
	var ok bool
	if f.holds != nil {
		ok = f.holds(d)
	} else {
		_, _, _, ok = f.refutes(d)
	}
	if len(d.refuters) < cap(d.refuters) {
		d.refuters = append(d.refuters, refuterMemo{f.ID, ok})
	}
	return ok
}

// refuterMemo is one refuter's answer for the verdict being settled.
type refuterMemo struct {
	id string
	ok bool
}

// refuterFacts are the facts that would refute r and are unknown: a DISCO
// run for the rules a direct pong refutes.
func (d *diag) refuterFacts(r *Rule) factSet {
	for _, f := range r.Refutes {
		if (f.ID == refDirectPong.ID || f.ID == refUDPWorks.ID || f.ID == refDISCOAnswers.ID) && !d.pingRunKnown() {
			return fsDISCORun
		}
	}
	return 0
}

// pingRunKnown reports whether a fresh DISCO run to the peer is in the
// evidence.
func (d *diag) pingRunKnown() bool {
	r := d.p.PingRun
	return r != nil && r.Tries > 0 && d.fresh(r.At, PingRunMaxAge)
}

// bugCandidate is known-client-bug as a candidate: the facts (a version)
// that would rule in or out a bug whose symptom the evidence shows at an
// end whose version is unknown, which would explain v (or, for an
// unexplained path, the path); 0 when there is none.
func (d *diag) bugCandidate(v *Verdict) factSet {
	var open factSet
	for _, side := range [...]bugSide{sideSelf, sidePeer} {
		if side == sidePeer && d.selfScope {
			continue
		}
		ver, os, _ := d.versionOf(side)
		if ver != "" {
			continue
		}
		for i := range knownBugs {
			b := &knownBugs[i]
			if b.symptom == nil || (len(b.OS) > 0 && os != "" && !slices.Contains(b.OS, os)) || !b.symptom(d, side) {
				continue
			}
			if v != nil && v.Reason != ReasonUnexplained && !slices.Contains(b.Explains, v.Reason) && !anyOf(b.Explains, v.Also) {
				continue
			}
			if side == sidePeer {
				open |= fsPeerSide
			} else {
				open |= fsSelfVersion
			}
		}
	}
	return open
}

func anyOf(a, b []ReasonID) bool {
	for _, x := range b {
		if slices.Contains(a, x) {
			return true
		}
	}
	return false
}

// settlePathUnknown: a pasted TSMP or ICMP ping names no path; a DISCO
// ping (or the peer's line of `tailscale status`) shows it.
func (d *diag) settlePathUnknown() *Settle {
	return d.deciders([]cand{
		{id: ReasonDirect, open: fsDISCORun},
		{id: ReasonPeerRelay, open: fsDISCORun},
		{id: ReasonUnexplained, open: fsDISCORun},
	})
}

// The openers: for each cause whose check cannot decide while a fact is
// unknown, the unknown facts that keep it possible given what is known;
// nil when what is known rules it out. A cause with no opener is open
// only when its check held on an unknown need (diag.pending): its check
// decides on the evidence it reads (key-expired, no-home-derp,
// derp-unreachable, local-tcp443-only), or its evidence is tailpath's own
// observation (lost-direct) or a board's.
var openers = map[ReasonID]func(*diag) factSet{
	ReasonNoHandshake:            (*diag).openNoHandshake,
	ReasonLocalUDPBlocked:        (*diag).openLocalUDP,
	ReasonNoEndpoints:            (*diag).openEndpoints,
	ReasonPrivateEndpointsOnly:   (*diag).openEndpoints,
	ReasonNoCommonFamily:         (*diag).openNoFamily,
	ReasonPeerUDPBlocked:         (*diag).openPeerUDP,
	ReasonSameNATLANBlocked:      (*diag).openOneNAT,
	ReasonSharedNATNoHairpin:     (*diag).openOneNAT,
	ReasonLocalInboundUDPBlocked: (*diag).openLocalInbound,
	ReasonPeerInboundUDPBlocked:  (*diag).openPeerInbound,
	ReasonLocalPortMapBlocked:    (*diag).openLocalPortMap,
	ReasonLocalDoubleNAT:         (*diag).openDoubleNAT,
	ReasonPeerPortMapBlocked:     (*diag).openPeerPortMap,
	ReasonBothHardNAT:            (*diag).openBothHard,
	ReasonHardAndFilteringNAT:    (*diag).openHardFiltering,
	ReasonLocalHardNAT:           (*diag).openLocalHard,
	ReasonPeerHardNAT:            (*diag).openPeerHard,
	ReasonDiscoUnanswered:        (*diag).openDisco,
}

// openerAt is openers by the rule's place in the table (openFacts runs
// for every cause of thousands of open verdicts per gather).
var openerAt = func() []func(*diag) factSet {
	out := make([]func(*diag) factSet, len(rules))
	for i, r := range rules {
		out[i] = openers[r.ID]
	}
	return out
}()

// tri is a fact that may be unknown.
type tri uint8

const (
	triUnknown tri = iota
	triFalse
	triTrue
)

func triOf(b *bool) tri {
	switch {
	case b == nil:
		return triUnknown
	case *b:
		return triTrue
	}
	return triFalse
}

// may reports whether t can be v.
func (t tri) may(v bool) bool { return t == triUnknown || (t == triTrue) == v }

// ours is this end's NAT type and port mapping as the NAT rules read
// them (a CLI's hard reading, one STUN server's easy one: unknown).
func (d *diag) ours() (hard, mapped tri) {
	n := d.self.NAT
	if d.mappingKnown() {
		hard = triOf(n.MappingVariesByDestIP)
	}
	if n != nil && !n.PortMapUnknown {
		mapped = triOf(&n.HavePortMap)
	}
	return hard, mapped
}

// theirs is the peer's NAT type and port mapping.
func (d *diag) theirs() (hard, mapped tri) {
	ps := d.p.PeerSide
	if d.peerMappingKnown() {
		hard = triOf(ps.MappingVariesByDestIP)
	}
	return hard, triOf(ps.mapping())
}

// natTypesDecide reports whether the NAT types can decide the path: not
// when both ends have IPv6 endpoints, nor between two hosts behind one
// NAT (nat.go).
func (d *diag) natTypesDecide() bool {
	if d.endpoints().v6Both {
		return false
	}
	nf := d.nat()
	return !nf.sameLAN && !nf.sharedNAT && !nf.oneNAT
}

// natOpen is the facts unknown among an end's NAT type and mapping.
func natOpen(f factSet, hard, mapped tri) factSet {
	if hard == triUnknown || mapped == triUnknown {
		return f
	}
	return 0
}

func (d *diag) openBothHard() factSet {
	oh, om := d.ours()
	ph, pm := d.theirs()
	if !d.natTypesDecide() || !oh.may(true) || !om.may(false) || !ph.may(true) || !pm.may(false) {
		return 0
	}
	return natOpen(fsSelfNAT, oh, om) | natOpen(fsPeerSide, ph, pm)
}

func (d *diag) openHardFiltering() factSet {
	oh, om := d.ours()
	ph, pm := d.theirs()
	if !d.natTypesDecide() {
		return 0
	}
	// Hard here, easy there with no mapping; or hard there, easy here
	// with none.
	if (oh.may(true) && om.may(false) && ph.may(false) && pm.may(false)) ||
		(ph.may(true) && pm.may(false) && oh.may(false) && om.may(false)) {
		return natOpen(fsSelfNAT, oh, om) | natOpen(fsPeerSide, ph, pm)
	}
	return 0
}

func (d *diag) openLocalHard() factSet {
	oh, om := d.ours()
	ph, pm := d.theirs()
	if !d.natTypesDecide() || !oh.may(true) || !om.may(false) {
		return 0
	}
	if pm == triFalse && ph != triUnknown {
		return 0 // the peer's end known: both-hard-nat or hard-and-filtering-nat instead
	}
	return natOpen(fsSelfNAT, oh, om)
}

func (d *diag) openPeerHard() factSet {
	oh, om := d.ours()
	ph, pm := d.theirs()
	if !d.natTypesDecide() || !ph.may(true) || !pm.may(false) || !oh.may(false) || !om.may(false) {
		return 0
	}
	return natOpen(fsSelfNAT, oh, om) | natOpen(fsPeerSide, ph, pm)
}

func (d *diag) openNoHandshake() factSet {
	if d.sessionKnown() || d.p.RxBytes > 0 {
		return 0
	}
	return fsSession
}

func (d *diag) openLocalUDP() factSet {
	n := d.self.NAT
	if (n != nil && n.WorkingUDP != nil) || d.evidence().UDPBlockedLogged != "" || d.tn.UDPWorks() || d.p.Path.Kind == PathPeerRelay {
		return 0
	}
	return fsSelfNAT
}

func (d *diag) openEndpoints() factSet {
	if d.endpoints().known {
		return 0
	}
	return fsPeerSide
}

func (d *diag) openNoFamily() factSet {
	ep := d.endpoints()
	if !ep.known {
		return fsPeerSide
	}
	v4, v6 := publicFamilies(d.p.Endpoints)
	if n := d.self.NAT; v6 && !v4 && (n == nil || n.WorkingIPv6 == nil) {
		return fsSelfNAT
	}
	return 0
}

func (d *diag) openPeerUDP() factSet {
	ps := d.p.PeerSide
	if d.p.Path.Kind == PathPeerRelay || (ps != nil && ps.ClientSupports.UDP != nil) {
		return 0
	}
	return fsPeerSide
}

// openOneNAT: whether both ends share a public address needs both ends'
// endpoints; whether they then share one LAN or sit on two behind one NAT,
// this host's interfaces.
func (d *diag) openOneNAT() factSet {
	var out factSet
	if len(d.self.Endpoints) == 0 {
		out |= fsSelfNAT
	}
	if !d.endpoints().known {
		out |= fsPeerSide
	}
	if out != 0 {
		return out
	}
	if d.nat().oneNAT {
		return fsInterfaces
	}
	return 0
}

func (d *diag) openLocalInbound() factSet {
	nf := d.nat()
	switch {
	case nf.self == natBehind:
		return 0
	case nf.self == natUnknown:
		return fsSelfNAT
	case !d.udpWorksHere() && !factWorkingUDP.isKnown(d):
		return fsSelfNAT
	}
	return 0
}

func (d *diag) openPeerInbound() factSet {
	if !d.endpoints().known {
		return fsPeerSide
	}
	nf := d.nat()
	var out factSet
	switch {
	case nf.peer == natBehind:
		return 0
	case nf.peer == natUnknown, !factPeerMap.isKnown(d):
		out |= fsPeerSide
	}
	if !factWorkingUDP.isKnown(d) {
		out |= fsSelfNAT
	}
	return out
}

func (d *diag) openLocalPortMap() factSet {
	if fPortMap.isKnown(d) && factWorkingUDP.isKnown(d) {
		return 0
	}
	if n := d.self.NAT; n != nil && !n.PortMapUnknown && !n.HavePortMap {
		return 0
	}
	return fsSelfNAT
}

func (d *diag) openDoubleNAT() factSet {
	n := d.self.NAT
	if n != nil && !n.PortMapUnknown && (!n.HavePortMap || factMapped.isKnown(d)) {
		return 0 // no mapping, or where it is known: the check decided
	}
	if oh, _ := d.ours(); oh == triFalse {
		return 0
	}
	return fsSelfNAT
}

func (d *diag) openPeerPortMap() factSet {
	if d.p.PeerSide.mapping() != nil {
		return 0
	}
	return fsPeerSide
}

func (d *diag) openDisco() factSet {
	if d.pingRunKnown() {
		return 0
	}
	return fsDISCORun
}

// Open reports whether v is open: something would settle it.
func (v *Verdict) Open() bool { return v != nil && v.Settle != nil && len(v.Settle.Deciders) > 0 }

// pingTarget is how a command names the peer: its name when that is a
// plain host name, else its first Tailscale address ("" when neither).
func pingTarget(p *Peer) safetext.Text {
	if plainName(string(p.Name)) {
		return p.Name
	}
	if len(p.TailscaleIPs) > 0 {
		return safetext.New(p.TailscaleIPs[0].String())
	}
	return ""
}

// plainName reports whether s is safe as a shell word on every platform's
// shell: letters, digits, '-', '_' and '.', not starting with '-'.
func plainName(s string) bool {
	if s == "" || s[0] == '-' || s[0] == '.' {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// before is s with only the candidates that rank before reason (which a
// board's evidence made the verdict), and the deciders of those; nil when
// none is left.
func (s *Settle) before(reason ReasonID) *Settle {
	if s == nil {
		return nil
	}
	out := &Settle{}
	for _, c := range s.Candidates {
		if !c.Holds && rank(c.Reason) < rank(reason) {
			out.Candidates = append(out.Candidates, c)
		}
	}
	if len(out.Candidates) == 0 {
		return nil
	}
	out.Candidates = append([]Candidate{{Reason: reason, Holds: true}}, out.Candidates...)
	for _, dc := range s.Deciders {
		var keep []ReasonID
		for _, r := range dc.Decides {
			if slices.ContainsFunc(out.Candidates, func(c Candidate) bool { return c.Reason == r && !c.Holds }) {
				keep = append(keep, r)
			}
		}
		if len(keep) > 0 {
			dc.Decides = keep
			out.Deciders = append(out.Deciders, dc)
		}
	}
	return out
}
