package probestest

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"go4.org/mem"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/tscompat"
)

// ManyPeers is a LocalAPI state of a tailnet of n peers (n ≤ 65,000), for
// measuring at scale: 40% direct, 25% relayed through DERP (some with no
// endpoints, some private only), 10% through a peer relay, 20% idle, 5%
// offline; every peer answers WhoIs with its node, endpoints and NetInfo,
// and the IPN bus's initial netmap carries them all. Documentation
// addresses only.
func ManyPeers(n int) *Fixture {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	self := manyNode(0, now)
	st := &ipnstate.Status{
		Version: "1.102.5", BackendState: "Running", TailscaleIPs: []netip.Addr{manyIP(0)},
		Self: &ipnstate.PeerStatus{ID: self.StableID, PublicKey: self.Key, HostName: "laptop", DNSName: "laptop.tail1234.ts.net.",
			OS: "linux", TailscaleIPs: []netip.Addr{manyIP(0)}, Relay: "nyc", Online: true,
			Addrs: []string{"198.51.100.10:41641", "192.168.1.20:41641"}},
		Peer:           map[key.NodePublic]*ipnstate.PeerStatus{},
		CurrentTailnet: &ipnstate.TailnetStatus{Name: "example.com", MagicDNSSuffix: "tail1234.ts.net", MagicDNSEnabled: true},
	}
	whois := map[string]json.RawMessage{}
	addWhois := func(node *tailcfg.Node) {
		b, _ := json.Marshal(apitype.WhoIsResponse{Node: node, UserProfile: &tailcfg.UserProfile{ID: 1, LoginName: "alice@example.com"}})
		whois[node.Addresses[0].Addr().String()] = b
	}
	addWhois(self)
	var peers []*tailcfg.Node
	for i := 1; i <= n; i++ {
		node := manyNode(i, now)
		peers = append(peers, node)
		addWhois(node)
		ps := &ipnstate.PeerStatus{
			ID: node.StableID, PublicKey: node.Key, HostName: node.Hostinfo.Hostname(), DNSName: node.Name,
			OS: "linux", TailscaleIPs: []netip.Addr{manyIP(i)}, Relay: "nyc", Online: true,
			TxBytes: int64(i) * 1000, RxBytes: int64(i) * 2000, LastHandshake: now.Add(-30 * time.Second),
			InNetworkMap: true, InMagicSock: true, InEngine: true,
		}
		switch m := i % 20; {
		case m < 8:
			ps.Active, ps.CurAddr = true, node.Endpoints[0].String()
		case m < 13:
			ps.Active = true
		case m < 15:
			ps.Active, ps.PeerRelay = true, "198.51.100.77:7777:vni:12"
		case m < 19:
		default:
			ps.Online, ps.LastSeen, ps.LastHandshake = false, now.Add(-3*time.Hour), time.Time{}
			node.Online = new(false)
		}
		st.Peer[node.Key] = ps
	}
	stJSON, _ := json.Marshal(st)
	dm := &tailcfg.DERPMap{Regions: map[tscompat.RegionID]*tailcfg.DERPRegion{}}
	for id, code := range map[tscompat.RegionID]string{1: "nyc", 2: "fra", 3: "tok"} {
		dm.Regions[id] = &tailcfg.DERPRegion{RegionID: id, RegionCode: code, RegionName: code,
			Nodes: []*tailcfg.DERPNode{{Name: fmt.Sprintf("%da", id), RegionID: id, HostName: code + ".example.com"}}}
	}
	dmJSON, _ := json.Marshal(dm)
	// The netmap carries the DERP map /derpmap answers, as v1.102's does.
	nmJSON, _ := json.Marshal(struct {
		SelfNode *tailcfg.Node
		Peers    []*tailcfg.Node
		DERPMap  *tailcfg.DERPMap
	}{self, peers, dm})
	return &Fixture{Comment: fmt.Sprintf("%d peers", n), Status: stJSON, WhoIs: whois, DERPMap: dmJSON, NetMap: nmJSON,
		UserMetrics: manyUserMetrics(n)}
}

// manyUserMetrics is /localapi/v0/usermetrics as tailscaled v1.102.5 and
// v1.104 serve it (any client may read it): every user metric family
// they register (magicsock registerMetrics, util/usermetric, health,
// ipnlocal, net/udprelay) in its expvar exposition form, the traffic
// counters growing with the n peers. Both daemons serve it; a fixture
// without it answers 404, which makes a gather ask /metrics as well.
func manyUserMetrics(n int) string {
	var b strings.Builder
	family := func(name, typ, help string) {
		fmt.Fprintf(&b, "# TYPE %s %s\n# HELP %s %s\n", name, typ, name, help)
	}
	family("tailscaled_advertised_routes", "gauge", "Number of advertised network routes (e.g. by a subnet router)")
	b.WriteString("tailscaled_advertised_routes 0\n")
	family("tailscaled_approved_routes", "gauge", "Number of approved network routes (e.g. by a subnet router)")
	b.WriteString("tailscaled_approved_routes 0\n")
	family("tailscaled_health_messages", "gauge", "Number of health messages broken down by type.")
	b.WriteString("tailscaled_health_messages{type=\"warning\"} 0\n")
	family("tailscaled_home_derp_region_id", "gauge", "DERP region ID of this node's home relay server")
	b.WriteString("tailscaled_home_derp_region_id 1\n")
	paths := []string{"derp", "direct_ipv4", "direct_ipv6", "peer_relay_ipv4", "peer_relay_ipv6"}
	for _, f := range []struct{ name, help string }{
		{"tailscaled_inbound_bytes_total", "Counts the number of bytes received from other peers"},
		{"tailscaled_inbound_packets_total", "Counts the number of packets received from other peers"},
		{"tailscaled_outbound_bytes_total", "Counts the number of bytes sent to other peers"},
		{"tailscaled_outbound_packets_total", "Counts the number of packets sent to other peers"},
	} {
		family(f.name, "counter", f.help)
		for i, p := range paths {
			fmt.Fprintf(&b, "%s{path=%q} %d\n", f.name, p, (i+1)*n*1000)
		}
	}
	family("tailscaled_inbound_dropped_packets_total", "counter", "Counts the number of dropped packets received by the node from other peers")
	b.WriteString("tailscaled_inbound_dropped_packets_total{reason=\"error\"} 0\n")
	family("tailscaled_outbound_dropped_packets_total", "counter", "Counts the number of packets dropped while being sent to other peers")
	b.WriteString("tailscaled_outbound_dropped_packets_total{reason=\"error\"} 0\n")
	family("tailscaled_serve_inbound_bytes_total", "counter", "Bytes received from peers on Serve connections for Tailscale Services, labeled by Tailscale Service name.")
	family("tailscaled_serve_outbound_bytes_total", "counter", "Bytes sent to peers on Serve connections for Tailscale Services, labeled by Tailscale Service name.")
	return b.String()
}

func manyIP(i int) netip.Addr { return netip.AddrFrom4([4]byte{100, 64, byte(i >> 8), byte(i)}) }

// manyNode is node i's tailcfg.Node: its endpoints (by i: public and
// private, private only, or none), home DERP 1 and NetInfo.
func manyNode(i int, now time.Time) *tailcfg.Node {
	var k [32]byte
	k[0], k[1], k[2] = byte(i>>8), byte(i), 1
	ip := manyIP(i)
	pub := netip.AddrPortFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}), uint16(40000+i%20000))
	priv := netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 168, byte(i >> 8), byte(i)}), 41641)
	eps := []netip.AddrPort{pub, priv}
	switch i % 20 {
	case 9:
		eps = nil
	case 10:
		eps = eps[1:]
	}
	ni := &tailcfg.NetInfo{MappingVariesByDestIP: "false", WorkingUDP: "true", WorkingIPv6: "false", PreferredDERP: 1,
		DERPLatency: map[string]float64{"1-v4": 0.012, "2-v4": 0.085, "3-v4": 0.16}}
	if i%20 == 11 {
		ni.MappingVariesByDestIP = "true"
	}
	name := fmt.Sprintf("peer%04d", i)
	if i == 0 {
		name = "laptop"
	}
	return &tailcfg.Node{
		ID: tailcfg.NodeID(i + 1), StableID: tailcfg.StableNodeID(fmt.Sprintf("n%dCNTRL", i+1)), Name: name + ".tail1234.ts.net.",
		User: 1, Key: key.NodePublicFromRaw32(mem.B(k[:])), Addresses: []netip.Prefix{netip.PrefixFrom(ip, 32)},
		AllowedIPs: []netip.Prefix{netip.PrefixFrom(ip, 32)}, Endpoints: eps, HomeDERP: 1,
		Hostinfo: (&tailcfg.Hostinfo{OS: "linux", Hostname: name, NetInfo: ni, IPNVersion: "1.102.5"}).View(),
		Cap:      tailcfg.CurrentCapabilityVersion, Online: new(true), MachineAuthorized: true, Created: now.Add(-24 * time.Hour),
	}
}
