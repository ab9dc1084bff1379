package tailscaled

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tailscale.com/ipn/ipnstate"

	"github.com/tailpath/tailpath/probes/probestest"
)

// statusRef is what decodeStatus reads, as encoding/json reads it: the
// reference FuzzDecodeStatus holds it to.
type statusRef struct {
	Version, BackendState string
	Health                []string
	Self                  *selfLite
	Peer                  map[string]*peerLite
}

// checkDecodeStatus: when decodeStatus reads b, encoding/json reads the
// same values from it; it returns decodeStatus's error.
func checkDecodeStatus(t *testing.T, b []byte) error {
	t.Helper()
	got, err := decodeStatus(bytes.NewReader(b))
	var ref *statusRef
	refErr := json.Unmarshal(b, &ref)
	if err != nil {
		if refErr == nil && !errors.Is(err, errNotByHand) && !strings.Contains(err.Error(), "duplicate") && !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("%s: decodeStatus: %v, which encoding/json reads", b, err)
		}
		return err
	}
	if refErr != nil {
		t.Fatalf("%s: decodeStatus read what encoding/json refuses (%v)", b, refErr)
	}
	if (got == nil) != (ref == nil) {
		t.Fatalf("%s: decodeStatus %v, encoding/json %v", b, got, ref)
	}
	if got == nil {
		return nil
	}
	asJSON := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got.Version != ref.Version || got.BackendState != ref.BackendState || asJSON(got.Health) != asJSON(ref.Health) {
		t.Errorf("%s: version, state, health %q %q %q; encoding/json %q %q %q", b, got.Version, got.BackendState, got.Health, ref.Version, ref.BackendState, ref.Health)
	}
	wantSelf := "null"
	if ref.Self != nil {
		wantSelf = asJSON(ref.Self.to())
	}
	if gotSelf := asJSON(got.Self); gotSelf != wantSelf {
		t.Errorf("%s: Self\n%s\nencoding/json:\n%s", b, gotSelf, wantSelf)
	}
	var gotPeers, wantPeers []string
	for _, ps := range got.Peer {
		gotPeers = append(gotPeers, asJSON(ps))
	}
	for _, l := range ref.Peer {
		if l != nil {
			out := new(ipnstate.PeerStatus)
			l.to(out)
			wantPeers = append(wantPeers, asJSON(out))
		}
	}
	slices.Sort(gotPeers)
	slices.Sort(wantPeers)
	if !slices.Equal(gotPeers, wantPeers) {
		t.Errorf("%s: peers\n%s\nencoding/json:\n%s", b, strings.Join(gotPeers, "\n"), strings.Join(wantPeers, "\n"))
	}
	return nil
}

// decodeStatusCases are Status replies decodeStatus reads or leaves to
// encoding/json.
var decodeStatusCases = []struct {
	body string
	read bool // decodeStatus reads it (else it is left to encoding/json)
}{
	{`null`, true},
	{`{}`, true},
	{` {"Version":"1.102.5","BackendState":"Running","Health":[],"Peer":{}} `, true},
	{`{"Health":null,"Peer":null,"Self":null}`, true},
	{`{"Health":["a\u0041\n", null]}`, true},
	{`{"Self":{"ID":"n1","NodeID":7,"TailscaleIPs":["100.64.0.1","fd7a::1"],"Addrs":[],"CapMap":{"a":null,"b":[],"c":[1, {"x" : [true]},"s",null]},"Relay":"nyc","Unknown":{"deep":[1,2]}}}`, true},
	{`{"Peer":{"k1":null,"k2":{"ID":"p","TailscaleIPs":[],"PrimaryRoutes":["10.0.0.0/24"],"RxBytes":-0,"TxBytes":9007199254740993,"LastSeen":"2026-12-02T19:00:00.5+01:00","LastHandshake":"0001-01-01T00:00:00Z","KeyExpiry":null,"Online":true,"Active":false,"Expired":null,"CurAddr":"1.2.3.4:41641"}}}`, true},
	{`{"Peer":{"k":{"KeyExpiry":"2027-01-01T00:00:00Z","LastSeen":null}}}`, true},
	{`{"Peer":{"k":{"ID":"a","ID":"b","KeyExpiry":"2027-01-01T00:00:00Z","KeyExpiry":null,"LastSeen":"2026-01-01T00:00:00Z","LastSeen":null,"TailscaleIPs":["100.64.0.1"],"TailscaleIPs":null}}}`, true},
	{`{"Peer":{"k":{"\u004fnline":true,"Host\u004eame":"\u00e9"}}}`, true},
	// Left to encoding/json: it reads them, but not as the names say.
	{`{"peer":{}}`, false},
	{`{"Peer":{"k":{"online":true}}}`, false},
	{`{"Peer":{"k":{"HOSTNAME":"x"}}}`, false},
	{`{"Self":{"ſelf":1, "Id":"x"}}`, false},
	{`{"Peer":{"k":{"ID":"a"},"k":{"ID":"b"}}}`, false},
	{`{"Version":"a","Version":"b"}`, false},
	{`{"Self":{"CapMap":{"a":[]},"CapMap":{"b":[]}}}`, false},
	{`{"Peer":{"k":{"ID":"a"}},"Peer":{"j":{"ID":"b"}}}`, false},
	{"{\"HostName\":\"\xff\"}", false},
	// Left to encoding/json, which refuses them too.
	{`{"Peer":{"k":{"RxBytes":1.5}}}`, false},
	{`{"Peer":{"k":{"RxBytes":1e3}}}`, false},
	{`{"Peer":{"k":{"RxBytes":"1"}}}`, false},
	{`{"Peer":{"k":{"NodeID":99999999999999999999}}}`, false},
	{`{"Peer":{"k":{"TailscaleIPs":["nope"]}}}`, false},
	{`{"Peer":{"k":{"LastSeen":"yesterday"}}}`, false},
	{`{"Peer":{"k":{"Online":"true"}}}`, false},
	{`{"Peer":[]}`, false},
	{`{"Peer":{"k":[]}}`, false},
	{`{} {}`, false},
	{`{"Version":"1"`, false},
	{`[]`, false},
	{``, false},
}

// TestDecodeStatus: decodeStatus reads each case as encoding/json does,
// or leaves it to encoding/json, as the case says; and every fixture's
// Status and a 300-peer one are read.
func TestDecodeStatus(t *testing.T) {
	for _, tc := range decodeStatusCases {
		err := checkDecodeStatus(t, []byte(tc.body))
		if (err == nil) != tc.read {
			t.Errorf("%s: read %v (%v), want %v", tc.body, err == nil, err, tc.read)
		}
	}
	fixtures, err := filepath.Glob(filepath.Join("..", "testdata", "*.json"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	bodies := map[string][]byte{"ManyPeers(300)": probestest.ManyPeers(300).Status}
	for _, name := range fixtures {
		fix, err := probestest.LoadFixture(name)
		if err != nil {
			t.Fatal(err)
		}
		bodies[filepath.Base(name)] = fix.Status
	}
	for name, b := range bodies {
		if err := checkDecodeStatus(t, b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestReadStatusLeavesToClient: a reply decodeStatus leaves to
// encoding/json is read by local.Client's Status: a member named without
// case still counts.
func TestReadStatusLeavesToClient(t *testing.T) {
	srv := probestest.New(t, probestest.ManyPeers(2))
	c := NewClient(srv.Socket)
	srv.SetStatusBody([]byte(`{"backendstate":"Running","Peer":{"nodekey:0000000000000000000000000000000000000000000000000000000000000001":{"id":"p1","online":true}}}`))
	st, err := readStatus(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if st.BackendState != "Running" || len(st.Peer) != 1 || st.Peer[0].ID != "p1" || !st.Peer[0].Online {
		t.Errorf("got %+v, peers %d", st, len(st.Peer))
	}
}

// FuzzDecodeStatus: whatever decodeStatus reads, encoding/json reads to
// the same values.
func FuzzDecodeStatus(f *testing.F) {
	for _, tc := range decodeStatusCases {
		f.Add([]byte(tc.body))
	}
	for _, name := range []string{"no-endpoints", "escape-name", "peer-relay", "offline"} {
		b, err := readFixtureParts(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[0])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeStatus(t, b)
	})
}
