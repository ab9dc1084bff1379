package tailscaled

import (
	"context"
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/lab/apiserver"
	"github.com/tailpath/tailpath/probes/probestest"
)

// newTestAPI serves probestest's control API (ControlAPIServer) and returns
// a ControlAPI reading it with the test key through the real
// tailscale.com/client/tailscale/v2 client.
func newTestAPI(t *testing.T) (*apiserver.Server, *controlapi.ControlAPI) {
	t.Helper()
	srv, url := probestest.ControlAPIServer(t)
	api, err := controlapi.NewControlAPI(controlapi.APIConfig{APIKey: controlapi.NewAPISecret(probestest.APIKey), BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	return srv, api
}

func TestControlAPIMatchesPeers(t *testing.T) {
	_, api := newTestAPI(t)
	facts, err := api.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if facts.Devices != 3 {
		t.Errorf("devices = %d, want 3", facts.Devices)
	}
	snap, _ := gatherFixture(t, "unexplained")
	st := probes.MatchPeerFacts(snap, facts, probes.APIStatus{State: "ok", At: facts.At})
	if st.Matched != 1 || st.PeersMissing != 0 || st.DevicesUnmatched != 2 {
		t.Errorf("status = %+v, want 1 matched, 0 peers missing, 2 devices unmatched (gone, ourselves)", st)
	}
	ps := snap.Peers[0].PeerSide
	if ps == nil || ps.Source != probes.SourceControlAPI {
		t.Fatalf("peer side = %+v, want control-api facts (newer than WhoIs)", ps)
	}
	want := &probes.PeerSide{
		Source: probes.SourceControlAPI, At: facts.At,
		Endpoints:             []netip.AddrPort{netip.MustParseAddrPort("203.0.113.5:41641"), netip.MustParseAddrPort("192.168.7.2:41641")},
		MappingVariesByDestIP: boolp(true),
		HomeDERP:              1,
		DERPLatencyMs:         map[string]float64{"nyc": 9.1, "fra": 88.4},
		ClientSupports: probes.ClientSupports{UDP: boolp(true), IPv6: boolp(false), HairPinning: boolp(false),
			UPnP: boolp(false), PMP: boolp(false), PCP: boolp(false)},
		ClientVersion:   "1.80.2-t1234567-gabcdef",
		UpdateAvailable: boolp(true),
		// WhoIs's (older) NetInfo said easy: both are kept.
		Other: snap.Peers[0].PeerSide.Other,
	}
	if ps.Other == nil || ps.Other.Source != probes.SourceLocalAPI || *ps.Other.MappingVariesByDestIP {
		t.Errorf("older localapi facts not kept beside the API's: %+v", ps.Other)
	}
	if diff := cmp.Diff(want, ps, cmpOpts...); diff != "" {
		t.Errorf("peer side (-want +got):\n%s", diff)
	}

	// Matching by address when the node id differs.
	p := snap.Peers[0]
	p.ID = "nOTHER"
	if facts.Match(&p, snap.Regions) == nil {
		t.Error("no match by Tailscale address")
	}
	p.TailscaleIPs = []netip.Addr{netip.MustParseAddr("100.64.0.99")}
	if facts.Match(&p, snap.Regions) != nil {
		t.Error("matched a peer the API does not list")
	}
}

// TestControlAPIUnknownIsNotFalse: a device whose client never reported
// its NAT keeps it unknown (v2 would decode the omitted field as false).
func TestControlAPIUnknownIsNotFalse(t *testing.T) {
	srv, api := newTestAPI(t)
	srv.Update("nas", func(d *apiserver.Device) {
		d.ClientConnectivity.MappingVariesByDestIP = nil
		d.ClientConnectivity.ClientSupports = nil
	})
	facts, err := api.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := gatherFixture(t, "no-endpoints")
	p := snap.Peers[0]
	p.ID = "n2CNTRL"
	ps := facts.Match(&p, snap.Regions)
	if ps == nil || ps.MappingVariesByDestIP != nil || ps.ClientSupports.UDP != nil || ps.ClientSupports.PortMap() != nil {
		t.Fatalf("omitted facts read as known: %+v", ps)
	}
}

// TestSourceReadsPeerSide: a Source with a Refresher merges the API's
// facts into its snapshots without the poll waiting for the API.
func TestSourceReadsPeerSide(t *testing.T) {
	srv, api := newTestAPI(t)
	srv.SetDelay(300 * time.Millisecond)
	lapi := probestest.New(t, loadFixture(t, "unexplained"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := NewSource(NewClient(lapi.Socket), SourceOptions{Interval: time.Hour, PeerSide: controlapi.NewRefresher(api, time.Hour)})
	ch := src.Run(ctx)
	first := next[*probes.Snapshot](t, ch, hangGuard)
	if first.ControlAPI == nil || first.ControlAPI.State != "pending" || first.Peers[0].PeerSide.Source != probes.SourceLocalAPI {
		t.Fatalf("first snapshot: api %+v, peer side %+v; want pending and local facts", first.ControlAPI, first.Peers[0].PeerSide)
	}
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		snap := next[*probes.Snapshot](t, ch, hangGuard)
		if snap.ControlAPI.State == "ok" {
			if ps := snap.Peers[0].PeerSide; ps.Source != probes.SourceControlAPI || snap.ControlAPI.Matched != 1 {
				t.Fatalf("after the API answered: %+v, %+v", ps, snap.ControlAPI)
			}
			if r := snap.Peers[0].Verdict.Reason; r != probes.ReasonHardAndFilteringNAT {
				t.Errorf("reason with the peer's hard NAT = %q", r)
			}
			return
		}
	}
	t.Fatal("the API's answer never reached a snapshot (the poll is an hour away)")
}

// TestAPIFactsJSONRoundTrip: facts written to JSON (a saved snapshot) and
// read back match every peer exactly as before, by node id and address.
func TestAPIFactsJSONRoundTrip(t *testing.T) {
	_, api := newTestAPI(t)
	facts, err := api.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(facts)
	if err != nil {
		t.Fatal(err)
	}
	var back probes.APIFacts
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Devices != facts.Devices || !back.At.Equal(facts.At) {
		t.Errorf("devices/at = %d/%v, want %d/%v", back.Devices, back.At, facts.Devices, facts.At)
	}
	snap, _ := gatherFixture(t, "unexplained")
	for _, p := range []probes.Peer{
		snap.Peers[0],
		{ID: "nOTHER", TailscaleIPs: []netip.Addr{netip.MustParseAddr("fd7a:115c:a1e0::2")}},
		{ID: "n77CNTRL"},
		{ID: "nNONE", TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.99")}},
	} {
		if diff := cmp.Diff(facts.Match(&p, snap.Regions), back.Match(&p, snap.Regions), cmpOpts...); diff != "" {
			t.Errorf("Match(%s) after a JSON round trip (-before +after):\n%s", p.ID, diff)
		}
	}
	again, _ := json.Marshal(&back)
	if string(again) != string(b) {
		t.Errorf("second encoding differs:\n%s\n%s", b, again)
	}
}

// TestAPIFactsOnly: Only keeps exactly the devices that match the peers
// named, by stable id or address, and drops the rest.
func TestAPIFactsOnly(t *testing.T) {
	_, api := newTestAPI(t)
	facts, err := api.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := gatherFixture(t, "unexplained")
	var matched []probes.Peer
	for _, p := range snap.Peers {
		if facts.Match(&p, snap.Regions) != nil {
			matched = append(matched, p)
		}
	}
	if len(matched) == 0 || facts.Devices < 2 {
		t.Fatalf("the fixture's API lists %d devices, %d matching", facts.Devices, len(matched))
	}
	keep := matched[0]
	only := facts.Only([]string{string(keep.ID)}, nil)
	b, _ := json.Marshal(only)
	var doc struct{ Records []json.RawMessage }
	json.Unmarshal(b, &doc)
	if len(doc.Records) != 1 {
		t.Errorf("Only kept %d records, want 1: %s", len(doc.Records), b)
	}
	if diff := cmp.Diff(facts.Match(&keep, snap.Regions), only.Match(&keep, snap.Regions), cmpOpts...); diff != "" {
		t.Errorf("the kept peer's facts changed:\n%s", diff)
	}
	for _, p := range matched[1:] {
		if only.Match(&p, snap.Regions) != nil {
			t.Errorf("%s's facts kept", p.Name)
		}
	}
	if byAddr := facts.Only(nil, keep.TailscaleIPs); byAddr.Match(&keep, snap.Regions) == nil {
		t.Errorf("Only by address lost %s", keep.Name)
	}
}
