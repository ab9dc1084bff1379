package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
)

// This file writes status --json without reflection for what repeats per
// peer. A thousand peers' verdicts are 3 MB; encoding/json took 40% of a
// one-shot status (docs/perf.md, issue 8). The bytes are the ones
// json.MarshalIndent(out, "", "  ") gives, and a newline:
// TestStatusJSONWriterMatchesEncodingJSON compares them on a snapshot
// with every field of every type set, so a field added to probes.Peer
// (or to any type below it) that is not written here fails that test.
// Self, the regions, the warnings and the steps to settle are written
// here too (json_self.go). The parts a live status rarely holds (the
// board, the control API, a pasted snapshot's provenance, the evidence
// of log lines, a ping run, an endpoint change) are still marshalled by
// encoding/json.

// writeFast writes out as json.MarshalIndent(out, "", "  ")
// and a newline would, in chunks of about flushSize bytes: one
// goroutine lays out the next chunks while this one writes, so a reader
// that drains a pipe slowly does not hold up the encoding. An error (a
// value encoding/json refuses: a NaN rate, a year past 9999) is returned
// after the chunks written before it.
func writeFast(w io.Writer, out *Document) error {
	if len(out.Peers) <= inlinePeers {
		// A document of a few peers is one chunk: laid out here and
		// written once, without a goroutine to grow a stack for it.
		e := &jsonIndenter{b: make([]byte, 0, 8<<10+4<<10*len(out.Peers))}
		e.document(out, nil)
		if e.err != nil {
			return e.err
		}
		_, err := w.Write(e.b)
		return err
	}
	const inFlight = 3
	full := make(chan []byte, inFlight)
	free := make(chan []byte, inFlight)
	for range inFlight {
		free <- make([]byte, 0, flushSize+8<<10)
	}
	stop := make(chan struct{})
	var encErr error
	go func() {
		defer close(full)
		e := &jsonIndenter{b: <-free}
		// emit hands the chunk over and takes an empty buffer; false
		// when the writer gave up or the encoding failed.
		emit := func() bool {
			if e.err != nil {
				encErr = e.err
				return false
			}
			select {
			case full <- e.b:
			case <-stop:
				return false
			}
			select {
			case e.b = <-free:
				e.b = e.b[:0]
				return true
			case <-stop:
				return false
			}
		}
		if e.document(out, emit) {
			emit()
		}
	}()
	var err error
	for b := range full {
		if err == nil {
			if _, err = w.Write(b); err != nil {
				close(stop)
			}
		}
		free <- b
	}
	if err != nil {
		return err
	}
	return encErr
}

// document lays out out and a newline; after each peer that fills a
// chunk it calls emit, if given, and stops when emit says false.
func (e *jsonIndenter) document(out *Document, emit func() bool) bool {
	e.open('{')
	e.key("time")
	e.time(out.Time)
	e.key("backend_state")
	e.str(out.BackendState)
	e.key("self")
	e.self(&out.Self)
	e.key("peers")
	if out.Peers == nil {
		e.null()
	} else {
		e.open('[')
		for i := range out.Peers {
			e.next()
			e.peer(&out.Peers[i])
			if emit != nil && len(e.b) >= flushSize && !emit() {
				return false
			}
		}
		e.close(']')
	}
	e.tail(out)
	e.b = append(e.b, '\n')
	return true
}

// inlinePeers is the most peers writeFast lays out on the calling
// goroutine, in one chunk; a document of 16 peers is about 40 KB.
const inlinePeers = 16

// tail writes Document's members after "peers".
func (e *jsonIndenter) tail(out *Document) {
	if out.Board != nil {
		e.key("board")
		e.any(out.Board)
	}
	if len(out.Regions) > 0 {
		e.key("derp_regions")
		jsonList(e, out.Regions, e.region)
	}
	if len(out.Warnings) > 0 {
		e.key("warnings")
		strs(e, out.Warnings)
	}
	if out.ControlAPI != nil {
		e.key("control_api")
		e.any(out.ControlAPI)
	}
	if out.Hidden != 0 {
		e.key("hidden")
		e.int(int64(out.Hidden))
	}
	if out.Snapshot != nil {
		e.key("snapshot")
		e.any(out.Snapshot)
	}
	if len(out.ToSettle) > 0 {
		e.key("to_settle")
		jsonList(e, out.ToSettle, e.step)
	}
	e.close('}')
}

// flushSize is how many bytes writeFast gathers before
// writing them.
const flushSize = 64 << 10

// peer writes sp: probes.Peer's fields in their order (none for a nil
// peer, as encoding/json skips a nil embedded pointer), then path_changes.
func (e *jsonIndenter) peer(sp *Peer) {
	e.open('{')
	if sp.Peer != nil {
		e.peerFields(sp.Peer)
	}
	e.key("path_changes")
	jsonList(e, sp.PathChanges, func(c *join.PathChange) { e.pathChange(*c) })
	e.close('}')
}

// peerFields writes p's fields as members of the open object.
func (e *jsonIndenter) peerFields(p *probes.Peer) {
	e.key("id")
	e.str(string(p.ID))
	e.key("name")
	e.str(string(p.Name))
	e.optStr("dns_name", string(p.DNSName))
	e.optStr("os", string(p.OS))
	e.key("tailscale_ips")
	e.addrs(p.TailscaleIPs)
	e.key("online")
	e.boolPtr(p.Online)
	e.optStr("online_source", p.OnlineSource)
	if p.Expired {
		e.key("expired")
		e.bool(true)
	}
	if !p.KeyExpiry.IsZero() {
		e.key("key_expiry")
		e.time(p.KeyExpiry)
	}
	e.key("active")
	e.bool(p.Active)
	e.key("path")
	e.path(&p.Path)
	if p.HomeDERP != 0 {
		e.key("home_derp")
		e.int(int64(p.HomeDERP))
	}
	e.optStr("home_derp_code", string(p.HomeDERPCode))
	e.key("endpoints")
	e.addrPorts(p.Endpoints)
	e.key("endpoints_known")
	e.bool(p.EndpointsKnown)
	e.key("tx_bytes")
	e.int(p.TxBytes)
	e.key("rx_bytes")
	e.int(p.RxBytes)
	e.key("tx_rate")
	e.float(p.TxRate)
	e.key("rx_rate")
	e.float(p.RxRate)
	if p.RatesKnown {
		e.key("rates_known")
		e.bool(true)
	}
	if !p.LastHandshake.IsZero() {
		e.key("last_handshake")
		e.time(p.LastHandshake)
	}
	if p.HandshakeUnknown {
		e.key("handshake_unknown")
		e.bool(true)
	}
	e.optStr("wireguard", string(p.WireGuard))
	if !p.WireGuardSince.IsZero() {
		e.key("wireguard_since")
		e.time(p.WireGuardSince)
	}
	if !p.NoHandshakeSince.IsZero() {
		e.key("no_handshake_since")
		e.time(p.NoHandshakeSince)
	}
	if !p.LastSeen.IsZero() {
		e.key("last_seen")
		e.time(p.LastSeen)
	}
	if p.LastSeenAgo != 0 {
		e.key("last_seen_ago_ns")
		e.int(int64(p.LastSeenAgo))
	}
	if p.Latency != 0 {
		e.key("latency_ns")
		e.int(int64(p.Latency))
	}
	e.key("verdict")
	e.verdict(&p.Verdict)
	if p.NAT != nil {
		e.key("nat")
		e.nat(p.NAT)
	}
	if p.PeerSide != nil {
		e.key("peer_side")
		e.peerSide(p.PeerSide)
	}
	if p.ExitNode {
		e.key("exit_node")
		e.bool(true)
	}
	if p.WireGuardOnly {
		e.key("wireguard_only")
		e.bool(true)
	}
	if p.PingRun != nil {
		e.key("ping_run")
		e.any(p.PingRun)
	}
	if p.ICMPReply != nil {
		e.key("icmp_reply")
		e.bool(*p.ICMPReply)
	}
	if !p.LastDirect.IsZero() {
		e.key("last_direct")
		e.time(p.LastDirect)
	}
	if p.LastDirectAddr != (netip.AddrPort{}) {
		e.key("last_direct_addr")
		e.addrPort(p.LastDirectAddr)
	}
	if p.LastChange != nil {
		e.key("last_change")
		e.any(p.LastChange)
	}
}

func (e *jsonIndenter) path(p *probes.Path) {
	e.open('{')
	e.key("kind")
	e.str(string(p.Kind))
	if p.Addr != (netip.AddrPort{}) {
		e.key("addr")
		e.addrPort(p.Addr)
	}
	e.optStr("peer_relay", string(p.PeerRelay))
	e.optStr("derp_code", string(p.DERPCode))
	e.key("text")
	e.str(string(p.Text))
	e.close('}')
}

func (e *jsonIndenter) pathChange(c join.PathChange) {
	e.open('{')
	e.key("time")
	e.time(c.When)
	e.key("text")
	e.str(string(c.Text))
	e.key("kind")
	e.str(string(c.Kind))
	e.close('}')
}

func (e *jsonIndenter) verdict(v *probes.Verdict) {
	e.open('{')
	e.key("reason")
	e.str(string(v.Reason))
	if len(v.Also) > 0 {
		e.key("also")
		jsonList(e, v.Also, func(r *probes.ReasonID) { e.str(string(*r)) })
	}
	e.key("summary")
	e.str(string(v.Summary))
	e.key("checks")
	jsonList(e, v.Checks, e.check)
	e.optStr("fix", string(v.Fix))
	if v.PeerSide {
		e.key("peer_side")
		e.bool(true)
	}
	if len(v.Refuted) > 0 {
		e.key("refuted")
		jsonList(e, v.Refuted, func(r *probes.Refutation) {
			e.open('{')
			e.key("reason")
			e.str(string(r.Reason))
			e.key("field")
			e.str(string(r.Field))
			e.key("why")
			e.str(string(r.Why))
			e.close('}')
		})
	}
	if v.Settle != nil {
		e.key("settle")
		e.settle(v.Settle)
	}
	e.close('}')
}

// settle writes s. Every open verdict of a one-shot status has one (a
// relayed-heavy tailnet of 1,000 peers: hundreds), so it is written here
// rather than through encoding/json's reflection, which cost a 1,000-peer
// status about 13 ms of CPU (docs/perf.md).
func (e *jsonIndenter) settle(s *probes.Settle) {
	e.open('{')
	e.key("candidates")
	jsonList(e, s.Candidates, func(c *probes.Candidate) {
		e.open('{')
		e.key("reason")
		e.str(string(c.Reason))
		if c.Holds {
			e.key("holds")
			e.bool(true)
		}
		if len(c.Open) > 0 {
			e.key("open")
			strs(e, c.Open)
		}
		e.close('}')
	})
	e.key("deciders")
	jsonList(e, s.Deciders, func(d *probes.Decider) {
		e.open('{')
		e.key("fact")
		e.str(string(d.Fact))
		e.key("end")
		e.str(string(d.End))
		e.key("what")
		e.str(d.What)
		e.key("fields")
		strs(e, d.Fields)
		e.key("decides")
		strs(e, d.Decides)
		e.optStr("tailpath", d.Tailpath)
		if d.Ask != nil {
			e.key("ask")
			e.ask(d.Ask)
		}
		if len(d.Others) > 0 {
			e.key("others")
			jsonList(e, d.Others, e.ask)
		}
		e.optStr("no_ask", d.NoAsk)
		e.close('}')
	})
	e.close('}')
}

func (e *jsonIndenter) ask(a *probes.Ask) {
	e.open('{')
	e.key("platform")
	e.str(string(a.Platform))
	e.key("command")
	e.str(string(a.Command))
	e.key("readers")
	strs(e, a.Readers)
	e.key("apply")
	e.str(a.Apply)
	e.optStr("note", a.Note)
	e.close('}')
}

func (e *jsonIndenter) check(c *probes.Check) {
	e.open('{')
	e.key("field")
	e.str(string(c.Field))
	e.key("value")
	e.str(string(c.Value))
	e.key("failed")
	e.bool(c.Failed)
	e.optStr("state", string(c.State))
	e.optStr("note", string(c.Note))
	e.optStr("source", c.Source)
	e.close('}')
}

func (e *jsonIndenter) nat(n *probes.NATInfo) {
	e.open('{')
	e.key("working_udp")
	e.boolPtr(n.WorkingUDP)
	e.key("working_ipv6")
	e.boolPtr(n.WorkingIPv6)
	e.key("mapping_varies_by_dest_ip")
	e.boolPtr(n.MappingVariesByDestIP)
	e.key("have_port_map")
	e.bool(n.HavePortMap)
	if n.PortMapUnknown {
		e.key("port_map_unknown")
		e.bool(true)
	}
	e.key("upnp")
	e.boolPtr(n.UPnP)
	e.key("pmp")
	e.boolPtr(n.PMP)
	e.key("pcp")
	e.boolPtr(n.PCP)
	e.optStr("link_type", string(n.LinkType))
	if len(n.DERPLatency) > 0 {
		e.key("derp_latency")
		e.latencies(n.DERPLatency)
	}
	if n.FromCLI {
		e.key("from_cli")
		e.bool(true)
	}
	if n.STUNRegions != 0 {
		e.key("stun_regions")
		e.int(int64(n.STUNRegions))
	}
	e.close('}')
}

func (e *jsonIndenter) peerSide(s *probes.PeerSide) {
	e.open('{')
	e.key("source")
	e.str(s.Source)
	if !s.At.IsZero() {
		e.key("at")
		e.time(s.At)
	}
	if len(s.Endpoints) > 0 {
		e.key("endpoints")
		e.addrPorts(s.Endpoints)
	}
	if s.NoNAT != nil {
		e.key("no_nat")
		e.bool(*s.NoNAT)
	}
	e.key("mapping_varies_by_dest_ip")
	e.boolPtr(s.MappingVariesByDestIP)
	if s.HavePortMap != nil {
		e.key("have_port_map")
		e.bool(*s.HavePortMap)
	}
	if s.HomeDERP != 0 {
		e.key("home_derp")
		e.int(int64(s.HomeDERP))
	}
	if len(s.DERPLatencyMs) > 0 {
		e.key("derp_latency_ms")
		e.open('{')
		var buf [8]string
		for _, k := range sortedKeys(s.DERPLatencyMs, buf[:]) {
			e.mapKey(k)
			e.float(s.DERPLatencyMs[k])
		}
		e.close('}')
	}
	e.key("client_supports")
	cs := &s.ClientSupports
	e.open('{')
	e.key("udp")
	e.boolPtr(cs.UDP)
	e.key("ipv6")
	e.boolPtr(cs.IPv6)
	e.key("hair_pinning")
	e.boolPtr(cs.HairPinning)
	e.key("upnp")
	e.boolPtr(cs.UPnP)
	e.key("pmp")
	e.boolPtr(cs.PMP)
	e.key("pcp")
	e.boolPtr(cs.PCP)
	e.close('}')
	if !s.LastSeen.IsZero() {
		e.key("last_seen")
		e.time(s.LastSeen)
	}
	e.optStr("client_version", string(s.ClientVersion))
	if s.CapVersion != 0 {
		e.key("cap_version")
		e.int(int64(s.CapVersion))
	}
	if s.UpdateAvailable != nil {
		e.key("update_available")
		e.bool(*s.UpdateAvailable)
	}
	if s.Other != nil {
		e.key("other")
		e.peerSide(s.Other)
	}
	if len(s.FactSources) > 0 {
		e.key("fact_sources")
		e.open('{')
		var buf [8]string
		for _, k := range sortedKeys(s.FactSources, buf[:]) {
			e.mapKey(k)
			e.str(s.FactSources[k])
		}
		e.close('}')
	}
	e.close('}')
}

// compareDecimal orders a and b as their decimal strings order
// ("10" before "2"), as encoding/json sorts int map keys.
func compareDecimal(a, b int) int {
	var ab, bb [20]byte
	return strings.Compare(string(strconv.AppendInt(ab[:0], int64(a), 10)), string(strconv.AppendInt(bb[:0], int64(b), 10)))
}

// sortedKeys are m's keys, sorted, in buf when they fit.
func sortedKeys[V any](m map[string]V, buf []string) []string {
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonIndenter appends JSON as json.MarshalIndent(v, "", "  ") lays it
// out: each member or element on its own line, indented two spaces per
// level; empty objects and arrays as {} and []. The first error (a value
// encoding/json refuses) stops nothing but is kept in err.
type jsonIndenter struct {
	b   []byte
	n   []int // members or elements written so far in each open object or array
	err error
}

// open starts an object ('{') or array ('[').
func (e *jsonIndenter) open(c byte) {
	e.b = append(e.b, c)
	e.n = append(e.n, 0)
}

// close ends the innermost object ('}') or array (']').
func (e *jsonIndenter) close(c byte) {
	n := e.n[len(e.n)-1]
	e.n = e.n[:len(e.n)-1]
	if n > 0 {
		e.newline()
	}
	e.b = append(e.b, c)
}

func (e *jsonIndenter) newline() {
	if d := 1 + 2*len(e.n); d <= len(newlineIndent) {
		e.b = append(e.b, newlineIndent[:d]...)
		return
	}
	e.b = append(e.b, '\n')
	for range e.n {
		e.b = append(e.b, ' ', ' ')
	}
}

// newlineIndent starts a line at any of the first 16 levels.
const newlineIndent = "\n                                "

// next starts an element of the innermost array (or a member: key).
func (e *jsonIndenter) next() {
	if e.n[len(e.n)-1] > 0 {
		e.b = append(e.b, ',')
	}
	e.n[len(e.n)-1]++
	e.newline()
}

// mapKey starts a member named k from outside (a map key), escaped.
func (e *jsonIndenter) mapKey(k string) {
	e.next()
	e.str(k)
	e.b = append(e.b, ':', ' ')
}

// key starts a member named k, which needs no escaping.
func (e *jsonIndenter) key(k string) {
	e.next()
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':', ' ')
}

func (e *jsonIndenter) null() { e.b = append(e.b, "null"...) }

func (e *jsonIndenter) bool(v bool) { e.b = strconv.AppendBool(e.b, v) }

func (e *jsonIndenter) boolPtr(v *bool) {
	if v == nil {
		e.null()
		return
	}
	e.bool(*v)
}

func (e *jsonIndenter) int(v int64) { e.b = strconv.AppendInt(e.b, v, 10) }

// float writes v as encoding/json does: %f-like between 1e-6 and 1e21,
// else exponent form with at least two exponent digits dropped to one
// ("1e-07" as "1e-7"). NaN and infinities are errors, as there.
func (e *jsonIndenter) float(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		e.fail(fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(v, 'g', -1, 64)))
		e.null()
		return
	}
	f := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		f = 'e'
	}
	e.b = strconv.AppendFloat(e.b, v, f, -1, 64)
	if f == 'e' {
		if n := len(e.b); n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

// time writes t as time.Time.MarshalJSON does (RFC 3339 with
// nanoseconds); a year outside 0-9999 or a zone 24 hours or more away is
// an error, as there.
func (e *jsonIndenter) time(t time.Time) {
	_, off := t.Zone()
	if y := t.Year(); y < 0 || y > 9999 || off <= -24*3600 || off >= 24*3600 {
		e.fail(fmt.Errorf("json: error calling MarshalJSON for type time.Time: Time.MarshalJSON: year or zone offset out of range: %v", t))
		e.null()
		return
	}
	e.b = append(e.b, '"')
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	e.b = append(e.b, '"')
}

func (e *jsonIndenter) addr(a netip.Addr) {
	if !a.IsValid() {
		e.b = append(e.b, '"', '"')
		return
	}
	if a.Zone() != "" { // a zone is any text: escape it
		e.str(a.String())
		return
	}
	e.b = append(e.b, '"')
	e.b = a.AppendTo(e.b)
	e.b = append(e.b, '"')
}

// strs writes a slice of strings (of any string type) as encoding/json
// does: null when nil.
func strs[S ~string](e *jsonIndenter, ss []S) {
	jsonList(e, ss, func(s *S) { e.str(string(*s)) })
}

func (e *jsonIndenter) addrs(as []netip.Addr) {
	jsonList(e, as, func(a *netip.Addr) { e.addr(*a) })
}

// jsonList writes xs as encoding/json does a slice: null when nil, else
// an array of item(&xs[i]).
func jsonList[T any](e *jsonIndenter, xs []T, item func(*T)) {
	if xs == nil {
		e.null()
		return
	}
	e.open('[')
	for i := range xs {
		e.next()
		item(&xs[i])
	}
	e.close(']')
}

func (e *jsonIndenter) addrPort(ap netip.AddrPort) {
	if ap.Addr().Zone() != "" || !ap.Addr().IsValid() {
		t, _ := ap.MarshalText()
		e.str(string(t))
		return
	}
	e.b = append(e.b, '"')
	e.b = ap.AppendTo(e.b)
	e.b = append(e.b, '"')
}

func (e *jsonIndenter) addrPorts(aps []netip.AddrPort) {
	jsonList(e, aps, func(ap *netip.AddrPort) { e.addrPort(*ap) })
}

// optStr writes member k with string v, left out when v is empty (a
// field tagged omitempty).
func (e *jsonIndenter) optStr(k, v string) {
	if v != "" {
		e.key(k)
		e.str(v)
	}
}

// any writes v as json.MarshalIndent does at this depth.
func (e *jsonIndenter) any(v any) {
	b, err := json.MarshalIndent(v, strings.Repeat("  ", len(e.n)), "  ")
	if err != nil {
		e.fail(err)
		e.null()
		return
	}
	e.b = append(e.b, b...)
}

func (e *jsonIndenter) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// plainASCII marks the ASCII bytes str copies as they are.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// str writes s as a JSON string as encoding/json escapes it: ", \ and
// control characters; <, > and & (HTML); U+2028 and U+2029 (JavaScript);
// invalid UTF-8 as U+FFFD.
func (e *jsonIndenter) str(s string) {
	const hex = "0123456789abcdef"
	b := append(e.b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	e.b = append(b, '"')
}
