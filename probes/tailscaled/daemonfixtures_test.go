package tailscaled

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

// The daemon fixtures (probes/testdata/daemon) are one tailnet's LocalAPI
// replies and IPN bus messages as tailscaled v1.102.5 and v1.104.7 encode
// them, written by probes/testdata/daemon/gen built against each module version.
// v1.104 adds fields (Status.CurrentTailnet.StableID, the self node's
// StableTailnetID) and types region ids tailcfg.DERPRegionID; one region id
// is 5000000000, beyond int32.

var daemonVersions = []string{"1.102", "1.104"}

// bigRegion is the fixtures' region id beyond int32 (a variable: on a
// 32-bit platform the constant would not compile as an int; the tests
// that use it skip there).
var bigRegion = func() int { v := int64(5_000_000_000); return int(v) }()

func needWideInt(t *testing.T) {
	t.Helper()
	if strconv.IntSize < 64 {
		t.Skip("region id 5000000000 needs a 64-bit int with tailscale.com v1.102 (docs/architecture.md)")
	}
}

func loadDaemonFixture(t *testing.T, version string) *probestest.Fixture {
	t.Helper()
	fix, err := probestest.LoadFixture(filepath.Join("..", "testdata", "daemon", "tailnet-"+version+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if fix.Daemon != version {
		t.Fatalf("tailnet-%s.json says daemon %q", version, fix.Daemon)
	}
	return fix
}

// TestDaemonFixturesGather: Gather, asking every node, reads the same
// snapshot from v1.104's replies as from v1.102's: every peer, path, endpoint, home DERP (the
// region beyond int32 included), NAT fact and verdict, our own facts, the
// regions, no warning.
func TestDaemonFixturesGather(t *testing.T) {
	needWideInt(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	snaps := map[string]*probes.Snapshot{}
	for _, v := range daemonVersions {
		srv := probestest.New(t, loadDaemonFixture(t, v))
		// Every node (AllNodes): the decoding of each is what is
		// compared here; TestNodesNeededVerdictsIdentical compares what a
		// gather without them judges.
		snap, err := gatherAt(context.Background(), NewClient(srv.Socket), nil, now, GatherOptions{AllNodes: true})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if len(snap.Warnings) != 0 {
			t.Errorf("%s: warnings %q", v, snap.Warnings)
		}
		snaps[v] = snap
	}
	old, cur := snaps["1.102"], snaps["1.104"]
	if diff := cmp.Diff(old.Peers, cur.Peers, cmpOpts...); diff != "" {
		t.Errorf("peers differ (-1.102 +1.104):\n%s", diff)
	}
	// Each daemon says its own version (Status.Version); the rest agrees.
	if !strings.HasPrefix(string(old.Self.Version), "1.102.") || !strings.HasPrefix(string(cur.Self.Version), "1.104.") {
		t.Errorf("versions %q and %q, want each daemon's", old.Self.Version, cur.Self.Version)
	}
	old.Self.Version, cur.Self.Version = "", ""
	if diff := cmp.Diff(old.Self, cur.Self, cmpOpts...); diff != "" {
		t.Errorf("self differs (-1.102 +1.104):\n%s", diff)
	}
	if diff := cmp.Diff(old.Regions, cur.Regions); diff != "" {
		t.Errorf("regions differ (-1.102 +1.104):\n%s", diff)
	}
	if old.BackendState != cur.BackendState || old.Hidden != cur.Hidden {
		t.Errorf("state %q/%q, hidden %d/%d", old.BackendState, cur.BackendState, old.Hidden, cur.Hidden)
	}

	// What was read, so the comparison is not of two empty snapshots.
	byName := map[string]probes.Peer{}
	for _, p := range cur.Peers {
		byName[string(p.Name)] = p
	}
	type read struct {
		Path          probes.PathKind
		HomeDERP      int
		HomeDERPCode  string
		Endpoints     int
		PeerSideHome  int
		PeerSideCap   int
		ReasonOrEmpty probes.ReasonID
	}
	got := map[string]read{}
	for name, p := range byName {
		r := read{Path: p.Path.Kind, HomeDERP: p.HomeDERP, HomeDERPCode: string(p.HomeDERPCode), Endpoints: len(p.Endpoints)}
		if p.PeerSide != nil {
			r.PeerSideHome, r.PeerSideCap = p.PeerSide.HomeDERP, p.PeerSide.CapVersion
		}
		r.ReasonOrEmpty = p.Verdict.Reason
		got[name] = r
	}
	for name, w := range map[string]read{
		"nas":    {Path: probes.PathDirect, HomeDERP: 1, HomeDERPCode: "nyc", Endpoints: 2, PeerSideCap: 142},
		"cores3": {Path: probes.PathDERP, HomeDERP: bigRegion, HomeDERPCode: "sin", PeerSideCap: 130},
		"pi":     {Path: probes.PathPeerRelay, HomeDERP: 2, HomeDERPCode: "fra", Endpoints: 1, PeerSideHome: bigRegion, PeerSideCap: 148},
		"old":    {Path: probes.PathOffline, HomeDERP: 900, HomeDERPCode: "lab", Endpoints: 1, PeerSideCap: 120},
		"idle":   {Path: probes.PathIdle, HomeDERP: 1, HomeDERPCode: "nyc", Endpoints: 1, PeerSideCap: 148},
	} {
		g := got[name]
		w.ReasonOrEmpty = g.ReasonOrEmpty // verdicts are compared between versions above
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("v1.104 peer %s read (-want +got):\n%s", name, diff)
		}
	}
	if r := cur.Regions[bigRegion]; r.Code != "sin" || r.Name != "Singapore" {
		t.Errorf("region %d = %+v", bigRegion, r)
	}
	if cur.Self.NAT == nil || cur.Self.NAT.DERPLatency[bigRegion] != 201300*time.Microsecond {
		t.Errorf("self NetInfo latency to %d not read: %+v", bigRegion, cur.Self.NAT)
	}
	if cur.Self.HomeDERP != 1 || len(cur.Self.Endpoints) != 2 {
		t.Errorf("self home %d, endpoints %v", cur.Self.HomeDERP, cur.Self.Endpoints)
	}
}

// TestDaemonFixturesDecode: each LocalAPI reply tailpath reads decodes,
// with the types and decoders tailpath uses (local.Client's encoding/json;
// readStatus's decodeStatus), to the same values from
// v1.104's bytes as from v1.102's, but for what is a version's own (its
// version strings, our node's capability version); the fields v1.104
// adds are ignored.
func TestDaemonFixturesDecode(t *testing.T) {
	needWideInt(t)
	fix := map[string]*probestest.Fixture{}
	for _, v := range daemonVersions {
		fix[v] = loadDaemonFixture(t, v)
	}
	// same decodes both replies into a new T with decode, evens out what
	// differs by version with norm, and compares them as JSON.
	same := func(what string, a, b []byte, decode func([]byte, any) error, fresh func() any, norm func(any)) {
		t.Helper()
		var out [2]string
		for i, raw := range [][]byte{a, b} {
			v := fresh()
			if err := decode(raw, v); err != nil {
				t.Errorf("%s from %s: %v", what, daemonVersions[i], err)
				return
			}
			if norm != nil {
				norm(v)
			}
			out[i] = withoutAdded(t, v)
		}
		if diff := cmp.Diff(out[0], out[1]); diff != "" {
			t.Errorf("%s decodes differently (-1.102 +1.104):\n%s", what, diff)
		}
		if strings.Count(out[0], "\n") < 3 {
			t.Errorf("%s decoded to almost nothing: %s", what, out[0])
		}
	}
	stdJSON := json.Unmarshal
	readStatusJSON := func(b []byte, v any) error {
		st, err := decodeStatus(bytes.NewReader(b))
		if err == nil && st != nil {
			*v.(*status) = *st
		}
		return err
	}
	a, b := fix["1.102"], fix["1.104"]

	same("status (encoding/json)", a.Status, b.Status, stdJSON, func() any { return new(ipnstate.Status) }, func(v any) { v.(*ipnstate.Status).Version = "" })
	same("status (readStatus)", a.Status, b.Status, readStatusJSON, func() any { return new(status) }, func(v any) { v.(*status).Version = "" })
	same("derpmap", a.DERPMap, b.DERPMap, stdJSON, func() any { return new(tailcfg.DERPMap) }, nil)
	if len(a.WhoIs) != len(b.WhoIs) || len(a.WhoIs) != 6 {
		t.Fatalf("whois answers: %d and %d, want 6", len(a.WhoIs), len(b.WhoIs))
	}
	for ip := range a.WhoIs {
		same("whois "+ip, a.WhoIs[ip], b.WhoIs[ip], stdJSON, func() any { return new(apitype.WhoIsResponse) }, func(v any) {
			if n := v.(*apitype.WhoIsResponse).Node; n != nil && n.StableID == "n1CNTRL" {
				// Our own node runs the daemon's version.
				hi := n.Hostinfo.AsStruct()
				hi.IPNVersion, n.Cap, n.Hostinfo = "", 0, hi.View()
			}
		})
	}
	for ip, seq := range a.Ping {
		for i := range seq {
			same("ping "+ip, seq[i], b.Ping[ip][i], stdJSON, func() any { return new(ipnstate.PingResult) }, nil)
		}
	}

	// Ping results read the same: the DERP region beyond int32 included.
	var pr ipnstate.PingResult
	if err := json.Unmarshal(b.Ping["100.64.0.3"][0], &pr); err != nil {
		t.Fatal(err)
	}
	if via, kind := probes.ViaText(&pr, tailcfg.PingDisco); via != "DERP(sin)" || kind != probes.PathDERP || tscompat.IntRegionID(pr.DERPRegionID) != bigRegion {
		t.Errorf("v1.104 DERP pong: via %q %q, region %d", via, kind, pr.DERPRegionID)
	}
}

// withoutAdded is v as indented JSON without the fields v1.104 adds
// (CurrentTailnet.StableID, a node's StableTailnetID), which the types
// of a module at v1.104 decode and v1.102's do not: so the comparisons
// hold built against either.
func withoutAdded(t *testing.T, v any) string {
	t.Helper()
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "StableTailnetID")
			if ct, ok := x["CurrentTailnet"].(map[string]any); ok {
				delete(ct, "StableID")
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(m)
	out, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// busMessages decodes probes/testdata/daemon/bus-<version>.jsonl as
// local.IPNBusWatcher.Next does (a json.Decoder into ipn.Notify).
func busMessages(t *testing.T, version string) []ipn.Notify {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "daemon", "bus-"+version+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return decodeBus(t, b)
}

func decodeBus(t *testing.T, b []byte) []ipn.Notify {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []ipn.Notify
	for dec.More() {
		var n ipn.Notify
		if err := dec.Decode(&n); err != nil {
			t.Fatalf("message %d: %v", len(out)+1, err)
		}
		out = append(out, n)
	}
	return out
}

// TestDaemonFixturesBus: the IPN bus messages a v1.104 daemon sends the
// Source decode to the same values as v1.102's (its NetMap field gone,
// its region ids int64 in the patch) and mark the same WhoIs answers
// stale.
func TestDaemonFixturesBus(t *testing.T) {
	needWideInt(t)
	msgs := map[string][]ipn.Notify{}
	for _, v := range daemonVersions {
		msgs[v] = busMessages(t, v)
	}
	old, cur := msgs["1.102"], msgs["1.104"]
	if len(old) != 6 || len(cur) != len(old) {
		t.Fatalf("%d and %d messages, want 6 each", len(old), len(cur))
	}
	type stale struct {
		Changed bool
		All     bool
		IDs     []tailcfg.NodeID
	}
	staleOf := func(n ipn.Notify) stale {
		s := NewSource(nil, SourceOptions{})
		changed := s.noteChange(&n)
		all, ids := s.takeStale()
		out := stale{Changed: changed, All: all}
		for id := range ids {
			out.IDs = append(out.IDs, id)
		}
		return out
	}
	want := []stale{
		{Changed: true, All: true},                         // the first message: the state
		{Changed: true, IDs: []tailcfg.NodeID{103}},        // cores3's patch: home DERP 5000000000, endpoints
		{Changed: true, IDs: []tailcfg.NodeID{104}},        // pi's node
		{Changed: true, IDs: []tailcfg.NodeID{selfNodeID}}, // our node
		{Changed: true, All: true},                         // a peer removed
		{Changed: true},                                    // WireGuard states only: gather again, no answer stale
	}
	for i := range old {
		for _, n := range []*ipn.Notify{&old[i], &cur[i]} {
			n.Version = ""
			if s := n.SelfChange; s != nil {
				hi := s.Hostinfo.AsStruct()
				hi.IPNVersion, s.Cap, s.Hostinfo = "", 0, hi.View()
			}
		}
		if diff := cmp.Diff(withoutAdded(t, old[i]), withoutAdded(t, cur[i])); diff != "" {
			t.Errorf("message %d decodes differently (-1.102 +1.104):\n%s", i+1, diff)
		}
		if diff := cmp.Diff(want[i], staleOf(cur[i])); diff != "" {
			t.Errorf("v1.104 message %d marks (-want +got):\n%s", i+1, diff)
		}
	}
	if p := cur[1].PeerChangedPatch; len(p) != 1 || tscompat.IntRegionID(p[0].DERPRegion) != bigRegion {
		t.Errorf("v1.104 patch read as %+v", p)
	}
	if st := cur[0].PeerState["n3CNTRL"]; st.PeerWireGuardState != ipn.PeerWireGuardStateHandshake {
		t.Errorf("v1.104 initial PeerState read as %+v", cur[0].PeerState)
	}
}

// futureFields adds an unknown field to every JSON object that decodes
// into a struct (not into a map, whose keys are data): the reply itself,
// and the objects under the names listed in structKeys, or inside arrays
// or maps under them.
func futureFields(t *testing.T, raw []byte) []byte {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	structKeys := map[string]bool{"Self": true, "CurrentTailnet": true, "Node": true, "Hostinfo": true, "NetInfo": true,
		"UserProfile": true, "Nodes": true, "HomeParams": true, "PeersChanged": true, "PeerChangedPatch": true,
		"SelfChange": true, "ClientVersion": true}
	mapOfStructs := map[string]bool{"Peer": true, "Regions": true, "User": true, "PeerState": true}
	var walk func(v any, isStruct bool)
	walk = func(v any, isStruct bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				switch {
				case !isStruct:
					walk(c, true) // a map's values
				case structKeys[k]:
					walk(c, true)
				case mapOfStructs[k]:
					if m, ok := c.(map[string]any); ok {
						walk(m, false)
					}
				}
			}
			if isStruct {
				x["FutureField104"] = map[string]any{"nested": []any{1, "two", nil}}
				x["futurefield"] = "lowercase twin"
			}
		case []any:
			for _, c := range x {
				walk(c, isStruct)
			}
		}
	}
	walk(v, true)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDaemonUnknownFieldsIgnored: fields no version yet sends, added to
// every struct of every reply and bus message of v1.104's fixture, change
// nothing tailpath reads.
func TestDaemonUnknownFieldsIgnored(t *testing.T) {
	needWideInt(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	plain := loadDaemonFixture(t, "1.104")
	future := *plain
	future.Status = futureFields(t, plain.Status)
	future.DERPMap = futureFields(t, plain.DERPMap)
	future.WhoIs = map[string]json.RawMessage{}
	for ip, w := range plain.WhoIs {
		future.WhoIs[ip] = futureFields(t, w)
	}
	future.Ping = map[string][]json.RawMessage{}
	for ip, seq := range plain.Ping {
		for _, p := range seq {
			future.Ping[ip] = append(future.Ping[ip], futureFields(t, p))
		}
	}
	if !bytes.Contains(future.Status, []byte(`"FutureField104"`)) || bytes.Count(future.WhoIs["100.64.0.3"], []byte("FutureField104")) < 4 {
		t.Fatalf("no unknown fields added: %s", future.WhoIs["100.64.0.3"])
	}
	var snaps [2]*probes.Snapshot
	for i, fix := range []*probestest.Fixture{plain, &future} {
		srv := probestest.New(t, fix)
		c := NewClient(srv.Socket)
		snap, err := gatherAt(context.Background(), c, nil, now, GatherOptions{})
		if err != nil {
			t.Fatal(err)
		}
		snaps[i] = snap
		peer := probes.Peer{ID: "n3CNTRL", TailscaleIPs: snap.Peers[0].TailscaleIPs}
		for _, p := range snap.Peers {
			if p.Name == "cores3" {
				peer = p
			}
		}
		var res []probes.PingResult
		_ = Ping(context.Background(), c, peer, probes.PingDISCO, 1, time.Second, func(r probes.PingResult) { res = append(res, r) })
		if len(res) == 0 || res[0].Via != "DERP(sin)" {
			t.Errorf("fixture %d: ping of cores3 = %+v, want via DERP(sin)", i, res)
		}
	}
	if len(snaps[1].Warnings) != 0 {
		t.Errorf("warnings with unknown fields: %q", snaps[1].Warnings)
	}
	if diff := cmp.Diff(snaps[0].Peers, snaps[1].Peers, cmpOpts...); diff != "" {
		t.Errorf("peers differ (-v1.104 +with unknown fields):\n%s", diff)
	}
	if diff := cmp.Diff(snaps[0].Self, snaps[1].Self, cmpOpts...); diff != "" {
		t.Errorf("self differs (-v1.104 +with unknown fields):\n%s", diff)
	}

	// The bus too.
	b, err := os.ReadFile(filepath.Join("..", "testdata", "daemon", "bus-1.104.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var withFuture bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		withFuture.Write(futureFields(t, sc.Bytes()))
		withFuture.WriteByte('\n')
	}
	want, got := decodeBus(t, b), decodeBus(t, withFuture.Bytes())
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if diff := cmp.Diff(string(wj), string(gj)); diff != "" {
		t.Errorf("bus messages differ (-v1.104 +with unknown fields):\n%s", diff)
	}
}
