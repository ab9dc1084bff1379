package tailscaled

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"tailscale.com/client/local"
	"tailscale.com/ipn"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

// hangGuard bounds a wait for something that must come: a guard against a
// hang only, never a measure of speed (a busy machine may take seconds;
// no test here asserts how long anything took).
const hangGuard = time.Minute

// next waits for the next event of type T, skipping others, failing after d.
func next[T probes.Event](t *testing.T, ch <-chan probes.Event, d time.Duration) T {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				var zero T
				t.Fatalf("channel closed waiting for %T", zero)
			}
			if v, ok := ev.(T); ok {
				if s, ok := any(v).(*probes.Snapshot); ok {
					// Judged as the joiner judges it (a gather keeps no verdicts).
					return any(judged(s)).(T)
				}
				return v
			}
		case <-deadline:
			var zero T
			t.Fatalf("no %T within %v", zero, d)
		}
	}
}

// nextStatus waits for a SourceStatus with Up == up.
func nextStatus(t *testing.T, ch <-chan probes.Event, up bool, d time.Duration) probes.SourceStatus {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		st := next[probes.SourceStatus](t, ch, time.Until(end))
		if st.Up == up {
			return st
		}
	}
	t.Fatalf("no SourceStatus{Up:%v} within %v", up, d)
	return probes.SourceStatus{}
}

func TestSourceReconnects(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := NewSource(NewClient(srv.Socket), SourceOptions{
		Interval: 50 * time.Millisecond, MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
		Socket: srv.Socket,
	})
	ch := src.Run(ctx)

	if st := next[probes.SourceStatus](t, ch, hangGuard); !st.Up {
		t.Fatalf("first status = %+v, want up", st)
	}
	snap := next[*probes.Snapshot](t, ch, hangGuard)
	if len(snap.Peers) != 1 || snap.Peers[0].Name != "nas" {
		t.Fatalf("snapshot peers = %+v", snap.Peers)
	}

	// tailscaled stops: the source says so, actionably, and keeps retrying.
	srv.Stop()
	down := nextStatus(t, ch, false, hangGuard)
	wantPrefix := "failed to connect to local tailscaled (socket " + srv.Socket + "); is it running?"
	if !strings.HasPrefix(string(down.Err), wantPrefix) || down.NextRetry.IsZero() {
		t.Errorf("down status = %+v, want Err prefix %q and NextRetry", down, wantPrefix)
	}
	// Back-off is capped: each retry is due within MaxBackoff.
	for range 3 {
		st := next[probes.SourceStatus](t, ch, hangGuard)
		if st.Up {
			t.Fatalf("up while stopped: %+v", st)
		}
		if wait := time.Until(st.NextRetry); wait > 150*time.Millisecond {
			t.Errorf("next retry in %v, want ≤ MaxBackoff", wait)
		}
	}

	// tailscaled comes back.
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	nextStatus(t, ch, true, hangGuard)
	next[*probes.Snapshot](t, ch, hangGuard)

	// Cancelling closes the channel once every goroutine has returned.
	cancel()
	deadline := time.After(hangGuard)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("channel not closed after cancel")
		}
	}
}

func TestSourcePermissionDenied(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	srv.SetForbidden("status", true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := NewSource(NewClient(srv.Socket), SourceOptions{MinBackoff: 10 * time.Millisecond}).Run(ctx)
	st := nextStatus(t, ch, false, hangGuard)
	if !strings.Contains(string(st.Err), "permission denied") || !strings.Contains(string(st.Err), "--operator") {
		t.Errorf("Err = %q, want permission denied and what to do", st.Err)
	}
	srv.SetForbidden("status", false)
	nextStatus(t, ch, true, hangGuard)
}

func TestSourceBusTriggersGather(t *testing.T) {
	fix := loadFixture(t, "direct")
	srv := probestest.New(t, fix)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A poll interval far beyond the test: only the bus can cause a new snapshot.
	ch := NewSource(NewClient(srv.Socket), SourceOptions{Interval: time.Hour}).Run(ctx)
	next[*probes.Snapshot](t, ch, hangGuard) // the first poll
	next[*probes.Snapshot](t, ch, hangGuard) // caused by the bus's initial notify

	// The peer goes relayed; the bus says something changed.
	var st map[string]any
	if err := json.Unmarshal(fix.Status, &st); err != nil {
		t.Fatal(err)
	}
	for _, p := range st["Peer"].(map[string]any) {
		p.(map[string]any)["CurAddr"] = ""
	}
	b, _ := json.Marshal(st)
	srv.SetStatusBody(b)
	s := ipn.Running
	srv.Notify(ipn.Notify{State: &s})
	snap := next[*probes.Snapshot](t, ch, hangGuard)
	if got := snap.Peers[0].Path.Kind; got != probes.PathDERP {
		t.Errorf("after bus notify path = %q, want %q", got, probes.PathDERP)
	}
}

func TestSourceBusPatchRefreshesOnePeer(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := NewSource(NewClient(srv.Socket), SourceOptions{Interval: time.Hour}).Run(ctx)
	next[*probes.Snapshot](t, ch, hangGuard) // the first poll
	next[*probes.Snapshot](t, ch, hangGuard) // caused by the bus's initial notify
	before := srv.Requests("whois")
	srv.Notify(ipn.Notify{PeerChangedPatch: []*tailcfg.PeerChange{{NodeID: 2, DERPRegion: 2}}})
	next[*probes.Snapshot](t, ch, hangGuard)
	if got := srv.Requests("whois") - before; got != 1 {
		t.Errorf("whois requests after a patch for one peer = %d, want 1", got)
	}
}

func TestSourcePingEvents(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := NewSource(NewClient(srv.Socket), SourceOptions{Interval: 50 * time.Millisecond})
	ch := src.Run(ctx)
	snap := next[*probes.Snapshot](t, ch, hangGuard)
	src.Ping(snap.Peers[0], probes.PingDISCO)
	pr := next[probes.PingResult](t, ch, hangGuard)
	want := probes.PingResult{PeerID: "n2CNTRL", Kind: probes.PingDISCO, Try: 1, Latency: 23100 * time.Microsecond, Via: "203.0.113.5:41641", Path: probes.PathDirect, Done: true}
	if diff := cmp.Diff(want, pr); diff != "" {
		t.Errorf("ping result (-want +got):\n%s", diff)
	}
	// The latency is carried into later snapshots.
	for range 20 {
		snap = next[*probes.Snapshot](t, ch, hangGuard)
		if snap.Peers[0].Latency == 23100*time.Microsecond {
			return
		}
	}
	t.Errorf("latency not carried into snapshots: %v", snap.Peers[0].Latency)
}

func TestSourcePingRunFeedsDiagnosis(t *testing.T) {
	old := pingGap
	pingGap = 5 * time.Millisecond
	t.Cleanup(func() { pingGap = old })
	srv := probestest.New(t, loadFixture(t, "unexplained")) // pongs always via DERP(nyc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := NewSource(NewClient(srv.Socket), SourceOptions{Interval: 50 * time.Millisecond})
	ch := src.Run(ctx)
	snap := next[*probes.Snapshot](t, ch, hangGuard)
	if got := snap.Peers[0].Verdict.Reason; got != probes.ReasonUnexplained {
		t.Fatalf("before the ping: reason %q, want unexplained", got)
	}
	src.Ping(snap.Peers[0], probes.PingDISCO)
	for {
		pr := next[probes.PingResult](t, ch, hangGuard)
		if pr.Done {
			if string(pr.Err) != probes.ErrNoDirect.Error() || pr.Try != probes.DefaultPingTries {
				t.Errorf("last result = %+v, want %q after %d tries", pr, probes.ErrNoDirect, probes.DefaultPingTries)
			}
			break
		}
		if pr.Via != "DERP(nyc)" || pr.Path != probes.PathDERP {
			t.Errorf("pong via %q (%q), want DERP(nyc)", pr.Via, pr.Path)
		}
	}
	snap = next[*probes.Snapshot](t, ch, hangGuard)
	p := snap.Peers[0]
	want := &probes.PingRun{Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
	if p.PingRun == nil {
		t.Fatal("no PingRun on the peer")
	}
	got := *p.PingRun
	got.At = time.Time{}
	if got.Latency <= 0 || got.Latency != p.Latency {
		t.Errorf("run's latency %v, peer's %v: want the last pong's round trip in both", got.Latency, p.Latency)
	}
	got.Latency = 0
	if diff := cmp.Diff(*want, got); diff != "" {
		t.Errorf("PingRun (-want +got):\n%s", diff)
	}
	if p.Verdict.Reason != probes.ReasonDiscoUnanswered {
		t.Errorf("after the ping: reason %q, want %q; checks %+v", p.Verdict.Reason, probes.ReasonDiscoUnanswered, p.Verdict.Checks)
	}
}

func TestConnectErrorNil(t *testing.T) {
	if ConnectError(nil, "x") != nil {
		t.Error("ConnectError(nil) != nil")
	}
	err := ConnectError(errors.New("boom"), "x")
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("ConnectError(boom) = %v", err)
	}
	// Gather already applies ConnectError; the Source applies it again.
	if again := ConnectError(err, "y"); again.Error() != err.Error() {
		t.Errorf("ConnectError applied twice = %q, want %q", again, err)
	}
}

func TestSourceRunTwice(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := NewSource(NewClient(srv.Socket), SourceOptions{})
	src.Run(ctx)
	if _, ok := <-src.Run(ctx); ok {
		t.Error("second Run's channel is open")
	}
}

// TestSourceNoGoroutineLeak runs a source through polls, a bus watcher, a
// ping and a daemon restart, then checks every goroutine it started is gone.
func TestSourceNoGoroutineLeak(t *testing.T) {
	old := pingGap
	pingGap = 5 * time.Millisecond
	t.Cleanup(func() { pingGap = old })
	base := runtime.NumGoroutine()
	srv := probestest.New(t, loadFixture(t, "unexplained"))
	ctx, cancel := context.WithCancel(context.Background())
	src := NewSource(NewClient(srv.Socket), SourceOptions{Interval: 20 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	ch := src.Run(ctx)
	snap := next[*probes.Snapshot](t, ch, hangGuard)
	src.Ping(snap.Peers[0], probes.PingDISCO) // 10 tries: still running when cancelled
	next[probes.PingResult](t, ch, hangGuard)
	srv.Stop()
	nextStatus(t, ch, false, hangGuard)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	nextStatus(t, ch, true, hangGuard)
	cancel()
	for range ch {
	}
	srv.Stop() // closes the client's idle connections from the server side
	deadline := time.Now().Add(hangGuard)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after the source ended, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// TestBusMaskAccepted: tailscaled validates the watch mask with
// ipn.ValidateNotifyWatchOpt (ipn/localapi serveWatchIPNBus answers 400
// otherwise); NotifyRateLimit beside the peer-change bits is refused.
func TestBusMaskAccepted(t *testing.T) {
	if err := ipn.ValidateNotifyWatchOpt(BusMask); err != nil {
		t.Fatalf("tailscaled would refuse BusMask %v: %v", BusMask, err)
	}
	if BusMask&ipn.NotifyPeerPatches == 0 {
		t.Errorf("BusMask %v lacks NotifyPeerPatches: peer endpoint and home DERP changes would not arrive", BusMask)
	}
	if BusMask&ipn.NotifyPeerWireGuardState == 0 {
		t.Errorf("BusMask %v lacks NotifyPeerWireGuardState: no-handshake would guess from Active", BusMask)
	}
	// Gather's own read of the bus's first message too.
	if err := ipn.ValidateNotifyWatchOpt(netmapMask); err != nil || netmapMask&ipn.NotifyPeerWireGuardState == 0 {
		t.Errorf("netmapMask %v: %v (want it accepted, with NotifyPeerWireGuardState)", netmapMask, err)
	}
}

// TestSourceBusRefusedIsAWarning: a watch tailscaled refuses (here a
// LocalAPI that answers 403) shows as a snapshot warning, not silence.
func TestSourceBusRefusedIsAWarning(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	srv.SetForbidden("watch-ipn-bus", true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := NewSource(NewClient(srv.Socket), SourceOptions{Interval: 50 * time.Millisecond}).Run(ctx)
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		snap := next[*probes.Snapshot](t, ch, hangGuard)
		for _, w := range snap.Warnings {
			if strings.HasPrefix(string(w), "IPN bus: ") && strings.Contains(string(w), "access denied") {
				return
			}
		}
	}
	t.Fatal("no snapshot warns that the IPN bus watch was refused")
}

// TestSourceMeasuresDERPLatency: with MeasureDERP set, snapshots carry the
// fresh measurement, so far-home-derp is judged (it is not on NetInfo's
// latencies of unknown age alone).
func TestSourceMeasuresDERPLatency(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "far-home-derp"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := make(chan *tailcfg.DERPMap, 4)
	measure := func(_ context.Context, dm *tailcfg.DERPMap) (*probes.DERPLatencyReport, error) {
		calls <- dm
		return &probes.DERPLatencyReport{At: time.Now(), ByRegion: map[int]time.Duration{
			1: 12 * time.Millisecond, 2: 85 * time.Millisecond, 3: 160 * time.Millisecond}}, nil
	}
	ch := NewSource(NewClient(srv.Socket), SourceOptions{Interval: 50 * time.Millisecond, MeasureDERP: measure}).Run(ctx)
	first := next[*probes.Snapshot](t, ch, hangGuard)
	if first.Self.DERPLatencyFrom != "netinfo" || hasReason(first.Peers[0].Verdict.Also, probes.ReasonFarHomeDERP) {
		t.Fatalf("first snapshot: latencies from %q, also %v; want NetInfo's, far not judged", first.Self.DERPLatencyFrom, first.Peers[0].Verdict.Also)
	}
	select {
	case dm := <-calls:
		if dm == nil || len(dm.Regions) != 4 {
			t.Fatalf("MeasureDERP got DERP map %+v, want the daemon's 4 regions", dm)
		}
	case <-time.After(hangGuard):
		t.Fatal("MeasureDERP was never called")
	}
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		snap := next[*probes.Snapshot](t, ch, hangGuard)
		if snap.Self.DERPLatencyFrom == "netcheck" {
			if !hasReason(snap.Peers[0].Verdict.Also, probes.ReasonFarHomeDERP) {
				t.Fatalf("fresh latencies but no far-home-derp: %+v", snap.Peers[0].Verdict)
			}
			if len(calls) != 0 {
				t.Errorf("MeasureDERP called again within %v", LatencyRefresh)
			}
			return
		}
	}
	t.Fatal("no snapshot used the measured latencies")
}

// refusingBus is a LocalAPI whose IPN bus answers 400, as tailscaled does
// for a mask it refuses (local.Client returns the bare status).
type refusingBus struct{ LocalClient }

func (refusingBus) WatchIPNBus(context.Context, ipn.NotifyWatchOpt) (*local.IPNBusWatcher, error) {
	return nil, errors.New("400 Bad Request")
}

// TestSourceBusMaskRefusedIsAWarning: the defect of issue 14 (a refused
// mask, retried in silence) now shows in every snapshot's warnings.
func TestSourceBusMaskRefusedIsAWarning(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "direct"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := NewSource(refusingBus{NewClient(srv.Socket)}, SourceOptions{Interval: 50 * time.Millisecond}).Run(ctx)
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		snap := next[*probes.Snapshot](t, ch, hangGuard)
		for _, w := range snap.Warnings {
			if strings.Contains(string(w), "IPN bus: tailscaled refused the watch request (400 Bad Request)") {
				return
			}
		}
	}
	t.Fatal("no snapshot says tailscaled refused the IPN bus watch")
}

// TestSourceProbe: Probe runs the Prober in the background, relays its
// progress, and the next snapshot carries the runs as PingRun, which the
// verdict reads (the dashboard's P).
func TestSourceProbe(t *testing.T) {
	srv := probestest.New(t, loadFixture(t, "unexplained"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var asked []string
	prober := func(_ context.Context, _ LocalClient, peers []probes.Peer, progress func(probes.ProbeProgress)) map[safetext.Text]*probes.PingRun {
		runs := map[safetext.Text]*probes.PingRun{}
		progress(probes.ProbeProgress{Total: len(peers)})
		for i, p := range peers {
			asked = append(asked, string(p.Name))
			runs[p.ID] = &probes.PingRun{At: time.Now(), Tries: 4, Pongs: 4, Via: "DERP(nyc)", Latency: 42 * time.Millisecond, Probe: true}
			progress(probes.ProbeProgress{Total: len(peers), Done: i + 1, Peer: p.Name})
		}
		progress(probes.ProbeProgress{Total: len(peers), Done: len(peers), Finished: true})
		return runs
	}
	src := NewSource(NewClient(srv.Socket), SourceOptions{Interval: time.Hour, Prober: prober})
	ch := src.Run(ctx)
	snap := next[*probes.Snapshot](t, ch, hangGuard)
	src.Probe(snap.Peers)
	for pp := next[probes.ProbeProgress](t, ch, hangGuard); !pp.Finished; pp = next[probes.ProbeProgress](t, ch, hangGuard) {
	}
	// Its poll is an hour away: the probe's end brings the snapshot.
	snap = next[*probes.Snapshot](t, ch, hangGuard)
	p := snap.Peers[0]
	if len(asked) != 1 || p.PingRun == nil || !p.PingRun.Probe || p.Verdict.Reason != probes.ReasonDiscoUnanswered {
		t.Errorf("asked %v; run %+v, reason %s; want the probe's run and disco-unanswered", asked, p.PingRun, p.Verdict.Reason)
	}
	if p.Latency != 42*time.Millisecond {
		t.Errorf("latency %v after the probe, want its last pong's 42ms", p.Latency)
	}
}

// TestSourceLatencyFollowsPath: a ping's round trip stays on the peer
// while the peer keeps the path it was measured on, across snapshots, and
// goes once the path changes (a direct ping's 3ms is not the relayed
// path's): it read as the current round trip while relayed again. A
// TSMP pong, which names no path, is tied to the first snapshot's path;
// a DISCO pong over DERP seen first on a stale snapshot waits for its
// path rather than dropping at once.
func TestSourceLatencyFollowsPath(t *testing.T) {
	snap := func(kind probes.PathKind) *probes.Snapshot {
		return &probes.Snapshot{Peers: []probes.Peer{{ID: "n1", Path: probes.Path{Kind: kind}}}}
	}
	for _, tc := range []struct {
		name  string
		pong  probes.PathKind
		paths []probes.PathKind
		want  []time.Duration
	}{
		{"direct pong, path goes relayed", probes.PathDirect,
			[]probes.PathKind{probes.PathDirect, probes.PathDirect, probes.PathDERP, probes.PathDirect},
			[]time.Duration{3 * time.Millisecond, 3 * time.Millisecond, 0, 0}},
		{"TSMP pong: the next snapshot's path", "",
			[]probes.PathKind{probes.PathDERP, probes.PathDERP, probes.PathDirect},
			[]time.Duration{3 * time.Millisecond, 3 * time.Millisecond, 0}},
		{"direct pong before the snapshot shows direct", probes.PathDirect,
			[]probes.PathKind{probes.PathDERP, probes.PathDirect, probes.PathDirect},
			[]time.Duration{3 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSource(nil, SourceOptions{})
			s.latency["n1"] = pingLatency{d: 3 * time.Millisecond, kind: tc.pong}
			carried := time.Duration(0) // what Gather carries over from the snapshot before
			for i, k := range tc.paths {
				sn := snap(k)
				sn.Peers[0].Latency = carried
				s.applyLatency(sn)
				if got := sn.Peers[0].Latency; got != tc.want[i] {
					t.Errorf("snapshot %d (%s): latency %v, want %v", i, k, got, tc.want[i])
				}
				carried = sn.Peers[0].Latency
			}
		})
	}
}
