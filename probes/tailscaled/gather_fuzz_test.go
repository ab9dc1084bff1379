package tailscaled

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/probes"
)

func TestNATFromNetInfo(t *testing.T) {
	ni := &tailcfg.NetInfo{WorkingUDP: "true", MappingVariesByDestIP: "", PCP: "false",
		DERPLatency: map[string]float64{"1-v4": 0.02, "1-v6": 0.015, "2-v4": 0.1, "x-v4": 1, "3-v4": -1}}
	got := natFromNetInfo(ni)
	want := &probes.NATInfo{WorkingUDP: boolp(true), PCP: boolp(false),
		DERPLatency: map[int]time.Duration{1: 15 * time.Millisecond, 2: 100 * time.Millisecond}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("natFromNetInfo (-want +got):\n%s", diff)
	}
}

// fakeClient answers from decoded values; for fuzzing without sockets.
type fakeClient struct {
	st    *ipnstate.Status
	whois *apitype.WhoIsResponse
	dm    *tailcfg.DERPMap
}

func (f *fakeClient) Status(context.Context) (*ipnstate.Status, error) { return f.st, nil }
func (f *fakeClient) WhoIs(context.Context, string) (*apitype.WhoIsResponse, error) {
	if f.whois == nil {
		return nil, local.ErrPeerNotFound
	}
	return f.whois, nil
}
func (f *fakeClient) CurrentDERPMap(context.Context) (*tailcfg.DERPMap, error) { return f.dm, nil }
func (f *fakeClient) WatchIPNBus(context.Context, ipn.NotifyWatchOpt) (*local.IPNBusWatcher, error) {
	return nil, errors.New("no bus")
}
func (f *fakeClient) Ping(context.Context, netip.Addr, tailcfg.PingType) (*ipnstate.PingResult, error) {
	return nil, errors.New("no ping")
}

// FuzzGather feeds arbitrary Status, WhoIs and DERP map JSON (whatever
// decodes) through Gather and Diagnose: it must not panic and every string
// in the snapshot must be free of control characters.
func FuzzGather(f *testing.F) {
	for _, name := range []string{"no-endpoints", "escape-name", "peer-relay", "offline"} {
		b, err := readFixtureParts(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[0], b[1], b[2])
	}
	f.Add([]byte(`{"Peer":{"nodekey:0000000000000000000000000000000000000000000000000000000000000000":null}}`), []byte(`{"Node":{"Hostinfo":{"NetInfo":{"DERPLatency":{"-":1e308}}}}}`), []byte(`{"Regions":{"1":null}}`))
	f.Fuzz(func(t *testing.T, stJSON, whoisJSON, dmJSON []byte) {
		var st ipnstate.Status
		if json.Unmarshal(stJSON, &st) != nil {
			return
		}
		c := &fakeClient{st: &st}
		var w apitype.WhoIsResponse
		if json.Unmarshal(whoisJSON, &w) == nil {
			c.whois = &w
		}
		var dm tailcfg.DERPMap
		if json.Unmarshal(dmJSON, &dm) == nil {
			c.dm = &dm
		}
		snap, err := gatherAt(context.Background(), c, nil, fixtureNow, GatherOptions{})
		if err != nil {
			return
		}
		b, err := json.Marshal(snap)
		if err != nil {
			t.Fatalf("snapshot does not marshal: %v", err)
		}
		var back probes.Snapshot
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("snapshot JSON does not round-trip: %v", err)
		}
		for _, p := range snap.Peers {
			for _, s := range []string{string(p.Name), string(p.OS), string(p.DNSName), string(p.Path.Text), string(p.HomeDERPCode), string(p.Verdict.Summary)} {
				if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
					t.Fatalf("control character in %q", s)
				}
			}
		}
	})
}

func readFixtureParts(name string) ([3][]byte, error) {
	var out [3][]byte
	f, err := loadFixtureFile(name)
	if err != nil {
		return out, err
	}
	out[0] = f.Status
	out[1] = f.WhoIs["100.64.0.2"]
	out[2] = f.DERPMap
	return out, nil
}
