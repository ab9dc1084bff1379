package probe

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// pinger is a LocalClient whose pings answer through DERP after rtt, or
// directly from the directFrom-th DISCO ping on (0: never), and which
// counts what it was asked: pings per peer and type, and the most peers
// pinged at once.
type pinger struct {
	rtt        time.Duration
	directFrom int
	silent     bool // no answer at all (a peer that is down)

	mu       sync.Mutex
	disco    map[netip.Addr]int
	tsmp     map[netip.Addr]int
	inFlight map[netip.Addr]int
	peersNow int
	maxPeers int
}

func newPinger(rtt time.Duration, directFrom int) *pinger {
	return &pinger{rtt: rtt, directFrom: directFrom, disco: map[netip.Addr]int{}, tsmp: map[netip.Addr]int{}, inFlight: map[netip.Addr]int{}}
}

func (f *pinger) Ping(ctx context.Context, ip netip.Addr, pt tailcfg.PingType) (*ipnstate.PingResult, error) {
	f.mu.Lock()
	if f.inFlight[ip] == 0 {
		f.peersNow++
		f.maxPeers = max(f.maxPeers, f.peersNow)
	}
	f.inFlight[ip]++
	n := 0
	if pt == tailcfg.PingDisco {
		f.disco[ip]++
		n = f.disco[ip]
	} else {
		f.tsmp[ip]++
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight[ip]--
		if f.inFlight[ip] == 0 {
			f.peersNow--
		}
		f.mu.Unlock()
	}()
	wait := f.rtt
	if f.silent {
		wait = time.Hour
	}
	select {
	case <-time.After(wait):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res := &ipnstate.PingResult{IP: ip.String(), LatencySeconds: f.rtt.Seconds()}
	if f.directFrom > 0 && n >= f.directFrom {
		res.Endpoint = "203.0.113.5:41641"
	} else {
		res.DERPRegionID, res.DERPRegionCode = 1, "nyc"
	}
	return res, nil
}

func (f *pinger) Status(context.Context) (*ipnstate.Status, error) {
	return nil, errors.New("no status")
}
func (f *pinger) WhoIs(context.Context, string) (*apitype.WhoIsResponse, error) {
	return nil, errors.New("no whois")
}
func (f *pinger) CurrentDERPMap(context.Context) (*tailcfg.DERPMap, error) {
	return nil, errors.New("no map")
}
func (f *pinger) WatchIPNBus(context.Context, ipn.NotifyWatchOpt) (*local.IPNBusWatcher, error) {
	return nil, errors.New("no bus")
}

// relayed is n relayed peers.
func relayed(n int) []probes.Peer {
	var out []probes.Peer
	for i := range n {
		ip := netip.AddrFrom4([4]byte{100, 64, byte(i >> 8), byte(i + 2)})
		out = append(out, probes.Peer{ID: safetext.New(fmt.Sprintf("n%d", i)), Name: safetext.New(fmt.Sprintf("peer%02d", i)), TailscaleIPs: []netip.Addr{ip},
			Active: true, Path: probes.Path{Kind: probes.PathDERP, DERPCode: "nyc"}})
	}
	return out
}

// TestRunLimits: at most 10 DISCO pings per peer, at most 8 peers at
// once, the whole probe within its budget; every peer's run says what it
// saw, and progress arrives for every peer.
func TestRunLimits(t *testing.T) {
	f := newPinger(5*time.Millisecond, 0)
	peers := relayed(50)
	var reports []probes.ProbeProgress
	start := time.Now()
	runs := Run(context.Background(), f, peers, Options{Budget: 2 * time.Second}, func(p probes.ProbeProgress) { reports = append(reports, p) })
	took := time.Since(start)
	if took > 2*time.Second+500*time.Millisecond {
		t.Errorf("probe took %v, budget 2s", took)
	}
	if f.maxPeers > MaxParallel {
		t.Errorf("%d peers pinged at once, limit %d", f.maxPeers, MaxParallel)
	}
	for ip, n := range f.disco {
		if n > MaxPings {
			t.Errorf("%v: %d DISCO pings, limit %d", ip, n, MaxPings)
		}
	}
	if len(runs) != 50 {
		t.Fatalf("%d runs, want 50", len(runs))
	}
	for _, p := range peers {
		r := runs[p.ID]
		if r == nil || !r.Probe || r.Direct || r.Pongs == 0 || r.Pongs != r.Tries || r.Via != "DERP(nyc)" {
			t.Errorf("%s: run %+v, want pongs only via DERP", p.Name, r)
		}
	}
	if len(reports) != 52 || reports[0].Done != 0 || !reports[51].Finished || reports[51].Done != 50 {
		t.Errorf("%d progress reports; first %+v last %+v", len(reports), reports[0], reports[len(reports)-1])
	}
}

// TestRunStopsAtDirect: a peer that answers directly on the third DISCO
// ping is pinged no further, and its run says direct.
func TestRunStopsAtDirect(t *testing.T) {
	f := newPinger(2*time.Millisecond, 3)
	peers := relayed(3)
	runs := Run(context.Background(), f, peers, Options{}, nil)
	for _, p := range peers {
		r := runs[p.ID]
		if r == nil || !r.Direct || r.Tries != 3 || r.TSMPReply == nil || !*r.TSMPReply {
			t.Errorf("%s: run %+v, want direct after 3 tries, TSMP answered", p.Name, r)
		}
	}
	for ip, n := range f.disco {
		if n != 3 {
			t.Errorf("%v: %d DISCO pings, want 3", ip, n)
		}
	}
}

// TestRunSilentPeer: a peer that answers nothing gets a run with no pong
// (no-handshake's evidence), within its share of the budget.
func TestRunSilentPeer(t *testing.T) {
	f := newPinger(time.Millisecond, 0)
	f.silent = true
	start := time.Now()
	runs := Run(context.Background(), f, relayed(1), Options{Budget: time.Second}, nil)
	r := runs["n0"]
	if r == nil || r.Pongs != 0 || r.Tries == 0 {
		t.Errorf("run %+v, want tries and no pong", r)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("took %v with a 1s budget", took)
	}
}

// BenchmarkProbe50Relayed is the time to the evidence for 50 relayed
// peers whose DISCO pongs come only through DERP (30 ms away), the worst
// case: every run uses its whole share (docs/perf.md).
//
//	go test -run '^$' -bench Probe50 -benchtime 1x ./probes/probe
func BenchmarkProbe50Relayed(b *testing.B) {
	for _, bc := range []struct {
		name       string
		directFrom int
	}{{"never-direct", 0}, {"direct-on-3rd-ping", 3}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				f := newPinger(30*time.Millisecond, bc.directFrom)
				Run(context.Background(), f, relayed(50), Options{}, nil)
			}
		})
	}
}
