package tailscaled

import (
	"bytes"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/probes/probestest"
)

// busCmp compares busFirstLite values: times by instant and by how they
// print (their offset), addresses as values.
var busCmp = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool {
		return a.Equal(b) && a.Format(time.RFC3339Nano) == b.Format(time.RFC3339Nano)
	}),
	cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b }),
}

// checkDecodeBusFirst: when decodeBusFirst reads b's first value, json v2
// (liteDecode, as readNetmapNodesRaw decoded it before) reads the same;
// and readBusFirstLite, which falls back to it, always reads what it
// reads. It returns decodeBusFirst's error.
func checkDecodeBusFirst(t *testing.T, b []byte) error {
	t.Helper()
	var ref busFirstLite
	refErr := jsonv2.UnmarshalDecode(jsontext.NewDecoder(bytes.NewReader(b), liteDecode), &ref, liteDecode)
	got, err := decodeBusFirst(handDecoder{jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true))})
	if err == nil {
		if refErr != nil {
			t.Fatalf("%s: decodeBusFirst read what json v2 refuses (%v)", b, refErr)
		}
		if diff := cmp.Diff(ref, got, busCmp); diff != "" {
			t.Errorf("%s: decodeBusFirst differs (-json v2 +hand):\n%s", b, diff)
		}
	}
	both, bothErr := readBusFirstLite(bytes.NewReader(b))
	if (bothErr == nil) != (refErr == nil) {
		t.Errorf("%s: readBusFirstLite: %v; json v2: %v", b, bothErr, refErr)
	} else if diff := cmp.Diff(ref, both, busCmp); refErr == nil && diff != "" {
		t.Errorf("%s: readBusFirstLite differs (-json v2 +it):\n%s", b, diff)
	}
	return err
}

// decodeBusCases are bus messages decodeBusFirst reads, or leaves to
// json v2.
var decodeBusCases = []struct {
	body string
	read bool
}{
	{`{}`, true},
	{`{"Version":"1.102.5","ErrMessage":null,"NetMap":null,"PeerState":null}`, true},
	{`{"ErrMessage":"the NotifyInitialNetMap IPN bus subscription bit is no longer supported"}`, true},
	{`{"NetMap":{"SelfNode":null,"Peers":[null,{"ID":2,"StableID":"n2","Endpoints":["1.2.3.4:41641","[fd7a::1]:1"],"HomeDERP":1,"LastSeen":"2026-12-02T19:00:00+01:00","Online":false,"Cap":130,"IsWireGuardOnly":true,"Hostinfo":{"IPNVersion":"1.102.5","NetInfo":{"MappingVariesByDestIP":true,"WorkingUDP":false,"HavePortMap":true,"PreferredDERP":2,"LinkType":"wired","DERPLatency":{"1-v4":0.0123,"2-v6":1e-3},"FirewallMode":"nft"},"Other":[1]},"Key":"nodekey:00"}],"DERPMap":{"HomeParams":{"RegionScore":{"1":0.5,"-2":2}},"Regions":{"1":{"RegionID":1,"RegionCode":"nyc","RegionName":"New York","Latitude":40.7,"Longitude":-74,"NoMeasureNoHome":true,"Nodes":[{"Name":"1a","RegionID":1,"HostName":"derp1.example","CertName":"c","IPv4":"192.0.2.1","IPv6":"2001:db8::1","STUNPort":-1,"STUNOnly":true,"DERPPort":443,"InsecureForTests":true,"STUNTestIP":"192.0.2.2","CanPort80":true},null]},"9":null},"omitDefaultRegions":true}},"PeerState":{"n2":{"PeerWireGuardState":"established","PeerWireGuardStateAt":"2026-12-02T19:00:01Z"}}}`, true},
	{`{"NetMap":{"Peers":[],"DERPMap":{"Regions":{}}},"PeerState":{}}`, true},
	{`{"NetMap":{"Peers":[{"Hostinfo":null,"LastSeen":null,"Online":null,"Endpoints":null}]}}`, true},
	// Left to json v2.
	{`{"netmap":{}}`, false},
	{`{"NetMap":{"Peers":[{"stableid":"x"}]}}`, false},
	{`{"NetMap":{"Peers":[{"Stable_ID":"x"}]}}`, false},
	{`{"NetMap":{},"NetMap":{}}`, false},
	{`{"NetMap":{"Peers":[{"ID":1,"ID":2}]}}`, false},
	{`{"NetMap":{"DERPMap":{"Regions":{"1":{},"1":{}}}}}`, false},
	{`{"NetMap":{"DERPMap":{"Regions":{"01":{}}}}}`, false},
	{`{"NetMap":{"DERPMap":{"Regions":{"1":{"Avoid":true}}}}}`, false},
	{`{"PeerState":{"a":{},"a":{}}}`, false},
	{`{"Version":null}`, false},
	{`{"NetMap":{"Peers":[{"Hostinfo":{"NetInfo":{"WorkingUDP":null}}}]}}`, false},
	{"{\"Version\":\"\xff\"}", false},
	{`{"NetMap":{"Peers":[{"HomeDERP":1.5}]}}`, false},
	{`{"NetMap":{"DERPMap":{"Regions":{"1":{"Latitude":1e400}}}}}`, false},
	{`{"NetMap":{"Peers":[{"Endpoints":["nope"]}]}}`, false},
	{`{"PeerState":{"a":{"PeerWireGuardState":"bogus"}}}`, false},
	// A time json v2 refuses and time.Time.UnmarshalJSON reads.
	{`{"NetMap":{"Peers":[{"LastSeen":"0000-01-01T0:00:00+00:00"}]}}`, false},
	{`{"PeerState":{"a":{"PeerWireGuardState":"established","PeerWireGuardStateAt":"2026-01-01T1:00:00Z"}}}`, false},
	{`[]`, false},
	{`{"Version":"1"`, false},
}

// TestDecodeBusFirst: decodeBusFirst reads each case as json v2 does, or
// leaves it to json v2, as the case says; every fixture's first bus
// message and a 300-peer one are read by hand.
func TestDecodeBusFirst(t *testing.T) {
	for _, tc := range decodeBusCases {
		err := checkDecodeBusFirst(t, []byte(tc.body))
		if (err == nil) != tc.read {
			t.Errorf("%s: read by hand %v (%v), want %v", tc.body, err == nil, err, tc.read)
		}
	}
	fixtures, err := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	fixes := map[string]*probestest.Fixture{"ManyPeers(300)": probestest.ManyPeers(300), "variedNetmap": variedNetmap(t, 40)}
	for _, name := range fixtures {
		fix, err := probestest.LoadFixture(name)
		if err != nil {
			t.Fatal(err)
		}
		fixes[filepath.Base(name)] = fix
	}
	n := 0
	for name, fix := range fixes {
		b := busMessage(t, fix)
		if b == nil {
			continue
		}
		n++
		if err := checkDecodeBusFirst(t, b); err != nil {
			t.Errorf("%s: not read by hand: %v", name, err)
		}
	}
	if n < 2 {
		t.Errorf("%d fixtures with a netmap, want both fakes'", n)
	}
	// Every message real daemons sent on the bus (probes/testdata/daemon).
	for _, v := range daemonVersions {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "daemon", "bus-"+v+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			if err := checkDecodeBusFirst(t, line); err != nil {
				t.Errorf("v%s message %d: not read by hand: %v", v, i, err)
			}
		}
	}
}

// busMessage is the first message fix's fake LocalAPI sends on a watch
// of the netmap, nil if it has none.
func busMessage(t *testing.T, fix *probestest.Fixture) []byte {
	t.Helper()
	c := NewClient(probestest.New(t, fix).Socket)
	mask, _ := netmapMask.MarshalText()
	res, err := localGet(t.Context(), c, "/localapi/v0/watch-ipn-bus?mask="+string(mask))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return nil
	}
	v, err := jsontext.NewDecoder(res.Body, liteDecode).ReadValue()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(v), `"NetMap"`) {
		return nil
	}
	return bytes.Clone(v)
}

// TestReadBusFirstLiteStream: the stream stays open after the first
// message, whichever decoder read it (the watch goes on).
func TestReadBusFirstLiteStream(t *testing.T) {
	for _, first := range []string{`{"Version":"v"}`, `{"version":"v"}`} {
		r, w := io.Pipe()
		go w.Write([]byte(first + "\n"))
		done := make(chan error, 1)
		go func() {
			lite, err := readBusFirstLite(r)
			if err == nil && lite.Version != "v" {
				err = io.ErrUnexpectedEOF
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", first, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading after the first message", first)
		}
		w.Close()
	}
}

// FuzzDecodeBusFirst: whatever decodeBusFirst reads, json v2 reads to the
// same values, and readBusFirstLite reads what json v2 reads.
func FuzzDecodeBusFirst(f *testing.F) {
	for _, tc := range decodeBusCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeBusFirst(t, b)
	})
}
