package tailscaled

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes/probestest"
)

// syntheticFixture is a LocalAPI state with n peers (a quarter relayed).
func syntheticFixture(b *testing.B, n int) *probestest.Fixture {
	st := &ipnstate.Status{BackendState: "Running", Peer: map[key.NodePublic]*ipnstate.PeerStatus{},
		Self: &ipnstate.PeerStatus{ID: "nSELF", HostName: "laptop", DNSName: "laptop.ts.net.", OS: "linux",
			TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.1")}, Relay: "nyc", Online: true}}
	fix := &probestest.Fixture{WhoIs: map[string]json.RawMessage{}}
	add := func(ip string, node *tailcfg.Node) {
		j, err := json.Marshal(&apitype.WhoIsResponse{Node: node, UserProfile: &tailcfg.UserProfile{ID: 1}})
		if err != nil {
			b.Fatal(err)
		}
		fix.WhoIs[ip] = j
	}
	add("100.64.0.1", &tailcfg.Node{ID: 1, Hostinfo: (&tailcfg.Hostinfo{NetInfo: &tailcfg.NetInfo{WorkingUDP: "true",
		MappingVariesByDestIP: "false", PreferredDERP: 1, DERPLatency: map[string]float64{"1-v4": 0.012, "2-v4": 0.08}}}).View()})
	for i := range n {
		ip := netip.AddrFrom4([4]byte{100, 64, byte((i + 2) >> 8), byte(i + 2)})
		ps := &ipnstate.PeerStatus{ID: tailcfg.StableNodeID(fmt.Sprintf("n%d", i)), HostName: fmt.Sprintf("peer%d", i),
			DNSName: fmt.Sprintf("peer%d.ts.net.", i), OS: "linux", TailscaleIPs: []netip.Addr{ip}, Relay: "nyc",
			Online: true, Active: true, TxBytes: 1000, RxBytes: 2000, LastHandshake: time.Now()}
		if i%4 != 0 {
			ps.CurAddr = fmt.Sprintf("203.0.113.%d:41641", i%250)
		}
		st.Peer[key.NewNode().Public()] = ps
		add(ip.String(), &tailcfg.Node{ID: tailcfg.NodeID(i + 2), StableID: ps.ID, HomeDERP: 1,
			Endpoints: []netip.AddrPort{netip.MustParseAddrPort(fmt.Sprintf("203.0.113.%d:41641", i%250))}})
	}
	var err error
	if fix.Status, err = json.Marshal(st); err != nil {
		b.Fatal(err)
	}
	fix.DERPMap, _ = json.Marshal(&tailcfg.DERPMap{Regions: map[tscompat.RegionID]*tailcfg.DERPRegion{1: {RegionID: 1, RegionCode: "nyc"}, 2: {RegionID: 2, RegionCode: "fra"}}})
	return fix
}

// BenchmarkGather200 is one poll of a 200-peer tailnet through a real
// local.Client and a unix socket: cold (every WhoIs asked) and warm (WhoIs
// answers reused from the previous snapshot, as the Source polls).
func BenchmarkGather200(b *testing.B) {
	srv := probestest.New(b, syntheticFixture(b, 200))
	c := NewClient(srv.Socket)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := probestest.CPUTime()
		for b.Loop() {
			if _, err := Gather(ctx, c, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(probestest.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("warm", func(b *testing.B) {
		prev, err := Gather(ctx, c, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		cpu0 := probestest.CPUTime()
		for b.Loop() {
			if prev, err = Gather(ctx, c, prev); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(probestest.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkGatherCold1000 is a one-shot status of a 1,000-peer tailnet
// (probestest.ManyPeers) through a real local.Client on a unix socket,
// both ways of getting every peer's node: the IPN bus's initial netmap
// (one request; what a cold Gather does) and WhoIs of every peer; and
// what a cold Gather does against a v1.104 daemon (the netmap refused,
// WhoIs of the peers the verdicts need: 450 of ManyPeers' 1,000, whose mix
// is heavy on relayed peers), and with AllNodes (WhoIs of every peer).
func BenchmarkGatherCold1000(b *testing.B) {
	fix := probestest.ManyPeers(1000)
	srv := probestest.New(b, fix)
	c := NewClient(srv.Socket)
	fix104 := *fix
	fix104.Daemon = probestest.Daemon104
	c104 := NewClient(probestest.New(b, &fix104).Socket)
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		c    LocalClient
		opts GatherOptions
	}{{"netmap", c, GatherOptions{}}, {"whois", c, GatherOptions{WhoIsOnly: true, AllNodes: true}},
		{"daemon1.104", c104, GatherOptions{}}, {"daemon1.104-all", c104, GatherOptions{AllNodes: true}}} {
		c := mode.c
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := probestest.CPUTime()
			for b.Loop() {
				snap, err := GatherWith(ctx, c, nil, mode.opts)
				if err != nil {
					b.Fatal(err)
				}
				// peer0009, active without a direct address, needs its node.
				if len(snap.Peers) != 1000 || !snap.Peers[8].EndpointsKnown {
					b.Fatalf("%d peers, %s endpoints known %v", len(snap.Peers), snap.Peers[8].Name, snap.Peers[8].EndpointsKnown)
				}
			}
			b.ReportMetric(float64(probestest.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestGatherNetmapMatchesWhoIs: a cold Gather from the IPN bus's initial
// netmap gives the same peers and verdicts as WhoIs of every peer.
func TestGatherNetmapMatchesWhoIs(t *testing.T) {
	srv := probestest.New(t, probestest.ManyPeers(60))
	c := NewClient(srv.Socket)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	viaNetmap, err := gatherAt(context.Background(), c, nil, now, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests("whois"); n != 0 {
		t.Errorf("%d WhoIs requests with the netmap available, want 0", n)
	}
	viaWhoIs, err := gatherAt(context.Background(), c, nil, now, GatherOptions{WhoIsOnly: true, AllNodes: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests("whois"); n != 61 {
		t.Errorf("%d WhoIs requests in WhoIs mode, want 61 (ourselves and 60 peers)", n)
	}
	if diff := cmp.Diff(viaWhoIs.Peers, viaNetmap.Peers, cmpOpts...); diff != "" {
		t.Errorf("peers differ (-whois +netmap):\n%s", diff)
	}
	if diff := cmp.Diff(viaWhoIs.Self, viaNetmap.Self, cmpOpts...); diff != "" {
		t.Errorf("self differs (-whois +netmap):\n%s", diff)
	}
}
