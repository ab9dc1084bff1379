// Command gen writes the LocalAPI replies and IPN bus messages of one
// small tailnet as a tailscaled of the tailscale.com module it is built
// with encodes them, for probes' daemon-version tests (TestDaemonFixtures).
// The tailnet is the same in every build; only the fields a version adds
// (v104.go) and the version strings differ.
//
// Built against the module tailpath uses (v1.102.5):
//
//	go run ./probes/testdata/daemon/gen -out probes/testdata/daemon
//
// writes tailnet-1.102.json and bus-1.102.jsonl. tailnet-1.104.json and
// bus-1.104.jsonl were written by the same command with -tags ts104 in a
// copy of this module whose go.mod requires tailscale.com v1.104.7 (see
// "Moving to tailscale.com v1.104" in docs/architecture.md), so their
// bytes are v1.104's own encoding.
//
// Encodings as the LocalAPI writes them (ipn/localapi at both versions):
// status and derpmap json.Encoder with a tab indent; whois
// json.MarshalIndent with a tab; ping and every IPN bus message
// json.Encoder without indent. Addresses are documentation and CGNAT
// ranges; one DERP region id (5000000000) is beyond int32, as
// tailcfg.DERPRegionID allows (up to 2⁵³-1).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"go4.org/mem"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/tscompat"
)

// bigRegion is a DERP region id beyond int32.
const bigRegion tscompat.RegionID = 5_000_000_000

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func main() {
	out := flag.String("out", ".", "directory to write tailnet-<version>.json and bus-<version>.jsonl to")
	flag.Parse()
	fix, bus, err := build()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "tailnet-"+daemon+".json"), fix, 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "bus-"+daemon+".jsonl"), bus, 0o644); err != nil {
		log.Fatal(err)
	}
}

// peer is one node of the tailnet with its status.
type peer struct {
	n    int
	name string
	os   string
	eps  []netip.AddrPort
	home tscompat.RegionID
	cap  tailcfg.CapabilityVersion
	ni   *tailcfg.NetInfo
	st   func(*ipnstate.PeerStatus)
}

func ip4(n int) netip.Addr { return netip.AddrFrom4([4]byte{100, 64, 0, byte(n)}) }
func ip6(n int) netip.Addr {
	return netip.AddrFrom16([16]byte{0xfd, 0x7a, 0x11, 0x5c, 0xa1, 0xe0, 15: byte(n)})
}

func nodeKey(n int) key.NodePublic {
	var k [32]byte
	k[0], k[31] = 0x10, byte(n)
	return key.NodePublicFromRaw32(mem.B(k[:]))
}

func discoKey(n int) key.DiscoPublic {
	var k [32]byte
	k[0], k[31] = 0xd1, byte(n)
	return key.DiscoPublicFromRaw32(mem.B(k[:]))
}

func (p peer) node() *tailcfg.Node {
	online := p.n != 5 // "old" is offline
	n := &tailcfg.Node{
		ID:                tailcfg.NodeID(p.n + 100),
		StableID:          tailcfg.StableNodeID(fmt.Sprintf("n%dCNTRL", p.n)),
		Name:              p.name + ".tail1234.ts.net.",
		User:              7,
		Key:               nodeKey(p.n),
		KeyExpiry:         now.Add(150 * 24 * time.Hour),
		DiscoKey:          discoKey(p.n),
		Addresses:         []netip.Prefix{netip.PrefixFrom(ip4(p.n), 32), netip.PrefixFrom(ip6(p.n), 128)},
		AllowedIPs:        []netip.Prefix{netip.PrefixFrom(ip4(p.n), 32), netip.PrefixFrom(ip6(p.n), 128)},
		Endpoints:         p.eps,
		HomeDERP:          p.home,
		Hostinfo:          (&tailcfg.Hostinfo{IPNVersion: "1.104.7-t2b3c4d5e6-g7f8a9b0c1d2e", OS: p.os, Hostname: p.name, NetInfo: p.ni}).View(),
		Created:           now.Add(-90 * 24 * time.Hour),
		Cap:               p.cap,
		Online:            &online,
		MachineAuthorized: true,
	}
	if !online {
		seen := now.Add(-3 * time.Hour)
		n.LastSeen = &seen
	}
	return n
}

func (p peer) status(n *tailcfg.Node) *ipnstate.PeerStatus {
	ps := &ipnstate.PeerStatus{
		ID: n.StableID, NodeID: n.ID, PublicKey: n.Key, HostName: p.name, DNSName: n.Name, OS: p.os, UserID: n.User,
		TailscaleIPs: []netip.Addr{ip4(p.n), ip6(p.n)}, Online: *n.Online, Created: n.Created,
		PeerAPIURL:   []string{fmt.Sprintf("http://%v:38531", ip4(p.n))},
		InNetworkMap: true, InMagicSock: true, InEngine: true, KeyExpiry: &n.KeyExpiry,
	}
	if p.st != nil {
		p.st(ps)
	}
	return ps
}

func build() (fixture, bus []byte, err error) {
	selfNI := &tailcfg.NetInfo{
		MappingVariesByDestIP: "false", WorkingIPv6: "false", OSHasIPv6: "true", WorkingUDP: "true", WorkingICMPv4: "true",
		HavePortMap: false, UPnP: "false", PMP: "false", PCP: "false", PreferredDERP: 1, LinkType: "wired",
		DERPLatency: map[string]float64{"1-v4": 0.0119, "2-v4": 0.0852, fmt.Sprintf("%d-v4", bigRegion): 0.2013, "900-v4": 0.0301},
	}
	self := peer{n: 1, name: "laptop", os: "linux", cap: tailcfg.CurrentCapabilityVersion, home: 1, ni: selfNI,
		eps: []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("192.168.1.20:41641")}}
	hard := &tailcfg.NetInfo{MappingVariesByDestIP: "true", WorkingUDP: "true", HavePortMap: false, PreferredDERP: bigRegion,
		DERPLatency: map[string]float64{fmt.Sprintf("%d-v4", bigRegion): 0.0201, "1-v4": 0.1902}}
	hs := now.Add(-40 * time.Second)
	peers := []peer{
		{n: 2, name: "nas", os: "linux", cap: 142, home: 1,
			eps: []netip.AddrPort{netip.MustParseAddrPort("203.0.113.5:41641"), netip.MustParseAddrPort("192.168.7.2:41641")},
			st: func(ps *ipnstate.PeerStatus) {
				ps.Active, ps.CurAddr, ps.Relay = true, "203.0.113.5:41641", "nyc"
				ps.TxBytes, ps.RxBytes, ps.LastWrite, ps.LastHandshake = 123456, 654321, now.Add(-time.Second), hs
			}},
		{n: 3, name: "cores3", os: "freertos", cap: 130, home: bigRegion,
			st: func(ps *ipnstate.PeerStatus) {
				ps.Active, ps.Relay = true, "sin"
				ps.TxBytes, ps.RxBytes, ps.LastWrite, ps.LastHandshake = 2048, 4096, now.Add(-2*time.Second), hs
			}},
		{n: 4, name: "pi", os: "linux", cap: 148, home: 2, ni: hard,
			eps: []netip.AddrPort{netip.MustParseAddrPort("198.51.100.44:3921")},
			st: func(ps *ipnstate.PeerStatus) {
				ps.Active, ps.Relay, ps.PeerRelay = true, "fra", "198.51.100.77:7777:vni:12"
				ps.TxBytes, ps.RxBytes, ps.LastWrite, ps.LastHandshake = 999, 888, now.Add(-3*time.Second), hs
			}},
		{n: 5, name: "old", os: "windows", cap: 120, home: 900,
			eps: []netip.AddrPort{netip.MustParseAddrPort("203.0.113.50:41641")},
			st: func(ps *ipnstate.PeerStatus) {
				ps.Relay, ps.LastSeen = "lab", now.Add(-3*time.Hour)
			}},
		{n: 6, name: "idle", os: "macOS", cap: 148, home: 1,
			eps: []netip.AddrPort{netip.MustParseAddrPort("203.0.113.66:41641")},
			st: func(ps *ipnstate.PeerStatus) {
				ps.Relay, ps.ExitNodeOption = "nyc", true
				ps.TxBytes, ps.RxBytes = 10, 20
			}},
	}

	selfNode := self.node()
	selfNode.Hostinfo = (&tailcfg.Hostinfo{IPNVersion: daemonLong, OS: "linux", Hostname: "laptop", NetInfo: selfNI}).View()
	st := &ipnstate.Status{
		Version: daemonLong, TUN: true, BackendState: "Running", HaveNodeKey: true,
		TailscaleIPs:   []netip.Addr{ip4(1), ip6(1)},
		Self:           self.status(selfNode),
		Health:         []string{"Some peers are advertising routes but --accept-routes is false"},
		MagicDNSSuffix: "tail1234.ts.net",
		CurrentTailnet: &ipnstate.TailnetStatus{Name: "alice@example.com", MagicDNSSuffix: "tail1234.ts.net", MagicDNSEnabled: true},
		CertDomains:    []string{"laptop.tail1234.ts.net"},
		Peer:           map[key.NodePublic]*ipnstate.PeerStatus{},
		User:           map[tailcfg.UserID]tailcfg.UserProfile{7: {ID: 7, LoginName: "alice@example.com", DisplayName: "Alice"}},
		ClientVersion:  &tailcfg.ClientVersion{RunningLatest: true},
	}
	st.Self.Relay, st.Self.Addrs = "nyc", []string{"198.51.100.10:41641", "192.168.1.20:41641"}
	st.Self.CapMap = tailcfg.NodeCapMap{"https://tailscale.com/cap/file-sharing": nil, "funnel": nil}
	setAdded(st, selfNode)

	whois := map[string]json.RawMessage{}
	addWhoIs := func(n *tailcfg.Node) error {
		res := &apitype.WhoIsResponse{Node: n, UserProfile: &tailcfg.UserProfile{ID: 7, LoginName: "alice@example.com", DisplayName: "Alice"},
			CapMap: tailcfg.PeerCapMap{"https://tailscale.com/cap/file-sharing-target": nil}}
		j, err := json.MarshalIndent(res, "", "\t")
		if err != nil {
			return err
		}
		whois[n.Addresses[0].Addr().String()] = j
		return nil
	}
	if err := addWhoIs(selfNode); err != nil {
		return nil, nil, err
	}
	var nodes []*tailcfg.Node
	for _, p := range peers {
		n := p.node()
		nodes = append(nodes, n)
		st.Peer[n.Key] = p.status(n)
		if err := addWhoIs(n); err != nil {
			return nil, nil, err
		}
	}

	region := func(id tscompat.RegionID, code, name string, last byte) *tailcfg.DERPRegion {
		return &tailcfg.DERPRegion{RegionID: id, RegionCode: code, RegionName: name, Nodes: []*tailcfg.DERPNode{{
			Name: fmt.Sprintf("%da", id), RegionID: id, HostName: fmt.Sprintf("derp%d.example.com", id),
			IPv4: fmt.Sprintf("192.0.2.%d", last), IPv6: fmt.Sprintf("2001:db8::%d", last), CanPort80: true,
		}}}
	}
	dm := &tailcfg.DERPMap{
		Regions: map[tscompat.RegionID]*tailcfg.DERPRegion{
			1:         region(1, "nyc", "New York City", 1),
			2:         region(2, "fra", "Frankfurt", 2),
			900:       region(900, "lab", "Home lab", 9),
			bigRegion: region(bigRegion, "sin", "Singapore", 50),
		},
		HomeParams: &tailcfg.DERPHomeParams{RegionScore: map[tscompat.RegionID]float64{bigRegion: 1.2, 900: 0.9}},
	}

	ping := map[string][]json.RawMessage{}
	addPing := func(ip netip.Addr, rs ...*ipnstate.PingResult) error {
		for _, r := range rs {
			var b bytes.Buffer
			if err := json.NewEncoder(&b).Encode(r); err != nil {
				return err
			}
			ping[ip.String()] = append(ping[ip.String()], b.Bytes())
		}
		return nil
	}
	if err := addPing(ip4(3),
		&ipnstate.PingResult{IP: ip4(3).String(), NodeIP: ip4(3).String(), NodeName: "cores3", DERPRegionID: bigRegion, DERPRegionCode: "sin", LatencySeconds: 0.2104}); err != nil {
		return nil, nil, err
	}
	if err := addPing(ip4(2),
		&ipnstate.PingResult{IP: ip4(2).String(), NodeIP: ip4(2).String(), NodeName: "nas", DERPRegionID: 1, DERPRegionCode: "nyc", LatencySeconds: 0.0301},
		&ipnstate.PingResult{IP: ip4(2).String(), NodeIP: ip4(2).String(), NodeName: "nas", Endpoint: "203.0.113.5:41641", LatencySeconds: 0.0122}); err != nil {
		return nil, nil, err
	}
	if err := addPing(ip4(4),
		&ipnstate.PingResult{IP: ip4(4).String(), NodeIP: ip4(4).String(), NodeName: "pi", PeerRelay: "198.51.100.77:7777:vni:12", LatencySeconds: 0.0457}); err != nil {
		return nil, nil, err
	}

	var stJSON, dmJSON bytes.Buffer
	for _, w := range []struct {
		b *bytes.Buffer
		v any
	}{{&stJSON, st}, {&dmJSON, dm}} {
		e := json.NewEncoder(w.b)
		e.SetIndent("", "\t")
		if err := e.Encode(w.v); err != nil {
			return nil, nil, err
		}
	}
	fix := struct {
		Comment string                       `json:"comment"`
		Daemon  string                       `json:"daemon"`
		Status  json.RawMessage              `json:"status"`
		WhoIs   map[string]json.RawMessage   `json:"whois"`
		DERPMap json.RawMessage              `json:"derpmap"`
		Ping    map[string][]json.RawMessage `json:"ping"`
	}{
		"tailscaled " + daemonLong + "'s LocalAPI replies, written by probes/testdata/daemon/gen built against that tailscale.com version; regenerate, do not edit",
		daemon, stJSON.Bytes(), whois, dmJSON.Bytes(), ping,
	}
	fixture, err = json.MarshalIndent(fix, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	fixture = append(fixture, '\n')

	// The IPN bus as the Source watches it (BusMask, and
	// NotifyPeerWireGuardState): the first message, a patch moving cores3
	// home and its endpoints, a changed node, our own node changing, a
	// peer removed, health.
	online := true
	seen := now.Add(-time.Minute)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	running := ipn.Running
	msgs := []*ipn.Notify{
		{Version: daemonLong, SessionID: "0123456789abcdef0123456789abcdef", State: &running,
			PeerState: map[tailcfg.StableNodeID]ipn.PeerState{
				"n2CNTRL": {PeerWireGuardState: ipn.PeerWireGuardStateEstablished, PeerWireGuardStateAt: now.Add(-40 * time.Second)},
				"n3CNTRL": {PeerWireGuardState: ipn.PeerWireGuardStateHandshake, PeerWireGuardStateAt: now.Add(-2 * time.Second)}}},
		{Version: daemonLong, PeerChangedPatch: []*tailcfg.PeerChange{
			{NodeID: 103, DERPRegion: bigRegion, Endpoints: []netip.AddrPort{netip.MustParseAddrPort("203.0.113.33:41641")}, Online: &online, LastSeen: &seen}}},
		{Version: daemonLong, PeersChanged: []*tailcfg.Node{nodes[2]}},
		{Version: daemonLong, SelfChange: selfNode},
		{Version: daemonLong, PeersRemoved: []tailcfg.NodeID{106}},
		{Version: daemonLong, PeerState: map[tailcfg.StableNodeID]ipn.PeerState{
			"n3CNTRL": {PeerWireGuardState: ipn.PeerWireGuardStateEstablished, PeerWireGuardStateAt: now}}},
	}
	for _, m := range msgs {
		if err := enc.Encode(m); err != nil {
			return nil, nil, err
		}
	}
	return fixture, b.Bytes(), nil
}
