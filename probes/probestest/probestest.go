// Package probestest serves a fake tailscaled LocalAPI on a real unix socket,
// answering from JSON fixtures, so probes and the status command can be
// tested end to end through the real tailscale.com/client/local.Client
// (HTTP, JSON decoding, error mapping) without a daemon.
//
// It answers GET /localapi/v0/status, /whois?addr=, /derpmap,
// /watch-ipn-bus, /debug-peer-endpoint-changes?ip=, /usermetrics,
// /metrics and POST /ping?ip=&type=. Faults: an endpoint can answer 403
// (permission), status can answer any raw body (malformed JSON), and Stop and
// Start simulate tailscaled going away and coming back on the same socket.
package probestest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"tailscale.com/ipn"

	"github.com/tailpath/tailpath/internal/tscompat"
)

// Fixture is one hand-written LocalAPI state, as stored in testdata/*.json.
type Fixture struct {
	// Comment describes the scenario; ignored.
	Comment string `json:"comment,omitempty"`
	// Status is the /localapi/v0/status reply (ipnstate.Status JSON).
	Status json.RawMessage `json:"status"`
	// WhoIs maps a Tailscale IP to its /whois reply (apitype.WhoIsResponse
	// JSON); an IP not listed answers 404.
	WhoIs map[string]json.RawMessage `json:"whois"`
	// DERPMap is the /derpmap reply (tailcfg.DERPMap JSON); empty answers 500.
	DERPMap json.RawMessage `json:"derpmap"`
	// EndpointChanges maps a Tailscale IP to its
	// /debug-peer-endpoint-changes reply (JSON array); absent IPs answer "null".
	EndpointChanges map[string]json.RawMessage `json:"endpoint_changes,omitempty"`
	// Ping maps a Tailscale IP to successive /ping replies
	// (ipnstate.PingResult JSON); the last one repeats. The JSON string
	// "hang" instead answers nothing until the client gives up (a ping
	// to a peer that never replies).
	Ping map[string][]json.RawMessage `json:"ping,omitempty"`
	// NetMap, when set, is the netmap (netmap.NetworkMap JSON: SelfNode,
	// Peers) the IPN bus's first message carries when the watcher asks
	// NotifyInitialNetMap, as tailscaled v1.102 sends it.
	NetMap json.RawMessage `json:"netmap,omitempty"`
	// Daemon is the tailscaled version whose IPN bus rules the server
	// follows: "" or Daemon102, or Daemon104 (refuses NotifyInitialNetMap
	// and NotifyRateLimit as v1.104 does; daemon.go).
	Daemon string `json:"daemon,omitempty"`
	// UserMetrics and Metrics, when set, are the /usermetrics and /metrics
	// replies (Prometheus text: tailscaled's user metrics and its
	// clientmetrics); unset answers 404, as a daemon that serves none.
	// Forbid("metrics") answers 403, as tailscaled does without write
	// permission.
	UserMetrics string `json:"usermetrics,omitempty"`
	Metrics     string `json:"metrics,omitempty"`
	// PeerState, when set, is the peers' WireGuard session states
	// (ipn.Notify.PeerState JSON) the bus's first message carries when the
	// watcher asks NotifyPeerWireGuardState.
	PeerState json.RawMessage `json:"peer_state,omitempty"`
}

// LoadFixture reads and checks a fixture file.
func LoadFixture(path string) (*Fixture, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f Fixture
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("fixture %s: %w", path, err)
	}
	if len(f.Status) == 0 {
		return nil, fmt.Errorf("fixture %s: no status", path)
	}
	return &f, nil
}

// Server is a fake LocalAPI on a unix socket.
type Server struct {
	// Socket is the unix socket path to give to tailscaled.NewClient.
	Socket string

	mu         sync.Mutex
	fix        *Fixture
	forbidden  map[string]bool // endpoint name ("status", "whois", …) → 403
	holds      map[string]<-chan struct{}
	statusBody []byte // overrides fix.Status when non-nil
	pingN      map[string]int
	requests   map[string]int
	srv        *http.Server
	buses      map[chan ipn.Notify]bool
}

// New starts a Server answering from fix on a fresh socket in a temporary
// directory and stops it when the test ends.
func New(t testing.TB, fix *Fixture) *Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "tpfake")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{
		Socket:    filepath.Join(dir, "tailscaled.sock"),
		fix:       fix,
		forbidden: map[string]bool{},
		pingN:     map[string]int{},
		requests:  map[string]int{},
		buses:     map[chan ipn.Notify]bool{},
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		os.RemoveAll(dir)
	})
	return s
}

// Start (re)starts serving on Socket. It fails if already running.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return errors.New("probestest: already running")
	}
	os.Remove(s.Socket)
	ln, err := net.Listen("unix", s.Socket)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(s.serve)}
	s.srv = srv
	go srv.Serve(ln)
	return nil
}

// Stop closes the listener and every connection (open IPN bus streams end
// with an error) and removes the socket file, like a stopped tailscaled.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	for ch := range s.buses {
		close(ch)
		delete(s.buses, ch)
	}
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
	os.Remove(s.Socket)
}

// SetFixture replaces the state served.
func (s *Server) SetFixture(fix *Fixture) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fix = fix
}

// SetForbidden makes endpoint ("status", "whois", "derpmap",
// "watch-ipn-bus", "ping") answer 403 like a LocalAPI without permission.
func (s *Server) SetForbidden(endpoint string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forbidden[endpoint] = on
}

// SetHold makes every request to endpoint ("watch-ipn-bus", "derpmap",
// "whois", …) wait until release is closed (or the request ends) before
// it is answered: a daemon slow to deliver the netmap, the DERP map or a
// node. A nil release answers at once again.
func (s *Server) SetHold(endpoint string, release <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == nil {
		s.holds = map[string]<-chan struct{}{}
	}
	s.holds[endpoint] = release
}

// SetStatusBody makes /status answer body verbatim (200); nil restores the fixture.
func (s *Server) SetStatusBody(body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statusBody = body
}

// Requests reports how many requests endpoint has answered.
func (s *Server) Requests(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[endpoint]
}

// Notify sends n to every open IPN bus stream.
func (s *Server) Notify(n ipn.Notify) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.buses {
		select {
		case ch <- n:
		default:
		}
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/localapi/v0/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.requests[name]++
	forbidden := s.forbidden[name]
	fix := s.fix
	statusBody := s.statusBody
	hold := s.holds[name]
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if forbidden {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"error":"%s access denied"}`+"\n", name)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch name {
	case "status":
		if statusBody != nil {
			w.Write(statusBody)
			return
		}
		w.Write(fix.Status)
	case "whois":
		addr := r.URL.Query().Get("addr")
		body, ok := fix.WhoIs[addr]
		if !ok {
			http.Error(w, `{"error":"no match for IP:port"}`, http.StatusNotFound)
			return
		}
		w.Write(body)
	case "derpmap":
		if len(fix.DERPMap) == 0 {
			http.Error(w, `{"error":"no derp map"}`, http.StatusInternalServerError)
			return
		}
		w.Write(fix.DERPMap)
	case "ping":
		if r.Method != "POST" {
			http.Error(w, "want POST", http.StatusMethodNotAllowed)
			return
		}
		ip := r.URL.Query().Get("ip")
		seq := fix.Ping[ip]
		if len(seq) == 0 {
			json.NewEncoder(w).Encode(map[string]string{"Err": "no matching peer"})
			return
		}
		s.mu.Lock()
		i := min(s.pingN[ip], len(seq)-1)
		s.pingN[ip]++
		s.mu.Unlock()
		if string(seq[i]) == `"hang"` {
			<-r.Context().Done()
			return
		}
		w.Write(seq[i])
	case "debug-peer-endpoint-changes":
		if b, ok := fix.EndpointChanges[r.URL.Query().Get("ip")]; ok {
			w.Write(b)
			return
		}
		w.Write([]byte("null\n"))
	case "watch-ipn-bus":
		s.serveBus(w, r)
	case "usermetrics", "metrics":
		text := fix.UserMetrics
		if name == "metrics" {
			text = fix.Metrics
		}
		if text == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(text))
	default:
		http.NotFound(w, r)
	}
}

// serveBus streams Notify messages as /localapi/v0/watch-ipn-bus does,
// refusing a mask the fixture's tailscaled version refuses (validateMask,
// 400), with a first message only for a mask asking for one.
func (s *Server) serveBus(w http.ResponseWriter, r *http.Request) {
	var mask ipn.NotifyWatchOpt
	if m := r.FormValue("mask"); m != "" {
		if err := mask.UnmarshalText([]byte(m)); err != nil {
			http.Error(w, "bad mask", http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	fix := s.fix
	s.mu.Unlock()
	if err := validateMask(fix, mask); err != nil {
		s.mu.Lock()
		s.requests["watch-ipn-bus refused"]++ // Requests counts them apart
		s.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ch := make(chan ipn.Notify, 8)
	s.mu.Lock()
	if s.srv == nil {
		s.mu.Unlock()
		return
	}
	s.buses[ch] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.buses[ch] {
			delete(s.buses, ch)
			close(ch)
		}
		s.mu.Unlock()
	}()
	enc := json.NewEncoder(w)
	if mask&(notifyInitialBits|tscompat.NotifyInitialNetMap) != 0 {
		first := struct {
			Version       string
			State         *ipn.State      `json:",omitempty"`
			InitialStatus json.RawMessage `json:",omitempty"`
			NetMap        json.RawMessage `json:",omitempty"`
			PeerState     json.RawMessage `json:",omitempty"`
		}{Version: "probestest", InitialStatus: initialStatus(fix, mask)}
		if mask&ipn.NotifyInitialState != 0 {
			first.State = new(ipn.Running)
		}
		if mask&ipn.NotifyPeerWireGuardState != 0 && len(fix.PeerState) > 0 {
			first.PeerState = fix.PeerState
			// The daemon's version says whether an empty PeerState means
			// "no sessions" (1.102 and later) or "not reported"; a
			// fixture without states leaves it unparsable ("probestest"),
			// so its peers' states stay unknown.
			var v struct{ Version string }
			if json.Unmarshal(fix.Status, &v) == nil && v.Version != "" {
				first.Version = v.Version
			}
		}
		if mask&tscompat.NotifyInitialNetMap != 0 { // refused by a v1.104 daemon (validateMask)
			first.NetMap = fix.NetMap
		}
		if err := enc.Encode(first); err != nil {
			return
		}
	}
	w.(http.Flusher).Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case n, ok := <-ch:
			if !ok {
				return
			}
			if err := enc.Encode(n); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}
