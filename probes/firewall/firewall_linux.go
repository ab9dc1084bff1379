//go:build linux

package firewall

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
	"golang.org/x/sys/unix"
)

// readRules reads the ruleset and the legacy tables once; the function
// it returns judges a port on them.
func readRules() func(port uint16) (Result, error) {
	rs, err := readRuleset()
	var legacy string
	if err == nil {
		legacy = legacyTables()
	}
	return func(port uint16) (Result, error) {
		res := Result{Port: port, Verdict: Unknown}
		if err != nil {
			if errors.Is(err, unix.EPERM) || errors.Is(err, os.ErrPermission) {
				res.Why = "reading the nftables ruleset needs root (CAP_NET_ADMIN)"
				return res, nil
			}
			res.Why = "reading the nftables ruleset: " + err.Error()
			return res, nil
		}
		res = rs.judge(port)
		if res.Verdict != Drop && legacy != "" {
			res.Verdict = Unknown
			res.Why = "legacy iptables tables are loaded (" + legacy + "), which nftables does not show; " + res.Why
		}
		return res, nil
	}
}

// legacyTables lists the loaded legacy (x_tables) iptables tables of this
// network namespace, "" when none: their rules are not in nftables.
func legacyTables() string {
	b, err := os.ReadFile("/proc/net/ip_tables_names")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(b)), ", ")
}

// ruleset is what judge reads: the chains that see an inbound IPv4
// packet, every chain's rules (for jumps) and the sets they look up.
type ruleset struct {
	base   []*nftables.Chain
	rules  map[chainKey][]*nftables.Rule
	sets   map[setKey]*setElems
	chains map[chainKey]*nftables.Chain
}

type chainKey struct {
	family nftables.TableFamily
	table  string
	chain  string
}

type setKey struct {
	family nftables.TableFamily
	table  string
	set    string
}

type setElems struct {
	set   *nftables.Set
	elems []nftables.SetElement
}

// readRuleset reads the ip and inet tables' chains, rules and sets.
func readRuleset() (*ruleset, error) {
	// One netlink socket for every list below: without AsLasting each
	// opens its own, a dozen or more on a host whose containers have
	// chains of their own.
	c, err := nftables.New(nftables.AsLasting())
	if err != nil {
		return nil, err
	}
	defer c.CloseLasting()
	rs := &ruleset{rules: map[chainKey][]*nftables.Rule{}, sets: map[setKey]*setElems{}, chains: map[chainKey]*nftables.Chain{}}
	for _, fam := range []nftables.TableFamily{nftables.TableFamilyINet, nftables.TableFamilyIPv4} {
		chains, err := c.ListChainsOfTableFamily(fam)
		if err != nil {
			return nil, err
		}
		tables := map[string]*nftables.Table{}
		for _, ch := range chains {
			k := chainKey{fam, ch.Table.Name, ch.Name}
			rs.chains[k] = ch
			rules, err := c.GetRules(ch.Table, ch)
			if err != nil {
				return nil, fmt.Errorf("rules of %s: %w", chainName(ch), err)
			}
			rs.rules[k] = rules
			tables[ch.Table.Name] = ch.Table
			if isInbound(ch) {
				rs.base = append(rs.base, ch)
			}
		}
		for name, t := range tables {
			sets, err := c.GetSets(t)
			if err != nil {
				return nil, fmt.Errorf("sets of table %s: %w", name, err)
			}
			for _, s := range sets {
				elems, err := c.GetSetElements(s)
				if err != nil {
					return nil, fmt.Errorf("set %s: %w", s.Name, err)
				}
				rs.sets[setKey{fam, name, s.Name}] = &setElems{s, elems}
			}
		}
	}
	rs.sortBase()
	return rs, nil
}

// isInbound reports whether ch is a base chain an inbound packet to this
// host crosses: type filter, hook prerouting or input.
func isInbound(ch *nftables.Chain) bool {
	if ch.Hooknum == nil || ch.Type != nftables.ChainTypeFilter {
		return false
	}
	return *ch.Hooknum == *nftables.ChainHookPrerouting || *ch.Hooknum == *nftables.ChainHookInput
}

// sortBase orders the base chains as the packet meets them: prerouting
// before input, then by priority.
func (rs *ruleset) sortBase() {
	slices.SortStableFunc(rs.base, func(a, b *nftables.Chain) int {
		ha, hb := *a.Hooknum, *b.Hooknum
		if ha != hb {
			return int(ha) - int(hb) // NF_INET_PRE_ROUTING (0) before LOCAL_IN (1)
		}
		pa, pb := prio(a), prio(b)
		switch {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
}

func prio(c *nftables.Chain) int32 {
	if c.Priority == nil {
		return 0
	}
	return int32(*c.Priority)
}

func chainName(c *nftables.Chain) string {
	fam := "ip"
	if c.Table.Family == nftables.TableFamilyINet {
		fam = "inet"
	}
	return "table " + fam + " " + c.Table.Name + " chain " + c.Name
}

// outcome is what a chain does with the packet.
type outcome uint8

const (
	outAccept outcome = 1 << iota
	outDrop
	outReturn // fell off a non-base chain, or return: back to the caller
)

// maxSteps bounds the evaluation (branches on rules that may match).
const maxSteps = 20000

// packet is the packet judged: UDP over IPv4 to port, arriving on an
// interface that is not loopback, in conntrack state new (a peer's
// unsolicited ping) or established (a reply to what this host sent).
type packet struct {
	port        uint16
	established bool
}

// judge decides Result for port: the new packet's fate, and whether a
// reply would fare better (a stateful ruleset).
func (rs *ruleset) judge(port uint16) Result {
	res := Result{Port: port}
	v, why := rs.run(packet{port: port})
	res.Verdict, res.Why = v, why
	if v == Drop {
		if rv, rwhy := rs.run(packet{port: port, established: true}); rv == Accept {
			res.Stateful = true
			res.Why = why + "; a reply to what this host sent is accepted (" + rwhy + ")"
		}
	}
	return res
}

// run passes p through every inbound base chain: dropped if one drops
// it, accepted if all accept it.
func (rs *ruleset) run(p packet) (Verdict, string) {
	if len(rs.base) == 0 {
		return Accept, "no nftables base chain filters inbound packets"
	}
	var whys []string
	unknown := ""
	for _, ch := range rs.base {
		e := &evaluator{rs: rs, p: p, family: ch.Table.Family}
		out, why := e.chain(ch, 0)
		switch {
		case e.steps > maxSteps:
			return Unknown, chainName(ch) + ": too complex to judge"
		case out == outDrop:
			return Drop, chainName(ch) + ": " + why
		case out&outDrop != 0:
			if unknown == "" {
				unknown = chainName(ch) + ": " + why
			}
		default:
			whys = append(whys, chainName(ch)+": "+why)
		}
	}
	if unknown != "" {
		return Unknown, unknown
	}
	return Accept, strings.Join(whys, "; ")
}

// evaluator runs one base chain for one packet, exploring both branches
// of a rule that may or may not match.
type evaluator struct {
	rs     *ruleset
	p      packet
	family nftables.TableFamily
	steps  int
}

// chain returns the outcomes c can reach and the reason of the first
// definite one (or of what made it uncertain).
func (e *evaluator) chain(c *nftables.Chain, depth int) (outcome, string) {
	if depth > 16 {
		e.steps = maxSteps + 1
		return outAccept | outDrop, "jumps nest too deep"
	}
	rules := e.rs.rules[chainKey{c.Table.Family, c.Table.Name, c.Name}]
	return e.from(c, rules, 0, depth)
}

// from evaluates rules[i:] of c.
func (e *evaluator) from(c *nftables.Chain, rules []*nftables.Rule, i, depth int) (outcome, string) {
	for ; i < len(rules); i++ {
		e.steps++
		if e.steps > maxSteps {
			return outAccept | outDrop, "too complex"
		}
		m, act, why, unsure := e.rule(rules[i])
		if m == no {
			continue
		}
		out, awhy := e.action(c, act, depth)
		if out == 0 {
			continue // matched, but no verdict (a counter, a log)
		}
		where := "rule " + strconv.Itoa(i+1) + " (" + why + ")" + awhy
		if m == yes {
			if out == outReturn {
				return outReturn, where
			}
			if out&outReturn != 0 {
				// A jump whose chain may fall back: both ways.
				rest, rwhy := e.from(c, rules, i+1, depth)
				return out&^outReturn | rest, where + "; " + rwhy
			}
			return out, where
		}
		// May match: both ways.
		rest, _ := e.from(c, rules, i+1, depth)
		return out&^outReturn | rest | out&outReturn, "rule " + strconv.Itoa(i+1) + " matches on " + unsure + ", which tailpath cannot judge"
	}
	if c.Hooknum == nil {
		return outReturn, "end of chain " + c.Name
	}
	if c.Policy != nil && *c.Policy == nftables.ChainPolicyDrop {
		return outDrop, "policy drop"
	}
	return outAccept, "policy accept"
}

// action is what a matched rule does: its verdict (jumps followed).
func (e *evaluator) action(c *nftables.Chain, act *expr.Verdict, depth int) (outcome, string) {
	if act == nil {
		return 0, ""
	}
	switch act.Kind {
	case expr.VerdictAccept:
		return outAccept, ": accept"
	case expr.VerdictDrop:
		return outDrop, ": drop"
	case expr.VerdictReturn:
		return outReturn, ": return"
	case expr.VerdictJump, expr.VerdictGoto:
		target, ok := e.rs.chains[chainKey{c.Table.Family, c.Table.Name, act.Chain}]
		if !ok {
			return outAccept | outDrop, ": jump to an unknown chain " + act.Chain
		}
		out, why := e.chain(target, depth+1)
		if act.Kind == expr.VerdictGoto && out&outReturn != 0 {
			// Falling off a goto'd chain ends the calling base chain.
			out = out&^outReturn | e.policyOf(c)
		}
		return out, ": " + act.Chain + ": " + why
	}
	return 0, ""
}

// policyOf is the outcome of a base chain's policy (non-base: return).
func (e *evaluator) policyOf(c *nftables.Chain) outcome {
	if c.Hooknum == nil {
		return outReturn
	}
	if c.Policy != nil && *c.Policy == nftables.ChainPolicyDrop {
		return outDrop
	}
	return outAccept
}

// tri is a match: no, yes or maybe.
type tri uint8

const (
	no tri = iota
	yes
	maybe
)

func and(a, b tri) tri {
	switch {
	case a == no || b == no:
		return no
	case a == maybe || b == maybe:
		return maybe
	}
	return yes
}

func not(a tri) tri {
	switch a {
	case yes:
		return no
	case no:
		return yes
	}
	return maybe
}

// regs are nftables' data registers as bytes (NFT_REG_1..4 are 16 bytes
// each, NFT_REG32_00..15 4 bytes each, over the same storage), with what
// is known of each byte.
type regs struct {
	b     [64]byte
	known [64]bool
	// notLoopback marks where an input interface name or index was loaded:
	// unknown, but not loopback's.
	notLoopback map[int]int // offset → length
	// label names what was loaded at an offset ("udp dport"), for the
	// reason in words.
	label map[int]string
}

// name records what register r holds, in words.
func (g *regs) name(r uint32, what string) {
	if o := off(r); o >= 0 {
		if g.label == nil {
			g.label = map[int]string{}
		}
		g.label[o] = what
	}
}

// what is the words for register r's content.
func (g *regs) what(r uint32) string {
	if w := g.label[off(r)]; w != "" {
		return w
	}
	return "a value"
}

// off is register r's byte offset, -1 for the verdict register.
func off(r uint32) int {
	switch {
	case r >= unix.NFT_REG_1 && r <= unix.NFT_REG_4:
		return int(r-unix.NFT_REG_1) * 16
	case r >= unix.NFT_REG32_00 && r <= unix.NFT_REG32_15:
		return int(r-unix.NFT_REG32_00) * 4
	}
	return -1
}

func (g *regs) set(r uint32, v []byte) {
	o := off(r)
	if o < 0 || o+len(v) > len(g.b) {
		return
	}
	copy(g.b[o:], v)
	for i := range v {
		g.known[o+i] = true
	}
	delete(g.notLoopback, o)
}

func (g *regs) unknown(r uint32, n int) {
	o := off(r)
	if o < 0 || o+n > len(g.b) {
		return
	}
	for i := range n {
		g.known[o+i] = false
	}
	delete(g.notLoopback, o)
}

func (g *regs) get(r uint32, n int) ([]byte, bool) {
	o := off(r)
	if o < 0 || o+n > len(g.b) {
		return nil, false
	}
	for i := range n {
		if !g.known[o+i] {
			return nil, false
		}
	}
	return g.b[o : o+n], true
}

// rule evaluates one rule's match: yes, no or maybe, its verdict, and
// what it matched on in words.
func (e *evaluator) rule(r *nftables.Rule) (m tri, act *expr.Verdict, why, unsure string) {
	g := &regs{}
	m = yes
	var what, maybes []string
	for _, x := range r.Exprs {
		var t tri = yes
		switch x := x.(type) {
		case *expr.Meta:
			if x.SourceRegister {
				continue // sets meta (mark, priority): no match
			}
			e.meta(g, x)
			g.name(x.Register, "meta "+metaName(x.Key))
		case *expr.Payload:
			if x.OperationType != expr.PayloadLoad {
				continue // rewrites the packet
			}
			e.payload(g, x)
			g.name(x.DestRegister, payloadName(x))
		case *expr.Ct:
			if x.SourceRegister {
				continue
			}
			e.ct(g, x)
			g.name(x.Register, ctName(x.Key))
		case *expr.Immediate:
			g.set(x.Register, x.Data)
		case *expr.Bitwise:
			v, ok := g.get(x.SourceRegister, int(x.Len))
			label := g.what(x.SourceRegister)
			if !ok || len(x.Mask) != int(x.Len) || len(x.Xor) != int(x.Len) {
				g.unknown(x.DestRegister, int(x.Len))
				g.name(x.DestRegister, label)
				continue
			}
			out := make([]byte, x.Len)
			for i := range out {
				out[i] = v[i]&x.Mask[i] ^ x.Xor[i]
			}
			g.set(x.DestRegister, out)
			g.name(x.DestRegister, label)
		case *expr.Cmp:
			t = cmpReg(g, x.Register, x.Op, x.Data)
			what = append(what, g.what(x.Register))
		case *expr.Range:
			t = rangeReg(g, x)
			what = append(what, g.what(x.Register))
		case *expr.Lookup:
			if x.IsDestRegSet {
				v, tt := e.vmap(g, x)
				if v != nil {
					act = v
				}
				t = tt
				what = append(what, g.what(x.SourceRegister)+" in map "+x.SetName)
				break
			}
			t = e.lookup(g, x)
			what = append(what, g.what(x.SourceRegister)+" in set "+x.SetName)
		case *expr.Verdict:
			act = x
		case *expr.Reject:
			act = &expr.Verdict{Kind: expr.VerdictDrop}
		case *expr.Match:
			t = e.match(x)
			what = append(what, "xt "+x.Name)
		case *expr.Target:
			switch x.Name {
			case "REJECT", "DROP":
				act = &expr.Verdict{Kind: expr.VerdictDrop}
			case "ACCEPT":
				act = &expr.Verdict{Kind: expr.VerdictAccept}
			case "LOG", "NFLOG", "MARK", "CONNMARK", "NOTRACK", "CT":
			default:
				t = maybe
				what = append(what, "target "+x.Name)
			}
		case *expr.Counter, *expr.Log, *expr.Limit, *expr.Quota, *expr.Notrack, *expr.Dynset, *expr.Objref:
			// Counting, logging, rate limits (taken as passing), set updates.
		default:
			t = maybe
			what = append(what, fmt.Sprintf("%T", x))
		}
		m = and(m, t)
		if m == no {
			return no, nil, "", ""
		}
		if t == maybe && len(what) > 0 {
			maybes = append(maybes, what[len(what)-1])
		}
	}
	if act != nil && (act.Kind == expr.VerdictJump || act.Kind == expr.VerdictGoto) && len(what) == 0 {
		what = append(what, "always")
	}
	return m, act, strings.Join(slices.Compact(what), ", "), strings.Join(slices.Compact(maybes), ", ")
}

func metaName(k expr.MetaKey) string {
	switch k {
	case expr.MetaKeyL4PROTO:
		return "l4proto"
	case expr.MetaKeyNFPROTO:
		return "nfproto"
	case expr.MetaKeyPROTOCOL:
		return "protocol"
	case expr.MetaKeyPKTTYPE:
		return "pkttype"
	case expr.MetaKeyIIFNAME:
		return "iifname"
	case expr.MetaKeyIIF:
		return "iif"
	case expr.MetaKeyMARK:
		return "mark"
	}
	return "key " + strconv.Itoa(int(k))
}

func payloadName(x *expr.Payload) string {
	switch {
	case x.Base == expr.PayloadBaseNetworkHeader && x.Offset == 9:
		return "ip protocol"
	case x.Base == expr.PayloadBaseNetworkHeader && x.Offset == 12:
		return "ip saddr"
	case x.Base == expr.PayloadBaseNetworkHeader && x.Offset == 16:
		return "ip daddr"
	case x.Base == expr.PayloadBaseTransportHeader && x.Offset == 0:
		return "sport"
	case x.Base == expr.PayloadBaseTransportHeader && x.Offset == 2:
		return "dport"
	}
	return "a header field"
}

func ctName(k expr.CtKey) string {
	switch k {
	case expr.CtKeySTATE:
		return "ct state"
	case expr.CtKeySTATUS:
		return "ct status"
	case expr.CtKeyMARK:
		return "ct mark"
	}
	return "ct key " + strconv.Itoa(int(k))
}

// meta loads the meta keys a rule may test on the packet.
func (e *evaluator) meta(g *regs, x *expr.Meta) {
	switch x.Key {
	case expr.MetaKeyL4PROTO:
		g.set(x.Register, []byte{unix.IPPROTO_UDP})
	case expr.MetaKeyNFPROTO:
		g.set(x.Register, []byte{unix.NFPROTO_IPV4})
	case expr.MetaKeyPROTOCOL:
		g.set(x.Register, []byte{0x08, 0x00}) // ETH_P_IP
	case expr.MetaKeyPKTTYPE:
		g.set(x.Register, []byte{unix.PACKET_HOST})
	case expr.MetaKeyIIFNAME, expr.MetaKeyIIF:
		n := 16
		if x.Key == expr.MetaKeyIIF {
			n = 4
		}
		g.unknown(x.Register, n)
		if o := off(x.Register); o >= 0 {
			if g.notLoopback == nil {
				g.notLoopback = map[int]int{}
			}
			g.notLoopback[o] = n
		}
	default:
		g.unknown(x.Register, 16)
	}
}

// payload loads header fields: the IPv4 protocol and the UDP destination
// port are known; the rest (addresses, source port) are not.
func (e *evaluator) payload(g *regs, x *expr.Payload) {
	switch {
	case x.Base == expr.PayloadBaseNetworkHeader && x.Offset == 9 && x.Len == 1:
		g.set(x.DestRegister, []byte{unix.IPPROTO_UDP})
	case x.Base == expr.PayloadBaseTransportHeader && x.Offset == 2 && x.Len == 2:
		g.set(x.DestRegister, binary.BigEndian.AppendUint16(nil, e.p.port))
	default:
		g.unknown(x.DestRegister, int(x.Len))
	}
}

// ctState is the conntrack state bit of the packet (NF_CT_STATE_BIT):
// new for an unsolicited packet, established for a reply.
func (e *evaluator) ctState() uint32 {
	if e.p.established {
		return ctEstablished
	}
	return ctNew
}

// Conntrack state bits, NF_CT_STATE_BIT(ctinfo) = 1 << (ctinfo + 1) with
// IP_CT_ESTABLISHED 0 and IP_CT_NEW 2 (also xt_conntrack's state mask).
const (
	ctEstablished = 1 << (0 + 1)
	ctNew         = 1 << (2 + 1)
)

func (e *evaluator) ct(g *regs, x *expr.Ct) {
	switch x.Key {
	case expr.CtKeySTATE:
		g.set(x.Register, binary.NativeEndian.AppendUint32(nil, e.ctState()))
	case expr.CtKeyL3PROTOCOL:
		g.set(x.Register, []byte{unix.NFPROTO_IPV4})
	case expr.CtKeyPROTOCOL:
		g.set(x.Register, []byte{unix.IPPROTO_UDP})
	default:
		g.unknown(x.Register, 16)
	}
}

// cmpReg compares a register with data (memcmp order, as nft_cmp does).
func cmpReg(g *regs, r uint32, op expr.CmpOp, data []byte) tri {
	v, ok := g.get(r, len(data))
	if !ok {
		if n, tagged := g.notLoopback[off(r)]; tagged && isLoopback(data, n) {
			switch op {
			case expr.CmpOpEq:
				return no
			case expr.CmpOpNeq:
				return yes
			}
		}
		return maybe
	}
	c := bytes.Compare(v, data)
	var t bool
	switch op {
	case expr.CmpOpEq:
		t = c == 0
	case expr.CmpOpNeq:
		t = c != 0
	case expr.CmpOpLt:
		t = c < 0
	case expr.CmpOpLte:
		t = c <= 0
	case expr.CmpOpGt:
		t = c > 0
	case expr.CmpOpGte:
		t = c >= 0
	default:
		return maybe
	}
	if t {
		return yes
	}
	return no
}

// isLoopback reports whether data names the loopback interface: "lo"
// (IIFNAME, NUL-padded) or index 1 (IIF).
func isLoopback(data []byte, n int) bool {
	if n == 4 && len(data) == 4 {
		return binary.NativeEndian.Uint32(data) == 1
	}
	return string(bytes.TrimRight(data, "\x00")) == "lo"
}

func rangeReg(g *regs, x *expr.Range) tri {
	v, ok := g.get(x.Register, len(x.FromData))
	if !ok || len(x.ToData) != len(x.FromData) {
		return maybe
	}
	in := bytes.Compare(v, x.FromData) >= 0 && bytes.Compare(v, x.ToData) <= 0
	switch x.Op {
	case expr.CmpOpEq:
	case expr.CmpOpNeq:
		in = !in
	default:
		return maybe
	}
	if in {
		return yes
	}
	return no
}

// set returns the set a lookup names in this chain's table.
func (e *evaluator) set(name string) *setElems {
	for k, s := range e.rs.sets {
		if k.set == name && k.family == e.family {
			return s
		}
	}
	return nil
}

// member reports whether key is in s: exactly, or inside an interval.
func member(s *setElems, key []byte) tri {
	if s.set.Concatenation {
		return maybe
	}
	if !s.set.Interval {
		for _, el := range s.elems {
			if bytes.Equal(el.Key, key) {
				return yes
			}
		}
		return no
	}
	// Intervals: each range is a start element and an end (exclusive)
	// element flagged IntervalEnd; the nearest element at or below the
	// key decides.
	var best *nftables.SetElement
	for i := range s.elems {
		el := &s.elems[i]
		if len(el.Key) != len(key) || bytes.Compare(el.Key, key) > 0 {
			continue
		}
		if best == nil || bytes.Compare(el.Key, best.Key) > 0 || (bytes.Equal(el.Key, best.Key) && !el.IntervalEnd) {
			best = el
		}
	}
	if best != nil && !best.IntervalEnd {
		if len(best.KeyEnd) == len(key) && bytes.Compare(key, best.KeyEnd) > 0 {
			return no
		}
		return yes
	}
	return no
}

func (e *evaluator) lookup(g *regs, x *expr.Lookup) tri {
	s := e.set(x.SetName)
	if s == nil || len(s.elems) == 0 && s.set.Dynamic {
		return maybe
	}
	n := keyLen(s)
	if n == 0 {
		return maybe
	}
	key, ok := g.get(x.SourceRegister, n)
	if !ok {
		return maybe
	}
	t := member(s, key)
	if x.Invert {
		t = not(t)
	}
	return t
}

// vmap looks the key up in a verdict map: the verdict found, and whether
// the lookup matched.
func (e *evaluator) vmap(g *regs, x *expr.Lookup) (*expr.Verdict, tri) {
	s := e.set(x.SetName)
	if s == nil || x.DestRegister != unix.NFT_REG_VERDICT {
		return nil, maybe
	}
	n := keyLen(s)
	key, ok := g.get(x.SourceRegister, n)
	if !ok || n == 0 || s.set.Interval || s.set.Concatenation {
		return nil, maybe
	}
	for _, el := range s.elems {
		if bytes.Equal(el.Key, key) && el.VerdictData != nil {
			return el.VerdictData, yes
		}
	}
	return nil, no
}

// keyLen is the length of s's keys, 0 when unknown.
func keyLen(s *setElems) int {
	for _, el := range s.elems {
		if len(el.Key) > 0 {
			return len(el.Key)
		}
	}
	return int(s.set.KeyType.Bytes)
}

// match judges the xt matches iptables-nft leaves as compat
// expressions: udp ports, conntrack state, comments; others are maybe.
func (e *evaluator) match(x *expr.Match) tri {
	switch info := x.Info.(type) {
	case *xt.Udp:
		in := e.p.port >= info.DstPorts[0] && e.p.port <= info.DstPorts[1]
		if info.InvFlags&xt.UdpInvDestPorts != 0 {
			in = !in
		}
		t := no
		if in {
			t = yes
		}
		if info.SrcPorts != [2]uint16{0, 0xffff} {
			t = and(t, maybe)
		}
		return t
	case *xt.ConntrackMtinfo1:
		return e.ctMatch(info.ConntrackMtinfoBase, uint16(info.StateMask))
	case *xt.ConntrackMtinfo2:
		return e.ctMatch(info.ConntrackMtinfoBase, info.StateMask)
	case *xt.ConntrackMtinfo3:
		return e.ctMatch(info.ConntrackMtinfoBase, info.StateMask)
	case *xt.Comment:
		return yes
	}
	if x.Name == "comment" {
		return yes
	}
	return maybe
}

// ctMatch judges an xt conntrack match that tests only the state.
func (e *evaluator) ctMatch(b xt.ConntrackMtinfoBase, stateMask uint16) tri {
	if b.MatchFlags&^uint16(xt.ConntrackState|xt.ConntrackStateAlias) != 0 {
		return maybe
	}
	in := uint32(stateMask)&e.ctState() != 0
	if b.InvertFlags&uint16(xt.ConntrackState) != 0 {
		in = !in
	}
	if in {
		return yes
	}
	return no
}
