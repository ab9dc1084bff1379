package tailscaled

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn"
	"tailscale.com/tailcfg"
	"tailscale.com/types/opt"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes/probestest"
)

// busOnly hides a client's DoLocalRequest: a LocalClient that cannot make
// raw requests. It keeps the metrics readers, which are no raw requests
// of the gather's (traffic by path, the Self tab).
type busOnly struct{ LocalClient }

func (b busOnly) UserMetrics(ctx context.Context) ([]byte, error) {
	if r, ok := b.LocalClient.(UserMetricsReader); ok {
		return r.UserMetrics(ctx)
	}
	return nil, errors.New("no usermetrics")
}

func (b busOnly) DaemonMetrics(ctx context.Context) ([]byte, error) {
	if r, ok := b.LocalClient.(DaemonMetricsReader); ok {
		return r.DaemonMetrics(ctx)
	}
	return nil, errors.New("no clientmetrics")
}

// nodeRead is what Gather and Source read of a node (nodeLite's fields).
type nodeRead struct {
	ID         tailcfg.NodeID
	StableID   tailcfg.StableNodeID
	Endpoints  []string
	HomeDERP   int
	LastSeen   *time.Time
	Online     *bool
	Cap        tailcfg.CapabilityVersion
	Hostinfo   bool
	IPNVersion string
	NetInfo    *tailcfg.NetInfo
}

func readOf(n *tailcfg.Node) nodeRead {
	r := nodeRead{ID: n.ID, StableID: n.StableID, HomeDERP: tscompat.IntRegionID(n.HomeDERP), LastSeen: n.LastSeen, Online: n.Online, Cap: n.Cap}
	for _, ep := range n.Endpoints {
		r.Endpoints = append(r.Endpoints, ep.String())
	}
	if n.Hostinfo.Valid() {
		r.Hostinfo, r.IPNVersion = true, n.Hostinfo.IPNVersion()
		if ni := n.Hostinfo.NetInfo(); ni.Valid() {
			r.NetInfo = ni.AsStruct()
		}
	}
	return r
}

// variedNetmap is ManyPeers(n) with nodes whose read fields vary more:
// last seen, unknown online state, no Hostinfo, Hostinfo without
// NetInfo, every NetInfo field, fields Gather does not read.
// fullDERPMap is a DERP map with every field of tailcfg's DERP types set,
// as a custom one may set them (but the deprecated DERPRegion.Avoid).
func fullDERPMap() *tailcfg.DERPMap {
	dm := &tailcfg.DERPMap{
		HomeParams:         &tailcfg.DERPHomeParams{RegionScore: map[tscompat.RegionID]float64{1: 0.8, 900: 1.5}},
		Regions:            map[tscompat.RegionID]*tailcfg.DERPRegion{},
		OmitDefaultRegions: true,
	}
	for i, code := range []string{"nyc", "fra", "home"} {
		id := []int{1, 2, 900}[i]
		dm.Regions[tscompat.RegionID(id)] = &tailcfg.DERPRegion{RegionID: tscompat.RegionID(id), RegionCode: code, RegionName: "Region " + code,
			Latitude: 40.7 + float64(i), Longitude: -74.0 + float64(i), NoMeasureNoHome: i == 2,
			Nodes: []*tailcfg.DERPNode{
				{Name: code + "a", RegionID: tscompat.RegionID(id), HostName: code + ".example.com", CertName: "cert." + code, IPv4: "192.0.2.1", IPv6: "2001:db8::1",
					STUNPort: 3478, DERPPort: 8443, InsecureForTests: true, STUNTestIP: "192.0.2.9", CanPort80: true},
				{Name: code + "b", RegionID: tscompat.RegionID(id), HostName: "stun." + code + ".example.com", STUNOnly: true, STUNPort: -1},
			}}
	}
	return dm
}

func variedNetmap(t *testing.T, n int) *probestest.Fixture {
	t.Helper()
	fix := probestest.ManyPeers(n)
	var nm struct {
		SelfNode *tailcfg.Node
		Peers    []*tailcfg.Node
		DERPMap  *tailcfg.DERPMap
	}
	if err := json.Unmarshal(fix.NetMap, &nm); err != nil {
		t.Fatal(err)
	}
	// A DERP map with every field set, in the netmap and at /derpmap.
	nm.DERPMap = fullDERPMap()
	dm, err := json.Marshal(nm.DERPMap)
	if err != nil {
		t.Fatal(err)
	}
	fix.DERPMap = dm
	seen := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i, p := range nm.Peers {
		switch i % 5 {
		case 0:
			p.LastSeen, p.Online = &seen, nil
		case 1:
			p.Hostinfo = tailcfg.HostinfoView{}
		case 2:
			hi := p.Hostinfo.AsStruct()
			hi.NetInfo = nil
			hi.Services = []tailcfg.Service{{Proto: "tcp", Port: 22}}
			p.Hostinfo = hi.View()
		case 3:
			hi := p.Hostinfo.AsStruct()
			hi.NetInfo = &tailcfg.NetInfo{MappingVariesByDestIP: "true", WorkingIPv6: "true",
				OSHasIPv6: "true", WorkingUDP: "false", WorkingICMPv4: "true", HavePortMap: true, UPnP: "true", PMP: "false",
				PCP: "", PreferredDERP: 2, LinkType: "wifi", DERPLatency: map[string]float64{"2-v4": 0.02, "2-v6": 0.015}}
			p.Hostinfo, p.Cap = hi.View(), 90
		case 4:
			p.HomeDERP, p.Tags = 0, []string{"tag:server"}
			p.CapMap = tailcfg.NodeCapMap{tscompat.NodeAttrOnlyTCP443: nil}
		}
	}
	b, err := json.Marshal(nm)
	if err != nil {
		t.Fatal(err)
	}
	fix.NetMap = b
	// WhoIs answers the same nodes.
	for _, n := range append([]*tailcfg.Node{nm.SelfNode}, nm.Peers...) {
		w, err := json.Marshal(apitype.WhoIsResponse{Node: n, UserProfile: &tailcfg.UserProfile{ID: 1, LoginName: "alice@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		fix.WhoIs[n.Addresses[0].Addr().String()] = w
	}
	// Two peers' WireGuard states, as tailscaled sends them in the same
	// first message when asked (ipn.NotifyPeerWireGuardState).
	fix.PeerState, err = json.Marshal(map[tailcfg.StableNodeID]ipn.PeerState{
		nm.Peers[0].StableID: {PeerWireGuardState: ipn.PeerWireGuardStateEstablished, PeerWireGuardStateAt: seen},
		nm.Peers[1].StableID: {PeerWireGuardState: ipn.PeerWireGuardStateHandshake, PeerWireGuardStateAt: seen.Add(time.Minute)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return fix
}

// wholeNodes decodes the netmap of fix whole, as encoding/json decodes
// every node of ipn.Notify.NetMap in local.Client.WatchIPNBus, keyed as
// netmapNodes.
func wholeNodes(t *testing.T, fix *probestest.Fixture) map[string]*tailcfg.Node {
	t.Helper()
	var nm struct {
		SelfNode *tailcfg.Node
		Peers    []*tailcfg.Node
	}
	if err := json.Unmarshal(fix.NetMap, &nm); err != nil {
		t.Fatal(err)
	}
	out := map[string]*tailcfg.Node{"": nm.SelfNode}
	for _, p := range nm.Peers {
		out["peer:"+string(p.StableID)] = p
	}
	return out
}

// TestNetmapLiteMatchesBus: decoding only the fields Gather reads from
// the IPN bus's first message gives the same values as decoding whole
// nodes (as local.Client.WatchIPNBus does), node by node, and the same
// snapshot as WhoIs answering the same nodes whole. The peers' WireGuard
// states come in the same message, and a client that makes no raw
// requests reads the same states through WatchIPNBus.
func TestNetmapLiteMatchesBus(t *testing.T) {
	fix := variedNetmap(t, 40)
	srv := probestest.New(t, fix)
	c := NewClient(srv.Socket)
	ctx := context.Background()
	lite, err := readNetmapNodes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	whole := wholeNodes(t, fix)
	if len(whole) != 41 || len(lite.nodes) != len(whole) {
		t.Fatalf("%d nodes decoded whole, %d lite; want 41 each", len(whole), len(lite.nodes))
	}
	bus, err := readNetmapNodes(ctx, busOnly{c})
	if !errors.Is(err, errNoNetmap) || len(bus.nodes) != 0 {
		t.Errorf("a client without raw requests: %d nodes, %v; want none, errNoNetmap", len(bus.nodes), err)
	}
	if diff := cmp.Diff(bus.wg, lite.wg); diff != "" || !lite.wgKnown || len(lite.wg) != 2 {
		t.Errorf("WireGuard states (known %v, %d) differ (-bus +lite):\n%s", lite.wgKnown, len(lite.wg), diff)
	}
	for k, n := range whole {
		l, ok := lite.nodes[k]
		if !ok {
			t.Errorf("node %q missing from the lite read", k)
			continue
		}
		if diff := cmp.Diff(readOf(n), readOf(l.node())); diff != "" {
			t.Errorf("node %q differs (-whole +lite):\n%s", k, diff)
		}
	}
	if opt.Bool(whole["peer:n5CNTRL"].Hostinfo.NetInfo().UPnP()) != "true" {
		t.Errorf("the varied netmap lost its NetInfo: %+v", readOf(whole["peer:n5CNTRL"]))
	}

	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	viaLite, err := gatherAt(ctx, c, nil, now, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests("whois"); n != 0 {
		t.Errorf("%d WhoIs requests with the netmap available, want 0", n)
	}
	if n := srv.Requests("derpmap"); n != 0 {
		t.Errorf("%d /derpmap requests with the DERP map in the netmap, want 0", n)
	}
	if d, err := c.CurrentDERPMap(ctx); err != nil || lite.derpMap == nil {
		t.Errorf("DERP map: /derpmap %v, the netmap's %v", err, lite.derpMap)
	} else if diff := cmp.Diff(d, lite.derpMap); diff != "" {
		t.Errorf("the netmap's DERP map differs from /derpmap's (-derpmap +netmap):\n%s", diff)
	}
	viaWhoIs, err := gatherAt(ctx, c, nil, now, GatherOptions{WhoIsOnly: true, AllNodes: true, WireGuard: lite.wg})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(viaWhoIs.Peers, viaLite.Peers, cmpOpts...); diff != "" {
		t.Errorf("peers differ (-whois +lite):\n%s", diff)
	}
	if diff := cmp.Diff(viaWhoIs.Self, viaLite.Self, cmpOpts...); diff != "" {
		t.Errorf("self differs (-whois +lite):\n%s", diff)
	}
	if diff := cmp.Diff(viaWhoIs.Regions, viaLite.Regions); diff != "" || len(viaLite.Regions) != 3 {
		t.Errorf("regions (%d) differ (-whois and /derpmap +the netmap's):\n%s", len(viaLite.Regions), diff)
	}
}

// TestNetmapLiteNoNetmap: a first message without a netmap is an error,
// and so is a client that cannot make raw requests (Gather then asks
// WhoIs).
func TestNetmapLiteNoNetmap(t *testing.T) {
	fix := probestest.ManyPeers(3)
	fix.NetMap = nil
	srv := probestest.New(t, fix)
	c := NewClient(srv.Socket)
	for _, lc := range []LocalClient{c, busOnly{c}} {
		if first, err := readNetmapNodes(context.Background(), lc); err == nil {
			t.Errorf("%T: %d nodes, no error", lc, len(first.nodes))
		}
	}
}

// TestGatherDERPMapWithoutNetmap: when the bus sends no DERP map (a
// netmap without one, no netmap, a daemon refusing the watch), a cold
// gather asks /derpmap once and has the same regions.
func TestGatherDERPMapWithoutNetmap(t *testing.T) {
	full := probestest.ManyPeers(3)
	var nm map[string]json.RawMessage
	if err := json.Unmarshal(full.NetMap, &nm); err != nil {
		t.Fatal(err)
	}
	delete(nm, "DERPMap")
	noDERP, err := json.Marshal(nm)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	srv := probestest.New(t, full)
	want, err := gatherAt(ctx, NewClient(srv.Socket), nil, now, GatherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests("derpmap"); n != 0 || len(want.Regions) != 3 {
		t.Fatalf("the DERP map from the netmap: %d regions, %d /derpmap requests; want 3 and none", len(want.Regions), n)
	}
	for name, change := range map[string]func(*probestest.Fixture){
		"netmap without a DERP map": func(f *probestest.Fixture) { f.NetMap = noDERP },
		"no netmap":                 func(f *probestest.Fixture) { f.NetMap = nil },
		"v1.104":                    func(f *probestest.Fixture) { f.Daemon = probestest.Daemon104 },
	} {
		fix := probestest.ManyPeers(3)
		change(fix)
		srv := probestest.New(t, fix)
		got, err := gatherAt(ctx, NewClient(srv.Socket), nil, now, GatherOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := srv.Requests("derpmap"); n != 1 {
			t.Errorf("%s: %d /derpmap requests, want 1", name, n)
		}
		if diff := cmp.Diff(want.Regions, got.Regions); diff != "" {
			t.Errorf("%s: regions differ (-from the netmap +from /derpmap):\n%s", name, diff)
		}
		if len(got.Warnings) != 0 {
			t.Errorf("%s: warnings %v", name, got.Warnings)
		}
	}
}
