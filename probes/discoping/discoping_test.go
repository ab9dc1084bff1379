package discoping

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
	// onDisco, if set, is called (outside the lock) with how many peers
	// have been sent a DISCO ping so far, after each first one.
	onDisco func(peersPinged int)

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
	pinged := len(f.disco)
	f.mu.Unlock()
	if n == 1 && f.onDisco != nil {
		f.onDisco(pinged)
	}
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
// once; every peer's run says what it saw, and progress arrives for every
// peer in order. Each ping waits for its answer (TryTimeout, a guard
// against a hang only), so a busy machine changes how long the probe
// takes, not what it finds: no timing is asserted.
func TestRunLimits(t *testing.T) {
	f := newPinger(5*time.Millisecond, 0)
	peers := relayed(50)
	var reports []probes.ProbeProgress
	runs := Run(context.Background(), f, peers, Options{Budget: MaxBudget, PerPeer: 200 * time.Millisecond, TryTimeout: MaxBudget},
		func(p probes.ProbeProgress) { reports = append(reports, p) })
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
		if r == nil || !r.Probe || r.Direct || r.Pongs == 0 || r.Pongs != r.Tries || r.CutOff != 0 || r.Unfinished || r.Via != "DERP(nyc)" {
			t.Errorf("%s: run %+v, want pongs only via DERP, every ping answered", p.Name, r)
		}
	}
	if got := Unfinished(peers, runs); len(got) != 0 {
		t.Errorf("unfinished %v, want none", got)
	}
	if len(reports) != 52 || reports[0].Done != 0 || !reports[51].Finished || reports[51].Done != 50 {
		t.Fatalf("%d progress reports; first %+v last %+v", len(reports), reports[0], reports[len(reports)-1])
	}
	for i, r := range reports[1:51] {
		if r.Done != i+1 || r.Run == nil || r.Peer == "" || r.Finished {
			t.Errorf("report %d: %+v, want peer %d's run", i+1, r, i+1)
		}
	}
}

// TestRunCutOff: when the budget ends (here: the caller cancels once 8
// peers have DISCO pings out that nothing answers), a ping on its way is
// cut off, not unanswered (CutOff, no try), the peers never reached get a
// run that says so, every run is Unfinished, and progress still counts
// every peer. Before, the cut-off ping read as "1 try, 0 pongs": evidence
// for no-handshake that a busy machine made up (probes'
// TestPingRunCutOffIsNoEvidence has the verdicts).
func TestRunCutOff(t *testing.T) {
	f := newPinger(time.Millisecond, 0)
	f.silent = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.onDisco = func(peersPinged int) {
		if peersPinged == MaxParallel {
			cancel()
		}
	}
	peers := relayed(20)
	var last probes.ProbeProgress
	n := 0
	runs := Run(ctx, f, peers, Options{Budget: MaxBudget, TryTimeout: MaxBudget}, func(p probes.ProbeProgress) { last, n = p, n+1 })
	if len(runs) != 20 || n != 22 || !last.Finished || last.Done != 20 {
		t.Fatalf("%d runs, %d progress reports, last %+v; want 20 runs and 22 reports", len(runs), n, last)
	}
	cut := 0
	for _, p := range peers {
		r := runs[p.ID]
		if r == nil || !r.Unfinished || r.Tries != 0 || r.Pongs != 0 || r.TSMPReply != nil {
			t.Errorf("%s: run %+v, want unfinished with no try (and no TSMP answer or silence)", p.Name, r)
			continue
		}
		cut += r.CutOff
	}
	if cut != MaxParallel {
		t.Errorf("%d pings cut off, want %d (one per peer being pinged)", cut, MaxParallel)
	}
	if got := Unfinished(peers, runs); len(got) != 20 || got[0] != "peer00" {
		t.Errorf("unfinished %v, want all 20 in order", got)
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

// TestRunSilentPeer: a peer that answers nothing gets a run of pings that
// timed out on their own, no pong (no-handshake's evidence), finished.
func TestRunSilentPeer(t *testing.T) {
	f := newPinger(time.Millisecond, 0)
	f.silent = true
	runs := Run(context.Background(), f, relayed(1), Options{Budget: MaxBudget, PerPeer: 400 * time.Millisecond, TryTimeout: 50 * time.Millisecond}, nil)
	r := runs["n0"]
	if r == nil || r.Pongs != 0 || r.Tries == 0 || r.CutOff != 0 || r.Unfinished {
		t.Errorf("run %+v, want tries, no pong, none cut off", r)
	}
}

// BenchmarkProbe50Relayed is the time to the evidence for 50 relayed
// peers whose DISCO pongs come only through DERP (30 ms away), or
// directly from the third ping, or never (a silent peer's every ping waits
// out its timeout: each run uses its whole share, the worst case)
// (docs/perf.md).
//
//	go test -run '^$' -bench Probe50 -benchtime 1x ./probes/discoping
func BenchmarkProbe50Relayed(b *testing.B) {
	for _, bc := range []struct {
		name       string
		directFrom int
		silent     bool
	}{{"never-direct", 0, false}, {"direct-on-3rd-ping", 3, false}, {"silent", 0, true}} {
		b.Run(bc.name, func(b *testing.B) {
			unfinished := 0
			for b.Loop() {
				f := newPinger(30*time.Millisecond, bc.directFrom)
				f.silent = bc.silent
				peers := relayed(50)
				unfinished += len(Unfinished(peers, Run(context.Background(), f, peers, Options{}, nil)))
			}
			b.ReportMetric(float64(unfinished)/float64(b.N), "unfinished/op")
		})
	}
}
