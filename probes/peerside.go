package probes

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Sources of peer-side facts (PeerSide.Source, Check.Source).
const (
	// SourceLocalAPI: our tailscaled, from the peer's node in our netmap
	// (WhoIs). Control need not pass a peer's NetInfo on, so on a real
	// tailnet its NAT facts are usually missing.
	SourceLocalAPI = "localapi"
	// SourceControlAPI: the Tailscale control API's device list
	// (clientConnectivity, clientVersion, lastSeen; ControlAPI).
	SourceControlAPI = "control-api"
	// SourcePeerSnapshot: a snapshot saved on the peer itself.
	SourcePeerSnapshot = "peer-snapshot"
)

// ClientSupports is what a peer's client reported it can use (the control
// API's clientSupports, or its NetInfo). nil means not reported, which is
// not the same as false.
type ClientSupports struct {
	// UDP: its STUN probes got UDP replies (NetInfo.WorkingUDP).
	UDP *bool `json:"udp"`
	// IPv6: it has working IPv6 (NetInfo.WorkingIPv6).
	IPv6 *bool `json:"ipv6"`
	// HairPinning: its NAT hairpins (the API still reports it; NetInfo
	// no longer carries it).
	HairPinning *bool `json:"hair_pinning"`
	// UPnP, PMP and PCP: a port-mapping service answered on its network
	// (which is not a mapping: HavePortMap is).
	UPnP *bool `json:"upnp"`
	PMP  *bool `json:"pmp"`
	PCP  *bool `json:"pcp"`
}

// PortMap reports whether a port-mapping service answers on the peer's
// network (any of UPnP, NAT-PMP, PCP): true if any is true, false if all
// three are known false, nil otherwise. An answering service is not a
// mapping (PeerSide.HavePortMap).
func (c ClientSupports) PortMap() *bool {
	unknown := false
	for _, b := range [3]*bool{c.UPnP, c.PMP, c.PCP} {
		switch {
		case b == nil:
			unknown = true
		case *b:
			return &trueVal
		}
	}
	if unknown {
		return nil
	}
	return &falseVal
}

// trueVal and falseVal are what PortMap points to; never written.
var trueVal, falseVal = true, false

// PeerSide is the peer's own end of the path, as the peer measured it: its
// NAT type, UDP, port mapping, home DERP and latencies, endpoints and
// client. Judge reads it for every peer-side check, and each such check
// names Source. nil fields are unknown.
type PeerSide struct {
	// Source is where these facts came from: SourceLocalAPI,
	// SourceControlAPI or SourcePeerSnapshot.
	Source string `json:"source"`
	// At is when the source was read (the API fetch, the snapshot's time);
	// zero for localapi, which is control's push of the record the API
	// serves. When two sources disagree the newer one wins.
	At time.Time `json:"at,omitzero"`
	// Endpoints are the UDP endpoints the peer reported.
	Endpoints []netip.AddrPort `json:"endpoints,omitempty"`
	// NoNAT says whether the peer's end has no NAT, as its own host
	// facts decide (a peer snapshot whose interfaces were read, or whose
	// tailscaled log typed its endpoints: probes.NoNAT); nil unknown. Its
	// endpoints alone cannot say: a host behind a carrier's NAT
	// advertises only its public STUN address, never its 100.64.0.0/10
	// interface address (net/netmon LocalAddresses skips
	// tsaddr.IsTailscaleIP).
	NoNAT *bool `json:"no_nat,omitempty"`
	// MappingVariesByDestIP: the peer's NAT picks a new port per
	// destination (hard NAT); measured on IPv4 only. nil unknown.
	MappingVariesByDestIP *bool `json:"mapping_varies_by_dest_ip"`
	// HavePortMap: the peer holds a port mapping right now (NetInfo, a
	// snapshot; the API reports only which services answer,
	// ClientSupports). nil unknown.
	HavePortMap *bool `json:"have_port_map,omitempty"`
	// HomeDERP is the region the peer chose as home (NetInfo's
	// PreferredDERP, or the API latency entry marked preferred); 0 unknown.
	HomeDERP int `json:"home_derp,omitempty"`
	// DERPLatencyMs is the peer's own round trip to each DERP region, in
	// milliseconds, keyed by region code (or "region N" when the code is
	// not in our DERP map), as it last reported them.
	DERPLatencyMs map[string]float64 `json:"derp_latency_ms,omitempty"`
	// ClientSupports is what the peer's client can use.
	ClientSupports ClientSupports `json:"client_supports"`
	// LastSeen is when control last saw the peer; zero unknown or online.
	LastSeen time.Time `json:"last_seen,omitzero"`
	// ClientVersion is the peer's Tailscale version ("1.86.2-t…"); "" unknown.
	ClientVersion safetext.Text `json:"client_version,omitempty"`
	// CapVersion is the peer's capability version (tailcfg.Node.Cap); 0 unknown.
	CapVersion int `json:"cap_version,omitempty"`
	// UpdateAvailable: the API says a newer client exists for it; nil unknown.
	UpdateAvailable *bool `json:"update_available,omitempty"`
	// Other holds the older source's facts when two sources disagree, so
	// both can be shown; nil otherwise. Facts Other knows and this record
	// does not have already been filled in.
	Other *PeerSide `json:"other,omitempty"`
	// FactSources names, for each fact filled in from the older source,
	// where it came from ("mapping_varies_by_dest_ip": "localapi"); facts
	// not listed come from Source.
	FactSources map[string]string `json:"fact_sources,omitempty"`
}

// Fact names in PeerSide.FactSources.
const (
	FactMapping   = "mapping_varies_by_dest_ip"
	FactPortMap   = "port_map"
	FactUDP       = "udp"
	FactIPv6      = "ipv6"
	FactHomeDERP  = "home_derp"
	FactLatency   = "derp_latency_ms"
	FactEndpoints = "endpoints"
	FactVersion   = "client_version"
)

// sourceOfFact is where fact came from.
func (s *PeerSide) sourceOfFact(fact string) string {
	if src, ok := s.FactSources[fact]; ok {
		return src
	}
	return s.Source
}

// mapping is whether the peer holds a port mapping: HavePortMap when
// known (its NetInfo, a snapshot; the control API does not report it);
// false when no port-mapping service answers on its network (UPnP,
// NAT-PMP and PCP all known false); nil otherwise. A service that answers
// is not a mapping (netcheck's UPnP/PMP/PCP list what answered;
// HavePortMap is the mapping).
func (s *PeerSide) mapping() *bool {
	if s == nil {
		return nil
	}
	if s.HavePortMap != nil {
		return s.HavePortMap
	}
	if pm := s.ClientSupports.PortMap(); pm != nil && !*pm {
		return pm
	}
	return nil
}

// MergePeerSide combines two records of the same peer's facts: the newer
// (by At) wins, facts only the older knows fill its gaps, and the older is
// kept in Other when the two disagree on a fact both know. Either may be
// nil; the inputs are not modified.
func MergePeerSide(a, b *PeerSide) *PeerSide {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	newer, older := a, b
	if b.At.After(a.At) {
		newer, older = b, a
	}
	out := *newer
	out.Other = nil
	out.FactSources = nil
	from := func(fact string) {
		if out.FactSources == nil {
			out.FactSources = map[string]string{}
		}
		out.FactSources[fact] = older.sourceOfFact(fact)
	}
	if len(out.Endpoints) == 0 && len(older.Endpoints) > 0 {
		out.Endpoints = older.Endpoints
		from(FactEndpoints)
	}
	fill := func(dst **bool, src *bool, fact string) {
		if *dst == nil && src != nil {
			*dst = src
			if fact != "" {
				from(fact)
			}
		}
	}
	fill(&out.MappingVariesByDestIP, older.MappingVariesByDestIP, FactMapping)
	fill(&out.UpdateAvailable, older.UpdateAvailable, "")
	fill(&out.NoNAT, older.NoNAT, "")
	cs := &out.ClientSupports
	fill(&cs.UDP, older.ClientSupports.UDP, FactUDP)
	fill(&cs.IPv6, older.ClientSupports.IPv6, FactIPv6)
	fill(&cs.HairPinning, older.ClientSupports.HairPinning, "")
	if out.mapping() == nil && older.mapping() != nil {
		out.HavePortMap, cs.UPnP, cs.PMP, cs.PCP = older.HavePortMap, older.ClientSupports.UPnP, older.ClientSupports.PMP, older.ClientSupports.PCP
		from(FactPortMap)
	}
	if out.HomeDERP == 0 && older.HomeDERP != 0 {
		out.HomeDERP = older.HomeDERP
		from(FactHomeDERP)
	}
	if len(out.DERPLatencyMs) == 0 && len(older.DERPLatencyMs) > 0 {
		out.DERPLatencyMs = older.DERPLatencyMs
		from(FactLatency)
	}
	if out.LastSeen.IsZero() {
		out.LastSeen = older.LastSeen
	}
	if out.ClientVersion == "" && out.CapVersion == 0 && (older.ClientVersion != "" || older.CapVersion != 0) {
		out.ClientVersion, out.CapVersion = older.ClientVersion, older.CapVersion
		from(FactVersion)
	}
	if disagree(newer, older) {
		o := *older
		o.Other = nil
		out.Other = &o
	}
	return &out
}

// disagree reports whether a and b know different values of a fact the
// diagnosis reads.
func disagree(a, b *PeerSide) bool {
	differ := func(x, y *bool) bool { return x != nil && y != nil && *x != *y }
	return differ(a.MappingVariesByDestIP, b.MappingVariesByDestIP) ||
		differ(a.ClientSupports.UDP, b.ClientSupports.UDP) ||
		differ(a.ClientSupports.IPv6, b.ClientSupports.IPv6) ||
		differ(a.mapping(), b.mapping()) ||
		(a.HomeDERP != 0 && b.HomeDERP != 0 && a.HomeDERP != b.HomeDERP)
}

// PeerSideLocal builds the localapi record of a peer's facts from its
// netmap node's facts as a source read them: its capability version
// (tailcfg.Node.Cap), whether it has a Hostinfo, Hostinfo.IPNVersion and
// NetInfo.PreferredDERP (0 unknown). Its At stays zero: the node is
// control's push of the record the control API serves, so an API read is at
// least as new, and a dated source wins a disagreement.
func PeerSideLocal(p *Peer, capVersion int, hasHostinfo bool, ipnVersion string, preferredDERP int, regions map[int]Region) *PeerSide {
	s := &PeerSide{Source: SourceLocalAPI, Endpoints: p.Endpoints, LastSeen: p.LastSeen, CapVersion: capVersion, HomeDERP: preferredDERP}
	if hasHostinfo {
		s.ClientVersion = safetext.New(ClientVersion(ipnVersion))
	}
	if n := p.NAT; n != nil {
		s.MappingVariesByDestIP = n.MappingVariesByDestIP
		if !n.PortMapUnknown {
			s.HavePortMap = boolp(n.HavePortMap)
		}
		s.ClientSupports = ClientSupports{UDP: n.WorkingUDP, IPv6: n.WorkingIPv6, UPnP: n.UPnP, PMP: n.PMP, PCP: n.PCP}
		if len(n.DERPLatency) > 0 {
			s.DERPLatencyMs = make(map[string]float64, len(n.DERPLatency))
			for id, d := range n.DERPLatency {
				s.DERPLatencyMs[regionKey(regions, id)] = float64(d) / float64(time.Millisecond)
			}
		}
	}
	return s
}

// regionKey names region id in PeerSide.DERPLatencyMs: its code, or
// "region N".
func regionKey(regions map[int]Region, id int) string {
	if r, ok := regions[id]; ok && r.Code != "" {
		return string(r.Code)
	}
	return "region " + strconv.Itoa(id)
}

// ClientVersion is a peer's reported Tailscale version (sanitised), or ""
// (unknown) when it names no release: a binary built with plain `go run`
// or `go test` reports "x.y.z-ERR-BuildInfo" (tailscale.com/version.Long
// and Short, when runtime/debug build information is missing), which
// says only which source tree it came from, not what client it is.
func ClientVersion(v string) string {
	v = cleanString(v)
	if strings.Contains(v, "-ERR-BuildInfo") {
		return ""
	}
	return v
}

// ClientVersionAtLeast reports whether version ("1.86.2", "v1.86.2",
// "1.86.2-t…") is at least major.minor; ok is false when version does not
// parse.
func ClientVersionAtLeast(version string, major, minor int) (atLeast, ok bool) {
	v, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), "-")
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return false, false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false, false
	}
	return ma > major || (ma == major && mi >= minor), true
}
