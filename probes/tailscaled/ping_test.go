package tailscaled

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

func TestPing(t *testing.T) {
	oldGap, oldTimeout := pingGap, pingTryTimeout
	// A try times out after a second: the "hang" answers need a timeout,
	// and the others must arrive within it on a busy machine too.
	pingGap, pingTryTimeout = 5*time.Millisecond, time.Second
	t.Cleanup(func() { pingGap, pingTryTimeout = oldGap, oldTimeout })
	hang := json.RawMessage(`"hang"`)

	derp := json.RawMessage(`{"IP":"100.64.0.2","NodeName":"nas","LatencySeconds":0.0402,"DERPRegionID":1,"DERPRegionCode":"nyc"}`)
	direct := json.RawMessage(`{"IP":"100.64.0.2","NodeName":"nas","LatencySeconds":0.0231,"Endpoint":"203.0.113.5:41641"}`)
	relay := json.RawMessage(`{"IP":"100.64.0.2","NodeName":"nas","LatencySeconds":0.031,"PeerRelay":"198.51.100.77:7777:vni:12"}`)
	tsmp := json.RawMessage(`{"IP":"100.64.0.2","NodeName":"nas","LatencySeconds":0.0255}`)
	failed := json.RawMessage(`{"IP":"100.64.0.2","Err":"no matching peer\u001b[2J"}`)
	peer := probes.Peer{ID: "n2CNTRL", Name: "nas", TailscaleIPs: []netip.Addr{netip.MustParseAddr("fd7a:115c:a1e0::2"), netip.MustParseAddr("100.64.0.2")}}

	tests := []struct {
		name    string
		seq     []json.RawMessage
		kind    probes.PingKind
		tries   int
		want    []probes.PingResult
		wantErr error
	}{
		{
			name: "DERP then direct stops at the first direct pong",
			seq:  []json.RawMessage{derp, derp, direct}, kind: probes.PingDISCO, tries: 10,
			want: []probes.PingResult{
				{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 1, Latency: 40200 * time.Microsecond, Via: "DERP(nyc)", Path: probes.PathDERP},
				{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 2, Latency: 40200 * time.Microsecond, Via: "DERP(nyc)", Path: probes.PathDERP},
				{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 3, Latency: 23100 * time.Microsecond, Via: "203.0.113.5:41641", Path: probes.PathDirect, Done: true},
			},
		},
		{
			name: "never direct: bounded tries then direct connection not established",
			seq:  []json.RawMessage{relay}, kind: probes.PingDISCO, tries: 2,
			want: []probes.PingResult{
				{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 1, Latency: 31 * time.Millisecond, Via: "peer-relay(198.51.100.77:7777:vni:12)", Path: probes.PathPeerRelay},
				{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 2, Latency: 31 * time.Millisecond, Via: "peer-relay(198.51.100.77:7777:vni:12)", Path: probes.PathPeerRelay},
				{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 2, Done: true, Err: "direct connection not established"},
			},
			wantErr: probes.ErrNoDirect,
		},
		{
			name: "TSMP is one try",
			seq:  []json.RawMessage{tsmp}, kind: probes.PingTSMP,
			want: []probes.PingResult{{PeerID: "n2CNTRL", Kind: probes.PingTSMP, Try: 1, Latency: 25500 * time.Microsecond, Via: "TSMP", Done: true}},
		},
		{
			name: "TSMP timeout is one Done result, not direct connection not established",
			seq:  []json.RawMessage{hang}, kind: probes.PingTSMP,
			want:    []probes.PingResult{{PeerID: "n2CNTRL", Kind: probes.PingTSMP, Try: 1, Done: true, Err: "timeout"}},
			wantErr: probes.ErrNoReply,
		},
		{
			name: "DISCO timeouts go on, then direct connection not established",
			seq:  []json.RawMessage{hang}, kind: probes.PingDISCO, tries: 2,
			want: []probes.PingResult{
				{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 1, Err: "timeout"},
				{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 2, Err: "timeout"},
				{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 2, Done: true, Err: "direct connection not established"},
			},
			wantErr: probes.ErrNoDirect,
		},
		{
			name: "daemon error ends the run, sanitised",
			seq:  []json.RawMessage{failed}, kind: probes.PingDISCO,
			want: []probes.PingResult{{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 1, Done: true, Err: "no matching peer"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fix := loadFixture(t, "direct")
			fix.Ping = map[string][]json.RawMessage{"100.64.0.2": tt.seq}
			srv := probestest.New(t, fix)
			var got []probes.PingResult
			err := Ping(context.Background(), NewClient(srv.Socket), peer, tt.kind, tt.tries, time.Minute, func(r probes.PingResult) { got = append(got, r) })
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && tt.want[len(tt.want)-1].Err == "" && err != nil {
				t.Errorf("err = %v, want nil", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPingBadInput(t *testing.T) {
	var got []probes.PingResult
	err := Ping(context.Background(), nil, probes.Peer{ID: "x", Name: "x"}, probes.PingDISCO, 0, 0, func(r probes.PingResult) { got = append(got, r) })
	if err == nil || len(got) != 1 || !got[0].Done || got[0].Err == "" {
		t.Errorf("no-IP peer: err %v, results %+v", err, got)
	}
	err = Ping(context.Background(), nil, probes.Peer{ID: "x", TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.9")}}, "icmp", 0, 0, nil)
	if err == nil {
		t.Error("unknown kind: no error")
	}
}

func TestPingCancel(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "unexplained")) // always DERP
	ctx, cancel := context.WithCancel(context.Background())
	peer := probes.Peer{ID: "n2CNTRL", TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.2")}}
	done := make(chan error)
	go func() {
		done <- Ping(ctx, NewClient(srv.Socket), peer, probes.PingDISCO, 10, time.Minute, func(r probes.PingResult) {
			if r.Try == 1 && !r.Done {
				cancel()
			}
		})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Ping did not stop after cancel")
	}
}

// TestPingFinish: with Finish, a ping still out when the run's time ends
// waits for its answer (here the run's time is over before the first ping
// is sent, and its pong counts); without it, the run's end cuts it off as
// a "timeout".
func TestPingFinish(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "unexplained")) // always DERP
	peer := probes.Peer{ID: "n2CNTRL", TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.2")}}
	for _, finish := range []bool{true, false} {
		var got []probes.PingResult
		err := PingWith(context.Background(), NewClient(srv.Socket), peer, probes.PingDISCO,
			PingOptions{Tries: 5, Time: time.Nanosecond, TryTimeout: time.Minute, Finish: finish}, func(r probes.PingResult) { got = append(got, r) })
		if !errors.Is(err, probes.ErrNoDirect) || len(got) == 0 {
			t.Fatalf("Finish %v: err %v, results %+v", finish, err, got)
		}
		first := got[0]
		if finish && (first.Err != "" || first.Latency == 0 || first.Via != "DERP(nyc)" || len(got) != 2 || got[1].Err != safetext.Of(probes.ErrNoDirect)) {
			t.Errorf("with Finish: %+v; want the first ping's pong, then no direct path", got)
		}
		if !finish && (first.Err != "timeout" || !first.Done || len(got) != 1) {
			t.Errorf("without Finish: %+v; want one cut-off try", got)
		}
	}
}
