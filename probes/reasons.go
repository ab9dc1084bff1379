package probes

import (
	"cmp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tailpath/tailpath/internal/safetext"
)

// The reason catalogue as one table: every reason id is one Rule, which
// holds everything about it (its words, the facts it reads and where they
// come from, its check, whether it rests on the peer's own facts, and the
// Tailscale code it follows). Judge's walks (a peer's, diagnoseIn; a
// board's, diagnoseDevice; this node's, diagnoseSelf) take the table in
// its order; docs/diagnosis.md has one section per id
// (TestDocsNameEveryReason keeps the two in step). A peer's verdict and
// this node's own (diagnoseSelf) come from the same rows: a rule about
// this end that relays every path (UDP blocked here, an unreachable DERP
// region, the only-tcp-443 policy) is one row judging both.
//
// To add a reason: its ReasonID (types.go), a row here at its place in the
// order, its check (a method of diag recording the evidence it looked at),
// a table test with a fixture, and a section in docs/diagnosis.md.

// Scope is what a rule judges.
type Scope uint8

const (
	// ScopePeer: one peer's path (diagnoseIn, diagnoseDevice).
	ScopePeer Scope = iota
	// ScopeSelf: this node itself, whatever the peer (diagnoseSelf):
	// trouble at this end that touches every path, such as being logged
	// out or an address collision.
	ScopeSelf
	// ScopeBoth: a fact of this end that relays every path, so one check
	// judges this node (diagnoseSelf) and each peer's path (diagnoseIn):
	// UDP blocked here, an unreachable DERP region, only-tcp-443.
	ScopeBoth
)

// judgesPeers and judgesSelf say which verdicts a rule of scope s is in.
func (s Scope) judgesPeers() bool { return s != ScopeSelf }
func (s Scope) judgesSelf() bool  { return s != ScopePeer }

// Role is how a rule's reason enters a verdict.
type Role uint8

const (
	// RoleState: the path's state alone decides (key-expired, direct,
	// peer-relay, offline, idle); the first that holds is the verdict.
	RoleState Role = iota
	// RoleCause: explains why a relayed path is not direct. The first
	// cause that holds is the verdict's Reason, the others go to Also.
	RoleCause
	// RoleAlso: holds beside the reason (slowness, what would help, a
	// warning on a direct path); never the Reason.
	RoleAlso
	// RoleFallback: the verdict when no cause holds (unexplained). This
	// node's own verdict has none: with no self cause there is no self
	// verdict.
	RoleFallback
)

// Fact is one piece of evidence a rule reads.
type Fact struct {
	// Field is how the fact's check names it ("NetInfo.WorkingUDP").
	Field string
	// Source is where it comes from: SourceLocalAPI, SourceControlAPI,
	// SourcePeerSnapshot, SourceHost (this host, read by tailpath),
	// "netcheck" (a netcheck report: tailpath's own STUN measurement, or
	// a pasted `tailscale netcheck` or tailscaled report line), SourceLog
	// (tailscaled's own log lines, pasted), "device" (a linked board's
	// telemetry), "probe" (a DISCO ping run), "tailpath" (what tailpath
	// observed across snapshots).
	Source string
	// known reports whether the fact is known in the evidence being
	// judged. nil for a fact that cannot be missing when the rule's check
	// holds (the path's own state, a warning the check found): the
	// table's walk asks only the facts that can.
	known func(*diag) bool
	// fieldOf is the Field its check uses when that depends on the
	// source (the peer's facts are named after the source that gave
	// them); nil when it is Field.
	fieldOf func(*diag) string
}

// isKnown reports whether f is known in the evidence d judges (true for a
// fact whose rule's check cannot hold without it).
func (f *Fact) isKnown(d *diag) bool { return f.known == nil || f.known(d) }

// SourceHost: facts tailpath reads from the host it runs on (its
// interfaces, its nftables ruleset: HostFacts), which are tailscaled's
// host's when both run on one machine.
const SourceHost = "host"

// Wording is a reason's words: Summary for the Peers table (one phrase), Fix
// for the detail. "{peer}" stands for the peer's name, "{x}" for a value
// the check fills in.
type Wording struct {
	Summary string
	Fix     string
}

// Rule is one row of the reason table.
type Rule struct {
	ID    ReasonID
	Scope Scope
	Role  Role
	// Paths are the path kinds the rule judges; nil is every kind.
	Paths []PathKind
	// Wording is the reason's words; Variants are wordings for particular
	// evidence, picked by the check (an empty field keeps Wording's).
	Wording
	Variants map[string]Wording
	// Needs are the facts the rule cannot do without, with their
	// sources. The table's walk enforces them (diag.judge): when one is
	// unknown the rule is not held, whatever its check concluded, and
	// the fact shows as an unknown check naming the rule. Reads are the
	// facts it reads when present (a wording, a fact that rules it out),
	// which may be unknown.
	Needs []Fact
	Reads []Fact
	// Refutes are the facts that, present anywhere in the input, refute
	// the rule: the table's walk (diag.judge) checks them across the
	// whole gather (the peer's evidence, this node's, and what only the
	// whole tailnet shows: Tailnet), and a refuted rule is never the
	// verdict nor in Also, whatever its check found. Irrefutable says
	// why a rule has none (TestEveryRuleRefutableOrSaysWhy).
	Refutes     []Refuter
	Irrefutable string
	// PeerSide: the reason rests on the peer's own facts (its NetInfo,
	// the control API, its snapshot, its advertised endpoints) whenever
	// one of those fails; the verdict then says so (Verdict.PeerSide).
	PeerSide bool
	// Follows names the Tailscale code (v1.102.5) the rule rests on.
	Follows string
	// check judges the rule on tailscaled's evidence, recording what it
	// looked at; nil for rules only a board's evidence decides.
	check func(*diag) result
	// boardCheck judges it on a linked board's evidence (diagnoseDevice);
	// nil for rules the board says nothing about.
	boardCheck func(*diag) result
	// slot is its place in the table plus one (init); 0 for a Rule not
	// of the table. Its words by variant ("" the Wording), as texts picks
	// them, are worked out once, on first use (ruleForms[slot-1]).
	slot int
}

// ruleForms are each table rule's words by variant, worked out the first
// time texts is asked for one of its verdicts: a one-shot status shows a
// few rules' words, and working out every rule's in init cost 0.4 ms of
// its start (issue 31). Two goroutines may both work one out; either
// answer is the same.
var ruleForms []atomic.Pointer[map[string]*form]

// formsOf are r's forms, nil for a Rule not of the table.
func (r *Rule) formsOf() map[string]*form {
	if r.slot == 0 {
		return nil
	}
	p := &ruleForms[r.slot-1]
	if m := p.Load(); m != nil {
		return *m
	}
	m := map[string]*form{"": newForm(r.Summary, r.Fix)}
	for k, v := range r.Variants {
		if k != "" {
			m[k] = newForm(cmp.Or(v.Summary, r.Summary), cmp.Or(v.Fix, r.Fix))
		}
	}
	p.Store(&m)
	return m
}

// form is a rule's summary and fix for one variant, each cleaned once
// when it holds no "{" (ok): fill leaves such a text as it is, so texts
// returns it without cleaning a long fix again for every peer.
type form struct {
	sum, fix     string
	sumT, fixT   safetext.Text
	sumOK, fixOK bool
}

// newForm is the form of the texts sum and fix.
func newForm(sum, fix string) *form {
	f := &form{sum: sum, fix: fix}
	if !strings.Contains(sum, "{") {
		f.sumT, f.sumOK = safetext.New(sum), true
	}
	if !strings.Contains(fix, "{") {
		f.fixT, f.fixOK = safetext.New(fix), true
	}
	return f
}

// Refuter is one fact that refutes a rule when the input holds it.
type Refuter struct {
	// ID names it (stable, for tests and docs: "udp-works").
	ID string
	// Field and Source name the refuting fact as its check names it.
	Field, Source string
	// Claims are the fields of the rule's own checks it contradicts:
	// when it refutes, those of the rule's checks that failed turn to
	// info, saying what refuted them.
	Claims []string
	// refutes reports whether the evidence d judges holds the fact: its
	// value, a short phrase for a summary ("peer nas is direct") and a
	// note saying why it refutes the rule (with the Tailscale code).
	refutes func(*diag) (value, short, note string, ok bool)
	// holds, when set, is refutes' ok without its words: what settling a
	// verdict asks of every refuter of every open cause (refutesNow).
	// TestRefuterHoldsIsRefutes holds the two to one answer.
	holds func(*diag) bool
	// perRule: its answer depends on the rule being judged (diag.judging),
	// so refutesNow asks it afresh for each rule rather than once per
	// verdict.
	perRule bool
}

// Refutation is a rule set aside because a fact in the same input refutes
// it (Verdict.Refuted).
type Refutation struct {
	Reason ReasonID      `json:"reason"`
	Field  safetext.Text `json:"field"`
	Why    safetext.Text `json:"why"`
}

// result is what a rule's check concluded.
type result struct {
	holds bool
	// alsoOnly: it holds, but ranks with the RoleAlso reasons (a DERP
	// region that cannot be reached, while other regions remain).
	alsoOnly bool
	// words are the variant, which picks Rule.Variants ("" none), then
	// the vars, which fill "{key}" in the texts as key, value pairs
	// ("{when}", "12:00:02Z"); nil for neither. One slice, not a string
	// and a slice, so that a result is small enough (32 bytes) for the
	// compiler to keep it in registers: the table's walk passes one per
	// rule per peer, and a larger one was copied through memory each
	// time (BenchmarkJudgePoll10k).
	words []string
}

// variant picks Rule.Variants ("" none).
func (r result) variant() string {
	if len(r.words) == 0 {
		return ""
	}
	return r.words[0]
}

// vars fill "{key}" in the texts, as key, value pairs.
func (r result) vars() []string {
	if len(r.words) < 2 {
		return nil
	}
	return r.words[1:]
}

func holds() result   { return result{holds: true} }
func notHeld() result { return result{} }
func holdsAs(variant string, vars ...string) result {
	return result{holds: true, words: wordsOf(variant, vars)}
}

// wordsOf is result.words for variant and vars: one allocation when
// there are vars, none for a variant alone.
func wordsOf(variant string, vars []string) []string {
	if len(vars) == 0 {
		return variantWords(variant)
	}
	w := make([]string, 1+len(vars))
	w[0] = variant
	copy(w[1:], vars)
	return w
}

// variantWords is result.words for variant alone; shared, for a variant
// of the table's.
func variantWords(variant string) []string {
	if variant == "" {
		return nil
	}
	if w, ok := variantOnly[variant]; ok {
		return w
	}
	return []string{variant}
}

// variantOnly is variantWords' for each variant of the table's, capped
// so that an append copies. Filled by init: the table's checks read it,
// so its own initializer would depend on the table through them.
var variantOnly map[string][]string

func init() {
	variantOnly = map[string][]string{}
	ruleForms = make([]atomic.Pointer[map[string]*form], len(rules))
	for i := range rules {
		r := &rules[i]
		r.slot = i + 1
		for k := range r.Variants {
			variantOnly[k] = []string{k}[:1:1]
		}
	}
}

// appliesTo reports whether r judges paths of kind k.
func (r *Rule) appliesTo(k PathKind) bool {
	return r.Paths == nil || slices.Contains(r.Paths, k)
}

// judge runs check (r's own, or its board check) and enforces r.Needs:
// when the check holds while a fact r needs is unknown, r is not held
// and the fact is recorded as an unknown check naming r. Every walk of
// the table (diagnoseIn, diagnoseSelf, diagnoseDevice) judges through it,
// so a rule can never be a verdict, nor go to Also, on a fact it needs
// and the evidence lacks.
//
// Then it enforces r.Refutes: when a fact that refutes r is in the input,
// r is not held either; the fact is recorded as an ok check saying what
// it refutes, and the checks of r's that it contradicts (Refuter.Claims)
// no longer read as failed.
func (d *diag) judge(r *Rule, check func(*diag) result) (res result) {
	start := len(d.checks)
	res = check(d)
	if !res.holds {
		return res
	}
	// Set only now, for r's refuters (refKnownBug): no check reads it,
	// and most rules do not hold, so most judgements skip the write (a
	// pointer's, with a write barrier while the GC marks).
	d.judging = r.ID
	for i := range r.Needs {
		if f := &r.Needs[i]; !f.isKnown(d) {
			d.needUnknown(r.ID, f)
			return notHeld()
		}
	}
	for i := range r.Refutes {
		f := &r.Refutes[i]
		if value, short, note, ok := f.refutes(d); ok {
			d.refute(r.ID, f, start, value, short, note)
			return notHeld()
		}
	}
	d.askVersion(r.ID)
	return res
}

// refute records that fact f refutes rule id: f as an ok check, and the
// failed checks of id's (recorded from start on) that f contradicts as
// info.
func (d *diag) refute(id ReasonID, f *Refuter, start int, value, short, note string) {
	why := "refutes " + string(id) + ": " + note
	for i := start; i < len(d.checks); i++ {
		c := &d.checks[i]
		if c.Failed && slices.Contains(f.Claims, string(c.Field)) {
			c.Failed, c.State = false, CheckInfo
			c.Note += safetext.New("; refuted: " + short)
		}
	}
	d.checks = append(d.checks, Check{Field: safetext.New(f.Field), Value: safetext.New(value), State: CheckOK, Note: safetext.New(why), Source: sourceOf(f.Field)})
	d.refuted = append(d.refuted, Refutation{Reason: id, Field: safetext.New(f.Field), Why: safetext.New(short)})
}

// needUnknown records that rule id would hold but needs f, which is
// unknown: on f's own unknown check when there is one, else as a new
// unknown check.
func (d *diag) needUnknown(id ReasonID, f *Fact) {
	field := f.Field
	if f.fieldOf != nil {
		field = f.fieldOf(d)
	}
	note := string(id) + " would hold, but it needs this fact, which is unknown: not the verdict"
	d.pending = append(d.pending, pendingNeed{id: id, field: field})
	for i := range d.checks {
		if c := &d.checks[i]; string(c.Field) == field && c.State == CheckUnknown {
			c.Note += "; " + safetext.New(note)
			return
		}
	}
	d.checks = append(d.checks, Check{Field: safetext.New(field), Value: "unknown", State: CheckUnknown, Note: safetext.New(note), Source: sourceOf(field)})
}

// texts are r's summary and fix for res, with {peer} and res's values
// filled in.
func (r *Rule) texts(res result, peer string) (summary, fix safetext.Text) {
	if forms := r.formsOf(); forms != nil {
		f, ok := forms[res.variant()]
		if !ok {
			f = forms[""]
		}
		vars := res.vars()
		summary, fix = f.sumT, f.fixT
		if !f.sumOK {
			summary = safetext.New(fill(f.sum, peer, vars))
		}
		if !f.fixOK {
			fix = safetext.New(fill(f.fix, peer, vars))
		}
		return summary, fix
	}
	sum, fx := r.Summary, r.Fix
	if v, ok := r.Variants[res.variant()]; ok && res.variant() != "" {
		if v.Summary != "" {
			sum = v.Summary
		}
		if v.Fix != "" {
			fx = v.Fix
		}
	}
	// The values filled in carry outside text (a peer's name, a DERP
	// region's code): the phrase is cleaned as a whole.
	vars := res.vars()
	return safetext.New(fill(sum, peer, vars)), safetext.New(fill(fx, peer, vars))
}

// fill replaces {peer} and the vars' keys in s.
func fill(s, peer string, vars []string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	if out, ok := fillOnce(s, peer, vars); ok {
		return out
	}
	return fillEach(s, peer, vars)
}

// fillEach is fill as one replacement after another: {peer}, then each
// var's key in turn.
func fillEach(s, peer string, vars []string) string {
	s = strings.ReplaceAll(s, "{peer}", peer)
	for i := 0; i+1 < len(vars); i += 2 {
		s = strings.ReplaceAll(s, vars[i], vars[i+1])
	}
	return s
}

// fillOnce is fill in one pass and one allocation, where that gives
// what fill's replacements one after another give: when every "{" of s
// opens a key ("{name}", no brace inside) and s has no other "}", every
// var's key is such a key, and neither peer nor any value holds a
// brace. Then no replacement can make or break a key that a later one
// matches, so each key of s takes {peer}'s name or its first var's
// value, as the replacements in turn give it. ok false otherwise.
func fillOnce(s, peer string, vars []string) (string, bool) {
	if hasBrace(peer) {
		return "", false
	}
	for i := 0; i+1 < len(vars); i += 2 {
		if !isKey(vars[i]) || hasBrace(vars[i+1]) {
			return "", false
		}
	}
	var buf [512]byte
	b := buf[:0]
	for {
		i := strings.IndexByte(s, '{')
		lit := s
		if i >= 0 {
			lit = s[:i]
		}
		if strings.IndexByte(lit, '}') >= 0 {
			return "", false
		}
		b = append(b, lit...)
		if i < 0 {
			return string(b), true
		}
		s = s[i:]
		end := strings.IndexByte(s, '}')
		if end < 0 || !isKey(s[:end+1]) {
			return "", false
		}
		key := s[:end+1]
		s = s[end+1:]
		if v, ok := lookupVar(key, peer, vars); ok {
			b = append(b, v...)
		} else {
			b = append(b, key...)
		}
	}
}

// hasBrace reports whether s holds "{" or "}".
func hasBrace(s string) bool {
	return strings.IndexByte(s, '{') >= 0 || strings.IndexByte(s, '}') >= 0
}

// isKey reports whether k is "{name}" with no brace in name.
func isKey(k string) bool {
	return len(k) > 2 && k[0] == '{' && k[len(k)-1] == '}' && !hasBrace(k[1:len(k)-1])
}

// lookupVar is what fill puts for key: peer for {peer}, else the value
// of key's first var.
func lookupVar(key, peer string, vars []string) (string, bool) {
	if key == "{peer}" {
		return peer, true
	}
	for i := 0; i+1 < len(vars); i += 2 {
		if vars[i] == key {
			return vars[i+1], true
		}
	}
	return "", false
}

// rank is id's place in the table (causes sort by it); ids not in the
// table sort last.
func rank(id ReasonID) int {
	if i, ok := ruleIndex[id]; ok {
		return i
	}
	return len(rules)
}

// byKind lists, per path kind, the indexes of the peer rules with a
// tailscaled check that judge it: the states, then the causes and the
// RoleAlso reasons, in table order (diagnoseIn walks these, not the whole
// table).
type kindRules struct{ states, rest []int }

var byKind = func() map[PathKind]*kindRules {
	m := map[PathKind]*kindRules{}
	for _, k := range []PathKind{PathDirect, PathPeerRelay, PathDERP, PathIdle, PathOffline, PathUnknown, ""} {
		kr := &kindRules{}
		for i, r := range rules {
			if !r.Scope.judgesPeers() || r.check == nil || !r.appliesTo(k) {
				continue
			}
			switch r.Role {
			case RoleState:
				kr.states = append(kr.states, i)
			case RoleCause, RoleAlso:
				kr.rest = append(kr.rest, i)
			}
		}
		m[k] = kr
	}
	return m
}()

// rulesOf is byKind's entry for k (a kind the table does not know
// judges like "").
func rulesOf(k PathKind) *kindRules {
	if kr, ok := byKind[k]; ok {
		return kr
	}
	return byKind[""]
}

var ruleIndex = func() map[ReasonID]int {
	m := make(map[ReasonID]int, len(rules))
	for i, r := range rules {
		m[r.ID] = i
	}
	return m
}()

// rule returns the row of id; the table holds every id the diagnosis
// uses (TestRulesTable).
func rule(id ReasonID) *Rule { return &rules[ruleIndex[id]] }

// Paths rules judge.
var (
	relayedPaths = []PathKind{PathDERP, PathPeerRelay}
	derpPaths    = []PathKind{PathDERP}
)

// Facts used by several rules. A fact with a known func is one the
// evidence can lack; Needs lists it where the rule cannot do without it.
var (
	factCurAddr    = Fact{Field: "Status.CurAddr", Source: SourceLocalAPI}
	factHandshake  = Fact{Field: "Status.LastHandshake", Source: SourceLocalAPI}
	factWGState    = Fact{Field: "IPNBus.PeerState", Source: SourceLocalAPI}
	factRxBytes    = Fact{Field: "Status.RxBytes", Source: SourceLocalAPI}
	factPingRun    = Fact{Field: "PingRun", Source: "probe"}
	factWorkingUDP = Fact{Field: "NetInfo.WorkingUDP", Source: SourceLocalAPI, known: func(d *diag) bool {
		n := d.self.NAT
		return (n != nil && n.WorkingUDP != nil) || d.tn.UDPWorks()
	}}
	factEndpoints = Fact{Field: "WhoIs.Node.Endpoints", Source: SourceLocalAPI, known: func(d *diag) bool { return d.endpoints().known }}
	factSelfEps   = Fact{Field: "Self.Endpoints", Source: SourceLocalAPI, known: func(d *diag) bool { return len(d.self.Endpoints) > 0 }}
	// fMapping is our NAT type as tailscaled measured it: not the CLI's
	// (another socket), not "false" from one STUN server.
	fMapping = Fact{Field: "NetInfo.MappingVariesByDestIP", Source: SourceLocalAPI, known: (*diag).mappingKnown}
	fPortMap = Fact{Field: "NetInfo.HavePortMap", Source: SourceLocalAPI, known: func(d *diag) bool {
		n := d.self.NAT
		return n != nil && !n.PortMapUnknown
	}}
	factPeerMap = Fact{Field: "Peer.NetInfo.MappingVariesByDestIP", Source: peerSources, known: (*diag).peerMappingKnown,
		fieldOf: func(d *diag) string { return peerField(d.p.PeerSide, factMapping) }}
	factPeerPMap = Fact{Field: "Peer.NetInfo.HavePortMap", Source: peerSources, known: func(d *diag) bool { return d.p.PeerSide.mapping() != nil },
		fieldOf: func(d *diag) string { return peerField(d.p.PeerSide, factPortMap) }}
	factInterfaces = Fact{Field: "Host.Interfaces", Source: SourceHost, known: func(d *diag) bool { return d.ourHost() != nil }}
	factFirewall   = Fact{Field: "Host.Firewall", Source: SourceHost}
	// factSelfNoNAT: whether this end has no NAT, decided by this host's
	// interfaces, tailscaled's endpoint types (its log) or its endpoints'
	// ports (nat.go selfNAT); public endpoints alone cannot say.
	factSelfNoNAT = Fact{Field: "Self.Endpoints", Source: "host, log or localapi", known: func(d *diag) bool { return d.nat().self != natUnknown }}
	// factPeerNoNAT: the same of the peer (nat.go peerNAT).
	factPeerNoNAT = Fact{Field: "Peer.Endpoints", Source: "localapi or peer-snapshot", known: func(d *diag) bool { return d.nat().peer != natUnknown }}
	// factMapped: where our port mapping's external address is (nat.go
	// mappedAddr): public, or behind another NAT.
	factMapped = Fact{Field: "Self.PortMapAddr", Source: "log, host or localapi", known: func(d *diag) bool { return d.nat().mapped != mapUnknown }}
	factSelfOS = Fact{Field: "Self.OS", Source: SourceLocalAPI, known: func(d *diag) bool { return d.self.OS != "" }}
)

// peerSources are where the peer's own facts come from.
const peerSources = "localapi, control-api or peer-snapshot"

// natFix is the common port-mapping advice.
const natFix = "enable UPnP, NAT-PMP or PCP on "

// rules is the reason table, in the order verdicts are decided.
var rules = []Rule{
	// States of the path: the first that holds is the verdict.
	{
		ID: ReasonKeyExpired, Role: RoleState,
		Irrefutable: "Status.Expired is tailscaled's own record: magicsock sends nothing to a peer whose key expired (endpoint.send, errExpired)",
		Wording: Wording{"node key expired",
			"re-authenticate the peer (`tailscale up` or `tailscale login` on it), or disable key expiry for it in the admin console; pings and traffic cannot reach it until then"},
		Needs:   []Fact{{Field: "Status.Expired", Source: SourceLocalAPI}},
		Follows: "wgengine/magicsock/endpoint.go endpoint.send and discoPing: an expired peer gets errExpired (\"peer's node key has expired\"), nothing is sent",
		check:   (*diag).checkExpired,
	},
	{
		ID: ReasonDirect, Role: RoleState, Paths: []PathKind{PathDirect},
		Irrefutable: "CurAddr is the path itself, set only while a UDP pong is fresh (wgengine/magicsock/endpoint.go trustUDPAddrDuration)",
		Wording:     Wording{Summary: "direct"},
		Needs:       []Fact{factCurAddr},
		Follows:     "wgengine/magicsock/endpoint.go populatePeerStatus: CurAddr is the best address while it is trusted (trustUDPAddrDuration, 6.5 s after a pong); cmd/tailscale/cli/status.go prints it as `direct`",
		check:       (*diag).checkDirect,
	},
	{
		ID: ReasonPeerRelay, Role: RoleState, Paths: []PathKind{PathPeerRelay},
		Irrefutable: "PeerRelay is tailscaled's own best path",
		Wording:     Wording{Summary: "via peer relay"},
		Variants:    map[string]Wording{"not-direct": {Summary: "via peer relay; not direct: {cause}"}},
		Needs:       []Fact{{Field: "Status.PeerRelay", Source: SourceLocalAPI}},
		Follows:     "wgengine/magicsock/endpoint.go populatePeerStatus: PeerRelay is set when the best path is a peer relay (Geneve, a VNI)",
		check:       (*diag).checkPeerRelayState,
	},
	{
		ID: ReasonOffline, Role: RoleState, Paths: []PathKind{PathOffline},
		Refutes: []Refuter{refDISCOAnswers},
		Wording: Wording{"offline",
			"bring the peer up (start tailscaled on it and run `tailscale up`); nothing on this side can make a path to it"},
		Variants: map[string]Wording{"since": {Summary: "offline since {since}"}, "ago": {Summary: "offline, last seen {ago} before the snapshot"}},
		Needs:    []Fact{{Field: "WhoIs.Node.Online", Source: SourceLocalAPI}},
		Reads:    []Fact{factHandshake},
		Follows:  "tailcfg.Node.Online (control's view, a tri-state); cmd/tailscale/cli/status.go prints `offline, last seen …`",
		check:    (*diag).checkOffline,
	},
	{
		ID: ReasonIdle, Role: RoleState, Paths: []PathKind{PathIdle},
		Irrefutable: "Active false is magicsock's own record that nothing was sent to the peer within 45 s",
		Wording: Wording{"idle: no recent traffic",
			"send traffic to it or run a DISCO ping (`tailscale ping {peer}`) to negotiate a path"},
		Needs:   []Fact{{Field: "Status.Active", Source: SourceLocalAPI}},
		Follows: "wgengine/magicsock/endpoint.go populatePeerStatus: Active is something sent within sessionActiveTimeout (45 s); an idle peer has no negotiated path, which is a fact, not a fault",
		check:   (*diag).checkIdle,
	},
	{
		ID: ReasonPathUnknown, Role: RoleState, Paths: []PathKind{PathUnknown},
		Irrefutable: "it says only that the input names no path",
		Wording: Wording{"path not shown: a TSMP or ICMP ping names none",
			"a TSMP or ICMP ping goes through WireGuard and names the ping type, not the path: `tailscale status` (the peer's line) or a DISCO ping (`tailscale ping {peer}`, without --tsmp or --icmp) shows it"},
		Variants: map[string]Wording{"no-reply": {Summary: "path not shown; the TSMP or ICMP ping got no reply"}},
		Needs:    []Fact{{Field: "Path", Source: "tailscale ping"}},
		Reads:    []Fact{factPingRun},
		Follows:  "cmd/tailscale/cli/ping.go runPing: with --tsmp or --icmp the pong's PingResult names no endpoint or DERP region, so it prints the ping type (\"via TSMP\"), and it stops after one pong",
		check:    (*diag).checkPathUnknown,
	},

	// This node itself, before any cause of a path: no paths at all, a
	// netcheck that measured nothing, UDP that cannot be received.
	{
		ID: ReasonSelfLoggedOut, Scope: ScopeSelf, Role: RoleCause,
		Irrefutable: "BackendState is tailscaled's own state",
		Wording: Wording{"tailscaled is not logged in or not running: no paths at all",
			"log in: `tailscale up` (or approve the machine in the admin console; start tailscaled if it is not running)"},
		Needs:   []Fact{{Field: "Status.BackendState", Source: SourceLocalAPI, known: func(d *diag) bool { return d.state != "" }}},
		Follows: "cmd/tailscale/cli/status.go isRunningOrStarting; ipn.State",
		check:   (*diag).checkLoggedOut,
	},
	{
		ID: ReasonDERPRegionUnmeasured, Scope: ScopeSelf, Role: RoleCause,
		Irrefutable: "its check reads the region's latencies: one measured rules it out",
		Wording: Wording{"DERP region {region} can never be measured, so it can never be a home region",
			"{region} is never measured: {why}{only}. netcheck picks a home region from the latencies it measures (net/netcheck addReportHistoryAndSetPreferredDERP), so no node ever homes there. Fix the DERP map: give every node the RegionID of its region (headscale's YAML: `regionid:` under each node), keep STUN on (STUNPort 3478, derper's -stun) and open UDP 3478 to the server; then `tailscale debug derp {region}` should report a STUN response"},
		Needs:   []Fact{{Field: "DERPMap.Regions", Source: "localapi, or the input's DERP map or `tailscale debug derp`"}},
		Reads:   []Fact{{Field: "NetInfo.DERPLatency", Source: "localapi or netcheck"}},
		Follows: "net/netcheck/netcheck.go addNodeLatency (a STUN reply is filed under node.RegionID), makeProbePlan (no probe for STUNPort -1) and addReportHistoryAndSetPreferredDERP (the home region is the best measured one); ipn/localapi/debugderp.go (\"did not return a IPv4 STUN response\")",
		check:   (*diag).checkRegionUnmeasured,
	},
	{
		ID: ReasonSelfNetcheckEmpty, Scope: ScopeSelf, Role: RoleCause,
		Irrefutable: "a report that measured nothing is the fact itself; its fix names both readings (no DERP map, or no internet)",
		Wording: Wording{"netcheck measured nothing (no DERP map: logged out?), so UDP is unknown, not blocked",
			"log in first (`tailscale up`), then run `tailscale netcheck` again; if logged in, check that this host reaches the internet at all (DERP over TCP 443)"},
		Needs:   []Fact{{Field: "Netcheck.UDP", Source: "netcheck"}, {Field: "Netcheck.RegionLatency", Source: "netcheck"}, {Field: "Netcheck.GlobalV4", Source: "netcheck"}},
		Follows: "cmd/tailscale/cli/netcheck.go printReport (\"no response to latency probes\"); net/netcheck Client.GetReport",
		check:   (*diag).checkNetcheckEmpty,
	},
	{
		ID: ReasonKnownClientBug, Scope: ScopeBoth, Role: RoleCause, Paths: relayedPaths,
		Irrefutable: "a version in a confirmed bug's range, with the bug's own symptom in the evidence",
		Wording: Wording{"a known bug of {who} Tailscale {version}: {bug}",
			"{who} Tailscale {version} has a known bug ({issue}): {symptom}. {workaround}"},
		Needs:   []Fact{{Field: "Self.Version | Peer.Hostinfo.IPNVersion", Source: "localapi, control-api, log or tailscale version"}},
		Follows: "the known-bug table (probes/knownbugs.go): each row a bug a Tailscale maintainer confirmed in its thread, with its versions and the evidence it leaves",
		check:   (*diag).checkKnownBug,
	},
	{
		ID: ReasonSelfUDPReceiveStopped, Scope: ScopeSelf, Role: RoleCause,
		Refutes: []Refuter{refUDPReceived},
		Wording: Wording{"this end cannot receive direct UDP (its receive loop stopped)",
			"restart tailscaled; if it stops again, its log says why the UDP socket failed (another program on the port, a firewall module, an interface that went away)"},
		Variants: map[string]Wording{"ipv6": {"this end cannot receive direct UDP over IPv6 (its IPv6 receive loop stopped); IPv4 is not touched",
			"direct paths over IPv4 still work; restart tailscaled to get IPv6 back, and if it stops again, its log says why the IPv6 UDP socket failed (an IPv6 address or interface that went away, a firewall module)"}},
		Needs:   []Fact{{Field: "Status.Health", Source: SourceLocalAPI}},
		Follows: "health/health.go checkReceiveFuncsLocked tracks each receive func apart (ReceiveIPv4, ReceiveIPv6, ReceiveDERP: magicsock-receive-func-error) and no-udp4-bind; wgengine/magicsock receiveIPv4 and receiveIPv6 read separate sockets",
		check:   (*diag).checkReceiveStopped,
	},

	{
		ID: ReasonSelfDERPServerWarns, Scope: ScopeSelf, Role: RoleCause,
		Irrefutable: "the DERP server's own report, received over a live connection",
		Wording: Wording{"{region}'s DERP server reports this connection unhealthy: \"{problem}\"",
			"{region}'s DERP server sent a health frame over a live connection (so the region is reachable, and allowing TCP 443 changes nothing) saying: \"{problem}\". Tailscale's protocol defines that frame for one state, a duplicate connection for one node key (derp/derp.go FrameHealth), though its open-source server does not send it yet (derpserver clientSet, tailscale#2746): what it means is the server's to say; ask its operator"},
		Variants: map[string]Wording{"duplicate": {
			Summary: "{region}'s DERP server reports this node's key connected twice: \"{problem}\"",
			Fix:     "{region}'s DERP server sees this node's key on two connections (its words: \"{problem}\"; derp/derp.go FrameHealth): a cloned VM, container image or disk shares this node's key, and the two take turns receiving. Give the clone a key of its own: on it, stop tailscaled, delete its state (/var/lib/tailscale/tailscaled.state, or the container's TS_STATE_DIR), start it and log in again; the region itself is reachable"}},
		Needs:   []Fact{{Field: "Status.Health", Source: SourceLocalAPI}},
		Follows: "health/warnings.go derpRegionErrorWarnable (\"The relay server #%v is reporting an issue: %v\"), set only by wgengine/magicsock/derp.go runDerpReader on a derp.HealthMessage received over a live connection (and cleared when that reader exits); derp/derp.go FrameHealth: \"Currently the only unhealthy state is whether the connection is detected as a duplicate\"; derp/derpserver does not send it (clientSet's TODO, tailscale#2746)",
		check:   (*diag).checkDERPServerWarns,
	},

	// Causes of a relayed path, most fundamental first.
	{
		ID: ReasonNoHomeDERP, Role: RoleCause, Paths: derpPaths,
		Refutes: []Refuter{refRxGrowing},
		Wording: Wording{"peer has no usable home DERP",
			"the peer has no home DERP region in our DERP map, so nothing can be relayed to it unless it writes first: run `tailscale netcheck` on the peer (does it reach any DERP region?) and check that both ends use the same DERP map (derpMap in the tailnet policy file)"},
		Needs: []Fact{{Field: "Status.Relay", Source: SourceLocalAPI},
			{Field: "Status.LastHandshake", Source: SourceLocalAPI, known: func(d *diag) bool {
				return d.p.WireGuard != "" || !d.p.HandshakeUnknown || !d.p.LastHandshake.IsZero()
			}}},
		Reads:   []Fact{{Field: "DERPMap.Regions", Source: SourceLocalAPI}, factWGState, factPingRun},
		Follows: "wgengine/magicsock/endpoint.go populatePeerStatus (Relay from magicsock/derp.go derpRegionCodeOfIDLocked: \"\" for a region not in the map, and for one in it whose RegionCode is empty) and endpoint.send (the home region's DERP address when it is in the map, else fallbackDERPRegionForPeer, else \"no UDP or DERP addr\")",
		check:   (*diag).checkHomeDERP,
	},
	{
		ID: ReasonDeviceDERPDown, Role: RoleCause, Paths: derpPaths,
		Irrefutable: "the board's own telemetry of its relay connection",
		Wording: Wording{"board's DERP relay is down",
			"firmware: reconnect the DERP relay for as long as it is down, with back-off, and reconnect a connected relay that has gone silent (a receive watchdog); a reboot of the board restores it meanwhile (reference: firmware tp_relay.h)"},
		Needs:      []Fact{{Field: "Device.DERPRelay", Source: "device"}},
		Follows:    "wgengine/magicsock/magicsock.go sendDiscoMessage: CallMeMaybe travels through DERP, so a peer whose relay is down cannot start a direct path either",
		boardCheck: (*diag).boardRelay,
	},
	{
		ID: ReasonDERPUnreachable, Scope: ScopeBoth, Role: RoleCause, Paths: derpPaths,
		Refutes: []Refuter{refRegionUp},
		Wording: Wording{"the relay region cannot be reached",
			"tailscaled cannot reach DERP region {region}, which carries this path (we write through the peer's home region, it answers through ours): check this host's outbound HTTPS (TCP 443) to that region's servers and the region's own health; with one region only there is no other relay, so nothing reaches the peer until it is back"},
		Variants: map[string]Wording{
			"self": {"this node cannot reach its home DERP relay (or any): peers cannot reach it through DERP",
				"allow outbound TCP 443 (and 80) to the DERP servers; with a proxy, let it CONNECT to them"},
			"proxy": {Fix: "DERP goes through an HTTP proxy that refused or failed the CONNECT: let the proxy CONNECT to the DERP servers (TCP 443), or exempt them from the proxy"},
			"proxy-port": {"DERP through the HTTP proxy reaches {target}, where TLS is not the DERP server's",
				"the proxy works (it answered 200); the DERP server is not at {target}. If the DERP map gives this region's node another DERPPort, tailscaled before 1.100 dialled port 443 through a proxy whatever the map said (tailscale/tailscale#19748): update to 1.100 or later, or exempt the DERP host from the proxy (NO_PROXY in tailscaled's environment); otherwise the proxy or the name leads somewhere else"},
			"self-hosted": {"the self-hosted DERP {region}, the only one the input shows, cannot be reached",
				"{how}; `tailscale debug derp {regionid}` on this node tests the region step by step; with no other region in the map nothing reaches peers until it is back"},
		},
		Needs:   []Fact{{Field: "Status.Health | Log.DERPErrors | Log.ProxyError | Log.ProxyConnect", Source: "localapi or log"}},
		Reads:   []Fact{{Field: "Self.HomeDERP", Source: SourceLocalAPI}, {Field: "Self.DERPRegions", Source: SourceLocalAPI}},
		Follows: "health/health.go updateBuiltinWarnablesLocked: noDERPHomeWarnable, noDERPConnectionWarnable and derpTimeoutWarnable are raised for our home region only (derpRegionErrorWarnable for any); a peer relayed through a region is written to through it, and answers through our home; derp/derphttp Client.connect logs each failed connection, and wgengine/magicsock/derp.go logs \"derp-%d connected\" when one succeeds, so only failures since the last connect count",
		check:   (*diag).checkDERPReach,
	},
	{
		ID: ReasonNoHandshake, Role: RoleCause, Paths: derpPaths,
		Refutes: []Refuter{refRxGrowing},
		Wording: Wording{"no WireGuard session: the peer does not answer",
			"there is no working path at all, not only no direct one: check that the peer is up and logged in (`tailscale status` on it), that its clock is right, and that the tailnet policy lets the two nodes talk; `tailscale ping --tsmp {peer}` tests the tunnel"},
		Variants: map[string]Wording{
			"nothing-answered": {Summary: "nothing ever answered (rx 0)"},
			"disco-silent":     {Summary: "the peer does not answer: DISCO pings got no pong, not even through DERP"},
			"disco-answers": {Summary: "no WireGuard session although the peer answers DISCO",
				Fix: "the peer answers DISCO pings, so it is up, but no WireGuard handshake completes: check that both ends have a current netmap (a node key the other knows: `tailscale status` on the peer lists this node), their clocks, and `tailscale ping --tsmp {peer}`"},
		},
		Needs: []Fact{{Field: "IPNBus.PeerState | Status.LastHandshake | PingRun", Source: "localapi or probe", known: (*diag).sessionKnown}},
		Reads: []Fact{factRxBytes, {Field: "Status.TxBytes", Source: SourceLocalAPI}},
		Follows: "ipn/backend.go NotifyPeerWireGuardState (wireguard-go's session states: handshake, established, expired); wgengine/magicsock/endpoint.go startDiscoPingLocked: a CLI DISCO ping calls noteTxActivityExtTriggerLocked, so Active (sessionActiveTimeout, 45 s) can come from DISCO alone, which never makes a WireGuard session; " +
			"wireguard-go device/peer.go SendBuffers counts every packet sent to the peer, handshake initiations included, in its tx bytes, so with nothing sent (tx 0, or tx not moving) the handshake time says nothing",
		check: (*diag).checkSession,
	},
	{
		ID: ReasonLocalTCP443Only, Scope: ScopeBoth, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refUDPWorks},
		Wording: Wording{"policy allows only TCP 443 here",
			"the tailnet policy file gives this node the only-tcp-443 attribute (nodeAttrs), so it sends nothing but TCP 443 and every path goes through DERP; remove the attribute for this node to allow direct UDP paths"},
		Needs:   []Fact{{Field: "Self.CapMap", Source: SourceLocalAPI}},
		Follows: "tailcfg.NodeAttrOnlyTCP443; wgengine/magicsock/magicsock.go sendUDPStd sends no UDP with it",
		check:   (*diag).checkPolicyTCP443,
	},
	{
		ID: ReasonLocalUDPBlocked, Scope: ScopeBoth, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refKnownBug, refUDPWorks, refDirectPong},
		Wording: Wording{"UDP blocked here",
			"allow outbound UDP from this host, in its firewall and the network's: UDP 3478 to the DERP servers for STUN, and UDP to peers' ports (41641 by default)"},
		Needs: []Fact{{Field: "NetInfo.WorkingUDP | Log.Netcheck", Source: "localapi, netcheck or log", known: func(d *diag) bool {
			n := d.self.NAT
			return (n != nil && n.WorkingUDP != nil) || d.evidence().UDPBlockedLogged != ""
		}}},
		Reads:   []Fact{{Field: "Log.Endpoints", Source: SourceLog}},
		Follows: "net/netcheck/netcheck.go: WorkingUDP is set by a STUN reply (addNodeLatency), from UDP 3478 of the DERP map's servers; without one GetReport logs \"UDP is blocked, trying HTTPS\", again at every report while it lasts (magicsock re-STUNs every 20-26 s while paths are active); wgengine/magicsock/magicsock.go determineEndpoints adds a STUN endpoint only from a report's STUN replies (kept up to 5m10s, endpointTrackerLifetime)",
		check:   (*diag).checkLocalUDP,
	},
	{
		ID: ReasonSelfSTUNUnanswered, Scope: ScopeSelf, Role: RoleCause,
		Refutes: []Refuter{refKnownBug},
		Wording: Wording{"STUN got no answer; UDP itself works",
			"netcheck's STUN (UDP 3478 to the DERP servers) gets no reply while UDP to peers works ({proof}): a self-hosted DERP whose STUN port is closed (derper -stun, UDP 3478), or a firewall that drops 3478 only. Without STUN replies tailscaled learns no public endpoint from STUN (magicsock determineEndpoints; only a port mapping, a cloud's metadata address or a static endpoint can give one then), so peers behind a NAT cannot start a direct path to this node: open UDP 3478 to the DERP servers, or turn STUN on for your DERP servers"},
		Needs:   []Fact{{Field: "NetInfo.WorkingUDP | Log.Netcheck", Source: "localapi, netcheck or log"}, {Field: "Tailnet.UDP", Source: SourceLocalAPI}},
		Follows: "net/netcheck/netcheck.go addNodeLatency (WorkingUDP only from a STUN reply); wgengine/magicsock/endpoint.go handlePongConnLocked (a direct address only after a UDP pong); magicsock.go determineEndpoints (a STUN endpoint only from STUN replies; port mappings, cloud metadata addresses and static endpoints are the other public ones)",
		check:   (*diag).checkSTUNUnanswered,
	},
	{
		ID: ReasonDeviceNoPublicEndpoint, Role: RoleCause, Paths: relayedPaths,
		Irrefutable: "the board's own telemetry; the endpoints control lists are read beside it (its \"unreached\" wording)",
		Wording: Wording{"board advertised no endpoint",
			"firmware: return HTTP/2 receive-window credit on the control stream (stream and connection WINDOW_UPDATE as DATA is consumed); without it the long-poll map stream stops at 65,535 bytes and endpoint updates never arrive (reference: firmware tp_h2fc.h)"},
		Variants: map[string]Wording{
			"unreached": {Summary: "board's endpoints never reached control"},
			"unreached-window-open": {Summary: "board's endpoints never reached control",
				Fix: "the board says it sent its endpoints, yet control lists none: check that its endpoint update reaches control (its control connection, its map request); if the netmap is merely older than the board's report, the next map update clears this"},
		},
		Needs:      []Fact{{Field: "Device.Endpoints", Source: "device"}, {Field: "Device.H2Window", Source: "device"}},
		Reads:      []Fact{{Field: "WhoIs.Node.Endpoints", Source: SourceLocalAPI}},
		Follows:    "wgengine/magicsock/magicsock.go determineEndpoints: a client's endpoints reach peers only through control (its map request)",
		boardCheck: (*diag).boardEndpoints,
	},
	{
		ID: ReasonNoEndpoints, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"peer advertises no UDP endpoints",
			"make the peer advertise a UDP endpoint: allow UDP on it (it may be blocked or disabled), or, for an embedded client, make it learn and advertise its public (STUN) endpoint"},
		Needs:   []Fact{factEndpoints},
		Follows: "wgengine/magicsock/endpoint.go: DISCO pings go to the peer's advertised endpoints (endpointState); with none there is nothing to ping",
		check:   (*diag).checkNoEndpoints,
	},
	{
		ID: ReasonPeerUDPBlocked, Role: RoleCause, Paths: relayedPaths, PeerSide: true,
		Refutes: []Refuter{refKnownBug, refPeerUDP, refDirectPong},
		Wording: Wording{"UDP blocked on the peer's end",
			"the peer's own netcheck got no UDP reply: allow outbound UDP on the peer's host and network (UDP 3478 for STUN, and to peers' ports, 41641 by default)"},
		Needs:   []Fact{{Field: "Peer.NetInfo.WorkingUDP", Source: peerSources}},
		Follows: "net/netcheck/netcheck.go: the peer's WorkingUDP, as its NetInfo or the control API's clientSupports.udp reports it",
		check:   (*diag).checkPeerUDP,
	}, {
		ID: ReasonPrivateEndpointsOnly, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"peer has only private endpoints",
			"unless the peer is on your LAN or a network routed to yours, give it a reachable endpoint: enable UPnP/NAT-PMP/PCP on its router or forward UDP 41641 to it; if it is on your LAN or a routed site network, allow UDP between the two (guest-Wi-Fi or VLAN isolation, host firewalls)"},
		Needs:   []Fact{factEndpoints},
		Reads:   []Fact{factSelfEps},
		Follows: "wgengine/magicsock/magicsock.go determineEndpoints: local interface addresses are advertised beside STUN's; only STUN (or a port mapping) gives a public one",
		check:   (*diag).checkPrivateOnly,
	},

	{
		ID: ReasonNoCommonFamily, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refIPv6Works, refDirectPong},
		Wording: Wording{"no address family in common",
			"the peer can only be reached over IPv6 and IPv6 does not work here: enable IPv6 on this network (or give the peer a public IPv4 endpoint, e.g. a UDP port forward on its router)"},
		Needs: []Fact{factEndpoints, {Field: "NetInfo.WorkingIPv6", Source: SourceLocalAPI, known: func(d *diag) bool {
			n := d.self.NAT
			return n != nil && n.WorkingIPv6 != nil && (*n.WorkingIPv6 || !d.ipv6Untested())
		}}},
		Follows: "net/netcheck/netcheck.go: WorkingIPv6 from an IPv6 STUN reply",
		check:   (*diag).checkNoFamily,
	},
	{
		ID: ReasonDeviceProbeTableFull, Role: RoleCause, Paths: relayedPaths,
		Irrefutable: "the board's own telemetry of its DISCO probe table",
		Wording: Wording{"board's DISCO probe table is full",
			"firmware: reap stale DISCO probes (a TTL per slot) instead of freeing a slot only on a pong, so new pings to the peer's endpoints are tracked again (reference: firmware tp_probe.h)"},
		Needs:      []Fact{{Field: "Device.ProbeTable", Source: "device"}},
		Follows:    "wgengine/magicsock/endpoint.go: a ping whose pong cannot be matched to a sent ping (sentPing) validates no path",
		boardCheck: (*diag).boardProbeTable,
	},
	{
		ID: ReasonDeviceDiscoKeyStale, Role: RoleCause, Paths: relayedPaths,
		Irrefutable: "the board's own telemetry of DISCO packets it could not open",
		Wording: Wording{"board can't decrypt DISCO (stale disco key)",
			"firmware: take each peer's disco key from every netmap update, not only the first, so DISCO packets from a peer that restarted decrypt again"},
		Needs:      []Fact{{Field: "Device.DiscoDecrypt", Source: "device"}},
		Reads:      []Fact{factSelfEps},
		Follows:    "wgengine/magicsock/magicsock.go handleDiscoMessage: a DISCO packet that does not open is dropped silently, as normal after a restart (old keys in flight); only repeated recent failures from this end's address mean a stale key",
		boardCheck: (*diag).boardDiscoDecrypt,
	},
	{
		ID: ReasonSameNATLANBlocked, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"both behind one NAT, LAN path blocked",
			"both ends share one public address and sit on one LAN, so the NAT does not matter: magicsock pings their LAN addresses directly. Something on the LAN drops UDP between them: Wi-Fi client (AP) isolation, a guest network or VLAN between them, or a host firewall on either (allow UDP 41641, or tailscaled's --port, between {ours} and {theirs})"},
		Variants: map[string]Wording{"guest": {"the peer is this host's own guest, and UDP between them is blocked",
			"the peer is a VM or container of this host, at {theirs} on its bridge {bridge} (this host is {ours} there): magicsock pings that address directly and prefers it, so neither NAT matters. Something drops UDP between host and guest: the guest's own firewall, this host's rules for {bridge} (Docker's, libvirt's or a firewall zone's), or the hypervisor's isolation; allow UDP between {ours} and {theirs}, or give the guest host networking (`docker run --network host`) so it needs no path of its own"}},
		Needs:   []Fact{factSelfEps, factEndpoints, factInterfaces},
		Follows: "wgengine/magicsock/endpoint.go betterAddr (private addresses win) and sendDiscoPingsLocked (every advertised endpoint, LAN ones too, is pinged); one LAN only by this host's interface prefixes: two homes behind one carrier NAT often use the same default range",
		check:   (*diag).checkSameNATLAN,
	},
	{
		ID: ReasonSharedNATNoHairpin, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"behind one shared NAT that does not hairpin",
			"both ends leave through the same public address {shared} but from different LANs: a NAT above both (a carrier's CGNAT, a building's or a second router) must hairpin packets between its own users, and it does not. Fix it where you can: a port mapping on either end's router, a static UDP forward, IPv6, or a peer relay; or put the two on one LAN"},
		Needs:   []Fact{factSelfEps, factEndpoints},
		Reads:   []Fact{factInterfaces},
		Follows: "wgengine/magicsock/endpoint.go: the peer's STUN endpoint is the shared NAT's address, so a direct path needs that NAT to forward back inside (hairpinning); LAN endpoints on different LANs are not reachable",
		check:   (*diag).checkSharedNAT,
	},
	{
		ID: ReasonLocalInboundUDPBlocked, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"no NAT here, but inbound UDP is dropped",
			"this host has a public address on its own interface, so the peer's DISCO pings would reach tailscaled and be answered unless something drops them: open inbound UDP to tailscaled's port ({port}) on this host's firewall and on any cloud security group or provider firewall in front of it. If that firewall is stateful (it admits replies to what this host sent), a port mapping on the peer's NAT also works"},
		Variants: map[string]Wording{
			"drop":         {Fix: "this host has a public address on its own interface and its nftables ruleset drops inbound UDP to tailscaled's port ({port}) outright: open it ({why}); a port mapping on the peer's end cannot help while everything is dropped"},
			"stateful":     {Fix: "this host has a public address on its own interface and its nftables ruleset admits only replies ({why}): open inbound UDP to tailscaled's port ({port}); or give the peer's NAT a port mapping (UPnP, NAT-PMP, PCP, or a static forward), whose replies this firewall lets in"},
			"host-accepts": {Fix: "this host has a public address on its own interface and its own nftables ruleset accepts UDP to tailscaled's port ({port}), so the drop is in front of it: a cloud security group or provider firewall; open inbound {port} there. If that firewall is stateful, a port mapping on the peer's NAT also works"},
		},
		Needs: []Fact{factSelfNoNAT, factWorkingUDP},
		Reads: []Fact{factInterfaces, factFirewall, {Field: "Peer.NetInfo.WorkingUDP", Source: peerSources}},
		Follows: "wgengine/magicsock/magicsock.go handlePingLocked: a DISCO ping from any source is answered (Pong{Src: src}) and its source added as a candidate (endpoint.addCandidateEndpoint), so an end with no NAT goes direct with any peer unless inbound UDP is dropped. " +
			"No NAT is read from this host's interfaces, or tailscaled's endpoint types, or a public endpoint carrying tailscaled's own port beside an interface-only address; public endpoints alone prove nothing: determineEndpoints advertises interface addresses from net/netmon/state.go LocalAddresses, which skips every tsaddr.IsTailscaleIP address (all of 100.64.0.0/10, a carrier NAT's too), and TS_DEBUG_OMIT_LOCAL_ADDRS drops them all",
		check: (*diag).checkLocalInbound,
	},
	{
		ID: ReasonPeerInboundUDPBlocked, Role: RoleCause, Paths: relayedPaths, PeerSide: true,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"no NAT on the peer, but inbound UDP is dropped",
			"the peer has a public address on its own interface, so DISCO pings from here would reach it and be answered unless something drops them: open inbound UDP to its tailscaled port ({port}) on its host firewall and any cloud security group in front of it. If that firewall is stateful (it admits replies to what the peer sent), a port mapping here (UPnP, NAT-PMP, PCP, or a static forward) also works"},
		Needs: []Fact{factEndpoints, factPeerNoNAT, factPeerMap, factWorkingUDP},
		Follows: "wgengine/magicsock/magicsock.go handlePingLocked and endpoint.addCandidateEndpoint: the peer answers a ping from any source. " +
			"No NAT on the peer only from a public endpoint carrying its tailscaled's own port beside an interface-only address (a container bridge, a global IPv6 address), its NetInfo's MappingVariesByDestIP false, and a client that is not a phone, or from its own snapshot: determineEndpoints advertises interface addresses from net/netmon/state.go LocalAddresses, which skips every tsaddr.IsTailscaleIP address (all of 100.64.0.0/10: a phone on a carrier network advertises only its STUN address), and TS_DEBUG_OMIT_LOCAL_ADDRS drops them all",
		check: (*diag).checkPeerInbound,
	},
	{
		ID: ReasonLocalPortMapBlocked, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"port mapping here passes no traffic",
			"this host holds a port mapping (UPnP, NAT-PMP or PCP) and advertises it, yet the path is relayed: nothing comes through the mapping. The router's own firewall most likely drops what it forwards: allow inbound UDP to the mapped port on the router (its firewall or \"UPnP\" security settings), or replace the mapping with a static UDP forward to tailscaled's port"},
		Variants: map[string]Wording{"addr-unknown": {Fix: "this host holds a port mapping (UPnP, NAT-PMP or PCP) and advertises it, yet the path is relayed: nothing comes through the mapping. Which of our endpoints is the mapping is not known here (only tailscaled's log types them, \"(portmap)\"): if its address is private or in 100.64.0.0/10, the router that mapped sits behind another NAT (put the first router in bridge mode, or forward the port on the outer one too); if it is public, the router's own firewall drops what it forwards (allow inbound UDP to the mapped port there, or use a static UDP forward to tailscaled's port)"}},
		Needs:    []Fact{fPortMap, factWorkingUDP},
		Reads:    []Fact{factMapped},
		Follows:  "wgengine/magicsock/magicsock.go determineEndpoints: with a mapping (portMapper.GetCachedMappingOrStartCreatingOne) its external address is advertised unchecked (EndpointPortmapped) and setNetInfoHavePortMap sets HavePortMap; net/portmapper/upnp.go selectBestService falls back to a device whose external address is private (\"ext-private\"), so the mapped address may be behind another NAT",
		check:    (*diag).checkLocalPortMap,
	},
	{
		ID: ReasonLocalDoubleNAT, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"port mapping here is behind a second NAT",
			"this host's port mapping was made on a router whose own external address is {mapped}: it sits behind another NAT, so nothing outside can reach the mapping, and this end needs one. With two home routers, put the first in bridge (modem) mode, or on the outer router forward UDP {mappedport} to {mapped} (the inner router's mapping), or forward tailscaled's port ({port}) statically on both routers; behind a carrier's NAT (100.64.0.0/10) no home mapping reaches through: ask the ISP for a public IPv4 address, use IPv6, or a peer relay"},
		Needs:   []Fact{fPortMap, factMapped, factWorkingUDP, fMapping},
		Reads:   []Fact{factPeerMap, factPeerPMap},
		Follows: "net/portmapper/upnp.go selectBestService (\"ext-private\": a device whose external address is private) and getUPnPPortMapping (the mapped external address is taken as the device reports it); wgengine/magicsock/magicsock.go determineEndpoints advertises it (EndpointPortmapped) unchecked, and net/netmon LocalAddresses never advertises a 100.64.0.0/10 interface address, so a 100.64.0.0/10 endpoint is such a mapping",
		check:   (*diag).checkDoubleNAT,
	},
	{
		ID: ReasonPeerPortMapBlocked, Role: RoleCause, Paths: relayedPaths, PeerSide: true,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"the peer's port mapping passes no traffic",
			"the peer holds a port mapping (UPnP, NAT-PMP or PCP) and advertises it, yet the path is relayed: nothing comes through it. The peer's router most likely drops what it forwards: allow inbound UDP to the mapped port on that router, or use a static UDP forward to the peer's tailscaled port instead"},
		Variants: map[string]Wording{
			"addr-unknown": {Fix: "the peer holds a port mapping (UPnP, NAT-PMP or PCP) and advertises it, yet the path is relayed: nothing comes through it. Which of its endpoints is the mapping is not known here: if its address is private, the peer's router sits behind another NAT (bridge mode on the outer router, or a forward there too); if it is public, that router's own firewall drops what it forwards (allow inbound UDP to the mapped port, or use a static UDP forward to the peer's tailscaled port)"},
			"behind-nat":   {Fix: "the peer holds a port mapping, but it advertises an endpoint in 100.64.0.0/10 ({mapped}), which only a mapping made on a router behind a carrier's NAT gives: nothing outside reaches it. The peer needs a public IPv4 address (ask its ISP), IPv6, or a peer relay"},
		},
		Needs:   []Fact{factPeerPMap},
		Reads:   []Fact{factEndpoints},
		Follows: "wgengine/magicsock/magicsock.go determineEndpoints: a mapped endpoint is advertised whenever HavePortMap is set, unchecked; net/portmapper/upnp.go selectBestService may map on a device with a private external address (\"ext-private\")",
		check:   (*diag).checkPeerPortMap,
	},
	{
		ID: ReasonBothHardNAT, Role: RoleCause, Paths: relayedPaths, PeerSide: true,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"hard NAT on both ends{cli}",
			natFix + "either router, or add a static UDP port-forward (e.g. 41641 with `tailscaled --port=41641`) on one side; a granted peer relay also avoids DERP"},
		Needs:   []Fact{fMapping, fPortMap, factPeerMap, factPeerPMap},
		Follows: "net/netcheck/netcheck.go addNodeLatency: MappingVariesByDestIP when two STUN servers see different ip:ports; a hard NAT on both ends leaves no candidate either end can reach",
		check:   natRule(ReasonBothHardNAT),
	},
	{
		ID: ReasonHardAndFilteringNAT, Role: RoleCause, Paths: relayedPaths, PeerSide: true,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"hard NAT meets a filtering NAT, no port mapping{cli}",
			"the peer's router needs a port mapping: " + natFix + "it, or forward a UDP port to the peer (`tailscaled --port=41641` and a static forward of 41641); this end's hard NAT (a mobile carrier's, say) cannot be changed from here"},
		Variants: map[string]Wording{
			"here": {Fix: "this end's router needs a port mapping: " + natFix + "it here, or forward a UDP port to this host (`tailscaled --port=41641` and a static forward of 41641); the peer's hard NAT (a mobile carrier's, say) may not be changeable"},
			"here-pod": {Summary: "hard NAT meets the filtering NAT of this pod",
				Fix: "this node runs in {pod}: its UDP leaves through the cluster's NAT of pod traffic (the CNI's masquerade), which drops the peer's unsolicited pings, and there is no router to forward a port on; the peer's hard NAT (a mobile carrier's, say) may not be changeable. Give the pod host networking (`hostNetwork: true`), or a fixed UDP port reachable from outside: `tailscaled --port=41641` (containerboot's TS_TAILSCALED_EXTRA_ARGS) with a NodePort or hostPort for it, which the Tailscale Kubernetes operator sets up as a ProxyClass's staticEndpoints"},
			"here-either": {Summary: "hard NAT meets a filtering end here, no port mapping",
				Fix: "this end drops the peer's unsolicited pings, and whether a NAT or a firewall does it is not known here: its public address carries the same port as its private ones, as on a NAT that kept the port, and as on a host with a public interface beside a private one (a cloud VM with a VPC interface). Behind a NAT: " + natFix + "the router, or forward {port} to this host. With a public address on this host: open inbound {port} in its firewall and any cloud security group"},
		},
		Needs:   []Fact{fMapping, fPortMap, factPeerMap, factPeerPMap},
		Reads:   []Fact{factSelfEps, factEndpoints, factInterfaces},
		Follows: "wgengine/magicsock/magicsock.go handlePingLocked: the easy end's pings reach a hard NAT's per-destination port only by chance, and its own NAT drops the hard end's unsolicited pings",
		check:   natRule(ReasonHardAndFilteringNAT),
	},
	{
		ID: ReasonLocalHardNAT, Role: RoleCause, Paths: relayedPaths,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"hard NAT here{cli}, no port mapping",
			natFix + "this network's router, or add a static UDP port-forward (e.g. 41641 with `tailscaled --port=41641`); several nodes behind one firewall make NAT hard"},
		Variants: map[string]Wording{
			"pod": {"hard NAT here{cli}: the cluster's NAT in front of this pod",
				"this node runs in {pod}: its UDP leaves through the cluster's NAT of pod traffic (the CNI's masquerade), not a router you can forward a port on, and that NAT maps per destination. Give the pod host networking (`hostNetwork: true`), so tailscaled's UDP leaves from the node's own address, or a fixed UDP port reachable from outside: `tailscaled --port=41641` (containerboot's TS_TAILSCALED_EXTRA_ARGS) with a NodePort or hostPort for it, which the Tailscale Kubernetes operator sets up as a ProxyClass's staticEndpoints"},
			"answered": {Fix: "this network's router answers {services} but gave tailscaled no mapping (its portmapper asked: net/portmapper), so enabling it is not the fix: its mapping was refused (some routers map only for some hosts or ports, or their table is full); add a static UDP port-forward (e.g. 41641 with `tailscaled --port=41641`) instead; several nodes behind one firewall make NAT hard"},
			"two-halves": {Summary: "hard NAT here{cli}, no port mapping; the peer's end unknown",
				Fix: "the peer's end is not known here, and three ends look alike from this one: behind an easy NAT, behind a stateful firewall, or dropping all inbound UDP. Most likely first: a port mapping here fixes the first two (" + natFix + "this network's router, or a static UDP forward, e.g. 41641 with `tailscaled --port=41641`); opening inbound UDP to the peer's tailscaled port on its firewall fixes the last two. The peer's own netcheck, or the control API, would tell which"},
		},
		Needs:   []Fact{fMapping, fPortMap},
		Follows: "net/netcheck/netcheck.go addNodeLatency (MappingVariesByDestIP, as tailscaled's own socket sees it: the CLI's `tailscale netcheck` binds a port of its own); wgengine/magicsock/magicsock.go determineEndpoints adds the STUN address with the local port for a hard NAT with a fixed --port (EndpointSTUN4LocalPort)",
		check:   natRule(ReasonLocalHardNAT),
	},
	{
		ID: ReasonPeerHardNAT, Role: RoleCause, Paths: relayedPaths, PeerSide: true,
		Refutes: []Refuter{refDirectPong},
		Wording: Wording{"hard NAT on the peer's end, no port mapping",
			natFix + "the peer's router, or forward a UDP port to the peer (`tailscaled --port=41641` on it); several nodes behind one firewall make NAT hard, and `randomizeClientPort` helps some firewalls"},
		Variants: map[string]Wording{
			"mobile": {Summary: "hard NAT on the peer's end (its mobile carrier's)",
				Fix: "the peer is a phone on a mobile network ({os}, link type mobile): its hard NAT is the carrier's, with no router to map and no command line to set. Only this end can help: give this node a reachable UDP port (a static forward of tailscaled's port, or UPnP, NAT-PMP or PCP on this router), which the peer's pings then reach from any port and which answers to their source (wgengine/magicsock handlePingLocked); or a peer relay; or Wi-Fi on the phone"},
			"answered": {Fix: "the peer's router answers {services} but the peer holds no mapping: its mapping was refused (some routers map only for some hosts or ports, or their table is full), so enabling it is not the fix: forward a UDP port to the peer instead (`tailscaled --port=41641` on it and a static forward of 41641)"},
			"two-halves": {Summary: "hard NAT on the peer's end, no port mapping; this end's firewall unknown",
				Fix: "this end is not known well enough to tell three cases apart: an easy NAT here, a stateful firewall here, or one dropping all inbound UDP. Most likely first: a port mapping on the peer's router fixes the first two (" + natFix + "it, or forward a UDP port to the peer: `tailscaled --port=41641` on it); opening inbound UDP to tailscaled's port ({port}) on this host's firewall fixes the last two"},
		},
		Needs:   []Fact{factPeerMap, factPeerPMap, fMapping, fPortMap},
		Follows: "net/netcheck/netcheck.go addNodeLatency, as the peer reports it (NetInfo, the control API's clientConnectivity)",
		check:   natRule(ReasonPeerHardNAT),
	},
	{
		ID: ReasonDiscoUnanswered, Role: RoleCause, Paths: relayedPaths,
		Irrefutable: "its evidence is the DISCO run itself, which its check reads whole (a direct pong in it rules it out)",
		Wording: Wording{"DISCO pings never answered directly",
			"something drops UDP between the two ends: the peer's inbound firewall (UDP 41641 or its --port), this host's outbound firewall for ports other than 3478, or a NAT on either side that filters unsolicited packets; allow UDP both ways and compare `tailscale netcheck` on both ends"},
		Variants: map[string]Wording{"endpoints-unknown": {Fix: "the peer's endpoints are unknown here (`tailscale status --json` or `tailscale debug netmap` show them): if it advertises none, nothing can answer directly (`no-endpoints`); otherwise something drops UDP between the two ends: the peer's inbound firewall (UDP 41641 or its --port), this host's outbound firewall for ports other than 3478, or a NAT on either side that filters unsolicited packets; allow UDP both ways and compare `tailscale netcheck` on both ends"}},
		Needs:    []Fact{factPingRun},
		Reads:    []Fact{factEndpoints},
		Follows:  "wgengine/magicsock/endpoint.go discoPing: a CLI ping goes to DERP and every candidate endpoint; a pong names the path it came over (PingResult.Endpoint or DERPRegionID)",
		check:    (*diag).checkPingRun,
	},
	{
		ID: ReasonLostDirect, Role: RoleCause, Paths: relayedPaths,
		Irrefutable: "an observation of this path across snapshots",
		Wording: Wording{"was direct, fell back to relay",
			"look at what changed at that time on either side (network switch, new endpoints, firewall, NAT mapping expiry); a DISCO ping re-tries the direct path"},
		Variants: map[string]Wording{"logged": {Fix: "the daemon logged {what} at {when}; look at what changed at that time on either side (network switch, new endpoints, firewall, NAT mapping expiry); a DISCO ping re-tries the direct path"}},
		Needs:    []Fact{{Field: "Path.LastDirect", Source: "tailpath"}},
		Reads:    []Fact{{Field: "EndpointChanges", Source: SourceLocalAPI}},
		Follows:  "wgengine/magicsock/endpoint.go: deleteEndpointLocked and handlePongConnLocked record why the best address changed (debug peer-endpoint-changes)",
		check:    (*diag).checkLostDirect,
	},

	// Beside the reason.
	{
		ID: ReasonFarHomeDERP, Role: RoleAlso, Paths: derpPaths,
		Irrefutable: "a comparison of latencies; the peer's own latencies, when known, are read by its check",
		Wording: Wording{"relay region is far",
			"the relay {region} is {rl} away from here while {best} is {bl}: if the region is far from the peer too (its netcheck, or the control API's latencies), its home DERP choice may be wrong; if it is near the peer, the distance is the two ends' own. Tailscale's home choice weighs the DERP map's RegionScore and keeps the old home unless another is clearly faster, so a home that is not the nearest is not by itself a fault"},
		Variants: map[string]Wording{"own-home": {"this node's home region is far",
			"this node's home {region} is {rl} away while {best} is {bl}: the peer's packets to this node come through this node's home region, {extra} slower each way. Tailscale moves a home only when another region beats it by 10 ms and a third, each judged at its best over the last 5 minutes of reports (net/netcheck addReportHistoryAndSetPreferredDERP), so a home that got this far moves within about 5 minutes; if it stays, tailscaled measures otherwise than tailpath (compare `tailscale netcheck`), or it is pinned (`tailscale debug force-prefer-derp`)"}},
		Needs:      []Fact{{Field: "NetInfo.DERPLatency", Source: "localapi or netcheck"}},
		Reads:      []Fact{{Field: "Peer.NetInfo.DERPLatency", Source: peerSources}, {Field: "Self.HomeDERP", Source: SourceLocalAPI}},
		Follows:    "net/netcheck/netcheck.go addReportHistoryAndSetPreferredDERP: latencies scaled by HomeParams.RegionScore, and stickiness (keep the old home unless the new one is 10 ms and a third faster); wgengine/magicsock/endpoint.go send writes to the peer's home region (derpAddr), the peer to ours",
		check:      (*diag).checkFarDERP,
		boardCheck: (*diag).boardHomeDERP,
	},
	{
		ID: ReasonPeerFarHomeDERP, Role: RoleAlso, Paths: derpPaths, PeerSide: true,
		Irrefutable: "a comparison of the peer's own latencies",
		Wording:     Wording{Summary: "the peer's home region is far from it"},
		Needs:       []Fact{{Field: "Peer.NetInfo.DERPLatency", Source: peerSources}},
		Follows:     "net/netcheck/netcheck.go addReportHistoryAndSetPreferredDERP (RegionScore, stickiness)",
		check:       (*diag).checkPeerHomeDERP,
	},
	{
		ID: ReasonPeerOldClient, Role: RoleAlso, Paths: derpPaths, PeerSide: true,
		Irrefutable: "the peer's own version",
		Wording:     Wording{Summary: "the peer's client predates peer relays"},
		Needs:       []Fact{{Field: "Peer.Hostinfo.IPNVersion", Source: peerSources}},
		Follows:     "wgengine/magicsock/magicsock.go capVerIsRelayCapable (version >= 121; tailcfg.go: capability 121, 2025-07-19, \"Client understands peer relay endpoint alloc\"; Tailscale 1.86)",
		check:       (*diag).checkPeerClient,
	},
	{
		ID: ReasonDirectInTunnel, Role: RoleAlso, Paths: []PathKind{PathDirect},
		Irrefutable: "a warning beside a direct path, from the routes and this host's interfaces",
		Wording: Wording{"maybe inside another tunnel",
			"the direct address {addr} is private, on none of this host's networks, and inside {route}, which {router} advertises; on {os} tailscaled's own UDP sockets are not kept out of the tunnel (net/netns does nothing to them there), so with routes accepted the UDP to {addr} may follow that route into tailscale0: WireGuard inside WireGuard. Small pings look fine, bulk transfers stall on the MTU. Stop accepting that route on this node (`tailscale set --accept-routes=false`), or reach the peer's LAN some other way than through the subnet router"},
		Variants: map[string]Wording{"no-bypass": {Fix: "the direct address {addr} is private, on none of this host's networks, and inside {route}, which {router} advertises; on Linux tailscaled marks its own UDP to skip its route table 52, but `ip rule` shows no rule sending marked packets to the main table first (priority 5210, fwmark 0x80000/0xff0000, wgengine/router/osrouter/router_linux.go baseIPRules), so the UDP to {addr} follows that route into tailscale0: WireGuard inside WireGuard. Small pings look fine, bulk transfers stall on the MTU. Restore tailscaled's rules (restart it; look for what flushed them: another VPN, a policy-routing script), or stop accepting that route on this node (`tailscale set --accept-routes=false`)"}},
		Needs:    []Fact{factCurAddr, factSelfOS, {Field: "Status.Peer.PrimaryRoutes | Host.Routes", Source: "localapi or host"}},
		Reads:    []Fact{factInterfaces, {Field: "Host.BypassRule", Source: SourceHost}, {Field: "Prefs.RouteAll", Source: "prefs"}},
		Follows:  "net/netns: tailscaled's own sockets bypass the tunnel on Linux (netns_linux.go controlC sets the bypass mark; wgengine/router/osrouter/router_linux.go baseIPRules send marked packets to the main table, never table 52 with the subnet routes), macOS and iOS (netns_darwin.go binds to the default-route interface), Windows (netns_windows.go) and Android; netns_default.go does nothing on FreeBSD and the others, and OpenBSD's bypass routing table is set only with an exit node (netns_openbsd.go), so only there can a private candidate (endpoint.go betterAddr prefers it) travel through another peer's subnet route",
		check:    (*diag).checkDirectInTunnel,
	},
	{
		ID: ReasonOneWayTraffic, Role: RoleAlso, Paths: []PathKind{PathDirect, PathDERP, PathPeerRelay},
		Irrefutable: "a ratio of this node's own WireGuard counters, worded as what it is (one-way traffic, or a path that carries the peer little), never more",
		Wording: Wording{"almost nothing comes back (tx {tx}, rx {rx})",
			"{ratio} bytes are sent for each one received. Unless the traffic is one-way by nature (a UDP stream, logs, an upload whose receiver acknowledges sparsely), the peer gets little of what is sent or its answers are lost: on a direct path, large packets lost where small ones (handshakes, keepalives) pass, a path MTU below the 1340 bytes WireGuard needs over IPv4 (1360 over IPv6) for tailscaled's 1280, as inside another VPN or tunnel (`tailpath tune` probes it); compare the peer's own `tailscale status` line for this node"},
		Needs:   []Fact{{Field: "Status.TxBytes | Status.RxBytes", Source: SourceLocalAPI}},
		Follows: "wireguard-go device/peer.go counts every packet sent (handshakes and keepalives included) in tx bytes, and device/receive.go only authenticated ones in rx bytes; net/tstun's MTU is 1280 by default (tstun.DefaultTUNMTU), and WireGuard adds 32 bytes plus UDP and IP",
		check:   (*diag).checkOneWay,
	},
	{
		ID: ReasonPeerICMPBlocked, Role: RoleAlso, Paths: []PathKind{PathDirect, PathDERP, PathPeerRelay},
		Irrefutable: "its check needs both the unanswered ICMP ping and an answer from the peer's tailscaled, which together are the fact",
		Wording: Wording{"ICMP ping unanswered: the peer's host firewall, not the path",
			"{answer}, so the path works: the ICMP echo crossed it and the peer's OS dropped it. Allow ICMP echo in on the peer's host firewall (on Windows, Defender Firewall's \"File and Printer Sharing (Echo Request - ICMPv4-In)\" rule, off by default), or test the tunnel with `tailscale ping --tsmp`, which tailscaled answers itself; an ICMP echo also needs the tailnet policy to let this node reach some port of the peer"},
		Needs:   []Fact{{Field: "Ping.ICMP", Source: "tailscale ping"}},
		Reads:   []Fact{factPingRun, factCurAddr},
		Follows: "cmd/tailscale/cli/ping.go --icmp (tailcfg.PingICMP: an ICMP echo through WireGuard, answered by the peer's OS); wgengine/magicsock handlePingLocked answers DISCO pings in tailscaled; wgengine/filter/filter.go runIn4 admits an ICMP echo when the policy allows the source any port of the destination (matchIPsOnly)",
		check:   (*diag).checkICMPBlocked,
	},
	{
		ID: ReasonUnexplained, Role: RoleFallback, Paths: derpPaths,
		Irrefutable: "the fallback: it claims nothing",
		Wording: Wording{"relayed; no checked cause holds",
			"run a DISCO ping until direct (`tailscale ping {peer}`, or `tailpath status --probe`); if it never goes direct, look for a firewall dropping UDP on either end"},
		Variants: map[string]Wording{
			"ipv6": {"relayed although both ends have IPv6",
				"IPv4 NAT does not explain it: both ends have global IPv6 endpoints, which no NAT maps; check IPv6 reachability: inbound UDP over IPv6 on both hosts' and routers' firewalls, and `tailscale netcheck` (IPv6: yes) on both ends"},
			"far": {"relayed; relay {region} is far ({rl} vs {bl})",
				"run a DISCO ping until direct (`tailscale ping {peer}`, or `tailpath status --probe`); if it never goes direct, look for a firewall dropping UDP on either end; meanwhile the relay {region} is {rl} away from here while {best} is {bl}: if the region is far from the peer too, its home DERP choice may be wrong"},
			"refuted": {Summary: "relayed; {refuted} refuted: {why}"},
			"one-nat": {"relayed; both behind one NAT, one LAN or two unknown",
				"both ends leave through one public address ({shared}) with LAN addresses in one range ({ours} here, {theirs} there), which is one LAN, or two LANs on the same default range behind a shared NAT (a carrier's, a building's); this host's interfaces would tell. On one LAN, something drops UDP between them: Wi-Fi client (AP) isolation, a guest network or VLAN, or a host firewall (allow UDP 41641, or tailscaled's --port, between {ours} and {theirs}). On two LANs, the shared NAT does not hairpin: a port mapping on either end's router, a static UDP forward, IPv6, or a peer relay"},
		},
		Follows: "nothing in wgengine/magicsock explains the relayed path from the evidence read; the checks list what was looked at",
	},

	// This node itself, after the causes that touch peers' paths.
	{
		ID: ReasonSelfControlBreaking, Scope: ScopeSelf, Role: RoleCause,
		Irrefutable: "its check reads the netmaps received between the breaks",
		Wording: Wording{"the control connection keeps breaking mid-stream: check the WAN MTU or MSS clamping",
			"large TLS records are cut or corrupted while small requests work: set the WAN MTU to what the path carries (PPPoE 1492, a tunnel less) or clamp TCP MSS to the path MTU on the router; a middlebox rewriting TLS does the same"},
		Needs:   []Fact{{Field: "Log.ControlBreaks", Source: SourceLog}},
		Reads:   []Fact{{Field: "Log.TLSRecordErrors", Source: SourceLog}, {Field: "Log.NetmapsReceived", Source: SourceLog}},
		Follows: "control/controlclient/auto.go mapRoutine: a PollNetMap that ends in error is reported (\"PollNetMap: %v\", and ipn/ipnlocal/local.go setControlClientStatusLocked logs \"Received error: %v\") and polled again with back-off, and UpdateFullNetmap logs \"mapRoutine: netmap received\" when a whole (large) map response arrived: only breaks in one run, with no netmap between them and each within ControlBreakWindow (10 minutes) of the one before, say large responses keep getting cut",
		check:   (*diag).checkControlBreaking,
	},
	{
		ID: ReasonSelfNetcheckFlaps, Scope: ScopeSelf, Role: RoleCause,
		Irrefutable: "reports of one socket that disagree are the fact itself",
		Wording: Wording{"netcheck reports disagree over time: the network here changes under tailscaled",
			"find what changes between the reports (Wi-Fi roaming, a second WAN or failover, a router that restarts, a VPN); the facts that flap are unknown until they settle"},
		Variants: map[string]Wording{
			"ipv6": {Fix: "the IPv4 mapping flaps (MappingVariesByDestIP changes between reports), so IPv4 is neither an easy nor a hard NAT to count on; IPv6 works here and has no mapping: give the peers IPv6 too and their paths go direct over it; meanwhile find what changes the IPv4 mapping (a second WAN or failover, a router that restarts, a CGNAT that changes its pool)"},
		},
		Needs:   []Fact{{Field: "Netcheck.Reports", Source: "netcheck"}},
		Follows: "net/netcheck/netcheck.go Client.GetReport measures UDP, IPv6 and MappingVariesByDestIP afresh every run (addNodeLatency), and wgengine/magicsock/magicsock.go updateNetInfo sends each report's facts to control as NetInfo unless tailcfg.NetInfo.BasicallyEqual to the last: reports of one tailscaled that disagree are the network changing between runs",
		check:   (*diag).checkNetcheckFlaps,
	},
	{
		ID: ReasonSelfUPnPNotGateway, Scope: ScopeSelf, Role: RoleAlso,
		Irrefutable: "its check reads whether a port mapping is held",
		Wording: Wording{"UPnP answered from a device that is not the gateway, and no port mapping is held",
			"tailscaled asked the gateway itself instead (it assumes the gateway's address floats) and holds no mapping: enable UPnP, NAT-PMP or PCP on the gateway; the device that answered (a mesh node, a second router on the LAN) cannot map ports on it"},
		Needs:   []Fact{{Field: "Log.UPnP", Source: SourceLog}, fPortMap},
		Reads:   []Fact{{Field: "Log.Endpoints", Source: SourceLog}},
		Follows: "net/portmapper/portmapper.go Client.Probe logs \"UPnP discovery response from %v, but gateway IP is %v\" and keeps the response; net/portmapper/upnp.go getUPnPRootDevice re-points its root URL at the gateway, \"assumed to be floating\" (tailscale#5502): the line is no fault, only beside no mapping held",
		check:   (*diag).checkUPnPNotGateway,
	},
	{
		ID: ReasonSelfNetworkChanges, Scope: ScopeSelf, Role: RoleCause,
		Irrefutable: "tailscaled's own log of its rebinds",
		Wording: Wording{"the network here changed often: every change rebinds and re-probes every path",
			"look at what keeps changing (Wi-Fi roaming, an interface that flaps, a VPN or Docker creating interfaces); paths relay until direct is found again after each change"},
		Needs:   []Fact{{Field: "Log.LinkChanges", Source: SourceLog}},
		Follows: "wgengine/userspace.go linkChange (\"LinkChange: major, rebinding\"); magicsock Rebind",
		check:   (*diag).checkNetworkChanges,
	},
	{
		ID: ReasonTailnetRangeCollision, Scope: ScopeSelf, Role: RoleCause,
		Irrefutable: "this host's own interfaces (or tailscaled's own log of them)",
		Wording: Wording{"100.64.0.0/10 on another interface",
			"interface {iface} has {addr}, inside 100.64.0.0/10, the range tailnet addresses come from; tailscaled never advertises such an address as an endpoint (net/netmon LocalAddresses). {how}"},
		Needs: []Fact{{Field: "Host.Interfaces | Log.Interfaces", Source: "host or log", known: func(d *diag) bool {
			return d.ourHost() != nil || len(d.evidence().Interfaces) > 0
		}}},
		Reads:   []Fact{factSelfOS},
		Follows: "net/netmon/state.go LocalAddresses skips tsaddr.IsTailscaleIP addresses; util/linuxfw buildExternalCGNATRules (Linux): a DROP of 100.64.0.0/10 sources arriving on any interface but tailscale0 (ChromeOS's range excepted), which the node attribute disable-linux-cgnat-drop-rule (tailcfg.NodeAttrDisableLinuxCGNATDropRule, capability 136) turns into RETURN; ipn/ipnlocal/local.go shouldUseOneCGNATRoute: macOS and Android route the whole range into the tunnel unless netmon.HasCGNATInterface, then per-peer routes",
		check:   (*diag).checkRangeCollision,
	},
}
