package tailscaled

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/probes/probestest"
)

// checkDecodeDERPMap: when decodeDERPMap reads b, encoding/json
// (local.Client.CurrentDERPMap's decoder) reads the same map from it; a
// reply encoding/json reads is refused only as left to it. It returns
// decodeDERPMap's error.
func checkDecodeDERPMap(t *testing.T, b []byte) error {
	t.Helper()
	got, err := decodeDERPMap(bytes.NewReader(b))
	var ref tailcfg.DERPMap
	refErr := json.Unmarshal(b, &ref)
	if err != nil {
		if refErr == nil && !errors.Is(err, errNotByHand) && !strings.Contains(err.Error(), "duplicate") && !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("%s: decodeDERPMap: %v, which encoding/json reads", b, err)
		}
		return err
	}
	if refErr != nil {
		t.Fatalf("%s: decodeDERPMap read what encoding/json refuses (%v)", b, refErr)
	}
	if diff := cmp.Diff(&ref, got); diff != "" {
		t.Errorf("%s: decodeDERPMap differs (-encoding/json +hand):\n%s", b, diff)
	}
	return nil
}

// checkDecodeWhoIsNode: when decodeWhoIsNode reads b, json v2 (liteDecode,
// whoisLite's decoder before) reads the same node; whoisNodeOf, which
// falls back to it, always reads what it reads. It returns
// decodeWhoIsNode's error.
func checkDecodeWhoIsNode(t *testing.T, b []byte) error {
	t.Helper()
	var ref struct{ Node *nodeLite }
	refErr := jsonv2.Unmarshal(b, &ref, liteDecode)
	got, err := decodeWhoIsNode(b)
	if err == nil {
		if refErr != nil {
			t.Fatalf("%s: decodeWhoIsNode read what json v2 refuses (%v)", b, refErr)
		}
		if diff := cmp.Diff(ref.Node, got, busCmp); diff != "" {
			t.Errorf("%s: decodeWhoIsNode differs (-json v2 +hand):\n%s", b, diff)
		}
	}
	both, ok := whoisNodeOf(b)
	if ok != (refErr == nil) {
		t.Errorf("%s: whoisNodeOf ok %v; json v2: %v", b, ok, refErr)
	} else if diff := cmp.Diff(ref.Node, both, busCmp); ok && diff != "" {
		t.Errorf("%s: whoisNodeOf differs (-json v2 +it):\n%s", b, diff)
	}
	return err
}

// decodeDERPMapCases are DERP map replies decodeDERPMap reads, or leaves
// to encoding/json.
var decodeDERPMapCases = []struct {
	body string
	read bool
}{
	{`{}`, true},
	{`{"Regions":{}}`, true},
	{`{"HomeParams":null,"Regions":null}`, true},
	{`{"HomeParams":{"RegionScore":{"1":0.5,"-2":2,"900":1e-3}},"Regions":{"1":{"RegionID":1,"RegionCode":"nyc","RegionName":"New York","Latitude":40.7,"Longitude":-74,"NoMeasureNoHome":true,"Nodes":[{"Name":"1a","RegionID":1,"HostName":"derp1.example","CertName":"c","IPv4":"192.0.2.1","IPv6":"2001:db8::1","STUNPort":-1,"STUNOnly":true,"DERPPort":443,"InsecureForTests":true,"STUNTestIP":"192.0.2.2","CanPort80":true},null]},"9":null,"5000000000":{"RegionID":5000000000,"Nodes":[]}},"omitDefaultRegions":true,"Future":{"a":[1]}}`, true},
	{" {\"Regions\":{\"2\":{\"RegionCode\":\"s\\u00e9\"}}}\n", true},
	// Left to encoding/json.
	{`null`, false},
	{`[]`, false},
	{`{"regions":{}}`, false},
	{`{"Region_s":{}}`, false},
	{`{"Regions":{},"Regions":{}}`, false},
	{`{"Regions":{"1":{},"1":{}}}`, false},
	{`{"Regions":{"01":{}}}`, false},
	{`{"Regions":{"+1":{}}}`, false},
	{`{"Regions":{"1":{"Avoid":true}}}`, false},
	{`{"Regions":{"1":{"RegionCode":null}}}`, false},
	{`{"Regions":{"1":{"RegionID":1.5}}}`, false},
	{`{"Regions":{"1":{"Latitude":1e400}}}`, false},
	{`{"Regions":{"1":{"Nodes":[{"STUNPort":"1"}]}}}`, false},
	{"{\"Regions\":{\"1\":{\"RegionName\":\"\xff\"}}}", false},
	{`{} {}`, false},
	{`{"Regions":{}`, false},
	{``, false},
}

// decodeWhoIsCases are WhoIs replies decodeWhoIsNode reads, or leaves to
// json v2.
var decodeWhoIsCases = []struct {
	body string
	read bool
}{
	{`{}`, true},
	{`{"Node":null}`, true},
	{`{"Node":{"ID":2,"StableID":"n2","Endpoints":["1.2.3.4:41641","[fd7a::1]:1"],"HomeDERP":1,"LastSeen":"2026-12-02T19:00:00+01:00","Online":true,"Cap":130,"IsWireGuardOnly":false,"Hostinfo":{"IPNVersion":"1.104.7","NetInfo":{"MappingVariesByDestIP":false,"WorkingUDP":true,"PreferredDERP":2,"DERPLatency":{"1-v4":0.0123}},"OS":"linux"},"Key":"nodekey:00"},"UserProfile":{"ID":1,"LoginName":"a@example.com"},"CapMap":{"x":[{"a":1}]}}`, true},
	{`{"UserProfile":{},"Node":{"Endpoints":[]}}`, true},
	// Left to json v2.
	{`{"node":{"ID":1}}`, false},
	{`{"Node":{"stableid":"x"}}`, false},
	{`{"Node":{},"Node":{}}`, false},
	{`{"Node":{"ID":1,"ID":2}}`, false},
	{`{"Node":{"HomeDERP":null}}`, false},
	{`{"Node":{"Endpoints":["nope"]}}`, false},
	{"{\"Node\":{\"StableID\":\"\xff\"}}", false},
	{`null`, false},
	{`[]`, false},
	{`{"Node":{}} x`, false},
}

// TestDecodeDERPMap: decodeDERPMap reads each case as encoding/json does,
// or leaves it to encoding/json, as the case says; every fixture's DERP
// map, and the ones real v1.102 and v1.104 daemons sent, are read by hand.
func TestDecodeDERPMap(t *testing.T) {
	for _, tc := range decodeDERPMapCases {
		err := checkDecodeDERPMap(t, []byte(tc.body))
		if (err == nil) != tc.read {
			t.Errorf("%s: read by hand %v (%v), want %v", tc.body, err == nil, err, tc.read)
		}
	}
	bodies := map[string][]byte{"fullDERPMap": mustJSON(t, fullDERPMap()), "ManyPeers(4)": probestest.ManyPeers(4).DERPMap}
	for _, v := range daemonVersions {
		bodies["daemon "+v] = loadDaemonFixture(t, v).DERPMap
	}
	for name, fix := range testdataFixtures(t) {
		if len(fix.DERPMap) > 0 {
			bodies[name] = fix.DERPMap
		}
	}
	for name, b := range bodies {
		if err := checkDecodeDERPMap(t, b); err != nil {
			t.Errorf("%s: not read by hand: %v", name, err)
		}
	}
}

// TestDecodeWhoIsNode: decodeWhoIsNode reads each case as json v2 does, or
// leaves it to json v2, as the case says; every fixture's WhoIs replies,
// and the ones real v1.102 and v1.104 daemons sent, are read by hand.
func TestDecodeWhoIsNode(t *testing.T) {
	for _, tc := range decodeWhoIsCases {
		err := checkDecodeWhoIsNode(t, []byte(tc.body))
		if (err == nil) != tc.read {
			t.Errorf("%s: read by hand %v (%v), want %v", tc.body, err == nil, err, tc.read)
		}
	}
	fixes := testdataFixtures(t)
	for _, v := range daemonVersions {
		fixes["daemon "+v] = loadDaemonFixture(t, v)
	}
	n := 0
	for name, fix := range fixes {
		for ip, b := range fix.WhoIs {
			n++
			if err := checkDecodeWhoIsNode(t, b); err != nil {
				t.Errorf("%s %s: not read by hand: %v", name, ip, err)
			}
		}
	}
	if n < 12 {
		t.Errorf("%d WhoIs replies read, want the daemon fixtures' at least", n)
	}
}

// testdataFixtures are probes/testdata's fixtures by file name.
func testdataFixtures(t *testing.T) map[string]*probestest.Fixture {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("fixtures: %v %v", names, err)
	}
	out := map[string]*probestest.Fixture{}
	for _, name := range names {
		fix, err := probestest.LoadFixture(name)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(name)] = fix
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadDERPMapLeavesToClient: a DERP map reply decodeDERPMap leaves
// to encoding/json is read by local.Client's CurrentDERPMap (a member
// named without case still counts), and one it reads comes out the same
// as the client's.
func TestReadDERPMapLeavesToClient(t *testing.T) {
	for _, body := range []string{
		`{"regions":{"7":{"regionCode":"x","RegionID":7}}}`,
		`{"Regions":{"7":{"RegionCode":"x","RegionID":7,"Nodes":[{"Name":"7a","RegionID":7,"HostName":"h"}]}}}`,
	} {
		fix := probestest.ManyPeers(1)
		fix.DERPMap = json.RawMessage(body)
		c := NewClient(probestest.New(t, fix).Socket)
		got, err := readDERPMap(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := c.CurrentDERPMap(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: readDERPMap differs from CurrentDERPMap (-client +it):\n%s", body, diff)
		}
		if r := got.Regions[7]; r == nil || r.RegionCode != "x" {
			t.Errorf("%s: region 7 %+v", body, r)
		}
	}
}

// TestWhoIsLiteLeavesToJSONv2: a WhoIs reply the hand reader leaves is
// read by json v2 as before (a member named without case counts).
func TestWhoIsLiteLeavesToJSONv2(t *testing.T) {
	fix := probestest.ManyPeers(1)
	fix.WhoIs = map[string]json.RawMessage{"100.64.0.9": json.RawMessage(`{"node":{"stableid":"nX","HomeDERP":3}}`)}
	c := NewClient(probestest.New(t, fix).Socket)
	n, err, ok := whoisLite(context.Background(), c, netip.MustParseAddr("100.64.0.9"))
	if err != nil || !ok {
		t.Fatalf("whoisLite: %v %v", err, ok)
	}
	if n == nil || n.StableID != "nX" || n.HomeDERP != 3 {
		t.Errorf("node %+v", n)
	}
}

// FuzzDecodeDERPMap: whatever decodeDERPMap reads, encoding/json reads to
// the same map.
func FuzzDecodeDERPMap(f *testing.F) {
	for _, tc := range decodeDERPMapCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeDERPMap(t, b)
	})
}

// FuzzDecodeWhoIsNode: whatever decodeWhoIsNode reads, json v2 reads to
// the same node, and whoisNodeOf reads what json v2 reads.
func FuzzDecodeWhoIsNode(f *testing.F) {
	for _, tc := range decodeWhoIsCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeWhoIsNode(t, b)
	})
}
