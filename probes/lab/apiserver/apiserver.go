// Package apiserver is the lab's stand-in for the Tailscale control API: a
// small HTTP server speaking the part of it tailpath reads: GET
// /api/v2/tailnet/{tailnet}/devices (with fields=all, clientConnectivity
// included) behind an API key (HTTP basic auth, the key as user name) or an
// OAuth client (POST /api/v2/oauth/token, client credentials). The JSON
// follows the API's documentation. The lab serves one on loopback so the demo
// shows both ends of a path without an account; tests use it to inject the
// API's failures (401, 403, 429, 5xx, a slow answer).
package apiserver

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Device is one device as the API lists it with fields=all (the fields
// tailpath reads, plus the identifying ones). Pointer fields are omitted
// when nil, as the API omits what a client never reported.
type Device struct {
	Addresses          []string            `json:"addresses"`
	ID                 string              `json:"id"`
	NodeID             string              `json:"nodeId"`
	User               string              `json:"user,omitempty"`
	Name               string              `json:"name"`
	Hostname           string              `json:"hostname"`
	ClientVersion      string              `json:"clientVersion,omitempty"`
	UpdateAvailable    *bool               `json:"updateAvailable,omitempty"`
	OS                 string              `json:"os,omitempty"`
	LastSeen           string              `json:"lastSeen,omitempty"`
	ConnectedToControl *bool               `json:"connectedToControl,omitempty"`
	ClientConnectivity *ClientConnectivity `json:"clientConnectivity,omitempty"`
}

// ClientConnectivity is the device's own report of its network.
type ClientConnectivity struct {
	Endpoints             []string           `json:"endpoints"`
	DERP                  string             `json:"derp"`
	MappingVariesByDestIP *bool              `json:"mappingVariesByDestIP,omitempty"`
	Latency               map[string]Latency `json:"latency,omitempty"`
	ClientSupports        *ClientSupports    `json:"clientSupports,omitempty"`
}

// Latency is the device's round trip to one DERP region, keyed by the
// region's name in ClientConnectivity.Latency.
type Latency struct {
	Preferred bool    `json:"preferred,omitempty"`
	LatencyMs float64 `json:"latencyMs"`
}

// ClientSupports is what the device's client can use.
type ClientSupports struct {
	HairPinning *bool `json:"hairPinning,omitempty"`
	IPv6        *bool `json:"ipv6,omitempty"`
	PCP         *bool `json:"pcp,omitempty"`
	PMP         *bool `json:"pmp,omitempty"`
	UDP         *bool `json:"udp,omitempty"`
	UPnP        *bool `json:"upnp,omitempty"`
}

// Server answers the device list. Its zero value is not usable: build
// with New.
type Server struct {
	key, clientID, clientSecret string

	mu      sync.Mutex
	devices []Device
	source  func() []Device // when set, the device list at each request
	// overrides change listed devices by host name at each request.
	overrides []override
	status    int           // when non-zero, every devices request fails with it
	delay     time.Duration // before every devices answer
	served    int
	tokens    map[string]bool
}

// New returns a server that accepts the API key apiKey and the OAuth
// client clientID/clientSecret ("" disables either).
func New(apiKey, clientID, clientSecret string) *Server {
	return &Server{key: apiKey, clientID: clientID, clientSecret: clientSecret, tokens: map[string]bool{}}
}

// SetDevices replaces the device list.
func (s *Server) SetDevices(ds []Device) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.devices = append([]Device(nil), ds...)
}

type override struct {
	host string
	f    func(*Device)
}

// SetSource makes every request list what f returns at that moment (the
// lab builds its devices from the nodes' live state); Update's changes
// apply on top.
func (s *Server) SetSource(f func() []Device) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.source = f
}

// Update changes, in every later answer, the listed device whose
// hostname is host with f; it reports whether such a device is listed now.
func (s *Server) Update(host string, f func(*Device)) bool {
	s.mu.Lock()
	s.overrides = append(s.overrides, override{host, f})
	devs, source := s.devices, s.source
	s.mu.Unlock()
	if source != nil {
		devs = source()
	}
	for _, d := range devs {
		if d.Hostname == host {
			return true
		}
	}
	return false
}

// Fail makes every devices request answer status (401, 403, 429, 500, …)
// with the API's error JSON; 0 restores normal answers.
func (s *Server) Fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// SetDelay holds every devices answer for d.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Served is how many devices requests were answered (any status).
func (s *Server) Served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/api/v2/oauth/token" && r.Method == http.MethodPost:
		s.serveToken(w, r)
	case strings.HasPrefix(r.URL.Path, "/api/v2/tailnet/") && strings.HasSuffix(r.URL.Path, "/devices") && r.Method == http.MethodGet:
		s.serveDevices(w, r)
	default:
		apiError(w, http.StatusNotFound, "not found")
	}
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		r.ParseForm()
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if s.clientID == "" || !equal(id, s.clientID) || !equal(secret, s.clientSecret) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"invalid_client"}`))
		return
	}
	tok := "tok-" + time.Now().Format("150405.000000000")
	s.mu.Lock()
	s.tokens[tok] = true
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": "devices:core:read"})
}

func (s *Server) authorized(r *http.Request) bool {
	if user, _, ok := r.BasicAuth(); ok && s.key != "" && equal(user, s.key) {
		return true
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.tokens[tok]
	}
	return false
}

func (s *Server) serveDevices(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.served++
	status, delay, source := s.status, s.delay, s.source
	devs := cloneDevices(s.devices)
	overrides := append([]override(nil), s.overrides...)
	s.mu.Unlock()
	if source != nil {
		devs = source()
	}
	for _, o := range overrides {
		for i := range devs {
			if devs[i].Hostname == o.host {
				o.f(&devs[i])
			}
		}
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if !s.authorized(r) {
		apiError(w, http.StatusUnauthorized, "API token invalid")
		return
	}
	if status != 0 {
		apiError(w, status, http.StatusText(status))
		return
	}
	if r.URL.Query().Get("fields") != "all" {
		for i := range devs {
			devs[i].ClientConnectivity = nil
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"devices": devs})
}

// cloneDevices copies ds deeply enough for overrides to change the copy.
func cloneDevices(ds []Device) []Device {
	out := make([]Device, len(ds))
	for i, d := range ds {
		if cc := d.ClientConnectivity; cc != nil {
			c := *cc
			if cs := cc.ClientSupports; cs != nil {
				x := *cs
				c.ClientSupports = &x
			}
			d.ClientConnectivity = &c
		}
		out[i] = d
	}
	return out
}

func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// Bool returns a pointer to b, for the optional fields.
func Bool(b bool) *bool { return &b }
