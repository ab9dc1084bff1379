package report

import (
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/tailpath/tailpath/probes"
)

// This file writes status --json's "self", its DERP regions and its steps
// to settle without reflection for what a
// live status always holds (names, NAT, traffic, the self view, the host's
// facts, the verdict): built on first use, encoding/json's encoders for
// Self's types cost a one-shot status 1.5-1.8 ms, more than the CLI it
// explains spends on its whole reply (docs/perf.md, issue 31). The parts
// a pasted thread brings (the evidence of log lines, the daemon's flags)
// are still marshalled by encoding/json. TestStatusJSONWriterMatchesEncodingJSON
// holds the bytes to json.MarshalIndent's with every field set.

// self writes s as encoding/json writes probes.Self.
func (e *jsonIndenter) self(s *probes.Self) {
	e.open('{')
	e.key("name")
	e.str(string(s.Name))
	e.optStr("dns_name", string(s.DNSName))
	e.optStr("os", string(s.OS))
	e.key("tailscale_ips")
	e.addrs(s.TailscaleIPs)
	e.optStr("version", string(s.Version))
	e.optInt("home_derp", int64(s.HomeDERP))
	e.optStr("home_derp_code", string(s.HomeDERPCode))
	if s.NAT != nil {
		e.key("nat")
		e.nat(s.NAT)
	}
	if len(s.Endpoints) > 0 {
		e.key("endpoints")
		e.addrPorts(s.Endpoints)
	}
	if len(s.EndpointTypes) > 0 {
		e.key("endpoint_types")
		strs(e, s.EndpointTypes)
	}
	if len(s.Health) > 0 {
		e.key("health")
		strs(e, s.Health)
	}
	e.optBool("only_tcp_443", s.OnlyTCP443)
	e.optBool("randomize_port", s.RandomizePort)
	e.optBool("no_stun", s.NoSTUN)
	e.optBool("no_ipv6_stun", s.NoIPv6STUN)
	e.optStr("derp_latency_from", s.DERPLatencyFrom)
	e.optTime("derp_latency_at", s.DERPLatencyAt)
	e.optTime("derp_latency_seen", s.DERPLatencySeen)
	if len(s.NetInfoLatency) > 0 {
		e.key("netinfo_latency")
		e.latencies(s.NetInfoLatency)
	}
	if s.Traffic != nil {
		e.key("traffic")
		e.traffic(s.Traffic)
	}
	if s.Evidence != nil {
		e.key("evidence")
		e.any(s.Evidence)
	}
	if s.Verdict != nil {
		e.key("verdict")
		e.verdict(s.Verdict)
	}
	if s.View != nil {
		e.key("view")
		e.selfView(s.View)
	}
	if s.Settle != nil {
		e.key("settle")
		e.settle(s.Settle)
	}
	e.optInt("stun_servers", int64(s.STUNServers))
	e.optInt("derp_regions", int64(s.DERPRegions))
	if len(s.Routes) > 0 {
		e.key("routes")
		jsonList(e, s.Routes, func(r *probes.SubnetRoute) {
			e.open('{')
			e.key("prefix")
			e.prefix(r.Prefix)
			e.key("via")
			e.str(string(r.Via))
			e.close('}')
		})
	}
	if s.Host != nil {
		e.key("host")
		e.host(s.Host)
	}
	if s.Daemon != nil {
		e.key("daemon")
		e.any(s.Daemon)
	}
	if len(s.Prose) > 0 {
		e.key("prose")
		strs(e, s.Prose)
	}
	e.close('}')
}

// latencies writes a map of region id to duration as encoding/json does:
// keys sorted as the strings they become, durations in nanoseconds.
func (e *jsonIndenter) latencies(m map[int]time.Duration) {
	if m == nil {
		e.null()
		return
	}
	var buf [8]int
	ids := buf[:0]
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int) int { return compareDecimal(a, b) })
	e.open('{')
	for _, id := range ids {
		e.next()
		e.b = append(e.b, '"')
		e.b = strconv.AppendInt(e.b, int64(id), 10)
		e.b = append(e.b, '"', ':', ' ')
		e.int(int64(m[id]))
	}
	e.close('}')
}

func (e *jsonIndenter) traffic(t *probes.Traffic) {
	e.open('{')
	e.key("at")
	e.time(t.At)
	e.optStr("source", t.Source)
	e.optStr("error", string(t.Err))
	for _, c := range []struct {
		k string
		v *probes.PathCounts
	}{{"bytes_in", &t.BytesIn}, {"bytes_out", &t.BytesOut}, {"packets_in", &t.PacketsIn}, {"packets_out", &t.PacketsOut}} {
		e.key(c.k)
		e.open('{')
		e.key("direct")
		e.int(c.v.Direct)
		e.key("derp")
		e.int(c.v.DERP)
		e.key("peer_relay")
		e.int(c.v.PeerRelay)
		e.close('}')
	}
	if t.HomeChanges != nil {
		e.key("home_changes")
		e.int(*t.HomeChanges)
	}
	if r := t.Rates; r != nil {
		e.key("rates")
		e.open('{')
		e.key("seconds")
		e.float(r.Seconds)
		for _, c := range []struct {
			k string
			v *probes.PathRates
		}{{"bytes_in", &r.BytesIn}, {"bytes_out", &r.BytesOut}, {"packets_in", &r.PacketsIn}, {"packets_out", &r.PacketsOut}} {
			e.key(c.k)
			e.open('{')
			e.key("direct")
			e.float(c.v.Direct)
			e.key("derp")
			e.float(c.v.DERP)
			e.key("peer_relay")
			e.float(c.v.PeerRelay)
			e.close('}')
		}
		e.close('}')
	}
	e.close('}')
}

func (e *jsonIndenter) selfView(v *probes.SelfView) {
	e.open('{')
	h := &v.Home
	e.key("home")
	e.open('{')
	e.key("home")
	e.int(int64(h.Home))
	e.optInt("best", int64(h.Best))
	e.optInt("home_latency_ns", int64(h.HomeLatency))
	e.optInt("best_latency_ns", int64(h.BestLatency))
	e.optInt("behind_ns", int64(h.Behind))
	e.optBool("far", h.Far)
	e.key("why")
	e.str(string(h.Why))
	e.optInt("moves_to", int64(h.MovesTo))
	e.optStr("from", h.From)
	e.key("text")
	e.str(string(h.Text))
	e.close('}')
	if len(v.Regions) > 0 {
		e.key("regions")
		jsonList(e, v.Regions, func(r *probes.RegionView) {
			e.open('{')
			e.key("id")
			e.int(int64(r.ID))
			e.key("code")
			e.str(string(r.Code))
			e.optInt("latency_ns", int64(r.Latency))
			e.optInt("reported_ns", int64(r.Reported))
			e.optBool("home", r.Home)
			e.optBool("best", r.Best)
			e.optBool("far", r.Far)
			e.optBool("unreachable", r.Unreachable)
			e.optBool("no_home", r.NoHome)
			e.optBool("stun_only", r.STUNOnly)
			if r.Score != 0 {
				e.key("score")
				e.float(r.Score)
			}
			e.optInt("relayed", int64(r.Relayed))
			e.close('}')
		})
	}
	e.key("udp_receive")
	e.open('{')
	e.key("state")
	e.str(v.UDPReceive.State)
	e.key("text")
	e.str(string(v.UDPReceive.Text))
	e.close('}')
	if len(v.Health) > 0 {
		e.key("health")
		jsonList(e, v.Health, func(m *probes.HealthMeaning) {
			e.open('{')
			e.key("warning")
			e.str(string(m.Warning))
			e.optStr("reason", string(m.Reason))
			e.optStr("summary", string(m.Summary))
			e.optStr("fix", string(m.Fix))
			e.close('}')
		})
	}
	if len(v.Bugs) > 0 {
		e.key("known_bugs")
		jsonList(e, v.Bugs, func(b *probes.BugMatch) {
			e.open('{')
			e.key("id")
			e.str(b.ID)
			e.key("issue")
			e.str(b.Issue)
			e.optStr("fixed_in", b.FixedIn)
			e.key("symptom")
			e.str(b.Symptom)
			e.key("workaround")
			e.str(b.Workaround)
			e.key("hit")
			e.bool(b.Hit)
			e.close('}')
		})
	}
	e.optStr("caveat", string(v.Caveat))
	e.close('}')
}

func (e *jsonIndenter) host(h *probes.HostFacts) {
	e.open('{')
	e.key("at")
	e.time(h.At)
	if len(h.Interfaces) > 0 {
		e.key("interfaces")
		jsonList(e, h.Interfaces, func(ifc *probes.Interface) {
			e.open('{')
			e.key("name")
			e.str(string(ifc.Name))
			if len(ifc.Addrs) > 0 {
				e.key("addrs")
				jsonList(e, ifc.Addrs, func(p *netip.Prefix) { e.prefix(*p) })
			}
			e.optBool("tailscale", ifc.Tailscale)
			e.optBool("bridge", ifc.Bridge)
			e.close('}')
		})
	}
	e.optStr("interfaces_error", string(h.InterfacesErr))
	if f := h.Firewall; f != nil {
		e.key("firewall")
		e.open('{')
		e.key("port")
		e.int(int64(f.Port))
		e.key("verdict")
		e.str(f.Verdict)
		e.optBool("stateful", f.Stateful)
		e.optStr("why", string(f.Why))
		e.close('}')
	}
	if len(h.Neighbors) > 0 {
		e.key("neighbors")
		e.addrs(h.Neighbors)
	}
	e.optBool("neighbors_read", h.NeighborsRead)
	e.optStr("neighbors_error", string(h.NeighborsErr))
	if len(h.Down) > 0 {
		e.key("down")
		strs(e, h.Down)
	}
	if len(h.Routes) > 0 {
		e.key("routes")
		jsonList(e, h.Routes, func(r *probes.HostRoute) {
			e.open('{')
			e.key("prefix")
			e.prefix(r.Prefix)
			e.optStr("dev", string(r.Dev))
			e.close('}')
		})
	}
	if h.BypassRule != nil {
		e.key("bypass_rule")
		e.bool(*h.BypassRule)
	}
	e.close('}')
}

func (e *jsonIndenter) region(r *probes.Region) {
	e.open('{')
	e.key("id")
	e.int(int64(r.ID))
	e.key("code")
	e.str(string(r.Code))
	e.key("name")
	e.str(string(r.Name))
	if r.Score != 0 {
		e.key("score")
		e.float(r.Score)
	}
	e.optBool("no_home", r.NoHome)
	e.optBool("stun_only", r.STUNOnly)
	e.optStr("unmeasurable", string(r.Unmeasurable))
	e.close('}')
}

func (e *jsonIndenter) step(s *probes.Step) {
	e.open('{')
	e.key("fact")
	e.str(string(s.Fact))
	e.key("end")
	e.str(string(s.End))
	if len(s.Peers) > 0 {
		e.key("peers")
		strs(e, s.Peers)
	}
	e.optBool("self", s.Self)
	e.key("on")
	e.str(string(s.On))
	e.optStr("command", string(s.Command))
	e.optStr("own", s.Own)
	e.optStr("platform", string(s.Platform))
	e.optStr("apply", s.Apply)
	e.optStr("note", s.Note)
	if len(s.Others) > 0 {
		e.key("others")
		jsonList(e, s.Others, e.ask)
	}
	e.key("decides")
	strs(e, s.Decides)
	e.key("weight")
	e.int(int64(s.Weight))
	e.close('}')
}

// prefix writes p as its MarshalText does (only digits, dots, colons and
// a slash: nothing to escape).
func (e *jsonIndenter) prefix(p netip.Prefix) {
	e.b = append(e.b, '"')
	e.b, _ = p.AppendText(e.b)
	e.b = append(e.b, '"')
}

// optInt writes member k with v, left out when v is 0 (omitempty).
func (e *jsonIndenter) optInt(k string, v int64) {
	if v != 0 {
		e.key(k)
		e.int(v)
	}
}

// optBool writes member k as true, left out when false (omitempty).
func (e *jsonIndenter) optBool(k string, v bool) {
	if v {
		e.key(k)
		e.bool(true)
	}
}

// optTime writes member k with t, left out when t is zero (omitzero).
func (e *jsonIndenter) optTime(k string, t time.Time) {
	if !t.IsZero() {
		e.key(k)
		e.time(t)
	}
}
