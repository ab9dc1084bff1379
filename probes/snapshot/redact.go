package snapshot

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes/controlapi"
)

// Redaction says what Redact replaced and what it left out, in words a
// person reads before sharing the file.
type Redaction struct {
	Replaced []string `json:"replaced"`
	Removed  []string `json:"removed"`
}

// vocabulary are tailpath's and tailscaled's own words in the file (states,
// path kinds, sources, reason ids): a host named like one keeps its name
// rather than turn them all into pseudonyms.
var vocabulary = []string{
	"running", "stopped", "starting", "needslogin", "needsmachineauth", "nostate",
	"direct", "relay", "peer-relay", "idle", "offline", "ok", "fail", "info", "unknown",
	"localapi", "control-api", "peer-snapshot", "netcheck", "netinfo", "device", "pasted",
	"error", "pending", "off", "latency", "lowest-id", "fixed", "none", "wired", "wifi", "mobile",
	"true", "false", "null", "unexplained", "no-endpoints", "no-handshake", "key-expired",
}

// redactedSuffix replaces the tailnet's MagicDNS suffix and name
// (RFC 2606 reserves .invalid).
const redactedSuffix = "tailnet.invalid"

// mullvadSuffix is kept: `tailscale status` (and tailscaled.HiddenByCLI) hide
// Mullvad exit nodes by it.
const mullvadSuffix = "mullvad.ts.net"

// ErrLeak is returned by Redact when an original identifier survived in
// its output; nothing is returned then.
var ErrLeak = errors.New("redaction incomplete")

// Redact returns a copy of f that is safe to share, and that diagnoses the
// same as f (File.Diagnose gives every peer the same path kind, reason,
// also-reasons and checks, with addresses and names replaced):
//
//   - every node gets one pseudonym (host-1 is us), used for its host
//     name, MagicDNS name, WhoIs name and a board of the same name, in
//     every field and in free text (health messages, warnings), matched
//     case-insensitively as a whole word;
//   - addresses keep their class: RFC 1918 stays in its own range, CGNAT
//     and Tailscale addresses (100.64.0.0/10, fd7a:115c:a1e0::/48) stay
//     there, loopback and link-local stay so, public IPv4 goes to the
//     documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
//     then 198.18.0.0/15) and public IPv6 to 2001:db8::/32; equal
//     addresses stay equal, private IPv4 addresses of one /24 (IPv6: /64)
//     stay in one, ports are kept;
//   - node, disco and machine keys, stable node ids and numeric ids, user
//     logins and display names, the tailnet's name and MagicDNS suffix are
//     replaced; custom DERP host names too;
//   - fields no diagnosis reads are left out (tags, routes, capabilities
//     other than only-tcp-443, SSH host keys, PeerAPI URLs, locations,
//     Hostinfo other than OS, version, host name and NetInfo, the ignored
//     lines of pasted input).
//
// Well-known addresses that identify nobody stay as they are (::1, 0.0.0.0,
// 100.100.100.100, ChromeOS's 100.115.92.0/23, multicast). DERP region
// codes and names stay: the diagnosis names them. f.Redacted on the
// result says what was done. Redact checks its own output for every
// original address, key, id, login, tailnet name and host name, and
// returns ErrLeak rather than a file that still holds one.
func Redact(f *File) (*File, error) {
	out, _, err := redact(f)
	return out, err
}

// redact is Redact, also returning the redactor for tests (its text
// mapping applied to the original verdicts must give the redacted ones).
func redact(f *File) (*File, *redactor, error) {
	orig, err := json.Marshal(f)
	if err != nil {
		return nil, nil, err
	}
	r := newRedactor(f, orig)
	pf := r.prune(f)
	b, err := json.Marshal(pf)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, nil, err
	}
	tree = r.walk(tree)
	b, err = json.Marshal(tree)
	if err != nil {
		return nil, nil, err
	}
	var out File
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, nil, fmt.Errorf("snapshot: redacted file does not decode: %w", err)
	}
	// The check reads the file as written, but for the summary added
	// next, whose text names the documentation ranges themselves.
	final, err := json.Marshal(&out)
	if err != nil {
		return nil, nil, err
	}
	if leaks := r.leaks(final); len(leaks) > 0 {
		return nil, nil, fmt.Errorf("%w: %s still present; not writing it", ErrLeak, strings.Join(leaks, ", "))
	}
	out.Redacted = r.summary()
	return &out, r, nil
}

// redactor holds one redaction's consistent mappings.
type redactor struct {
	// Originals, to avoid as pseudonyms and to search the output for.
	origIPs  map[netip.Addr]bool
	origNets map[netip.Prefix]bool // /24 and /64 of every original
	origKeys map[string]bool

	addrs map[netip.Addr]netip.Addr
	nets  map[netip.Prefix]netip.Prefix // /24 (IPv4) or /64 (IPv6)
	hosts map[netip.Prefix]uint64       // next host number per mapped /64
	used  map[netip.Addr]bool           // pseudonym addresses handed out
	usedN map[netip.Prefix]bool
	next  map[string]int // next pool index per class

	names    map[string]string // lower-case host name → pseudonym
	kept     map[string]bool   // lower-case words never treated as names (region codes, OS names)
	ids      map[string]string // stable node id → pseudonym id
	keys     map[string]string // "nodekey:…" → pseudonym key
	logins   map[string]string // login (and "local@") → pseudonym
	suffixes map[string]bool   // lower-case tailnet suffixes and names
	nodeNums map[tailcfg.NodeID]tailcfg.NodeID
	userNums map[tailcfg.UserID]tailcfg.UserID

	origNames map[string]bool // lower-case original host names
	hostN     int             // last host-N handed out

	// keyN is the number of the last key placeholder handed out.
	keyN int

	// keepNames makes prune keep names, numeric ids, logins, the
	// tailnet's name and DERP host names (Scrub).
	keepNames bool

	byFirst   map[byte][]string // known names by first byte, longest first
	literals  []string          // ids, logins and suffixes, longest first
	lowerLits []string          // literals, lower-case
}

// keyRE matches a Tailscale key (key.NodePublic's text form and its kin),
// compiled on first use, not at start-up, as the pasted-text readers'
// patterns are (probes/paste's lazyRE).
var keyRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(nodekey|discokey|mkey|nlpub|privkey|nodekey-sig):[0-9a-fA-F]{64}\b`)
})

// addrByte reports whether c can be part of an IPv4 or IPv6 address (with
// a port).
func addrByte(c byte) bool {
	return c == ':' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// mapAddrs replaces every address inside s (alone, or with a port) by
// fn's, keeping the port; runs of address characters that are no address
// (times, hex words) are left as they are.
func mapAddrs(s string, fn func(netip.Addr) netip.Addr) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !addrByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && addrByte(s[j]) {
			j++
		}
		run := strings.TrimRight(s[i:j], ":.")
		if !strings.ContainsAny(run, ".:") {
			i = j
			continue
		}
		var out string
		if a, err := netip.ParseAddr(run); err == nil {
			out = fn(a).String()
		} else if ap, err := netip.ParseAddrPort(run); err == nil {
			out = netip.AddrPortFrom(fn(ap.Addr()), ap.Port()).String()
		} else {
			i = j
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(out)
		last = i + len(run)
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// Address classes and the pools their pseudonyms come from.
var (
	chromeOS  = netip.MustParsePrefix("100.115.92.0/23")
	quad100   = netip.MustParseAddr("100.100.100.100")
	quad100v6 = netip.MustParseAddr("fd7a:115c:a1e0::53")
	tsULA     = netip.MustParsePrefix("fd7a:115c:a1e0::/48")
	classes4  = []class4{
		{"cgnat", netip.MustParsePrefix("100.64.0.0/10"), netip.MustParseAddr("100.80.0.0")},
		{"rfc1918-10", netip.MustParsePrefix("10.0.0.0/8"), netip.MustParseAddr("10.77.0.0")},
		{"rfc1918-172", netip.MustParsePrefix("172.16.0.0/12"), netip.MustParseAddr("172.29.0.0")},
		{"rfc1918-192", netip.MustParsePrefix("192.168.0.0/16"), netip.MustParseAddr("192.168.77.0")},
		{"link-local", netip.MustParsePrefix("169.254.0.0/16"), netip.MustParseAddr("169.254.77.0")},
		{"loopback", netip.MustParsePrefix("127.0.0.0/8"), netip.MustParseAddr("127.77.0.0")},
	}
	publicV4Pools = []netip.Prefix{
		netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"),
		netip.MustParsePrefix("198.18.0.0/15"),
	}
	classes6 = []class6{
		{"tailscale-v6", tsULA, netip.MustParseAddr("fd7a:115c:a1e0:7e57::")},
		{"ula", netip.MustParsePrefix("fc00::/7"), netip.MustParseAddr("fd5e:d4c7:77::")},
		{"link-local-v6", netip.MustParsePrefix("fe80::/10"), netip.MustParseAddr("fe80:0:0:77::")},
		{"public-v6", netip.MustParsePrefix("::/0"), netip.MustParseAddr("2001:db8:77::")},
	}
)

type class4 struct {
	name  string
	in    netip.Prefix
	start netip.Addr // first /24 tried
}

type class6 struct {
	name  string
	in    netip.Prefix
	start netip.Addr // first /64 tried
}

// newRedactor is long on purpose: every word of the file is collected before
// any pseudonym is handed out, so that none equals an original; the order is
// the point.
func newRedactor(f *File, orig []byte) *redactor {
	r := &redactor{
		origIPs: map[netip.Addr]bool{}, origNets: map[netip.Prefix]bool{}, origKeys: map[string]bool{},
		addrs: map[netip.Addr]netip.Addr{}, nets: map[netip.Prefix]netip.Prefix{}, hosts: map[netip.Prefix]uint64{},
		used: map[netip.Addr]bool{}, usedN: map[netip.Prefix]bool{}, next: map[string]int{},
		names: map[string]string{}, kept: map[string]bool{"localhost": true}, ids: map[string]string{},
		keys: map[string]string{}, logins: map[string]string{}, suffixes: map[string]bool{},
		nodeNums: map[tailcfg.NodeID]tailcfg.NodeID{}, userNums: map[tailcfg.UserID]tailcfg.UserID{},
	}
	// Every address and key in the original, however deep.
	s := string(orig)
	mapAddrs(s, func(a netip.Addr) netip.Addr {
		r.noteOrig(a)
		return a
	})
	for _, k := range keyRE().FindAllString(s, -1) {
		r.origKeys[strings.ToLower(k)] = true
	}
	// Words that stay: DERP region codes and names, OS names.
	if dm := f.DERPMap; dm != nil {
		for _, reg := range dm.Regions {
			if reg != nil {
				r.kept[strings.ToLower(reg.RegionCode)] = true
				r.kept[strings.ToLower(reg.RegionName)] = true
			}
		}
	}
	// Nodes: us first, then peers by stable id.
	var nodes []*ipnstate.PeerStatus
	if st := f.Status; st != nil {
		if st.Self != nil {
			nodes = append(nodes, st.Self)
		}
		peers := slices.Collect(maps.Values(st.Peer))
		slices.SortFunc(peers, func(a, b *ipnstate.PeerStatus) int {
			return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.HostName, b.HostName))
		})
		for _, p := range peers {
			if p != nil {
				nodes = append(nodes, p)
				r.kept[strings.ToLower(p.OS)] = true
			}
		}
		if st.Self != nil {
			r.kept[strings.ToLower(st.Self.OS)] = true
		}
		//lint:ignore SA1019 status JSON pasted from older clients carries the suffix only here, and redaction must find it
		r.addSuffix(st.MagicDNSSuffix)
		if t := st.CurrentTailnet; t != nil {
			r.addSuffix(t.MagicDNSSuffix)
			r.addSuffix(t.Name)
		}
		for _, d := range st.CertDomains {
			r.addSuffix(d)
		}
		uids := slices.Sorted(maps.Keys(st.User))
		for _, uid := range uids {
			n := len(r.userNums) + 1
			r.userNums[uid] = tailcfg.UserID(n)
			u := st.User[uid]
			r.addLogin(u.LoginName, fmt.Sprintf("user-%d@example.com", n))
			if u.DisplayName != "" && !r.kept[strings.ToLower(u.DisplayName)] {
				r.names[strings.ToLower(u.DisplayName)] = fmt.Sprintf("User %d", n)
			}
		}
	}
	delete(r.kept, "")
	for _, w := range vocabulary {
		r.kept[w] = true
	}
	// Node groups (stable id and names), all collected before any
	// pseudonym is handed out, so none equals an original name.
	type group struct {
		id    string
		names []string
	}
	var groups []group
	for _, ps := range nodes {
		groups = append(groups, group{string(ps.ID), []string{ps.HostName, firstLabel(ps.DNSName)}})
		r.nodeNum(ps.NodeID)
	}
	for _, w := range f.WhoIs {
		if n := w.Node; n != nil {
			host := ""
			if n.Hostinfo.Valid() {
				host = n.Hostinfo.Hostname()
			}
			groups = append(groups, group{string(n.StableID), []string{host, firstLabel(n.Name), firstLabel(n.ComputedName)}})
			r.nodeNum(n.ID)
			if n.User != 0 {
				r.userNum(n.User)
			}
		}
	}
	if f.ControlAPI != nil && f.ControlAPI.Facts != nil {
		if b, err := json.Marshal(f.ControlAPI.Facts); err == nil {
			var facts struct {
				Records []struct {
					NodeID string `json:"node_id"`
				} `json:"records"`
			}
			if json.Unmarshal(b, &facts) == nil {
				for _, rec := range facts.Records {
					groups = append(groups, group{id: rec.NodeID})
				}
			}
		}
	}
	if f.Board != nil {
		groups = append(groups, group{names: []string{f.Board.Evidence.Hostname}})
	}
	r.origNames = map[string]bool{}
	for _, g := range groups {
		for _, n := range g.names {
			r.origNames[strings.ToLower(n)] = true
		}
	}
	byID := map[string]string{}
	for _, g := range groups {
		pseudo := ""
		if g.id != "" {
			pseudo = byID[g.id]
		}
		for _, n := range g.names {
			if p, ok := r.names[strings.ToLower(n)]; ok && pseudo == "" && n != "" {
				pseudo = p
			}
		}
		if pseudo == "" {
			pseudo = r.newHost()
		}
		if g.id != "" {
			byID[g.id] = pseudo
			r.ids[g.id] = "n" + strings.ToUpper(strings.ReplaceAll(pseudo, "-", "")) + "CNTRL"
		}
		for _, n := range g.names {
			if l := strings.ToLower(n); l != "" && !r.kept[l] {
				r.names[l] = pseudo
			}
		}
	}
	r.compile()
	return r
}

// noteOrig records an address of the original.
func (r *redactor) noteOrig(a netip.Addr) {
	a = a.Unmap().WithZone("")
	r.origIPs[a] = true
	bits := 64
	if a.Is4() {
		bits = 24
	}
	if p, err := a.Prefix(bits); err == nil {
		r.origNets[p] = true
	}
}

func (r *redactor) addSuffix(s string) {
	s = strings.ToLower(strings.Trim(s, "."))
	if s == "" || strings.HasSuffix(s, mullvadSuffix) {
		return
	}
	r.suffixes[s] = true
}

func (r *redactor) addLogin(login, pseudo string) {
	if login == "" {
		return
	}
	r.logins[strings.ToLower(login)] = pseudo
	if local, _, ok := strings.Cut(login, "@"); ok && len(local) >= 2 {
		r.logins[strings.ToLower(local)+"@"] = strings.SplitAfter(pseudo, "@")[0]
	}
}

func (r *redactor) userNum(u tailcfg.UserID) tailcfg.UserID {
	if r.keepNames {
		return u
	}
	if n, ok := r.userNums[u]; ok {
		return n
	}
	n := tailcfg.UserID(len(r.userNums) + 1)
	r.userNums[u] = n
	return n
}

func (r *redactor) nodeNum(n tailcfg.NodeID) tailcfg.NodeID {
	if n == 0 || r.keepNames {
		return 0
	}
	if m, ok := r.nodeNums[n]; ok {
		return m
	}
	m := tailcfg.NodeID(len(r.nodeNums) + 1)
	r.nodeNums[n] = m
	return m
}

// newHost returns the next free pseudonym host-N (never an original name).
func (r *redactor) newHost() string {
	for {
		r.hostN++
		p := "host-" + strconv.Itoa(r.hostN)
		if !r.origNames[p] {
			return p
		}
	}
}

// compile builds the free-text matchers.
func (r *redactor) compile() {
	r.byFirst = map[byte][]string{}
	for n := range r.names {
		if len(n) >= 2 {
			r.byFirst[n[0]] = append(r.byFirst[n[0]], n)
		}
	}
	for b, ns := range r.byFirst {
		slices.SortFunc(ns, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(a, b)) })
		r.byFirst[b] = ns
	}
	r.literals = r.literals[:0]
	for id := range r.ids {
		if id != "" && id[0] != 0 {
			r.literals = append(r.literals, id)
		}
	}
	for l := range r.logins {
		r.literals = append(r.literals, l)
	}
	for s := range r.suffixes {
		r.literals = append(r.literals, s)
	}
	slices.SortFunc(r.literals, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(a, b)) })
	r.lowerLits = make([]string, len(r.literals))
	for i, l := range r.literals {
		r.lowerLits[i] = strings.ToLower(l)
	}
}

// wordByte reports whether c continues a word (names match whole words).
func wordByte(c byte) bool {
	return c == '_' || c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// names finds the known host names in s as whole words (ignoring ASCII
// case), longest first at each position; replace maps each, else they
// are only reported.
func (r *redactor) scanNames(s string, replace bool) (string, []string) {
	var b strings.Builder
	var found []string
	last := 0
	for i := 0; i < len(s); i++ {
		if i > 0 && wordByte(s[i-1]) {
			continue
		}
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		for _, n := range r.byFirst[c] {
			end := i + len(n)
			if end > len(s) || !strings.EqualFold(s[i:end], n) || (end < len(s) && wordByte(s[end])) {
				continue
			}
			found = append(found, s[i:end])
			if replace {
				b.WriteString(s[last:i])
				b.WriteString(r.names[n])
				last = end
			}
			i = end - 1
			break
		}
	}
	if !replace || last == 0 {
		return s, found
	}
	b.WriteString(s[last:])
	return b.String(), found
}

// literal maps one id, login or tailnet suffix.
func (r *redactor) literal(l string) string {
	if p, ok := r.ids[l]; ok {
		return p
	}
	if p, ok := r.logins[strings.ToLower(l)]; ok {
		return p
	}
	return redactedSuffix
}

// prune copies f keeping what a diagnosis reads, with the numeric ids and
// users replaced; strings are left to walk.
func (r *redactor) prune(f *File) *File {
	out := *f
	out.Ignored = nil
	if n := len(f.Ignored); n > 0 {
		for _, ig := range f.Ignored {
			out.Ignored = append(out.Ignored, Ignored{Name: ig.Name, Line: ig.Line})
		}
	}
	if st := f.Status; st != nil {
		ps := &ipnstate.Status{
			Version:      st.Version,
			TUN:          st.TUN,
			BackendState: st.BackendState,
			HaveNodeKey:  st.HaveNodeKey,
			TailscaleIPs: st.TailscaleIPs,
			Self:         r.prunePeer(st.Self),
			Health:       st.Health,
		}
		//lint:ignore SA1019 status JSON pasted from older clients carries the suffix only here; the redacted copy keeps its shape
		if st.MagicDNSSuffix != "" {
			//lint:ignore SA1019 as above
			ps.MagicDNSSuffix = redactedSuffix
		}
		if t := st.CurrentTailnet; t != nil {
			ps.CurrentTailnet = &ipnstate.TailnetStatus{Name: redactedSuffix, MagicDNSSuffix: redactedSuffix, MagicDNSEnabled: t.MagicDNSEnabled}
		}
		if r.keepNames {
			//lint:ignore SA1019 as above
			ps.MagicDNSSuffix = st.MagicDNSSuffix
			if t := st.CurrentTailnet; t != nil {
				ps.CurrentTailnet = &ipnstate.TailnetStatus{Name: t.Name, MagicDNSSuffix: t.MagicDNSSuffix, MagicDNSEnabled: t.MagicDNSEnabled}
			}
		}
		if st.Peer != nil {
			ps.Peer = make(map[key.NodePublic]*ipnstate.PeerStatus, len(st.Peer))
			for k, p := range st.Peer {
				ps.Peer[k] = r.prunePeer(p)
			}
		}
		if len(st.User) > 0 {
			ps.User = make(map[tailcfg.UserID]tailcfg.UserProfile, len(st.User))
			for uid, u := range st.User {
				n := r.userNum(uid)
				ps.User[n] = tailcfg.UserProfile{ID: n, LoginName: fmt.Sprintf("user-%d@example.com", n), DisplayName: fmt.Sprintf("User %d", n)}
				if r.keepNames {
					ps.User[n] = tailcfg.UserProfile{ID: n, LoginName: u.LoginName, DisplayName: u.DisplayName}
				}
			}
		}
		out.Status = ps
	}
	out.WhoIs = nil
	for _, w := range f.WhoIs {
		out.WhoIs = append(out.WhoIs, WhoIs{Addr: w.Addr, Node: r.pruneNode(w.Node), Err: w.Err, Denied: w.Denied})
	}
	if !r.keepNames {
		out.DERPMap = pruneDERPMap(f.DERPMap)
	}
	if c := f.ControlAPI; c != nil {
		// An error body may echo the request, credentials included.
		cc := *c
		cc.Status.Err = safetext.New(controlapi.APIErrorSummary(string(c.Status.Err)))
		out.ControlAPI = &cc
	}
	if t := f.Tuning; t != nil {
		tc := *t
		tc.Root = ""
		out.Tuning = &tc
	}
	return &out
}

// prunePeer keeps the PeerStatus fields tailscaled.Gather and probes.Classify read.
func (r *redactor) prunePeer(p *ipnstate.PeerStatus) *ipnstate.PeerStatus {
	if p == nil {
		return nil
	}
	out := &ipnstate.PeerStatus{
		ID: p.ID, NodeID: r.nodeNum(p.NodeID), PublicKey: p.PublicKey, HostName: p.HostName, DNSName: p.DNSName,
		OS: p.OS, TailscaleIPs: p.TailscaleIPs, Addrs: p.Addrs, CurAddr: p.CurAddr, Relay: p.Relay,
		PeerRelay: p.PeerRelay, RxBytes: p.RxBytes, TxBytes: p.TxBytes, Created: p.Created,
		LastWrite: p.LastWrite, LastSeen: p.LastSeen, LastHandshake: p.LastHandshake, Online: p.Online,
		ExitNode: p.ExitNode, ExitNodeOption: p.ExitNodeOption, Active: p.Active, ShareeNode: p.ShareeNode,
		InNetworkMap: p.InNetworkMap, InMagicSock: p.InMagicSock, InEngine: p.InEngine, Expired: p.Expired,
		KeyExpiry: p.KeyExpiry,
	}
	if !p.UserID.IsZero() {
		out.UserID = r.userNum(p.UserID)
	}
	if !p.AltSharerUserID.IsZero() {
		out.AltSharerUserID = r.userNum(p.AltSharerUserID)
	}
	if p.CapMap.Contains(tscompat.NodeAttrOnlyTCP443) {
		out.CapMap = tailcfg.NodeCapMap{tscompat.NodeAttrOnlyTCP443: nil}
	}
	return out
}

// pruneNode keeps the tailcfg.Node fields tailscaled.Gather reads.
func (r *redactor) pruneNode(n *tailcfg.Node) *tailcfg.Node {
	if n == nil {
		return nil
	}
	out := &tailcfg.Node{
		ID: r.nodeNum(n.ID), StableID: n.StableID, Name: n.Name, Key: n.Key, DiscoKey: n.DiscoKey,
		Addresses: n.Addresses, Endpoints: n.Endpoints, HomeDERP: n.HomeDERP, Online: n.Online,
		LastSeen: n.LastSeen, Cap: n.Cap, Created: n.Created,
	}
	if n.User != 0 {
		out.User = r.userNum(n.User)
	}
	if n.Hostinfo.Valid() {
		hi := &tailcfg.Hostinfo{
			OS:         n.Hostinfo.OS(),
			IPNVersion: n.Hostinfo.IPNVersion(),
			Hostname:   n.Hostinfo.Hostname(),
		}
		if ni := n.Hostinfo.NetInfo(); ni.Valid() {
			hi.NetInfo = ni.AsStruct()
		}
		out.Hostinfo = hi.View()
	}
	return out
}

// pruneDERPMap keeps regions, their codes and names, and per node what
// reaching it needs; custom DERP host names are replaced.
func pruneDERPMap(dm *tailcfg.DERPMap) *tailcfg.DERPMap {
	if dm == nil {
		return nil
	}
	out := &tailcfg.DERPMap{Regions: make(map[tscompat.RegionID]*tailcfg.DERPRegion, len(dm.Regions)), OmitDefaultRegions: dm.OmitDefaultRegions}
	for id, reg := range dm.Regions {
		if reg == nil {
			continue
		}
		rc := &tailcfg.DERPRegion{RegionID: reg.RegionID, RegionCode: reg.RegionCode, RegionName: reg.RegionName, NoMeasureNoHome: reg.NoMeasureNoHome}
		for _, n := range reg.Nodes {
			if n == nil {
				continue
			}
			nc := *n
			if _, err := netip.ParseAddr(nc.HostName); err != nil && !strings.HasSuffix(strings.ToLower(nc.HostName), ".tailscale.com") {
				nc.HostName = fmt.Sprintf("derp-%d-%s.invalid", id, sanitizeLabel(n.Name))
			}
			nc.CertName = ""
			rc.Nodes = append(rc.Nodes, &nc)
		}
		out.Regions[id] = rc
	}
	return out
}

// sanitizeLabel keeps letters and digits of s (a DERP node's short name).
func sanitizeLabel(s string) string {
	var b strings.Builder
	for _, c := range s {
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		}
	}
	if b.Len() == 0 {
		return "node"
	}
	return b.String()
}

// walk maps every string and object key of a decoded JSON tree.
func (r *redactor) walk(v any) any {
	switch v := v.(type) {
	case map[string]any:
		// Sorted, so that pseudonyms are handed out in the same order
		// every time: one input, one redacted output.
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out[r.mapKey(k)] = r.walk(v[k])
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = r.walk(e)
		}
		return v
	case string:
		return r.text(v)
	}
	return v
}

// mapKey maps an object key: only keys, stable ids and addresses (the
// maps of peers by node key and by id), never field names.
func (r *redactor) mapKey(k string) string {
	if keyRE().MatchString(k) && len(keyRE().FindString(k)) == len(k) {
		return r.key(k)
	}
	if p, ok := r.ids[k]; ok {
		return p
	}
	if a, err := netip.ParseAddr(k); err == nil {
		return r.addr(a).String()
	}
	return k
}

// text maps one string: an address, address:port or prefix, a key, a
// stable id, a login, a host or DNS name, else free text with any of them
// inside.
func (r *redactor) text(s string) string {
	if s == "" {
		return s
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return r.addr(a).String()
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return netip.AddrPortFrom(r.addr(ap.Addr()), ap.Port()).String()
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return netip.PrefixFrom(r.addr(p.Addr()), p.Bits()).String()
	}
	if keyRE().MatchString(s) && len(keyRE().FindString(s)) == len(s) {
		return r.key(s)
	}
	if p, ok := r.ids[s]; ok {
		return p
	}
	if p, ok := r.names[strings.ToLower(s)]; ok {
		return p
	}
	if d, ok := r.dnsName(s); ok {
		return d
	}
	return r.freeText(s)
}

// dnsName maps a MagicDNS name ("nas.tail1234.ts.net.") whose first label
// is a known host or whose suffix is the tailnet's.
func (r *redactor) dnsName(s string) (string, bool) {
	trail := strings.HasSuffix(s, ".")
	name := strings.TrimSuffix(s, ".")
	first, rest, ok := strings.Cut(name, ".")
	if !ok || strings.ContainsAny(name, " /:@") {
		return "", false
	}
	p, known := r.names[strings.ToLower(first)]
	lrest := strings.ToLower(rest)
	switch {
	case r.suffixes[lrest]:
		rest = redactedSuffix
	case lrest == mullvadSuffix:
	case known:
		rest = "redacted.invalid"
	default:
		return "", false
	}
	if !known {
		p = first
		if !r.kept[strings.ToLower(first)] {
			// A host first met under the tailnet's suffix.
			p = r.newHost()
			r.names[strings.ToLower(first)] = p
			r.compile()
		}
	}
	out := p + "." + rest
	if trail {
		out += "."
	}
	return out, true
}

// freeText replaces keys, addresses, ids, logins, tailnet suffixes and
// host names inside s.
func (r *redactor) freeText(s string) string {
	s = keyRE().ReplaceAllStringFunc(s, r.key)
	s = mapAddrs(s, r.addr)
	low := strings.ToLower(s)
	for k, l := range r.lowerLits {
		if !strings.Contains(low, l) {
			continue
		}
		var b strings.Builder
		for i := indexFold(s, l); i >= 0; i = indexFold(s, l) {
			b.WriteString(s[:i])
			b.WriteString(r.literal(r.literals[k]))
			s = s[i+len(l):]
		}
		b.WriteString(s)
		s = b.String()
		low = strings.ToLower(s)
	}
	s, _ = r.scanNames(s, true)
	return s
}

// indexFold is strings.Index ignoring ASCII case.
func indexFold(s, sub string) int {
	return strings.Index(strings.ToLower(s), strings.ToLower(sub))
}

// key maps a "type:hex" key to a pseudonym key of the same type.
func (r *redactor) key(k string) string {
	lk := strings.ToLower(k)
	if p, ok := r.keys[lk]; ok {
		return p
	}
	typ, _, _ := strings.Cut(lk, ":")
	// The counter carries on from the last placeholder, so skipping
	// placeholders that are original keys costs each once, not once per
	// key after them.
	for r.keyN = max(r.keyN, len(r.keys)); ; {
		r.keyN++
		p := fmt.Sprintf("%s:%064x", typ, r.keyN)
		if !r.origKeys[p] {
			r.keys[lk] = p
			return p
		}
	}
}

// keepAddr reports whether a identifies nobody and stays as it is.
func keepAddr(a netip.Addr) bool {
	for _, c := range classes4 {
		if a == c.in.Addr() {
			return true // a class's own prefix, as code and docs name it
		}
	}
	for _, c := range classes6 {
		if a == c.in.Addr() {
			return true
		}
	}
	return a.IsUnspecified() || a.IsMulticast() || a == quad100 || a == quad100v6 ||
		(a.Is6() && a.IsLoopback()) || (a.Is4() && (a.As4()[0] == 0 || a.As4()[0] >= 240)) ||
		chromeOS.Contains(a)
}

// addr maps one address, keeping its class (see Redact).
func (r *redactor) addr(a netip.Addr) netip.Addr {
	if !a.IsValid() {
		return a
	}
	zone := a.Zone()
	a = a.WithZone("")
	if a.Is4In6() {
		m := r.addr(a.Unmap())
		return netip.AddrFrom16(m.As16()).WithZone(zone)
	}
	if keepAddr(a) || r.used[a] {
		return a.WithZone(zone)
	}
	if m, ok := r.addrs[a]; ok {
		return m.WithZone(zone)
	}
	var m netip.Addr
	if a.Is4() {
		m = r.map4(a)
	} else {
		m = r.map6(a)
	}
	r.addrs[a] = m
	r.used[m] = true
	return m.WithZone(zone)
}

// map4 maps an IPv4 address: private classes /24 by /24 keeping the last
// octet, public ones one by one into the documentation ranges.
func (r *redactor) map4(a netip.Addr) netip.Addr {
	for _, c := range classes4 {
		if !c.in.Contains(a) {
			continue
		}
		p, _ := a.Prefix(24)
		np, ok := r.nets[p]
		if !ok {
			np = r.alloc24(c)
			r.nets[p] = np
		}
		b := np.Addr().As4()
		b[3] = a.As4()[3]
		return netip.AddrFrom4(b)
	}
	for {
		i := r.next["public-v4"]
		r.next["public-v4"] = i + 1
		cand, ok := publicV4At(i)
		if !ok {
			// Past 198.18.0.0/15: keep numbering on (never reached by a
			// real tailnet).
			return netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)})
		}
		if !r.origIPs[cand] && !r.used[cand] {
			return cand
		}
	}
}

// publicV4At is the i-th host of publicV4Pools (skipping .0 and .255 of
// each /24).
func publicV4At(i int) (netip.Addr, bool) {
	for _, p := range publicV4Pools {
		n := 1 << (32 - p.Bits())
		hosts := n / 256 * 254
		if i < hosts {
			b := p.Addr().As4()
			off := uint32(i/254)*256 + uint32(i%254) + 1
			v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
			v += off
			return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
		}
		i -= hosts
	}
	return netip.Addr{}, false
}

// alloc24 returns a fresh /24 of class c that no original uses.
func (r *redactor) alloc24(c class4) netip.Prefix {
	start := c.start.As4()
	base := uint32(start[0])<<24 | uint32(start[1])<<16 | uint32(start[2])<<8
	lo := c.in.Addr().As4()
	first := uint32(lo[0])<<24 | uint32(lo[1])<<16 | uint32(lo[2])<<8
	size := uint32(1) << (32 - c.in.Bits())
	for tries := uint32(0); tries < size/256; tries++ {
		i := r.next[c.name]
		r.next[c.name] = i + 1
		v := first + (base-first+uint32(i)*256)%size
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), 0}), 24)
		if r.origNets[p] || r.usedN[p] || p.Overlaps(chromeOS) || p.Contains(quad100) {
			continue
		}
		r.usedN[p] = true
		return p
	}
	// Every /24 of the class is in use: fall back to sharing.
	return netip.PrefixFrom(c.start, 24)
}

// map6 maps an IPv6 address: its /64 to a fresh /64 of its class, the
// interface id to a counter within it.
func (r *redactor) map6(a netip.Addr) netip.Addr {
	c := classes6[len(classes6)-1]
	for _, cl := range classes6 {
		if cl.in.Contains(a) {
			c = cl
			break
		}
	}
	if a.IsLoopback() {
		return a
	}
	p, _ := a.Prefix(64)
	np, ok := r.nets[p]
	if !ok {
		for {
			i := r.next[c.name]
			r.next[c.name] = i + 1
			b := c.start.As16()
			v := uint16(b[6])<<8 | uint16(b[7])
			v += uint16(i)
			b[6], b[7] = byte(v>>8), byte(v)
			np = netip.PrefixFrom(netip.AddrFrom16(b), 64)
			if !r.origNets[np] && !r.usedN[np] {
				break
			}
		}
		r.usedN[np] = true
		r.nets[p] = np
	}
	for {
		r.hosts[np]++
		b := np.Addr().As16()
		h := r.hosts[np]
		for i := 15; i >= 8 && h > 0; i-- {
			b[i] = byte(h)
			h >>= 8
		}
		m := netip.AddrFrom16(b)
		if !r.origIPs[m] {
			return m
		}
	}
}

// summary words what r replaced.
func (r *redactor) summary() *Redaction {
	hosts := map[string]bool{}
	for _, p := range r.names {
		if strings.HasPrefix(p, "host-") {
			hosts[p] = true
		}
	}
	var mapped4, mapped6 int
	for a := range r.addrs {
		if a.Is4() {
			mapped4++
		} else {
			mapped6++
		}
	}
	return &Redaction{
		Replaced: []string{
			fmt.Sprintf("%d host names, MagicDNS names and node ids → host-N (us: host-1)", len(hosts)),
			fmt.Sprintf("%d IPv4 and %d IPv6 addresses → same class (private stays private, CGNAT and Tailscale stay in 100.64.0.0/10 and fd7a:115c:a1e0::/48, public → 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32); equal stay equal, ports kept", mapped4, mapped6),
			fmt.Sprintf("%d node, disco and machine keys → placeholders", len(r.keys)),
			fmt.Sprintf("%d user logins → user-N@example.com", len(r.userNums)),
			"tailnet name and MagicDNS suffix → " + redactedSuffix,
		},
		Removed: []string{
			"tags, routes, capabilities (but only-tcp-443), SSH host keys, PeerAPI URLs, locations, certificate domains",
			"Hostinfo other than OS, version, host name and NetInfo; custom DERP host names",
			"the text of ignored pasted lines",
			"what the control API said in its errors (tailpath's words for the status stay)",
		},
	}
}

// pseudonyms is every pseudonym r handed out, lower-case (an original
// that happens to equal one is no leak).
func (r *redactor) pseudonyms() map[string]bool {
	out := map[string]bool{redactedSuffix: true}
	for _, m := range []map[string]string{r.names, r.ids, r.logins} {
		for _, p := range m {
			out[strings.ToLower(p)] = true
		}
	}
	return out
}

// leaks lists the kinds of original identifiers still present in b.
func (r *redactor) leaks(b []byte) []string {
	s := string(b)
	found := map[string]bool{}
	mapAddrs(s, func(a netip.Addr) netip.Addr {
		if a = a.Unmap().WithZone(""); r.origIPs[a] && !keepAddr(a) && !r.used[a] {
			found["address "+a.String()] = true
		}
		return a
	})
	for _, k := range keyRE().FindAllString(s, -1) {
		if r.origKeys[strings.ToLower(k)] {
			found["a key"] = true
		}
	}
	low := strings.ToLower(s)
	pseudo := r.pseudonyms()
	for _, l := range r.literals {
		if !pseudo[strings.ToLower(l)] && strings.Contains(low, strings.ToLower(l)) {
			found["id, login or tailnet name "+strconv.Quote(l)] = true
		}
	}
	_, names := r.scanNames(s, false)
	for _, n := range names {
		if !pseudo[strings.ToLower(n)] {
			found["host name "+strconv.Quote(n)] = true
		}
	}
	return slices.Sorted(maps.Keys(found))
}

// firstLabel is the first label of a DNS name.
func firstLabel(s string) string {
	l, _, _ := strings.Cut(s, ".")
	return l
}
