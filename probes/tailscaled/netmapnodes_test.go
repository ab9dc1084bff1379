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
func variedNetmap(t *testing.T, n int) *probestest.Fixture {
	t.Helper()
	fix := probestest.ManyPeers(n)
	var nm struct {
		SelfNode *tailcfg.Node
		Peers    []*tailcfg.Node
	}
	if err := json.Unmarshal(fix.NetMap, &nm); err != nil {
		t.Fatal(err)
	}
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
