package probes

import (
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Far-home-DERP threshold: the region relaying to the peer (the region in
// use, PeerStatus.Relay) is "far" when our measured latency to it is at
// least FarDERPFactor times, and at least FarDERPMargin more than, our best
// region's latency. Both must hold so that 2 ms vs 5 ms is not flagged.
const (
	FarDERPFactor = 2
	FarDERPMargin = 30 * time.Millisecond
)

// Freshness limits: evidence older than these is shown with its age but no
// longer counts towards a verdict.
const (
	// PingRunMaxAge is how long a finished DISCO "ping until direct" run
	// counts as evidence: a path can change in minutes.
	PingRunMaxAge = 5 * time.Minute
	// DERPLatencyMaxAge is how old NetInfo's DERP latencies may be (by
	// what tailpath saw, Self.DERPLatencySince) and still judge
	// far-home-derp.
	DERPLatencyMaxAge = 30 * time.Minute
	// HandshakeGrace is how long a peer may be Active with no recent
	// WireGuard handshake (or with one in progress) before no-handshake
	// holds. WireGuard retries a handshake every 5 s (REKEY_TIMEOUT) and
	// gives up after 90 s; a few tries must have failed.
	HandshakeGrace = 15 * time.Second
)

// privatePrefixes are the ranges netip's IsPrivate/IsLoopback/IsLinkLocal*
// do not cover but that a peer on another network cannot reach either.
// 198.18.0.0/15 (benchmarking) is not among them: Tailscale treats it as
// any other address.
var privatePrefixes = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"), // CGNAT (RFC 6598), also Tailscale IPs
	netip.MustParsePrefix("fd7a:115c:a1e0::/48"),
}

// IsPrivateAddr reports whether a is an address a peer on another network
// cannot send to: RFC 1918 (which includes container bridges such as
// Docker's 172.17.0.0/16 and Podman's 10.88.0.0/16), CGNAT 100.64.0.0/10,
// link-local, ULA fc00::/7, loopback, unspecified or multicast.
// Documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
// 2001:db8::/32) count as public so fixtures can use them.
func IsPrivateAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() ||
		a.IsUnspecified() || a.IsLinkLocalMulticast() || a.IsMulticast() {
		return true
	}
	for _, p := range privatePrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// IsBridgeAddr reports whether a is the host's own address on a container
// or VM bridge as the usual tools create them: Docker's default bridge and
// its default pools (172.17.0.1 to 172.31.0.1), Podman's 10.88.0.1 and
// libvirt's 192.168.122.1. Tailscale advertises every interface address
// (magicsock determineEndpoints), so a host with a public address and
// Docker advertises 172.17.0.1 too: that is no LAN and no sign of a NAT.
// From addresses alone this is a guess; HostFacts' interface names decide
// for this host.
func IsBridgeAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.Is4() {
		return false
	}
	b := a.As4()
	switch {
	case b[0] == 172 && b[1] >= 17 && b[1] <= 31 && b[2] == 0 && b[3] == 1:
		return true
	case b == [4]byte{10, 88, 0, 1}, b == [4]byte{192, 168, 122, 1}:
		return true
	}
	return false
}

// diagnoseIn explains p's current path as of now (the snapshot's time),
// for Judge (and SettleOf). It is pure: evidence in, verdict out, no I/O. self
// carries our NetInfo (self.NAT may be nil: then local checks read
// "unknown" and never fail) and what tailpath read of this host
// (self.Host, may be nil); regions maps DERP region ids to codes (may be
// nil). now dates the evidence: ping runs, handshakes and DERP latencies
// older than their limits are shown but do not count.
//
// It walks the reason table (Rules) in its order: the path states
// (key-expired, direct, peer-relay, offline, idle), then for a relayed
// path every cause that judges its kind, the first that holds being the
// Reason and the others going to Also, then the RoleAlso reasons. A rule
// whose needed facts (Rule.Needs) are unknown records an unknown check
// and does not hold, whatever its check found (diag.judge).
// With no cause a DERP path is unexplained and Checks list everything
// looked at; a peer-relay path stays peer-relay with the causes in Also.
// Peer-side facts older than PeerSideMaxAge are shown but do not count.
// docs/diagnosis.md gives each rule with the Tailscale code it rests on.
//
// tn is the whole gather's facts (Judge's Tailnet; nil: none, p judged as
// if the tailnet held no other peer). self and p are read where they are
// (p copied first when a check must write it); the checks come from arena
// (nil: each verdict's own) and what it reads of this node alone from
// once (Judge's, nil: worked out for this peer); settle says whether to
// work out the verdict's Settle (JudgePoll leaves it nil).
func diagnoseIn(self *Self, p *Peer, regions map[int]Region, now time.Time, tn *Tailnet, arena *checkArena, once *selfOnce, settle bool) Verdict {
	if !p.EndpointsKnown && p.PeerSide != nil && len(p.PeerSide.Endpoints) > 0 {
		// checkEndpoints takes the endpoints the peer's side lists into
		// the peer it judges: judge a copy, so that judging the gather
		// again (a poll, a relink) reads them from the same source as the
		// first time and not as WhoIs's.
		c := *p
		p = &c
	}
	d := newDiagOf(self, p, regions, now)
	d.tn = tn
	d.arena, d.once = arena, once
	v := d.run()
	if settle {
		v.Settle = d.settle(&v)
	}
	d.free()
	markProse(v.Checks, self.Prose)
	return v
}

// diags recycles diag values: the table's checks are called through
// function values, so a diag always escapes to the heap, and with its
// copies of Self and Peer it is the biggest allocation of a verdict.
var diags = sync.Pool{New: func() any { return new(diag) }}

func newDiag(self Self, p Peer, regions map[int]Region, now time.Time) *diag {
	d := diags.Get().(*diag) // zero but for own: New, or free
	if d.own == nil {
		d.own = new(diagOwn)
	}
	d.own.self, d.own.p = self, p
	d.self, d.p = &d.own.self, &d.own.p
	d.regions, d.now = regions, now
	return d
}

// diagOwn is a diag's own copies of Self and Peer.
type diagOwn struct {
	self Self
	p    Peer
}

// mutP is d.p to write to: d's own copy, made on the first write, so
// what Judge passed in is never written.
func (d *diag) mutP() *Peer {
	if d.own == nil {
		d.own = new(diagOwn)
	}
	if d.p != &d.own.p {
		d.own.p = *d.p
		d.p = &d.own.p
	}
	return d.p
}

// newDiagOf is newDiag reading self where it is (Judge: the gather's own,
// which no check writes) and copying p once: a 10,000-peer gather copies
// neither Self nor Peer twice per peer (BenchmarkJudge10k).
func newDiagOf(self *Self, p *Peer, regions map[int]Region, now time.Time) *diag {
	d := diags.Get().(*diag)
	d.self, d.p = self, p
	d.regions, d.now = regions, now
	return d
}

// checkArena hands out the slices of many verdicts from a few large
// blocks (Judge: one gather's verdicts), where each verdict's own would
// be an allocation of its own: its checks (a third of the allocations of
// judging 10,000 peers) and what would settle it (settle: candidates,
// deciders and their facts). A nil arena, or one serving a single
// verdict outside a gather's walk (SettleOf, this node's own), allocates
// each slice on its own.
type checkArena struct {
	// alone: this arena serves one verdict judged with no arena
	// (diag.deciders), so every slice is its own allocation, sized to fit.
	alone    bool
	checks   []Check
	facts    []SettleFact
	reasons  []ReasonID
	cands    []Candidate
	deciders []Decider
	settles  []Settle
}

// arenaBlock is the most elements an arena's block holds: blocks start
// small (a gather of a few peers takes a few hundred bytes) and double up
// to it.
const arenaBlock = 4096

// take is an empty slice of capacity n from block (one of a's): capped at
// n, so an append past it copies out and never writes into the next
// verdict's. With a nil a, or a large n, a new slice.
func take[T any](a *checkArena, block *[]T, n int) []T {
	if a == nil || a.alone || n > arenaBlock/4 {
		return make([]T, 0, n)
	}
	b := *block
	if cap(b)-len(b) < n {
		size := min(max(2*cap(b), 64, n), arenaBlock)
		b = make([]T, 0, size)
	}
	l := len(b)
	*block = b[:l+n]
	return b[l : l : l+n]
}

// takeOne is one zeroed element of block (one of a's), or a new one.
func takeOne[T any](a *checkArena, block *[]T) *T {
	if a == nil || a.alone {
		return new(T)
	}
	return &take(a, block, 1)[:1][0]
}

// newChecks is an empty slice of capacity n for a verdict's checks.
func (d *diag) newChecks(n int) []Check {
	if d.arena == nil {
		return make([]Check, 0, n)
	}
	return take(d.arena, &d.arena.checks, n)
}

// free returns d to the pool; the verdict keeps d.checks, not d.
func (d *diag) free() {
	own := d.own
	if own != nil && (d.self == &own.self || d.p == &own.p) {
		*own = diagOwn{}
	}
	sc := d.scratch
	if sc != nil {
		if d.nf != nil {
			sc.nf = natFacts{}
		}
		clear(d.refuters)
	}
	*d = diag{own: own, scratch: sc}
	diags.Put(d)
}

// diagScratch is the larger part of a diag that only some verdicts use
// (a relayed path's NAT analysis, the refuters settling asks): kept with
// d in the pool, and cleared by free only where it was used, so that a
// direct or idle peer's verdict does not clear it.
type diagScratch struct {
	nf     natFacts
	refBuf [16]refuterMemo
}

// scratchOf is d's scratch, made on first use.
func (d *diag) scratchOf() *diagScratch {
	if d.scratch == nil {
		d.scratch = new(diagScratch)
	}
	return d.scratch
}

// diagnoseSelf is this node's own verdict: trouble at this end that
// touches every path. It walks the reason table's rows that judge this
// node (Scope ScopeSelf, and ScopeBoth: local-udp-blocked,
// derp-unreachable, local-tcp443-only, whose checks judge every peer's
// path too) in the table's order; the first cause that holds is the
// Reason, the other causes that hold go to Also, and after them the
// RoleAlso rows (a fact beside the verdict, never the verdict: a UPnP
// answer from a device that is not the gateway). state is
// Status.BackendState ("" unknown);
// self carries our NAT facts, health, what tailpath read of this host and
// the evidence only pasted input shows (Evidence). A rule whose needed
// facts are unknown records an unknown check and does not hold
// (diag.judge). nil when no cause holds: nothing at this end explains
// anything, and there is no self verdict to show. tn is the gather's
// tailnet-wide facts (nil: none). Pure, like diagnoseIn.
func diagnoseSelf(state string, self Self, regions map[int]Region, now time.Time, tn *Tailnet) *Verdict {
	v, _ := diagnoseSelfSettle(state, self, regions, now, tn)
	return v
}

// diagnoseSelfSettle is diagnoseSelf with what would settle this node's
// own verdict (Self.Settle; nil when nothing is open).
func diagnoseSelfSettle(state string, self Self, regions map[int]Region, now time.Time, tn *Tailnet) (*Verdict, *Settle) {
	d := newDiag(self, Peer{}, regions, now)
	d.tn = tn
	defer d.free()
	d.selfScope, d.state = true, state
	var first *Rule
	var firstRes result
	var also, beside []ReasonID
	for i := range rules {
		r := &rules[i]
		if !r.Scope.judgesSelf() || r.check == nil {
			continue
		}
		res := d.judge(r, r.check)
		switch {
		case !res.holds:
		case r.Role == RoleAlso:
			beside = append(beside, r.ID)
		case first == nil:
			first, firstRes = r, res
		default:
			also = append(also, r.ID)
		}
	}
	if first == nil {
		return nil, d.selfSettle(nil)
	}
	if len(beside) > 0 {
		also = append(also, beside...)
	}
	v := &Verdict{Reason: first.ID, Checks: d.checks, Also: also, Refuted: d.refuted}
	v.Summary, v.Fix = first.texts(firstRes, "")
	markProse(v.Checks, self.Prose)
	return v, d.selfSettle(v)
}

type diag struct {
	// self is this node, read only: ownSelf (newDiag) or the gather's
	// (newDiagOf).
	self *Self
	// p is the peer judged, read only but where mutP copies it first: a
	// copy of its own (own.p) or the gather's (newDiagOf).
	p *Peer
	// own holds the copies: kept with d in the pool.
	own *diagOwn
	// selfScope: diagnoseSelf judges this node itself (p is empty), and
	// state is its Status.BackendState.
	selfScope bool
	state     string
	regions   map[int]Region
	now       time.Time
	// tn is the whole gather's facts (Judge); nil when one peer is
	// judged alone (a test's Diagnose).
	tn     *Tailnet
	checks []Check
	// arena, when not nil, holds the checks of a whole gather's
	// verdicts (Judge; newChecks).
	arena *checkArena
	// once, when not nil, holds what the gather's peers read of this
	// node alone (Judge; selfOnce).
	once *selfOnce
	// refuted are the rules a fact of the input refuted (Verdict.Refuted).
	refuted []Refutation
	// derpFailing is the region checkDERPReach blamed (0 none, or not
	// one region); rxStopped the receive loop checkReceiveStopped found
	// stopped ("ipv4", "ipv6"): what their refutations ask about.
	derpFailing int
	rxStopped   string
	// refuters are the refuters' answers worked out while settling the
	// verdict (refutesNow), in scratch's refBuf.
	refuters []refuterMemo
	// scratch holds the NAT analysis (nf) and refuters' memos: kept
	// with d in the pool.
	scratch *diagScratch
	// judging is the rule whose refuters are asked (they read it: set
	// by judge once its check held, and by openFacts); bugs are
	// the known bugs matched (bugHits), worked out once.
	judging  ReasonID
	bugs     []bugHit
	bugsDone bool
	// pending are the rules whose check held while a fact they need was
	// unknown (needUnknown): what would settle the verdict reads them.
	pending []pendingNeed
	// stale says why the peer side was set aside (stalePeerSide), and
	// staleField names the set-aside source's facts; "" when it was not.
	stale, staleField string
	// epText is peerEndpointsText's, of the list epTextOf.
	epText   string
	epTextOf []netip.AddrPort
	// ep and nf are the endpoint and NAT facts, worked out once by the
	// first rule that reads them (several rules share them; nf is in
	// scratch, nil until then); epDone and nfDone say whether they were.
	ep             endpointFacts
	nf             *natFacts
	epDone, nfDone bool
	// far is what checkFarDERP measured, for unexplained's words.
	far   farDERP
	isFar bool
	quiet bool // record would-be failures as info (facts that decide nothing here)
	dev   *DeviceEvidence
}

// add records a check that either explains relaying (failed) or rules
// that cause out.
func (d *diag) add(field safetext.Text, value string, failed bool, note safetext.Text) {
	if d.quiet && failed {
		d.info(field, value, note)
		return
	}
	st := CheckOK
	if failed {
		st = CheckFail
	}
	d.checks = append(d.checks, Check{Field: field, Value: safetext.New(value), Failed: failed, State: st, Note: note, Source: sourceOf(string(field))})
}

// info records a fact that neither explains nor rules out relaying.
func (d *diag) info(field safetext.Text, value string, note safetext.Text) {
	d.checks = append(d.checks, Check{Field: field, Value: safetext.New(value), State: CheckInfo, Note: note, Source: sourceOf(string(field))})
}

// unknown records a check whose value was not available.
func (d *diag) unknown(field, note safetext.Text) {
	d.unknownV(field, "unknown", note)
}

// unknownV records a check whose value is known but says nothing
// certain: the rule that reads it cannot decide.
func (d *diag) unknownV(field safetext.Text, value string, note safetext.Text) {
	d.checks = append(d.checks, Check{Field: field, Value: safetext.New(value), State: CheckUnknown, Note: note, Source: sourceOf(string(field))})
}

// PeerSideMaxAge is how old a dated source's facts of the peer's end (the
// control API's read, a peer's snapshot) may be and still judge a path.
const PeerSideMaxAge = 10 * time.Minute

// stalePeerSide drops peer-side facts older than PeerSideMaxAge from the
// judgement, keeping the netmap's own copy when there is one; the dropped
// facts' age is said in a check.
func (d *diag) stalePeerSide() {
	ps := d.p.PeerSide
	if ps == nil || ps.At.IsZero() || d.fresh(ps.At, PeerSideMaxAge) {
		return
	}
	d.stale = ps.Source + " facts of the peer's end are " + durText(d.now.Sub(ps.At)) + " old: too old to judge the path by"
	d.staleField = peerField(ps, factMapping)
	if o := ps.Other; o != nil && (o.At.IsZero() || d.fresh(o.At, PeerSideMaxAge)) {
		d.mutP().PeerSide = o
		return
	}
	d.mutP().PeerSide = nil
}

// onlineField is the field the peer's online state came from.
func (d *diag) onlineField() string {
	if d.p.OnlineSource != "" {
		return d.p.OnlineSource
	}
	return "WhoIs.Node.Online"
}

func (d *diag) run() Verdict {
	d.stalePeerSide()
	v := d.walk()
	if d.p.Path.Kind == PathOffline && d.wasRefuted(ReasonOffline) {
		// Control calls the peer offline, but it answered DISCO pings:
		// it is up, and its path is what Status shows apart from
		// Online (Classify with Online unknown): relayed while Active,
		// else idle. The refutation's checks stay first.
		kept, refuted := d.checks, d.refuted
		// The pongs' own path counts as activity: a DISCO ping makes
		// the peer Active (endpoint.go startDiscoPingLocked).
		d.mutP().Path.Kind = PathIdle
		r := d.p.PingRun
		viaDERP := r != nil && strings.HasPrefix(string(r.Via), "DERP(")
		if d.p.Active || viaDERP {
			d.mutP().Path.Kind = PathDERP
			d.mutP().Path.DERPCode = d.p.HomeDERPCode
			if viaDERP {
				d.mutP().Path.DERPCode = safetext.New(strings.TrimSuffix(strings.TrimPrefix(string(r.Via), "DERP("), ")"))
			}
		}
		d.checks, d.refuted = nil, nil
		v = d.walk()
		v.Checks = append(kept, v.Checks...)
		v.Refuted = append(refuted, v.Refuted...)
		up := "up (it answers DISCO pings"
		if r != nil && r.Via != "" {
			up += " via " + string(r.Via)
		}
		v.Summary = safetext.New(up + "; control says offline): " + string(v.Summary))
	}
	return v
}

// wasRefuted reports whether rule id was refuted in this verdict.
func (d *diag) wasRefuted(id ReasonID) bool {
	for _, r := range d.refuted {
		if r.Reason == id {
			return true
		}
	}
	return false
}

// walk walks the rules of the path's kind: its states, then, for a
// relayed path, its causes.
func (d *diag) walk() Verdict {
	kind := d.p.Path.Kind
	name := pingName(d.p)
	if kind == PathDERP || kind == PathPeerRelay {
		if n := d.relayedChecks(); cap(d.checks)-len(d.checks) < n {
			d.checks = append(d.newChecks(len(d.checks)+n), d.checks...)
		}
	}
	kr := rulesOf(kind)
	for _, i := range kr.states {
		r := &rules[i]
		res := d.judge(r, r.check)
		if !res.holds {
			continue
		}
		if r.ID == ReasonPeerRelay {
			break // a peer-relay verdict lists its causes: judged below
		}
		v := Verdict{Reason: r.ID, Checks: d.checks, Refuted: d.refuted}
		v.Summary, v.Fix = r.texts(res, name)
		if r.ID == ReasonKeyExpired {
			return v
		}
		if kind == PathDirect {
			d.linkChecks()
		}
		// A warning beside a healthy state (direct-in-tunnel).
		for _, j := range kr.rest {
			a := &rules[j]
			if a.Role != RoleAlso {
				continue
			}
			if ar := d.judge(a, a.check); ar.holds {
				v.Also = append(v.Also, a.ID)
				if v.Fix == "" {
					s, f := a.texts(ar, name)
					v.Summary += "; " + s
					v.Fix = f
				}
			}
		}
		v.Checks, v.Refuted = d.checks, d.refuted
		return v
	}
	return d.relayed(kind, name, kr)
}

// relayed judges a DERP or peer-relay path: the causes in table order,
// then the RoleAlso reasons.
func (d *diag) relayed(kind PathKind, name string, kr *kindRules) Verdict {
	if kind == PathDERP {
		d.add("Status.CurAddr", `""`, true, "no trusted direct UDP address")
		d.info("Status.PeerRelay", `""`, "no peer relay in use: the traffic goes through DERP")
		d.linkChecks()
	}
	var causeBuf [8]ReasonID
	causes := causeBuf[:0]
	var alsoOnly, also []ReasonID
	var first *Rule
	var firstRes result
	for _, i := range kr.rest {
		r := &rules[i]
		res := d.judge(r, r.check)
		switch {
		case !res.holds:
		case r.Role == RoleAlso:
			also = append(also, r.ID)
		case res.alsoOnly:
			alsoOnly = append(alsoOnly, r.ID)
		default:
			if first == nil {
				first, firstRes = r, res
			}
			causes = append(causes, r.ID)
		}
	}
	v := Verdict{Checks: d.checks, Refuted: d.refuted}
	if first != nil {
		v.PeerSide = first.PeerSide && failsOnPeerSide(d.checks)
	}
	rest := func(cs []ReasonID) []ReasonID {
		if len(cs)+len(alsoOnly)+len(also) == 0 {
			return nil
		}
		var out []ReasonID
		if d.arena != nil {
			out = take(d.arena, &d.arena.reasons, len(cs)+len(alsoOnly)+len(also))
		} else {
			out = make([]ReasonID, 0, len(cs)+len(alsoOnly)+len(also))
		}
		out = append(out, cs...)
		out = append(out, alsoOnly...)
		return append(out, also...)
	}
	if kind == PathPeerRelay {
		pr := rule(ReasonPeerRelay)
		v.Reason = ReasonPeerRelay
		v.Summary = safetext.New(pr.Summary)
		if first != nil {
			cs, fix := first.texts(firstRes, name)
			words := [...]string{"not-direct", "{cause}", string(cs)}
			v.Summary, _ = pr.texts(result{holds: true, words: words[:]}, name)
			v.Fix = d.portPolicy(fix)
		}
		v.Also = rest(causes)
		return v
	}
	if first != nil {
		v.Reason = first.ID
		v.Summary, v.Fix = first.texts(firstRes, name)
		v.Fix = d.portPolicy(v.Fix)
		v.Also = rest(causes[1:])
		return v
	}
	u := rule(ReasonUnexplained)
	var res result
	switch {
	case d.nfDone && d.nf.oneNAT:
		res = holdsAs("one-nat", d.nf.sharedVars...)
	case d.isFar:
		f := d.far
		res = holdsAs("far", "{region}", d.regionName(f.region), "{rl}", msText(f.relayLat),
			"{best}", d.regionName(f.best), "{bl}", msText(f.bestLat))
	case d.endpoints().v6Both:
		res.words = variantWords("ipv6")
	case len(d.refuted) > 0:
		// Name the conflict: a cause whose own check held, set aside by
		// a fact of the same input.
		f := d.refuted[0]
		res = holdsAs("refuted", "{refuted}", string(f.Reason), "{why}", string(f.Why))
	}
	v.Reason = ReasonUnexplained
	v.Summary, v.Fix = u.texts(res, name)
	v.Also = rest(nil)
	return v
}

// portPolicy is fix as it can work under this tailnet's port policy: with
// randomizeClientPort set (Self.RandomizePort) tailscaled ignores --port
// and binds a random port (wgengine/userspace.go Reconfig), so a fix
// resting on `--port` and a static forward says first that the policy
// must change. The policy file's randomizeClientPort is tailnet-wide, so
// the peer has it too.
func (d *diag) portPolicy(fix safetext.Text) safetext.Text {
	if !d.self.RandomizePort || !strings.Contains(string(fix), "--port") {
		return fix
	}
	return "the tailnet policy sets randomizeClientPort (this node has the randomize-client-port attribute), so tailscaled binds a random UDP port and ignores --port (wgengine/userspace.go Reconfig): a static forward works only after removing randomizeClientPort from the policy file; UPnP, NAT-PMP or PCP, and a peer relay, work with it. Then: " + fix
}

// failsOnPeerSide reports whether a failed check is a fact of the peer's
// own end (its NetInfo, the control API, its snapshot, its endpoints).
func failsOnPeerSide(cs []Check) bool {
	for _, c := range cs {
		if c.Failed && isPeerField(string(c.Field)) {
			return true
		}
	}
	return false
}

// The path states.

func (d *diag) checkExpired() result {
	p := d.p
	if !p.Expired {
		return notHeld()
	}
	d.checks = d.newChecks(2)
	d.add("Status.Expired", "true", true, "the peer's node key has expired: tailscaled sends it nothing (magicsock: \"peer's node key has expired\")")
	if !p.KeyExpiry.IsZero() {
		d.info("Status.KeyExpiry", p.KeyExpiry.UTC().Format(time.RFC3339), "when the key expired")
	}
	return holds()
}

func (d *diag) checkDirect() result {
	d.checks = d.newChecks(1)
	d.add("Status.CurAddr", d.p.Path.Addr.String(), false, "a direct UDP path is in use")
	return holds()
}

func (d *diag) checkPeerRelayState() result {
	d.add("Status.PeerRelay", string(d.p.Path.PeerRelay), false, "traffic goes through a peer relay, not DERP")
	return holds()
}

func (d *diag) checkOffline() result {
	p := d.p
	d.checks = d.newChecks(3)
	d.add(safetext.New(d.onlineField()), "false", true, "the control server says the peer is offline")
	if p.HandshakeUnknown && p.LastHandshake.IsZero() {
		d.unknownV("Status.LastHandshake", "not shown", "the source (pasted text) shows no WireGuard handshakes")
	} else {
		d.add("Status.LastHandshake", handshakeText(p.LastHandshake), true, safetext.New("no WireGuard handshake in the last "+RecentHandshake.String()))
	}
	if p.Active {
		d.info("Status.Active", "true", "we sent packets recently (a ping does), but nothing answered: that is not a path")
	}
	switch {
	case p.LastSeenAgo > 0:
		// A pasted "last seen 3d ago": as precise as that, not to the minute.
		return holdsAs("ago", "{ago}", durText(p.LastSeenAgo))
	case !p.LastSeen.IsZero():
		return holdsAs("since", "{since}", p.LastSeen.UTC().Format("2006-01-02 15:04Z"))
	}
	return holds()
}

// checkIdle: an idle peer is a fact about the peer (nothing was sent in
// 45 s), not a failed check, so Status.Active reads info.
func (d *diag) checkIdle() result {
	p := d.p
	d.checks = d.newChecks(2)
	d.info("Status.Active", "false", "nothing was sent to the peer in the last 45 s (magicsock's sessionActiveTimeout), so no path is negotiated")
	if p.Online == nil {
		d.unknown("WhoIs.Node.Online", "the control server did not say")
	} else {
		d.add(safetext.New(d.onlineField()), strconv.FormatBool(*p.Online), false, "")
	}
	return holds()
}

// checkPathUnknown: the evidence names no path for the peer (a pasted
// TSMP or ICMP ping alone: its pong names the ping type, and the CLI
// stops after one pong), so nothing about a path can be judged.
func (d *diag) checkPathUnknown() result {
	p := d.p
	d.checks = d.newChecks(2)
	d.unknownV("Path", string(p.Path.Text), "a TSMP or ICMP pong names the ping type, not the path (cmd/tailscale/cli/ping.go prints it when the PingResult has no endpoint and no DERP region), and no DISCO ping or status line shows one")
	if p.Latency > 0 {
		d.info("Latency", msText(p.Latency), "the ping went through WireGuard and was answered: the tunnel works, over some path")
		return holds()
	}
	d.info("Latency", "no reply", "the ping got no reply through WireGuard; which path it tried is not shown")
	return holdsAs("no-reply")
}

// relayedChecks is how many checks a relayed path usually gets, so the
// slice is allocated once at its size (an underestimate only costs a
// regrowth).
func (d *diag) relayedChecks() int {
	p := d.p
	n := 2 + 1 + 1 + 2 + 1 // CurAddr+PeerRelay, WorkingUDP, Endpoints, NAT both ends, open ends
	if p.Path.Kind == PathPeerRelay {
		n--
	} else {
		n += 2 // LastHandshake, DERPLatency
	}
	if nat := d.self.NAT; nat != nil && nat.MappingVariesByDestIP != nil && *nat.MappingVariesByDestIP {
		n++
	}
	if p.EndpointsKnown && len(p.Endpoints) > 0 && !hasPublic(p.Endpoints) {
		n++ // same-LAN
	}
	if p.PingRun != nil {
		n++
	}
	if !p.LastDirect.IsZero() {
		n += 2
	}
	return n
}

// Peer-side facts, for peerField.
const (
	factMapping = iota
	factPortMap
	factUDP
	factIPv6
	factLatency
	factVersion
)

// peerFieldNames names each fact per source: localapi, control-api,
// peer-snapshot.
var peerFieldNames = [...][3]string{
	factMapping: {"Peer.NetInfo.MappingVariesByDestIP", "API.clientConnectivity.mappingVariesByDestIP", "PeerSnapshot.NetInfo.MappingVariesByDestIP"},
	factPortMap: {"Peer.NetInfo.HavePortMap", "API.clientConnectivity.clientSupports.upnp/pmp/pcp", "PeerSnapshot.NetInfo.HavePortMap"},
	factUDP:     {"Peer.NetInfo.WorkingUDP", "API.clientConnectivity.clientSupports.udp", "PeerSnapshot.NetInfo.WorkingUDP"},
	factIPv6:    {"Peer.NetInfo.WorkingIPv6", "API.clientConnectivity.clientSupports.ipv6", "PeerSnapshot.NetInfo.WorkingIPv6"},
	factLatency: {"Peer.NetInfo.DERPLatency", "API.clientConnectivity.latency", "PeerSnapshot.NetInfo.DERPLatency"},
	factVersion: {"Peer.Hostinfo.IPNVersion", "API.clientVersion", "PeerSnapshot.Version"},
}

// factNames are the PeerSide.FactSources names of peerField's facts.
var factNames = [...]string{
	factMapping: FactMapping, factPortMap: FactPortMap, factUDP: FactUDP,
	factIPv6: FactIPv6, factLatency: FactLatency, factVersion: FactVersion,
}

// peerField is the Field of a peer-side check of fact, named for the
// source that fact came from (localapi's names when ps is nil).
func peerField(ps *PeerSide, fact int) string {
	col := 0
	if ps != nil {
		switch ps.sourceOfFact(factNames[fact]) {
		case SourceControlAPI:
			col = 1
		case SourcePeerSnapshot:
			col = 2
		}
	}
	return peerFieldNames[fact][col]
}

// sourceOf is the Check.Source of a field, by its prefix.
func sourceOf(field string) string {
	if field == "" || strings.IndexByte("APNDHL", field[0]) < 0 {
		return SourceLocalAPI // no prefix below starts so ("Status.", "WhoIs.")
	}
	switch {
	case strings.HasPrefix(field, "API."):
		return SourceControlAPI
	case strings.HasPrefix(field, "PeerSnapshot."):
		return SourcePeerSnapshot
	case strings.HasPrefix(field, "Netcheck."):
		return "netcheck"
	case strings.HasPrefix(field, "Device."):
		return "device"
	case strings.HasPrefix(field, "Host."):
		return SourceHost
	case strings.HasPrefix(field, "Log."):
		return SourceLog
	}
	return SourceLocalAPI
}

// isPeerField reports whether field is a fact of the peer's own end.
func isPeerField(field string) bool {
	if field == "Peer.LastDirect" {
		return false // our own observation of the path, not the peer's end
	}
	return strings.HasPrefix(field, "Peer.") || strings.HasPrefix(field, "API.") || strings.HasPrefix(field, "PeerSnapshot.")
}

// fresh reports whether t is set and at most maxAge before d.now (a zero
// now, as in hand-built tests, treats every dated fact as fresh).
func (d *diag) fresh(t time.Time, maxAge time.Duration) bool {
	if d.now.IsZero() {
		return true
	}
	return !t.IsZero() && d.now.Sub(t) <= maxAge
}

// appendVsBest appends `"region"=Nms, best "other"=Mms`: a region's
// latency beside the best region's, as far-home-derp's checks show them.
func (d *diag) appendVsBest(buf []byte, region int, lat time.Duration, bestID int, bestLat time.Duration) []byte {
	buf = d.appendRegion(buf, region)
	buf = append(buf, '=')
	buf = appendMs(buf, lat)
	buf = append(buf, ", best "...)
	buf = d.appendRegion(buf, bestID)
	buf = append(buf, '=')
	return appendMs(buf, bestLat)
}

func (d *diag) appendRegion(b []byte, id int) []byte {
	if r, ok := d.regions[id]; ok && r.Code != "" {
		return strconv.AppendQuote(b, string(r.Code))
	}
	return strconv.AppendInt(append(b, "region "...), int64(id), 10)
}

// appendRegionID is appendRegion with the id beside a known code
// (`"lab1" (901)`): where the id itself matters, as for a board that
// chose its home by lowest region id.
func (d *diag) appendRegionID(b []byte, id int) []byte {
	if r, ok := d.regions[id]; ok && r.Code != "" {
		b = strconv.AppendQuote(b, string(r.Code))
		b = strconv.AppendInt(append(b, " ("...), int64(id), 10)
		return append(b, ')')
	}
	return d.appendRegion(b, id)
}

func appendMs(b []byte, d time.Duration) []byte {
	return append(strconv.AppendInt(b, d.Round(time.Millisecond).Milliseconds(), 10), "ms"...)
}

func (d *diag) regionName(id int) string {
	if r, ok := d.regions[id]; ok && r.Code != "" {
		return strconv.Quote(string(r.Code))
	}
	return "region " + strconv.Itoa(id)
}

func msText(d time.Duration) string {
	return strconv.FormatInt(d.Round(time.Millisecond).Milliseconds(), 10) + "ms"
}

// durText is a coarse age: "40s", "12m", "3h", "2d".
func durText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

// peerEndpointsText is endpointsText of the peer's endpoints, made once
// per verdict though several checks show them (the list checkEndpoints
// judged may be the peer side's: the text is of the list d.p holds now).
func (d *diag) peerEndpointsText() string {
	eps := d.p.Endpoints
	if d.epText == "" || len(eps) != len(d.epTextOf) || (len(eps) > 0 && &eps[0] != &d.epTextOf[0]) {
		d.epText, d.epTextOf = endpointsText(eps), eps
	}
	return d.epText
}

func endpointsText(eps []netip.AddrPort) string {
	if len(eps) == 0 {
		return "[]"
	}
	var buf [256]byte // on the stack: the string below is the one allocation
	b := append(buf[:0], '[')
	for i, ep := range eps {
		if i > 0 {
			b = append(b, ' ')
		}
		b = ep.AppendTo(b)
	}
	return string(append(b, ']'))
}

// handshakeText is a WireGuard handshake time; zero reads "none recorded"
// because it means never, or that tailscaled removed the idle peer from
// wireguard-go (its lazy WireGuard config), which clears the time.
func handshakeText(t time.Time) string {
	if t.IsZero() {
		return "none recorded"
	}
	return t.UTC().Format(time.RFC3339)
}

func pingName(p *Peer) string {
	if p.Name != "" {
		return string(p.Name)
	}
	if len(p.TailscaleIPs) > 0 {
		return p.TailscaleIPs[0].String()
	}
	return string(p.ID)
}

func hasReason(rs []ReasonID, r ReasonID) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func hasPublic(eps []netip.AddrPort) bool {
	for _, ep := range eps {
		if !IsPrivateAddr(ep.Addr()) {
			return true
		}
	}
	return false
}
