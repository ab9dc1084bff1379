package probes

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tailpath/tailpath/internal/safetext"
)

var testRegions = map[int]Region{
	1: {ID: 1, Code: "nyc", Name: "New York City"},
	2: {ID: 2, Code: "fra", Name: "Frankfurt"},
	3: {ID: 3, Code: "tok", Name: "Tokyo"},
}

func easySelf() Self {
	return Self{
		Name:      "laptop",
		HomeDERP:  1,
		Endpoints: []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("192.168.1.20:41641")},
		NAT: &NATInfo{
			WorkingUDP: boolp(true), MappingVariesByDestIP: boolp(false),
			DERPLatency: map[int]time.Duration{1: 12 * time.Millisecond, 2: 85 * time.Millisecond, 3: 160 * time.Millisecond},
		},
	}
}

func relayedPeer(eps ...string) Peer {
	p := Peer{ID: "nP", Name: "peer", Active: true, HomeDERP: 1, HomeDERPCode: "nyc",
		Path: Path{Kind: PathDERP, DERPCode: "nyc", Text: `active; relay "nyc"`}, EndpointsKnown: true}
	for _, e := range eps {
		p.Endpoints = append(p.Endpoints, netip.MustParseAddrPort(e))
	}
	return p
}

// TestDiagnoseCases covers each rule with hand-built evidence. Cases that
// follow from Tailscale's own code cite it; docs/diagnosis.md has the rules.
// diagnoseCase is one case of TestDiagnoseCases: the evidence (easySelf
// changed by self, a peer made by peer) and the verdict wanted. The gate's
// tests read the evidence too (gateEvidence).
type diagnoseCase struct {
	name       string
	self       func(*Self)
	peer       func(*Peer)
	wantReason ReasonID
	wantAlso   []ReasonID
	// wantUnknown lists fields that must read unknown; wantText is a
	// phrase the summary, a note or the fix must contain.
	wantUnknown []string
	wantText    string
	// regions replaces testRegions when set.
	regions map[int]Region
}

// diagnoseCases is TestDiagnoseCases' table, dated at fixtureNow.
func diagnoseCases() []diagnoseCase {
	now := fixtureNow
	return []diagnoseCase{
		// Same LAN is never guessed from private prefixes alone: two homes
		// on a router's default range, Docker's first container on two
		// hosts, ChromeOS's ARC++ range and 169.254 sandboxes look alike.
		{
			name:        "private endpoint in our /24 (two homes on the router default): private-endpoints-only, same LAN unknown",
			peer:        func(p *Peer) { *p = relayedPeer("192.168.1.77:41641") },
			wantReason:  ReasonPrivateEndpointsOnly,
			wantUnknown: []string{"SameLAN"},
			wantText:    "unless the peer is on your LAN",
		},
		{
			name:        "Docker's first container on both hosts (172.17.0.2 each): not the same host",
			self:        func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("172.17.0.2:41641")} },
			peer:        func(p *Peer) { *p = relayedPeer("172.17.0.2:41641") },
			wantReason:  ReasonPrivateEndpointsOnly,
			wantUnknown: []string{"SameLAN"},
			wantText:    "repeat on every host",
		},
		{
			name:        "ChromeOS ARC++ address on both ends (100.115.92.2)",
			self:        func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("100.115.92.2:41641")} },
			peer:        func(p *Peer) { *p = relayedPeer("100.115.92.2:41641") },
			wantReason:  ReasonPrivateEndpointsOnly,
			wantUnknown: []string{"SameLAN"},
		},
		{
			name:        "169.254 sandbox addresses in one /24",
			self:        func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("169.254.7.1:41641")} },
			peer:        func(p *Peer) { *p = relayedPeer("169.254.7.9:41641") },
			wantReason:  ReasonPrivateEndpointsOnly,
			wantUnknown: []string{"SameLAN"},
		},
		{
			name:        "loopback on both ends is not proof of one host",
			self:        func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:45005")} },
			peer:        func(p *Peer) { *p = relayedPeer("127.0.0.1:44175") },
			wantReason:  ReasonPrivateEndpointsOnly,
			wantUnknown: []string{"SameLAN"},
		},
		{
			name:        "routed site LAN (10.1/16 beside our 10.2/16): the fix covers routed networks, not only UPnP",
			self:        func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("10.2.0.5:41641")} },
			peer:        func(p *Peer) { *p = relayedPeer("10.1.3.4:41641") },
			wantReason:  ReasonPrivateEndpointsOnly,
			wantUnknown: []string{"SameLAN"},
			wantText:    "allow UDP between the two",
		},
		{
			name:        "private endpoints with our endpoints unknown",
			self:        func(s *Self) { s.Endpoints = nil },
			peer:        func(p *Peer) { *p = relayedPeer("192.168.1.77:41641", "[fd00::7]:41641", "[fe80::1]:41641") },
			wantReason:  ReasonPrivateEndpointsOnly,
			wantUnknown: []string{"SameLAN"},
		},
		// Issue 17, item 2: two ends behind one NAT on one LAN. magicsock
		// pings LAN endpoints too and prefers private addresses
		// (endpoint.go betterAddr), so the NAT type does not matter. One
		// LAN only by this host's interfaces (review 16).
		{
			name:       "the same public address and one LAN on both ends: the LAN path is blocked, not NAT",
			self:       onLAN,
			peer:       func(p *Peer) { *p = relayedPeer("198.51.100.10:61000", "192.168.1.77:41641") },
			wantReason: ReasonSameNATLANBlocked,
			wantText:   "client (AP) isolation",
		},
		{
			// Review 16 (c3c.json): two homes behind one carrier NAT both
			// on a router's default 192.168.1.0/24 look like one LAN.
			name:        "the same public address, LAN addresses in one /24, no interfaces read: one LAN or two unknown, both fixes",
			peer:        func(p *Peer) { *p = relayedPeer("198.51.100.10:61000", "192.168.1.77:41641") },
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"Self.Endpoints"},
			wantText:    "On two LANs, the shared NAT does not hairpin",
		},
		{
			// Issue 28: two homes behind one carrier NAT, both on a
			// router's default 192.168.1.0/24: this host's prefix holds
			// the peer's address, yet nothing says one link.
			name:        "the same public address, the peer's LAN address in this host's /24 but not its neighbour: one LAN or two unknown",
			self:        onSameRange,
			peer:        func(p *Peer) { *p = relayedPeer("198.51.100.10:61000", "192.168.1.77:41641") },
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"Self.Endpoints"},
			wantText:    "two homes on the same default range behind a shared NAT",
		},
		{
			name: "one public address, one LAN, both ends hard: still same-nat-lan-blocked, never both-hard-nat",
			self: func(s *Self) { onLAN(s); s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("198.51.100.10:61000", "192.168.1.77:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonSameNATLANBlocked,
		},
		{
			name:       "one public address from different LANs: the shared NAT does not hairpin",
			peer:       func(p *Peer) { *p = relayedPeer("198.51.100.10:61000", "10.44.0.7:41641") },
			wantReason: ReasonSharedNATNoHairpin,
			wantText:   "hairpin",
		},
		{
			name:       "198.18.0.0/15 counts as public, as in Tailscale",
			peer:       func(p *Peer) { *p = relayedPeer("198.18.0.9:41641") },
			wantReason: ReasonUnexplained,
		},
		// IPv6: netcheck measures MappingVariesByDestIP on IPv4 only
		// (net/netcheck/netcheck.go: "TODO: track MappingVariesByDestIP for IPv6").
		{
			name: "hard IPv4 NAT on both ends, global IPv6 on both: NAT is not the cause",
			self: func(s *Self) {
				s.NAT.MappingVariesByDestIP = boolp(true)
				s.NAT.WorkingIPv6 = boolp(true)
				s.Endpoints = append(s.Endpoints, netip.MustParseAddrPort("[2001:db8::10]:41641"))
			},
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "[2001:db8:1::5]:41641")
				p.NAT = &NATInfo{MappingVariesByDestIP: boolp(true), WorkingIPv6: boolp(true)}
			},
			wantReason: ReasonUnexplained,
			wantText:   "IPv6",
		},
		{
			name:       "peer's only public endpoint is IPv6 and IPv6 does not work here: no address family in common",
			self:       func(s *Self) { s.NAT.WorkingIPv6 = boolp(false) },
			peer:       func(p *Peer) { *p = relayedPeer("[2001:db8:1::5]:41641", "192.168.7.2:41641") },
			wantReason: ReasonNoCommonFamily,
		},
		// Issue 28: netcheck sends no IPv6 STUN probe when the DERP map
		// has STUN off or every node's IPv6 "none" (net/netcheck
		// makeProbePlan, nodeAddrPort): IPv6 false is then untested.
		{
			name:       "IPv6 false, but no DERP node takes an IPv6 probe: untested, not no-common-family",
			self:       func(s *Self) { s.NAT.WorkingIPv6 = boolp(false); s.NoIPv6STUN = true },
			peer:       func(p *Peer) { *p = relayedPeer("[2001:db8:1::5]:41641", "192.168.7.2:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name:       "IPv6 false, but the DERP map has STUN off: untested, not no-common-family",
			self:       func(s *Self) { s.NAT.WorkingIPv6 = boolp(false); s.NoSTUN = true },
			peer:       func(p *Peer) { *p = relayedPeer("[2001:db8:1::5]:41641", "192.168.7.2:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name:       "peer has IPv4 and IPv6, IPv6 broken here: IPv4 remains",
			self:       func(s *Self) { s.NAT.WorkingIPv6 = boolp(false) },
			peer:       func(p *Peer) { *p = relayedPeer("[2001:db8:1::5]:41641", "203.0.113.5:41641") },
			wantReason: ReasonUnexplained,
		},
		// Expired keys: magicsock's endpoint.send returns errExpired
		// (wgengine/magicsock/endpoint.go), so "send traffic" cannot work.
		{
			name: "expired key, online, not active: key-expired, not idle",
			peer: func(p *Peer) {
				*p = Peer{Name: "x", Online: boolp(true), Expired: true, Path: Path{Kind: PathIdle, Text: "-"}}
			},
			wantReason: ReasonKeyExpired,
			wantText:   "re-authenticate",
		},
		// No session at all: Active only means we sent something in the
		// last 45 s (magicsock sessionActiveTimeout); a ping sets it.
		{
			name: "active relay, no handshake ever, 10 DISCO pings with 0 pongs: no working path",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PingRun = &PingRun{At: now.Add(-time.Minute), Tries: 10}
				p.RatesKnown = true
			},
			wantReason: ReasonNoHandshake,
			wantText:   "no working path",
		},
		{
			name: "active for 30 s with no handshake, handshakes sent: no-handshake",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.NoHandshakeSince = now.Add(-30 * time.Second)
				p.TxBytes = 7 * 148 // handshake initiations
			},
			wantReason: ReasonNoHandshake,
		},
		// Review 4 (c4c.json): a CLI DISCO ping makes the peer Active
		// (endpoint.go startDiscoPingLocked → noteTxActivityExtTriggerLocked)
		// and wireguard-go counts every packet it sends, handshake
		// initiations too, in tx bytes (device/peer.go SendBuffers): tx 0
		// means WireGuard sent nothing, so no handshake says nothing.
		{
			name: "Active from DISCO only (tx 0), no session state: unknown, not no-handshake",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.NoHandshakeSince = now.Add(-30 * time.Second)
			},
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"Status.TxBytes"},
			wantText:    "Active comes from DISCO only",
		},
		{
			// Review 4 (c4e.json): tx not growing over the last poll.
			name: "old handshake, tx rate 0 over the last poll, no session state: unknown",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.LastHandshake, p.NoHandshakeSince = now.Add(-10*time.Minute), now.Add(-time.Minute)
				p.TxBytes, p.RxBytes, p.RatesKnown = 1<<20, 2<<20, true
			},
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"Status.TxBytes"},
		},
		{
			name: "active for 3 s with no handshake: WireGuard is still trying",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.NoHandshakeSince = now.Add(-3 * time.Second)
			},
			wantReason: ReasonUnexplained,
		},
		// Empty Relay: populatePeerStatus sets Relay from the peer's home
		// DERP via derpRegionCodeOfIDLocked, "" when 0 or not in the map.
		{
			name: "empty Relay on an active path: no usable home DERP",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.Path = Path{Kind: PathDERP, Text: "active; "}
				p.HomeDERP, p.HomeDERPCode = 0, ""
			},
			wantReason: ReasonNoHomeDERP,
		},
		// Review 5 (c8a.json): derpRegionCodeOfIDLocked returns "" for a
		// region in the map without a code, and endpoint.send relays
		// through it; DISCO pongs through DERP show a DERP route works.
		{
			name: "empty Relay, the home region is in our map without a code: not no-home-derp",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.Path = Path{Kind: PathDERP, Text: "active; "}
				p.HomeDERP, p.HomeDERPCode = 900, ""
			},
			regions:    map[int]Region{1: testRegions[1], 900: {ID: 900, Name: "Home lab"}},
			wantReason: ReasonUnexplained,
			wantText:   "without a region code",
		},
		{
			name: "empty Relay, home not in the map, but DISCO pongs came through DERP: not no-home-derp",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.Path = Path{Kind: PathDERP, Text: "active; "}
				p.HomeDERP, p.HomeDERPCode, p.WireGuard = 900, "", WGNone
				p.PingRun = &PingRun{At: now.Add(-10 * time.Second), Tries: 3, Pongs: 3, Via: "DERP()"}
			},
			wantReason: ReasonDiscoUnanswered,
			wantText:   "a DERP route to the peer works",
		},
		{
			name: "empty Relay, our DERP map unknown: unknown",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.Path = Path{Kind: PathDERP, Text: "active; "}
				p.HomeDERP, p.HomeDERPCode = 900, ""
				p.TxBytes = 1480
			},
			regions:     map[int]Region{},
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"Status.Relay"},
		},
		{
			name: "empty Relay but a session is up: relayed through the region the peer last wrote from, not no-home-derp",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.Path = Path{Kind: PathDERP, Text: "active; "}
				p.HomeDERP, p.HomeDERPCode = 0, ""
				p.LastHandshake = now.Add(-20 * time.Second)
			},
			wantReason: ReasonUnexplained,
			wantText:   "the region the peer last wrote from",
		},
		// WorkingUDP: netcheck's STUN to UDP 3478 only.
		{
			name:       "WorkingUDP false while the DERP map disables STUN: says nothing",
			self:       func(s *Self) { s.NAT.WorkingUDP = boolp(false); s.NoSTUN = true },
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name:       "only-tcp-443 node attribute: policy, not a blocked network",
			self:       func(s *Self) { s.NAT.WorkingUDP = boolp(false); s.OnlyTCP443 = true },
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonLocalTCP443Only,
		},
		{
			name: "DISCO run answered only over DERP: disco-unanswered, fix names both ends",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PingRun = &PingRun{At: now.Add(-time.Minute), Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
			},
			wantReason: ReasonDiscoUnanswered,
			wantText:   "outbound firewall",
		},
		{
			name: "a DISCO run from two hours ago no longer counts",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PingRun = &PingRun{At: now.Add(-2 * time.Hour), Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
			},
			wantReason: ReasonUnexplained,
			wantText:   "too old to count",
		},
		{
			name: "far-home-derp judges the region in use (Relay), not WhoIs's home region",
			self: func(s *Self) { s.DERPLatencyAt = now.Add(-time.Minute) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.HomeDERP = 1 // cached WhoIs
				p.Path.DERPCode = "tok"
			},
			wantReason: ReasonUnexplained,
			wantAlso:   []ReasonID{ReasonFarHomeDERP},
		},
		{
			name: "far region on latencies of unknown age: shown, not judged",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.Path.DERPCode = "tok"
			},
			wantReason: ReasonUnexplained,
			wantText:   "may be hours",
		},
		// The three smaller gaps: a port mapping that exists (HavePortMap,
		// advertised by magicsock determineEndpoints) on a relayed path
		// passes no traffic; it does not "rescue" anything.
		{
			// With LAN endpoints and no interfaces read, which endpoint is
			// the mapping is not known: the fix names both causes.
			name:       "hard NAT with a port mapping, relayed anyway: the mapping passes no traffic",
			self:       func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true); s.NAT.HavePortMap = true },
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonLocalPortMapBlocked,
			wantText:   "if it is public, the router's own firewall drops",
		},
		{
			name: "a port mapping, every private endpoint on an interface here: the router's firewall",
			self: func(s *Self) {
				onLAN(s)
				s.NAT.MappingVariesByDestIP, s.NAT.HavePortMap = boolp(true), true
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonLocalPortMapBlocked,
			wantText:   "The router's own firewall most likely drops",
		},
		{
			// Review 2, c9a.json: LocalAddresses never advertises a
			// 100.64.0.0/10 address, so one among our endpoints is a
			// mapping made behind a carrier's NAT (upnp.go selectBestService
			// "ext-private"); the peer's hard NAT needed it.
			name: "a port mapping whose address is in 100.64.0.0/10, the peer hard: local-double-nat, never the router's firewall",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("100.72.5.9:41641"), netip.MustParseAddrPort("198.51.100.10:60011"), netip.MustParseAddrPort("192.168.1.20:41641")}
				s.NAT.HavePortMap, s.NAT.UPnP = true, boolp(true)
			},
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonLocalDoubleNAT,
			wantAlso:   []ReasonID{ReasonHardAndFilteringNAT},
			wantText:   "in 100.64.0.0/10, a carrier's NAT range",
		},
		{
			// Review 2, dnat.txt: tailscaled logged the mapping
			// "192.168.0.50:41641 (portmap)"; with the peer's NAT unknown
			// and ours easy, whether the mapping was needed is unknown.
			name: "a (portmap) endpoint that is private, our NAT easy, the peer's unknown: unexplained, never the router's firewall",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("192.168.0.50:41641"), netip.MustParseAddrPort("198.51.100.10:60201"), netip.MustParseAddrPort("192.168.1.40:41641")}
				s.EndpointTypes = []string{"portmap", "stun", "local"}
				s.NAT.HavePortMap = true
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonUnexplained,
			wantText:   "its external address is private",
		},
		{
			name: "a (portmap) endpoint that is private, our NAT hard: local-double-nat",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("192.168.0.50:41641"), netip.MustParseAddrPort("198.51.100.10:60201"), netip.MustParseAddrPort("192.168.1.40:41641")}
				s.EndpointTypes = []string{"portmap", "stun", "local"}
				s.NAT.HavePortMap, s.NAT.MappingVariesByDestIP = true, boolp(true)
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonLocalDoubleNAT,
			wantAlso:   []ReasonID{ReasonLocalHardNAT},
			wantText:   "put the first in bridge (modem) mode",
		},
		{
			// Review 3, clinc.txt: the CLI's netcheck binds a port of its
			// own (netcheck.Client.Standalone, ":0"): its mapping is not
			// tailscaled's.
			name: "a hard NAT measured by the CLI's own netcheck: not tailscaled's, unknown",
			self: func(s *Self) {
				s.NAT.MappingVariesByDestIP, s.NAT.FromCLI, s.NAT.PortMapUnknown = boolp(true), true, true
			},
			peer:        func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"NetInfo.MappingVariesByDestIP"},
			wantText:    "a socket of its own",
		},
		{
			// The shared field paste netcheck-redacted.txt: the CLI's easy NAT is
			// tailscaled's too (a NAT keeping one mapping for an arbitrary
			// port keeps one for tailscaled's), so the peer's hard NAT
			// and our filtering decide, as with the daemon's own report.
			name: "an easy NAT measured by the CLI's own netcheck: read as ours, said who measured",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP, s.NAT.FromCLI, s.NAT.STUNRegions = boolp(false), true, 2 },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonHardAndFilteringNAT,
			wantText:   "measured by the tailscale CLI's own netcheck from a port of its own",
		},
		{
			// Review 15, onestun.txt: a pasted report that lists one region.
			name: "easy NAT from a report with one region: unknown",
			self: func(s *Self) { s.NAT.STUNRegions = 1 },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"NetInfo.MappingVariesByDestIP"},
		},
		{
			name: "UPnP answers but no mapping: said so",
			self: func(s *Self) {
				s.NAT.MappingVariesByDestIP = boolp(true)
				s.NAT.UPnP = boolp(true)
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonLocalHardNAT,
			wantText:   "the router answers UPnP but gave no mapping",
		},
		{
			// netcheck compares the mapping two STUN servers see
			// (net/netcheck addNodeLatency): with one, false proves nothing.
			name: "one STUN server in the DERP map: an easy NAT reading is unknown",
			self: func(s *Self) { s.STUNServers = 1 },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"NetInfo.MappingVariesByDestIP"},
		},
		{
			name:       "no NetInfo at all: nothing fails, unexplained",
			self:       func(s *Self) { s.NAT = nil },
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name: "UDP blocked and no endpoints: UDP first, the rest in Also",
			self: func(s *Self) { s.NAT.WorkingUDP = boolp(false); s.DERPLatencyAt = now },
			peer: func(p *Peer) {
				*p = relayedPeer()
				p.HomeDERP, p.Path.DERPCode = 3, "tok"
			},
			wantReason: ReasonLocalUDPBlocked,
			wantAlso:   []ReasonID{ReasonNoEndpoints, ReasonFarHomeDERP},
		},
		{
			name: "peer relay with a healthy local side",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.Path = Path{Kind: PathPeerRelay, PeerRelay: "198.51.100.7:7777:vni:1"}
			},
			wantReason: ReasonPeerRelay,
		},
		{
			name: "far threshold: 40ms vs 12ms is under 2x+30ms? no: 40 ≥ 24 but 28 < 30",
			self: func(s *Self) { s.NAT.DERPLatency[2] = 40 * time.Millisecond; s.DERPLatencyAt = now },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.HomeDERP, p.Path.DERPCode = 2, "fra"
			},
			wantReason: ReasonUnexplained,
		},
		{
			name: "DISCO run against a peer without endpoints: no-endpoints, not disco-unanswered",
			peer: func(p *Peer) {
				*p = relayedPeer()
				p.PingRun = &PingRun{At: now, Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
			},
			wantReason: ReasonNoEndpoints,
		},
		{
			name: "peer loopback only, ours public only",
			self: func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641")} },
			peer: func(p *Peer) { *p = relayedPeer("127.0.0.1:44175") },
			// Unknown too: a peer on this host could be reached there.
			wantReason:  ReasonPrivateEndpointsOnly,
			wantUnknown: []string{"SameLAN"},
		},
		{
			name: "pinged offline peer (Active) keeps the offline verdict",
			peer: func(p *Peer) {
				*p = Peer{Name: "x", Active: true, Online: boolp(false), Path: Path{Kind: PathOffline, DERPCode: "nyc"},
					Endpoints: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:44175")}, EndpointsKnown: true}
			},
			wantReason: ReasonOffline,
		},
		{
			name: "offline known only from LastSeen: the check names Status.LastSeen",
			peer: func(p *Peer) {
				*p = Peer{Name: "x", Online: boolp(false), OnlineSource: "Status.LastSeen", Path: Path{Kind: PathOffline},
					LastSeen: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
			},
			wantReason: ReasonOffline,
			wantText:   "none recorded",
		},
		// Both ends (issue 8): the peer's own facts, from the control API.
		// Issue 17, item 1: an end with no NAT answers every DISCO ping
		// (magicsock.go handlePingLocked, Pong{Src: src}), so a relayed
		// path means its inbound UDP is dropped; the other end's hard NAT
		// is the other half.
		{
			// Review c1b.json: the Docker bridge carries tailscaled's own
			// port, as the public address does: no NAT rewrote it.
			name: "peer hard NAT, our side public (a bridge carries the same port): this end drops inbound UDP, the peer's hard NAT the other half",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("172.17.0.1:41641")}
			},
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonLocalInboundUDPBlocked,
			wantAlso:   []ReasonID{ReasonPeerHardNAT},
			wantText:   "a port mapping on the peer's NAT also works",
		},
		{
			// Review c1a.json: the peer's NetInfo says easy, and its bridge
			// carries the public endpoint's port.
			name: "our hard NAT, the peer public (a VPS, Docker bridge beside it, NetInfo easy): the peer drops inbound UDP",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "172.17.0.1:41641")
				p.OS = "linux"
				p.PeerSide = &PeerSide{Source: SourceLocalAPI, MappingVariesByDestIP: boolp(false), HavePortMap: boolp(false)}
			},
			wantReason: ReasonPeerInboundUDPBlocked,
			wantAlso:   []ReasonID{ReasonLocalHardNAT},
			wantText:   "open inbound UDP to its tailscaled port (UDP 41641)",
		},
		{
			// Review c1d.json and the structural point: without the peer's
			// NetInfo its NAT type is unknown, which peer-inbound needs.
			name: "our hard NAT, the peer public with a bridge, its NAT type unknown: not peer-inbound-udp-blocked",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "172.17.0.1:41641")
				p.OS = "linux"
			},
			wantReason:  ReasonLocalHardNAT,
			wantUnknown: []string{"Peer.NetInfo.MappingVariesByDestIP"},
			wantText:    "peer-inbound-udp-blocked would hold, but it needs this fact",
		},
		{
			// Review 1, c1d.json: one public endpoint is what a host
			// behind a carrier's NAT advertises too (net/netmon
			// LocalAddresses skips 100.64.0.0/10).
			name: "the peer's only endpoint is public, no port witness, NetInfo easy: its NAT is unknown",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.31:41641")
				p.OS = "linux"
				p.PeerSide = &PeerSide{Source: SourceLocalAPI, MappingVariesByDestIP: boolp(false), HavePortMap: boolp(false)}
			},
			wantReason:  ReasonLocalHardNAT,
			wantUnknown: []string{"Peer.Endpoints"},
			wantText:    "never advertised",
		},
		{
			// Review 1, c2a.json: a phone on cellular advertises only its
			// carrier NAT's public address.
			name: "an Android peer with one public endpoint: never read as no NAT",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.50:38211", "[2001:db8:77::5]:38211")
				p.OS = "android"
				p.PeerSide = &PeerSide{Source: SourceLocalAPI, MappingVariesByDestIP: boolp(false), HavePortMap: boolp(false)}
			},
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"Peer.Endpoints"},
			wantText:    "a phone on a cellular network",
		},
		{
			// Review 1, c2c.json: our one public endpoint, no interfaces
			// read: whether we have a NAT is not known, so the NAT rules
			// decide.
			name: "our only endpoint public, no interfaces read: our NAT unknown, the peer's hard NAT decides",
			self: func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:60123")} },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason:  ReasonPeerHardNAT,
			wantUnknown: []string{"Self.Endpoints"},
		},
		{
			// A peer's own snapshot (its interfaces) decides its NAT.
			name: "the peer's snapshot shows no NAT: peer-inbound-udp-blocked without a witness",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.31:41641")
				p.OS = "linux"
				p.PeerSide = &PeerSide{Source: SourcePeerSnapshot, At: now.Add(-time.Minute), MappingVariesByDestIP: boolp(false), HavePortMap: boolp(false), NoNAT: boolp(true)}
			},
			wantReason: ReasonPeerInboundUDPBlocked,
			wantAlso:   []ReasonID{ReasonLocalHardNAT},
		},
		{
			name: "a peer with only public endpoints whose client is not Tailscale's: its NAT is unknown",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.OS = "freertos"
			},
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"Peer.Endpoints"},
		},
		{
			// Our STUN port (60123) is not our LAN endpoint's (41641): a
			// NAT rewrote it.
			name: "peer hard NAT meets our easy NAT without port mapping: hard-and-filtering-nat, fix here",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:60123"), netip.MustParseAddrPort("192.168.1.20:41641")}
			},
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonHardAndFilteringNAT,
			wantText:   "this end's router",
		},
		{
			// Review 12, c10a.json: a cloud VM with a public interface and
			// a VPC one advertises both with tailscaled's port, as a NAT
			// that kept the port does: either may drop the peer's pings.
			name: "peer hard NAT, our public endpoint carries our LAN port: NAT or no NAT unknown, both fixes",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("10.116.0.2:41641")}
				s.NAT.UPnP, s.NAT.PMP, s.NAT.PCP = boolp(false), boolp(false), boolp(false)
			},
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonHardAndFilteringNAT,
			wantText:   "whether a NAT or a firewall does it is not known",
		},
		{
			name: "our hard NAT (a phone on mobile) meets the peer's home router without UPnP: fix on the peer's router",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.PeerSide = apiSide(func(s *PeerSide) {
					s.MappingVariesByDestIP = boolp(false)
					s.ClientSupports.UPnP, s.ClientSupports.PMP, s.ClientSupports.PCP = boolp(false), boolp(false), boolp(false)
				})
			},
			wantReason: ReasonHardAndFilteringNAT,
			wantText:   "the peer's router needs a port mapping",
		},
		{
			// A UPnP answer is not a mapping (netcheck's PortMapping lists
			// services; HavePortMap is the mapping): our hard NAT stands.
			name: "our hard NAT, the peer's UPnP answers: no mapping is known, our hard NAT stands",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.PeerSide = apiSide(func(s *PeerSide) {
					s.MappingVariesByDestIP = boolp(false)
					s.ClientSupports.UPnP = boolp(true)
				})
			},
			wantReason: ReasonLocalHardNAT,
		},
		{
			name: "peer hard NAT, we hold a port mapping, relayed anyway: our mapping passes no traffic",
			self: func(s *Self) { s.NAT.HavePortMap = true },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonLocalPortMapBlocked,
		},
		{
			name: "the peer holds a port mapping (its snapshot says so), relayed anyway",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.PeerSide = &PeerSide{Source: SourcePeerSnapshot, At: time.Date(2026, 11, 30, 11, 59, 0, 0, time.UTC),
					MappingVariesByDestIP: boolp(true), HavePortMap: boolp(true)}
			},
			wantReason: ReasonPeerPortMapBlocked,
		},
		{
			name: "peer hard NAT but whether it holds a port mapping is unknown: no confident verdict",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true) })
			},
			wantReason: ReasonUnexplained,
			wantText:   "whether it holds a port mapping is not known",
		},
		{
			name: "peer hard NAT with our NAT type unknown: shown, not a verdict",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = nil },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonUnexplained,
		},
		{
			name: "both hard, the peer's side from the control API",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonBothHardNAT,
			wantText:   "the peer's NAT picks a new port per destination",
		},
		{
			name: "the peer reports UDP not working",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.ClientSupports.UDP = boolp(false) })
			},
			wantReason: ReasonPeerUDPBlocked,
		},
		{
			name: "the peer's home region is far from it: peer-far-home-derp in Also",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) {
					s.HomeDERP = 1
					s.DERPLatencyMs = map[string]float64{"nyc": 140, "fra": 11}
				})
			},
			wantReason: ReasonUnexplained,
			wantAlso:   []ReasonID{ReasonPeerFarHomeDERP},
		},
		{
			name: "the peer's client predates peer relays: peer-old-client in Also",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) {
					s.MappingVariesByDestIP = boolp(true)
					s.ClientVersion = "v1.80.2"
					noMap(s)
				})
			},
			wantReason: ReasonBothHardNAT,
			wantAlso:   []ReasonID{ReasonPeerOldClient},
			wantText:   "predates peer relays",
		},
		{
			name: "CGNAT on the peer's end is evidence, not a verdict",
			peer: func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "100.78.9.1:41641") },
			// 100.78.9.1 is private, but a public endpoint remains.
			wantReason: ReasonUnexplained,
			wantText:   "carrier-grade NAT",
		},
		{
			name: "the API lists the peer but not its NAT: unknown, not easy",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(nil)
			},
			wantReason:  ReasonLocalHardNAT,
			wantUnknown: []string{"API.clientConnectivity.mappingVariesByDestIP"},
		},
		{
			name:        "no peer side at all: unknown, and says what would fill it",
			self:        func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer:        func(p *Peer) { *p = relayedPeer("203.0.113.5:41641") },
			wantReason:  ReasonLocalHardNAT,
			wantUnknown: []string{"Peer.NetInfo.MappingVariesByDestIP"},
			wantText:    "read-only API key",
		},
		{
			name: "local and API facts disagree: the newer (API) decides, the older is shown",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				local := &PeerSide{Source: SourceLocalAPI, At: now.Add(-time.Hour), MappingVariesByDestIP: boolp(false)}
				p.PeerSide = MergePeerSide(local, apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) }))
			},
			wantReason: ReasonBothHardNAT,
			wantText:   "older than control-api's answer",
		},
		{
			name: "a relay region far from here but the peer's own nearest: not far-home-derp",
			self: func(s *Self) { s.DERPLatencyAt = now },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.Path.DERPCode = "tok"
				p.PeerSide = apiSide(func(s *PeerSide) { s.HomeDERP = 3; s.DERPLatencyMs = map[string]float64{"tok": 4, "nyc": 150} })
			},
			wantReason: ReasonUnexplained,
			wantText:   "near the peer",
		},
		{
			name: "control-API facts a day old are set aside, not judged",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641")
				p.PeerSide = apiSide(func(s *PeerSide) {
					s.MappingVariesByDestIP = boolp(true)
					noMap(s)
					s.At = now.Add(-30 * time.Hour)
				})
			},
			wantReason: ReasonUnexplained,
			wantText:   "too old to judge",
		},
		// Issue 17, item 3: a DISCO ping makes a peer Active (magicsock
		// endpoint.go: a CLI ping sets lastSendExt) without any WireGuard
		// session; fresh pongs mean the peer answers.
		{
			name: "pinged peer, no handshake for 30 s, fresh DISCO pongs via DERP: not no-handshake",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.NoHandshakeSince = now.Add(-30 * time.Second)
				p.PingRun = &PingRun{At: now.Add(-10 * time.Second), Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
			},
			wantReason: ReasonDiscoUnanswered,
			wantText:   "the peer answered DISCO pings",
		},
		{
			name: "tailscaled says no WireGuard session and none attempted: only DISCO was sent, not no-handshake",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.WireGuard, p.NoHandshakeSince = WGNone, now.Add(-time.Minute)
			},
			wantReason: ReasonUnexplained,
			wantText:   "nothing but DISCO was sent",
		},
		{
			name: "tailscaled says a handshake has been in progress for a minute: no-handshake",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.WireGuard, p.WireGuardSince = WGHandshake, now.Add(-time.Minute)
			},
			wantReason: ReasonNoHandshake,
		},
		{
			name: "handshake stuck while DISCO answers: no-handshake, worded so",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.WireGuard, p.WireGuardSince = WGHandshake, now.Add(-time.Minute)
				p.PingRun = &PingRun{At: now.Add(-10 * time.Second), Tries: 3, Pongs: 3, Via: "DERP(nyc)"}
			},
			wantReason: ReasonNoHandshake,
			wantAlso:   []ReasonID{ReasonDiscoUnanswered},
			wantText:   "although the peer answers DISCO",
		},
		{
			name: "an established session outranks an old handshake time",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.WireGuard, p.NoHandshakeSince = WGEstablished, now.Add(-time.Hour)
			},
			wantReason: ReasonUnexplained,
		},
		// Issue 17, item 6 (its diagnosis half): pasted text with tx > 0
		// and rx 0 says nothing ever answered; never a NAT verdict.
		{
			name: "pasted: tx > 0, rx 0, our NAT hard: nothing ever answered, not local-hard-nat",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.HandshakeUnknown, p.TxBytes, p.RxBytes = true, 1234, 0
			},
			wantReason: ReasonNoHandshake,
			wantAlso:   []ReasonID{ReasonLocalHardNAT},
			wantText:   "nothing ever answered",
		},
		// Issue 17, item 7: a recent handshake exempts an empty Relay
		// (endpoint.send falls back to the region the peer wrote from);
		// pasted text shows no handshakes, so the rule cannot decide.
		{
			name: "pasted: empty Relay cannot be judged",
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.Path = Path{Kind: PathDERP, Text: "active; "}
				p.HomeDERP, p.HomeDERPCode, p.HandshakeUnknown = 0, "", true
			},
			wantReason:  ReasonUnexplained,
			wantUnknown: []string{"Status.Relay"},
		},
		// Pasted ping runs count as live ones do (magicsock
		// endpoint.discoPing pings DERP and every candidate endpoint),
		// though pasted text shows no handshakes and no endpoints.
		{
			name: "pasted: a ping run with no pong at all: the peer does not answer",
			peer: func(p *Peer) {
				*p = relayedPeer()
				p.Path = Path{Kind: PathDERP, Text: "ping: no reply (3 tries)"}
				p.HomeDERP, p.HomeDERPCode, p.HandshakeUnknown, p.EndpointsKnown = 0, "", true, false
				p.PingRun = &PingRun{At: now, Tries: 3}
			},
			wantReason:  ReasonNoHandshake,
			wantUnknown: []string{"Status.Relay", "WhoIs.Node.Endpoints"},
			wantText:    "not even through DERP",
		},
		{
			name: "pasted: pongs only via DERP, endpoints unknown: disco-unanswered, the fix says they may be none",
			peer: func(p *Peer) {
				*p = relayedPeer()
				p.HandshakeUnknown, p.EndpointsKnown = true, false
				p.PingRun = &PingRun{At: now, Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
			},
			wantReason:  ReasonDiscoUnanswered,
			wantUnknown: []string{"WhoIs.Node.Endpoints"},
			wantText:    "if it advertises none",
		},
		{
			name: "pongs only via DERP to a peer known to have no endpoints: no-endpoints, not disco-unanswered",
			peer: func(p *Peer) {
				*p = relayedPeer()
				p.PingRun = &PingRun{At: now, Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
			},
			wantReason: ReasonNoEndpoints,
		},
		// A health warning naming the region in use (health/warnings.go):
		// the verdict with one region, beside it with others.
		{
			name: "our home region unreachable, other regions exist: derp-unreachable in Also",
			self: func(s *Self) {
				s.DERPRegions = 3
				s.Health = []safetext.Text{"Tailscale could not connect to the 'New York City' relay server. Your Internet connection might be down, or the server might be temporarily unavailable."}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonUnexplained,
			wantAlso:   []ReasonID{ReasonDERPUnreachable},
		},
		{
			// magicsock/derp.go runDerpReader raises it on a health frame
			// received over a live connection: reachable, not
			// derp-unreachable (this node's own verdict names the
			// duplicate key: TestDiagnoseSelf).
			name: "the only region reports an issue: it is reachable, no derp-unreachable",
			self: func(s *Self) {
				s.DERPRegions = 1
				s.Health = []safetext.Text{"The relay server #1 is reporting an issue: overloaded"}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name: "a warning about another region that carries nothing here: nothing",
			self: func(s *Self) {
				s.DERPRegions = 1
				s.Health = []safetext.Text{"The relay server #3 is reporting an issue: overloaded"}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonUnexplained,
		},
		// Issue 28: every interface address is advertised
		// (determineEndpoints), so one among the endpoints proves no NAT
		// only when no public endpoint lies off every interface; a proxy
		// TUN's 198.18.0.0/15 (Clash, Surge) is not routable at all.
		{
			name: "a proxy TUN's 198.18.0.1 beside a STUN endpoint on no interface: a port-rewriting NAT, not open",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("203.0.113.9:61234"), netip.MustParseAddrPort("198.18.0.1:41641"), netip.MustParseAddrPort("192.168.1.20:41641")}
				s.Host = &HostFacts{Interfaces: []Interface{
					{Name: "eth0", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.1.20/24")}},
					{Name: "utun7", Addrs: []netip.Prefix{netip.MustParsePrefix("198.18.0.1/16")}},
				}}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonUnexplained,
			wantText:   "its port 61234 is not tailscaled's own (41641), so the NAT rewrites ports",
		},
		{
			name: "a public interface address, and a STUN endpoint on no interface: a NAT for the default route, not open",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("203.0.113.99:55555")}
				s.Host = &HostFacts{Interfaces: []Interface{{Name: "eth1", Addrs: []netip.Prefix{netip.MustParsePrefix("198.51.100.10/24")}}}}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonUnexplained,
			wantText:   "on none of this host's interfaces",
		},
		{
			name: "no host facts: a proxy TUN address and a bridge with tailscaled's port beside a rewritten public port, not open",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.18.0.1:41641"), netip.MustParseAddrPort("203.0.113.9:61234"), netip.MustParseAddrPort("172.17.0.1:41641")}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name: "the peer's own snapshot says no NAT: never 'a NAT most likely sits in front of it'",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer: func(p *Peer) {
				*p = relayedPeer("198.51.100.30:41641", "10.0.0.5:41641")
				p.PeerSide = &PeerSide{Source: SourcePeerSnapshot, MappingVariesByDestIP: boolp(false), HavePortMap: boolp(false), NoNAT: boolp(true),
					Endpoints: p.Endpoints}
			},
			wantReason: ReasonPeerInboundUDPBlocked,
			wantAlso:   []ReasonID{ReasonLocalHardNAT},
		},
		{
			// Issue 28: no mapping helps while that end drops all UDP.
			name: "private endpoints only, and the peer's UDP blocked: the blocking fact leads",
			peer: func(p *Peer) {
				*p = relayedPeer("192.168.7.2:41641", "10.1.0.4:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.ClientSupports.UDP = boolp(false) })
			},
			wantReason: ReasonPeerUDPBlocked,
			wantAlso:   []ReasonID{ReasonPrivateEndpointsOnly},
		},
		// Issue 28: fixes that cannot work for this node, and both halves
		// of a cause whose other end is unknown.
		{
			name:       "our hard NAT, UPnP answered and mapped nothing: not 'enable UPnP'",
			self:       func(s *Self) { s.NAT.MappingVariesByDestIP, s.NAT.UPnP = boolp(true), boolp(true) },
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonLocalHardNAT,
			wantText:   "answers UPnP but gave tailscaled no mapping",
		},
		{
			name:       "our hard NAT, the peer's end unknown: both halves, both fixes",
			self:       func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true) },
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonLocalHardNAT,
			wantText:   "a port mapping here fixes the first two",
		},
		{
			name: "randomizeClientPort: no fix rests on --port alone",
			self: func(s *Self) { s.NAT.MappingVariesByDestIP = boolp(true); s.RandomizePort = true },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(false); noMap(s) })
			},
			wantReason: ReasonHardAndFilteringNAT,
			wantText:   "ignores --port (wgengine/userspace.go Reconfig)",
		},
		{
			name: "the peer's hard NAT is its mobile carrier's: only this end can help",
			self: func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641")} },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.50:38211")
				p.OS = "android"
				p.NAT = &NATInfo{LinkType: "mobile"}
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonPeerHardNAT,
			wantText:   "no router to map and no command line",
		},
		{
			name: "the peer's hard NAT facing a public end whose firewall is unread: both halves",
			self: func(s *Self) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641")} },
			peer: func(p *Peer) {
				*p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
				p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
			},
			wantReason: ReasonPeerHardNAT,
			wantText:   "opening inbound UDP to tailscaled's port (UDP 41641) on this host's firewall fixes the last two",
		},
		// This host's facts: a public address on its interface decides
		// that this end has no NAT, and its nftables ruleset the wording.
		{
			name: "no NAT here by this host's interfaces, and its nftables drops UDP 41641",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("10.8.0.1:41641")}
				s.Host = &HostFacts{Interfaces: []Interface{
					{Name: "eth0", Addrs: []netip.Prefix{netip.MustParsePrefix("198.51.100.10/24")}},
					{Name: "wg0", Addrs: []netip.Prefix{netip.MustParsePrefix("10.8.0.1/24")}},
				}, Firewall: &FirewallFacts{Port: 41641, Verdict: FirewallDrop, Why: "table inet filter chain input: policy drop"}}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonLocalInboundUDPBlocked,
			wantText:   "drops inbound UDP to tailscaled's port (UDP 41641) outright",
		},
		{
			name: "no NAT here, a stateful ruleset: open it, or a port mapping on the peer's NAT",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641")}
				s.Host = &HostFacts{Interfaces: []Interface{{Name: "eth0", Addrs: []netip.Prefix{netip.MustParsePrefix("198.51.100.10/24")}}},
					Firewall: &FirewallFacts{Port: 41641, Verdict: FirewallDrop, Stateful: true, Why: "ct state established,related accept, then policy drop"}}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonLocalInboundUDPBlocked,
			wantText:   "whose replies this firewall lets in",
		},
		{
			name: "no NAT here and the host accepts: the drop is in front of the host",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641")}
				s.Host = &HostFacts{Interfaces: []Interface{{Name: "eth0", Addrs: []netip.Prefix{netip.MustParsePrefix("198.51.100.10/24")}}},
					Firewall: &FirewallFacts{Port: 41641, Verdict: FirewallAccept, Why: "no rule drops it"}}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonLocalInboundUDPBlocked,
			wantText:   "cloud security group or provider firewall; open inbound UDP",
		},
		{
			name: "host facts show our public address is not local (a NAT maps it): not open",
			self: func(s *Self) {
				s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("127.0.0.1:41641")}
				s.Host = &HostFacts{Interfaces: []Interface{{Name: "lo", Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}}}}
			},
			peer:       func(p *Peer) { *p = relayedPeer("203.0.113.5:41641", "192.168.7.2:41641") },
			wantReason: ReasonUnexplained,
		},
		{
			name: "no WhoIs, but the control API lists the peer's endpoints: they are judged",
			peer: func(p *Peer) {
				*p = relayedPeer()
				p.EndpointsKnown = false
				p.PeerSide = apiSide(func(s *PeerSide) { s.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("192.168.7.2:41641")} })
			},
			wantReason: ReasonPrivateEndpointsOnly,
		},
	}
}

func TestDiagnoseCases(t *testing.T) {
	now := fixtureNow
	for _, tt := range diagnoseCases() {
		t.Run(tt.name, func(t *testing.T) {
			self := easySelf()
			if tt.self != nil {
				tt.self(&self)
			}
			var p Peer
			tt.peer(&p)
			regions := testRegions
			if tt.regions != nil {
				regions = tt.regions
			}
			v := Diagnose(self, p, regions, now)
			if v.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q; checks:\n%s", v.Reason, tt.wantReason, checksText(v.Checks))
			}
			if diff := cmp.Diff(tt.wantAlso, v.Also); diff != "" {
				t.Errorf("also (-want +got):\n%s", diff)
			}
			if v.Reason == ReasonUnexplained && len(v.Checks) < 5 {
				t.Errorf("unexplained lists only %d checks", len(v.Checks))
			}
			for _, f := range tt.wantUnknown {
				if st := checkState(v.Checks, f); st != CheckUnknown {
					t.Errorf("%s is %q, want unknown; checks:\n%s", f, st, checksText(v.Checks))
				}
			}
			if tt.wantText != "" && !strings.Contains(verdictText(v), tt.wantText) {
				t.Errorf("verdict does not say %q:\n%s\n%s", tt.wantText, verdictText(v), checksText(v.Checks))
			}
			if v.Reason != ReasonDirect && v.Reason != ReasonPeerRelay && v.Fix == "" {
				t.Errorf("%s has no fix", v.Reason)
			}
			checkStates(t, v.Checks)
		})
	}
}

// onLAN gives s this host's interfaces: 192.168.1.20/24 on wlan0 (one
// of its endpoints), so one LAN is decided by prefix, not guessed.
// onLAN gives this host the LAN 192.168.1.0/24 with the peer's
// 192.168.1.77 in its neighbour table (one link).
func onLAN(s *Self) {
	s.Host = &HostFacts{Interfaces: []Interface{{Name: "wlan0", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.1.20/24")}}},
		Neighbors: []netip.Addr{netip.MustParseAddr("192.168.1.1"), netip.MustParseAddr("192.168.1.77")}, NeighborsRead: true}
}

// onSameRange gives this host 192.168.1.0/24 with a neighbour table that
// does not hold the peer's 192.168.1.77: one LAN, or two homes on the
// same default range.
func onSameRange(s *Self) {
	s.Host = &HostFacts{Interfaces: []Interface{{Name: "wlan0", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.1.20/24")}}},
		Neighbors: []netip.Addr{netip.MustParseAddr("192.168.1.1")}, NeighborsRead: true}
}

// checkState is the state of the check on field, "" when absent.
func checkState(cs []Check, field string) CheckState {
	for _, c := range cs {
		if string(c.Field) == field {
			return c.Mark()
		}
	}
	return ""
}

// verdictText is everything a person reads of v.
func verdictText(v Verdict) string {
	var b strings.Builder
	b.WriteString(string(v.Summary + "\n" + v.Fix + "\n"))
	for _, c := range v.Checks {
		b.WriteString(string(c.Value + " " + c.Note + "\n"))
	}
	return b.String()
}

func checksText(cs []Check) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %v %s=%s (%s)\n", c.Failed, c.Field, c.Value, c.Note)
	}
	return b.String()
}

func TestIsPrivateAddr(t *testing.T) {
	private := []string{"10.1.2.3", "172.17.0.1", "192.168.1.1", "100.64.0.1", "100.127.255.254", "169.254.1.1",
		"127.0.0.1", "fe80::1", "fd00::1", "fd7a:115c:a1e0::1", "::1", "0.0.0.0", "::ffff:10.0.0.1"}
	// 198.18.0.0/15 is public to Tailscale too.
	public := []string{"203.0.113.5", "198.51.100.10", "192.0.2.1", "8.8.8.8", "100.128.0.1", "2001:db8::1", "172.32.0.1", "198.18.0.1"}
	for _, s := range private {
		if !IsPrivateAddr(netip.MustParseAddr(s)) {
			t.Errorf("IsPrivateAddr(%s) = false, want true", s)
		}
	}
	for _, s := range public {
		if IsPrivateAddr(netip.MustParseAddr(s)) {
			t.Errorf("IsPrivateAddr(%s) = true, want false", s)
		}
	}
}

// TestRelayedChecksCount keeps relayedChecks in step with what run adds.
func TestRelayedChecksCount(t *testing.T) {
	for i, p := range syntheticPeers(200) {
		if p.Path.Kind != PathDERP && p.Path.Kind != PathPeerRelay {
			continue
		}
		for _, self := range []Self{easySelf(), {}, func() Self { s := easySelf(); s.NAT.MappingVariesByDestIP = boolp(true); return s }()} {
			d := diag{self: &self, p: &p, regions: testRegions}
			want := d.relayedChecks()
			got := len(Diagnose(self, p, testRegions, time.Time{}).Checks)
			if got > want {
				t.Errorf("peer %d: %d checks, estimate %d", i, got, want)
			}
		}
	}
}

// checkStates asserts the Check invariants: every check has a State,
// Failed exactly when State is fail, and an "unknown" value is never
// marked ok or failed.
func checkStates(t *testing.T, cs []Check) {
	t.Helper()
	for _, c := range cs {
		switch {
		case c.State == "":
			t.Errorf("%s has no State", c.Field)
		case c.Failed != (c.State == CheckFail):
			t.Errorf("%s: Failed %v but State %q", c.Field, c.Failed, c.State)
		case c.Value == "unknown" && c.State != CheckUnknown:
			t.Errorf("%s = unknown marked %q, want %q", c.Field, c.State, CheckUnknown)
		}
	}
}

// TestCheckStateMarks: the evidence a person reads says unknown for values
// not measured and info for facts that neither explain nor rule out
// relaying, instead of "ok" or "FAIL".
func TestCheckStateMarks(t *testing.T) {
	self := easySelf()
	self.NAT.MappingVariesByDestIP = nil
	p := relayedPeer("203.0.113.5:41641")
	p.PingRun = &PingRun{Tries: 10}
	v := Diagnose(self, p, testRegions, time.Time{})
	got := map[string]CheckState{}
	for _, c := range v.Checks {
		got[string(c.Field)] = c.Mark()
	}
	want := map[string]CheckState{
		"Status.CurAddr":                     CheckFail,
		"Status.LastHandshake":               CheckFail, // no handshake and no pong at all: no session
		"Status.PeerRelay":                   CheckInfo,
		"NetInfo.WorkingUDP":                 CheckOK,
		"WhoIs.Node.Endpoints":               CheckOK,
		"NetInfo.MappingVariesByDestIP":      CheckUnknown,
		"Peer.NetInfo.MappingVariesByDestIP": CheckUnknown,
		"PingRun":                            CheckInfo, // no pong at all: says nothing about direct
		"NetInfo.DERPLatency":                CheckOK,
		"Peer.Endpoints":                     CheckUnknown, // public only, but the client is unknown
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check marks (-want +got):\n%s", diff)
	}
	checkStates(t, v.Checks)

	// Mark reads a Check built without a State (an older fixture) by Failed.
	for _, tt := range []struct {
		c    Check
		want CheckState
	}{
		{Check{}, CheckOK},
		{Check{Failed: true}, CheckFail},
		{Check{State: CheckUnknown}, CheckUnknown},
		{Check{State: CheckFail}, CheckOK}, // Failed is the source of truth for fail
		{Check{Failed: true, State: CheckInfo}, CheckFail},
	} {
		if got := tt.c.Mark(); got != tt.want {
			t.Errorf("%+v.Mark() = %q, want %q", tt.c, got, tt.want)
		}
	}
}

// noMap says the peer's network has no UPnP, NAT-PMP or PCP.
func noMap(s *PeerSide) {
	s.ClientSupports.UPnP, s.ClientSupports.PMP, s.ClientSupports.PCP = boolp(false), boolp(false), boolp(false)
}

// apiSide is peer-side facts from the control API read a minute before
// the test clock, changed by f (may be nil).
func apiSide(f func(*PeerSide)) *PeerSide {
	s := &PeerSide{Source: SourceControlAPI, At: time.Date(2026, 11, 30, 11, 59, 0, 0, time.UTC)}
	if f != nil {
		f(s)
	}
	return s
}

// TestVerdictNamesItsSources: every check names where its value came
// from, and a verdict resting on the peer's facts says so.
func TestVerdictNamesItsSources(t *testing.T) {
	self := easySelf()
	self.NAT.MappingVariesByDestIP = boolp(true)
	p := relayedPeer("203.0.113.5:41641")
	p.PeerSide = apiSide(func(s *PeerSide) { s.MappingVariesByDestIP = boolp(true); noMap(s) })
	v := Diagnose(self, p, testRegions, time.Time{})
	if !v.PeerSide {
		t.Error("both-hard-nat from the API does not say it rests on the peer side")
	}
	got := map[string]string{}
	for _, c := range v.Checks {
		if c.Source == "" {
			t.Errorf("%s has no source", c.Field)
		}
		got[string(c.Field)] = c.Source
	}
	if got["API.clientConnectivity.mappingVariesByDestIP"] != SourceControlAPI || got["NetInfo.MappingVariesByDestIP"] != SourceLocalAPI {
		t.Errorf("sources = %v", got)
	}
	if v := Diagnose(self, relayedPeer("203.0.113.5:41641"), testRegions, time.Time{}); v.PeerSide {
		t.Error("local-hard-nat claims to rest on the peer side")
	}
}

// TestMergedFactsNameTheirSource: a fact the newer source lacks is taken
// from the older one, and its check names the older source.
func TestMergedFactsNameTheirSource(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	local := &PeerSide{Source: SourceLocalAPI, MappingVariesByDestIP: boolp(true)}
	noMap(local)
	api := apiSide(nil) // the API lists the peer, without clientConnectivity
	ps := MergePeerSide(local, api)
	if ps.Source != SourceControlAPI || ps.FactSources[FactMapping] != SourceLocalAPI || ps.FactSources[FactPortMap] != SourceLocalAPI {
		t.Fatalf("merged %+v, want the API's record with mapping and port map from localapi", ps)
	}
	self := easySelf()
	self.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("172.17.0.1:41641")}
	p := relayedPeer("203.0.113.5:41641")
	p.PeerSide = ps
	v := Diagnose(self, p, testRegions, now)
	if v.Reason != ReasonLocalInboundUDPBlocked || !hasReason(v.Also, ReasonPeerHardNAT) {
		t.Fatalf("reason %q also %v, want local-inbound-udp-blocked with peer-hard-nat", v.Reason, v.Also)
	}
	for _, c := range v.Checks {
		if c.Field == "API.clientConnectivity.mappingVariesByDestIP" {
			t.Errorf("the localapi fact is named after the API: %+v", c)
		}
		if c.Field == "Peer.NetInfo.MappingVariesByDestIP" && c.Source != SourceLocalAPI {
			t.Errorf("check %+v names source %q, want localapi", c, c.Source)
		}
	}
}

// TestDirectInTunnel: a direct path to a private address on none of our
// networks, inside a route another peer advertises, warns; the verdict
// stays direct.
//
// Only where net/netns leaves tailscaled's own sockets unprotected
// (netns_default.go: FreeBSD and the others; OpenBSD without an exit
// node): on Linux they carry the bypass mark, which router_linux.go's
// baseIPRules send to the main table, never table 52, and on macOS and
// Windows they are bound to the default-route interface (review 13,
// c6a.json).
func TestDirectInTunnel(t *testing.T) {
	self := easySelf()
	self.OS = "freebsd"
	self.Routes = []SubnetRoute{{Prefix: netip.MustParsePrefix("10.20.0.0/16"), Via: "router"}}
	p := relayedPeer("10.20.0.5:41641")
	p.Path = Path{Kind: PathDirect, Addr: netip.MustParseAddrPort("10.20.0.5:41641"), Text: "active; direct 10.20.0.5:41641"}
	v := Diagnose(self, p, testRegions, time.Time{})
	if v.Reason != ReasonDirect || !hasReason(v.Also, ReasonDirectInTunnel) || !strings.Contains(string(v.Fix), "WireGuard inside WireGuard") {
		t.Errorf("got %s %v %q, want direct with direct-in-tunnel", v.Reason, v.Also, v.Fix)
	}
	for _, os := range []string{"linux", "macOS", "windows", "iOS", "android"} {
		self.OS = safetext.New(os)
		if v := Diagnose(self, p, testRegions, time.Time{}); v.Also != nil || v.Fix != "" {
			t.Errorf("%s: also %v fix %q, want none (net/netns keeps tailscaled's UDP out of the tunnel)", os, v.Also, v.Fix)
		}
	}
	self.OS = ""
	if v := Diagnose(self, p, testRegions, time.Time{}); v.Also != nil || checkState(v.Checks, "Self.OS") != CheckUnknown {
		t.Errorf("OS unknown: also %v, Self.OS %q; want no warning and Self.OS unknown", v.Also, checkState(v.Checks, "Self.OS"))
	}
	self.OS = "freebsd"
	// On one of our networks (by the host's interfaces): no warning.
	self.Host = &HostFacts{Interfaces: []Interface{{Name: "eth0", Addrs: []netip.Prefix{netip.MustParsePrefix("10.20.0.9/16"), netip.MustParsePrefix("192.168.1.20/24")}}}}
	if v := Diagnose(self, p, testRegions, time.Time{}); v.Also != nil || v.Fix != "" {
		t.Errorf("on our own network: also %v fix %q, want none", v.Also, v.Fix)
	}
	checkStates(t, v.Checks)
}
