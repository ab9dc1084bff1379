package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/metrics"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// ServeTuningInterval is how often `tailpath serve` re-reads the host's
// tuning and tailnet TCP connections: a sock_diag dump costs a few
// milliseconds, and the buffers change when someone tunes them.
const ServeTuningInterval = 15 * time.Second

// Serve is everything one run of `tailpath serve` is wired from: the
// dashboard's sources (tailscaled, optionally a board, the control API
// and the host's tuning), run headless, their latest values kept in a
// metrics.Store that every scrape reads.
type Serve struct {
	// Sources are what serve runs: tailscaled (Client), the control API's
	// peer side, a board (DeviceRetry 0 means ServeBoardRetry) and the
	// host's tuning (TuningEvery 0 means ServeTuningInterval; Linux).
	Sources
	// PingEvery is how often each active peer (direct, peer relay or
	// DERP) gets one TSMP ping for tailpath_peer_ping_latency_seconds,
	// one peer at a time; 0 pings nobody. Idle peers are never pinged:
	// that would make them active and change the path being reported.
	PingEvery time.Duration
	// MaxPeers caps the peers with per-peer series (metrics.Options).
	MaxPeers int
	// Snapshot renders /snapshot.json; nil serves 404 there (--no-snapshot).
	// It is called at most once per new joined snapshot and once per
	// SnapshotEvery, however often the endpoint is fetched, and may
	// gather afresh with ctx (the request's).
	Snapshot func(ctx context.Context, in SnapshotInput) ([]byte, error)
	// SnapshotEvery is the shortest time between two Snapshot calls; 0
	// means DefaultSnapshotEvery.
	SnapshotEvery time.Duration
	// Access decides who may read every endpoint, and each caller's
	// request budget; nil means this machine's users and the nodes of
	// this node's user (AllowSelf), no token.
	Access *Access
	// Log receives a line whenever a source goes down or comes back; nil
	// discards them.
	Log io.Writer

	// store, access and peerSide (the control API's reader, nil without
	// ControlAPI) are set by Run.
	store    *metrics.Store
	access   *Access
	peerSide *controlapi.Refresher
}

// DefaultSnapshotEvery is how often /snapshot.json may capture afresh:
// between captures it serves the last one.
const DefaultSnapshotEvery = 10 * time.Second

// SnapshotInput is what /snapshot.json is made from: the sources' newest
// values.
type SnapshotInput struct {
	// Latest is the newest joined snapshot (tailscaled's, with the
	// board's evidence and the path changes observed).
	Latest *join.Snapshot
	// Tuning is the newest tuning report, TuningErr why there is none;
	// both nil without tuning.
	Tuning    *tune.Report
	TuningErr error
	// Latency is serve's own ping round trips by peer id (--ping-every).
	Latency map[safetext.Text]time.Duration
}

// Run serves /metrics, /snapshot.json and /healthz on ln and runs the
// sources until ctx ends, then shuts the server down (waiting up to 5 s
// for scrapes in flight) and stops the sources. Call it once. It
// returns the server's error if it stops for another reason. The sources
// coming and going (tailscaled restarting, the board unplugged) never
// stop it: the metrics say so.
func (s *Serve) Run(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.store = &metrics.Store{}
	if s.Device != nil {
		s.store.ExpectBoard()
	}
	if s.Tuning != nil {
		s.store.ExpectTuning()
	}
	reg := metrics.NewRuntimeRegistry()
	gatherer := metrics.NewGatherer(s.store, metrics.Options{MaxPeers: s.MaxPeers, Extra: reg})

	acc := s.Access
	if acc == nil {
		acc = &Access{}
	}
	acc.client = s.Client
	acc.self = func() *join.Snapshot { ls, _ := s.store.Snapshot(); return ls }
	if acc.ListenHost == "" {
		if ap, err := netip.ParseAddrPort(ln.Addr().String()); err == nil {
			acc.ListenHost = ap.Addr().Unmap().String()
		}
	}
	s.access = acc

	// The dashboard's tailscaled source: its poll, fresh DERP latencies
	// every 10 minutes, the control API's peer side.
	sopts := s.TailscaledOptions()
	s.peerSide = sopts.PeerSide
	src := tailscaled.NewSource(s.Client, sopts)
	srcs := s.Sources
	if srcs.DeviceRetry <= 0 {
		srcs.DeviceRetry = ServeBoardRetry
	}
	if srcs.TuningEvery <= 0 {
		srcs.TuningEvery = ServeTuningInterval
	}
	var wg sync.WaitGroup
	joiner := join.Joiner{Poll: true}
	wg.Go(func() { srcs.Run(ctx, src, &joiner, &serveSink{s: s}) })
	if s.PingEvery > 0 {
		wg.Go(func() { s.pingLoop(ctx) })
	}

	srv := &http.Server{
		Handler:           acc.Handler(s.mux(metrics.Handler(gatherer, reg))),
		ConnContext:       acc.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(sctx)
		scancel()
		<-served
	case err = <-served:
		err = fmt.Errorf("serve: %w", err)
	}
	cancel()
	wg.Wait()
	return err
}

// logf writes one line to s.Log.
func (s *Serve) logf(format string, a ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "tailpath serve: "+format+"\n", a...)
	}
}

// serveSink keeps the sources' newest values in serve's metrics store,
// logging when tailscaled, the board or the tuning goes down and comes
// back.
type serveSink struct {
	s *Serve

	mu         sync.Mutex
	up, seen   bool   // tailscaled's last state, once one was seen
	boardLog   string // the last line logged about the board
	tuningFail bool
}

// Deliver routes each source's report to the store (app.Sink).
func (k *serveSink) Deliver(ev Event) {
	switch ev := ev.(type) {
	case JoinedEvent:
		k.s.store.SetSnapshot(ev.Snapshot)
	case TailscaledEvent:
		k.tailscaled(ev.Event)
	case BoardEvent:
		k.board(ev.Event, ev.Evidence)
	case TuningEvent:
		k.tuning(ev.Reading)
	}
}

// tailscaled stores tailscaled's source's status and logs its changes.
func (k *serveSink) tailscaled(ev probes.Event) {
	st, ok := ev.(probes.SourceStatus)
	if !ok {
		return // serve pings on its own (pingLoop); no dashboard ping runs here
	}
	k.s.store.SetSource(st)
	if st.Up {
		k.s.access.noteUp()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if st.Up != k.up || !k.seen {
		if st.Up {
			k.s.logf("tailscaled up")
		} else {
			k.s.logf("tailscaled down: %s (retrying; tailpath_tailscaled_up is 0)", st.Err)
		}
	}
	k.up, k.seen = st.Up, true
}

// ServeBoardRetry is how often `tailpath serve` tries again to open a
// board that could not be opened at all (not plugged in yet, no board
// found for "auto", permission denied); once open, devlink.Link reopens
// it by itself after an unplug.
const ServeBoardRetry = 2 * time.Second

// board stores the board's state and logs its changes.
func (k *serveSink) board(ev devlink.Event, evidence probes.DeviceEvidence) {
	st := &ev.State
	k.s.store.SetBoard(st, evidence)
	msg := "board down (tailpath_board_up is 0)"
	switch {
	case ev.Err != nil:
		msg = fmt.Sprintf("board down: %s; trying again every %v (tailpath_board_up is 0)", ev.ErrText(), ServeBoardRetry)
	case st.Link.Up:
		msg = "board up on " + st.Link.Port.String()
	case st.Link.Err != nil:
		msg = fmt.Sprintf("board down: %s (tailpath_board_up is 0)", st.Link.ErrText())
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if msg != k.boardLog {
		k.s.logf("%s", msg)
		k.boardLog = msg
	}
}

// tuning stores a tuning reading and logs when it fails or recovers.
func (k *serveSink) tuning(r tune.Reading) {
	k.s.store.SetTuning(r.Report, r.Err)
	k.mu.Lock()
	defer k.mu.Unlock()
	if (r.Err != nil) != k.tuningFail {
		k.tuningFail = r.Err != nil
		if k.tuningFail {
			k.s.logf("tuning: %s (tailpath_tuning_up is 0)", r.ErrText())
		} else {
			k.s.logf("tuning readable again")
		}
	}
}

// pingTimeout bounds one latency ping.
const pingTimeout = 5 * time.Second

// pingLoop pings each active peer of the newest snapshot once every
// PingEvery, one at a time, and stores the round trips.
func (s *Serve) pingLoop(ctx context.Context) {
	for {
		start := time.Now()
		ls, _ := s.store.Snapshot()
		if ls == nil {
			// No snapshot yet, or tailscaled is down: look again soon.
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for i := range ls.Peers {
			p := ls.Peers[i]
			if k := p.Path.Kind; k != probes.PathDirect && k != probes.PathDERP && k != probes.PathPeerRelay {
				continue
			}
			pctx, cancel := context.WithTimeout(ctx, pingTimeout+time.Second)
			tailscaled.Ping(pctx, s.Client, p, probes.PingTSMP, 1, pingTimeout, func(r probes.PingResult) {
				if r.Err == "" && r.Latency > 0 {
					s.store.SetLatency(p.ID, r.Latency)
				}
			})
			cancel()
			if ctx.Err() != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(s.PingEvery-time.Since(start), time.Second)):
		}
	}
}

// mux routes serve's endpoints.
func (s *Serve) mux(metricsHandler http.Handler) http.Handler {
	m := http.NewServeMux()
	m.Handle("GET /metrics", metricsHandler)
	m.HandleFunc("GET /healthz", s.healthz)
	var snapMu sync.Mutex
	var lastSnap *join.Snapshot
	var lastBody []byte
	var lastAt time.Time
	every := s.SnapshotEvery
	if every <= 0 {
		every = DefaultSnapshotEvery
	}
	m.HandleFunc("GET /snapshot.json", func(w http.ResponseWriter, r *http.Request) {
		if s.Snapshot == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "/snapshot.json is off (tailpath serve --no-snapshot)"})
			return
		}
		ls, why := s.store.Snapshot()
		if ls == nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "no snapshot: " + why})
			return
		}
		// A snapshot is taken once per joined snapshot and at most once per
		// SnapshotEvery, however often it is fetched (one at a time).
		snapMu.Lock()
		body := lastBody
		var err error
		if lastBody == nil || (ls != lastSnap && time.Since(lastAt) >= every) {
			in := SnapshotInput{Latest: ls}
			in.Tuning, in.TuningErr = s.store.Tuning()
			in.Latency = s.store.Latencies()
			body, err = s.Snapshot(r.Context(), in)
			if err == nil {
				lastSnap, lastBody, lastAt = ls, body, time.Now()
			}
		}
		snapMu.Unlock()
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, serveIndex)
	})
	return m
}

const serveIndex = `tailpath serve: this node's tailnet paths, board and TCP tuning

/metrics        Prometheus metrics (OpenMetrics when asked; see docs/metrics.md)
/snapshot.json  this node's snapshot
/healthz        200 while tailpath serve runs; which sources are up, as JSON
`

// healthz answers 200 while serve runs (a source being down is what the
// metrics report, not a reason to restart serve), with each source's
// state as JSON.
func (s *Serve) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.store.Health())
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
