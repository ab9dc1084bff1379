package app

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// whoisClient answers WhoIs from a table, counting the calls.
type whoisClient struct {
	tailscaled.LocalClient
	nodes map[string]*apitype.WhoIsResponse
	calls atomic.Int64
}

func (c *whoisClient) WhoIs(_ context.Context, addr string) (*apitype.WhoIsResponse, error) {
	c.calls.Add(1)
	if r, ok := c.nodes[addr]; ok {
		return r, nil
	}
	return nil, local.ErrPeerNotFound
}

func node(id, name string, user tailcfg.UserID, login string, tags ...string) *apitype.WhoIsResponse {
	return &apitype.WhoIsResponse{
		Node:        &tailcfg.Node{StableID: tailcfg.StableNodeID(id), Name: name + ".tail1234.ts.net.", ComputedName: name, User: user, Tags: tags},
		UserProfile: &tailcfg.UserProfile{ID: user, LoginName: login},
	}
}

func withAddr(r *apitype.WhoIsResponse, ip string) *apitype.WhoIsResponse {
	r.Node.Addresses = []netip.Prefix{netip.PrefixFrom(netip.MustParseAddr(ip), 32)}
	return r
}

// TestAccess: who may read serve's endpoints, and under which Host.
func TestAccess(t *testing.T) {
	const (
		self    = "100.64.0.1"
		mine    = "100.64.0.2" // another node of this node's user
		theirs  = "100.64.0.3" // another user's
		monitor = "100.64.0.4" // tag:monitoring, created by this node's user
		unknown = "100.64.0.99"
		// Loopback callers tailscaled registered: connections it forwarded
		// from theirs and mine (userspace networking).
		fwdTheirs = "127.0.0.1:41001"
		fwdMine   = "127.0.0.1:41002"
		lan       = "192.168.1.9"
		token     = "s3cret-token"
		magicDNS  = "nas.tail1234.ts.net"
	)
	c := &whoisClient{nodes: map[string]*apitype.WhoIsResponse{
		self:      node("nSELF", "nas", 1, "alice@example.com"),
		mine:      node("nMINE", "laptop", 1, "alice@example.com"),
		theirs:    node("nTHEIRS", "bobs-pc", 2, "bob@example.com"),
		fwdTheirs: withAddr(node("nTHEIRS", "bobs-pc", 2, "bob@example.com"), theirs),
		fwdMine:   node("nMINE", "laptop", 1, "alice@example.com"),
		monitor:   node("nMON", "prometheus", 1, "alice@example.com", "tag:monitoring"),
	}}
	latest := &join.Snapshot{Snapshot: &probes.Snapshot{Self: probes.Self{DNSName: magicDNS, TailscaleIPs: []netip.Addr{netip.MustParseAddr(self)}}}}
	for _, tt := range []struct {
		name   string
		allow  []string
		token  string
		remote string // caller address
		local  string // the connection's local address
		host   string
		auth   string
		want   int
		says   string
	}{
		{"loopback", nil, "", "127.0.0.1", "127.0.0.1", "127.0.0.1:9473", "", 200, ""},
		{"loopback, forwarded from another user's node", nil, "", fwdTheirs, "127.0.0.1", "127.0.0.1:9473", "", 403, "bobs-pc (bob@example.com, 100.64.0.3 through tailscaled) may not read this server"},
		{"loopback, forwarded from another user's node, by MagicDNS name", nil, "", fwdTheirs, "127.0.0.1", magicDNS + ":9473", "", 403, "may not read"},
		{"loopback, forwarded from this user's node", nil, "", fwdMine, "127.0.0.1", self + ":9473", "", 200, ""},
		{"loopback, forwarded, login allowed", []string{"bob@example.com"}, "", fwdTheirs, "127.0.0.1", "127.0.0.1:9473", "", 200, ""},
		{"loopback, forwarded, with the token", nil, token, fwdTheirs, "127.0.0.1", "127.0.0.1:9473", "Bearer " + token, 200, ""},
		{"loopback as localhost", nil, "", "127.0.0.1", "127.0.0.1", "localhost:9473", "", 200, ""},
		{"loopback IPv6", nil, "", "::1", "::1", "[::1]:9473", "", 200, ""},
		{"DNS rebinding", nil, "", "127.0.0.1", "127.0.0.1", "rebind.attacker.example:9473", "", 421, "is not this server"},
		{"no Host", nil, "", "127.0.0.1", "127.0.0.1", "", "", 421, "is not this server"},
		{"self: this user's node", nil, "", mine, self, self + ":9473", "", 200, ""},
		{"self: by MagicDNS name", nil, "", mine, self, magicDNS + ":9473", "", 200, ""},
		{"self: by short name", nil, "", mine, self, "nas:9473", "", 200, ""},
		{"self: this node", nil, "", self, self, self + ":9473", "", 200, ""},
		{"self: another user's node", nil, "", theirs, self, self + ":9473", "", 403, "bobs-pc (bob@example.com, 100.64.0.3) may not read this server"},
		{"self: a tagged node", nil, "", monitor, self, self + ":9473", "", 403, "prometheus (tag:monitoring, 100.64.0.4) may not read"},
		{"login allowed", []string{"bob@example.com"}, "", theirs, self, self + ":9473", "", 200, ""},
		{"login not allowed", []string{"carol@example.com"}, "", theirs, self, self + ":9473", "", 403, "may not read"},
		{"login allowed, not self", []string{"bob@example.com"}, "", mine, self, self + ":9473", "", 403, "may not read"},
		{"tag allowed", []string{"tag:monitoring"}, "", monitor, self, self + ":9473", "", 200, ""},
		{"tag not a login", []string{"alice@example.com"}, "", monitor, self, self + ":9473", "", 403, "may not read"},
		{"unknown tailnet address", nil, "", unknown, self, self + ":9473", "", 403, "tailscaled does not know it"},
		{"LAN caller", nil, "", lan, "192.168.1.5", "192.168.1.5:9473", "", 403, "neither loopback nor a tailnet address"},
		{"LAN caller, token configured", nil, token, lan, "192.168.1.5", "192.168.1.5:9473", "", 401, "bearer token"},
		{"LAN caller with the token", nil, token, lan, "192.168.1.5", "192.168.1.5:9473", "Bearer " + token, 200, ""},
		{"LAN caller with a wrong token", nil, token, lan, "192.168.1.5", "192.168.1.5:9473", "Bearer nope", 401, "not the one"},
		{"other user with the token", nil, token, theirs, self, self + ":9473", "Bearer " + token, 200, ""},
		{"loopback with a wrong token", nil, token, "127.0.0.1", "127.0.0.1", "127.0.0.1:9473", "Bearer nope", 401, "not the one"},
		{"token but no token file", nil, "", lan, "192.168.1.5", "192.168.1.5:9473", "Bearer " + token, 401, "not the one"},
		{"rebinding with the token", nil, token, lan, "192.168.1.5", "evil.example", "Bearer " + token, 421, "is not this server"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &Access{Allow: tt.allow, Token: tt.token, ListenHost: "0.0.0.0", client: c, self: func() *join.Snapshot { return latest }}
			served := false
			h := a.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served = true }))
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Host = tt.host
			if ap, err := netip.ParseAddrPort(tt.remote); err == nil {
				req.RemoteAddr = ap.String()
			} else {
				req.RemoteAddr = netip.AddrPortFrom(netip.MustParseAddr(tt.remote), 40000).String()
			}
			local := &net.TCPAddr{IP: net.ParseIP(tt.local), Port: 9473}
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.Addr(local)))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want || served != (tt.want == 200) || !strings.Contains(rec.Body.String(), tt.says) {
				t.Errorf("%d (served %v) %q; want %d saying %q", rec.Code, served, rec.Body.String(), tt.want, tt.says)
			}
			// A refusal names the caller, never who else may read.
			if rec.Code == http.StatusForbidden {
				own := ""
				if n := c.nodes[tt.remote]; n != nil {
					own = n.UserProfile.LoginName + " " + strings.Join(n.Node.Tags, " ")
				}
				for _, a := range append([]string{"--allow is", AllowSelf + ","}, tt.allow...) {
					if strings.Contains(rec.Body.String(), a) && !strings.Contains(own, a) {
						t.Errorf("the refusal %q tells the caller %q", rec.Body.String(), a)
					}
				}
			}
		})
	}
}

// TestAccessCachesWhoIs: a scraper asking every 15 s costs one WhoIs per
// minute, not one per request.
func TestAccessCachesWhoIs(t *testing.T) {
	c := &whoisClient{nodes: map[string]*apitype.WhoIsResponse{
		"100.64.0.1": node("nSELF", "nas", 1, "alice@example.com"),
		"100.64.0.2": node("nMINE", "laptop", 1, "alice@example.com"),
	}}
	a := &Access{client: c}
	h := a.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 10 {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Host, req.RemoteAddr = "100.64.0.1:9473", "100.64.0.2:40000"
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.Addr(&net.TCPAddr{IP: net.ParseIP("100.64.0.1"), Port: 9473})))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	}
	if n := c.calls.Load(); n != 2 {
		t.Errorf("%d WhoIs calls for 10 requests, want 2 (the caller and this node, once each)", n)
	}
}

func TestParseAllow(t *testing.T) {
	for in, want := range map[string]string{
		"self":                            "self",
		"self, alice@example.com,tag:mon": "self alice@example.com tag:mon",
		"alice@github":                    "alice@github",
	} {
		got, err := ParseAllow(in)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("ParseAllow(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "alice", "tag:", "@example.com", "everyone", "a@b@c"} {
		if _, err := ParseAllow(bad); err == nil {
			t.Errorf("ParseAllow(%q) accepted", bad)
		}
	}
}

// failingWhoIs answers every WhoIs with err.
type failingWhoIs struct {
	tailscaled.LocalClient
	err   error
	calls atomic.Int64
}

func (c *failingWhoIs) WhoIs(context.Context, string) (*apitype.WhoIsResponse, error) {
	c.calls.Add(1)
	return nil, c.err
}

// TestAccessLoopbackUnidentified: a loopback caller is this machine's
// only when tailscaled says it forwarded nothing from there. While
// tailscaled cannot be asked, it is local only if tailscaled answered
// before (it is down, and forwards nothing); never reached (a wrong
// --socket beside a running tailscaled), or failing otherwise, it gets
// 503. A local request that came through a proxy is no local caller.
func TestAccessLoopbackUnidentified(t *testing.T) {
	notRunning := &net.OpError{Op: "dial", Net: "unix", Err: syscall.ENOENT}
	for _, tt := range []struct {
		name    string
		err     error
		reached bool
		header  string
		want    int
		says    string
	}{
		{"tailscaled never reached", notRunning, false, "", 503, "cannot tell whether this loopback caller"},
		{"tailscaled down after running", notRunning, true, "", 200, ""},
		{"tailscaled failing", errors.New("500 Internal Server Error"), true, "", 503, "cannot tell"},
		{"not registered, through tailscale serve", local.ErrPeerNotFound, true, "Tailscale-User-Login: bob@example.com", 403, "came through a proxy"},
		{"not registered, through funnel", local.ErrPeerNotFound, true, "Tailscale-Funnel-Request: ?1", 403, "came through a proxy"},
		{"not registered, through a reverse proxy", local.ErrPeerNotFound, true, "X-Forwarded-For: 203.0.113.9", 403, "came through a proxy"},
		{"not registered", local.ErrPeerNotFound, false, "", 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &Access{client: &failingWhoIs{err: tt.err}, ListenHost: "127.0.0.1"}
			if tt.reached {
				a.noteUp()
			}
			h := a.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Host, req.RemoteAddr = "127.0.0.1:9473", "127.0.0.1:40000"
			if k, v, ok := strings.Cut(tt.header, ": "); ok {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want || !strings.Contains(rec.Body.String(), tt.says) {
				t.Errorf("%d %q; want %d saying %q", rec.Code, rec.Body.String(), tt.want, tt.says)
			}
		})
	}
}

// TestAccessLoopbackOncePerConnection: serve asks tailscaled about a
// loopback caller once per connection (its identity cannot change while
// the connection lasts), and again for a new connection (its port may be
// a forwarded flow's now).
func TestAccessLoopbackOncePerConnection(t *testing.T) {
	c := &whoisClient{nodes: map[string]*apitype.WhoIsResponse{}}
	a := &Access{client: c, ListenHost: "127.0.0.1"}
	srv := httptest.NewUnstartedServer(a.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	srv.Config.ConnContext = a.ConnContext
	srv.Start()
	defer srv.Close()
	get := func(hc *http.Client) {
		t.Helper()
		res, err := hc.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	hc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	for range 5 {
		get(hc)
	}
	if n := c.calls.Load(); n != 1 {
		t.Errorf("%d WhoIs calls for 5 requests on one connection, want 1", n)
	}
	get(&http.Client{Transport: &http.Transport{}})
	if n := c.calls.Load(); n != 2 {
		t.Errorf("%d WhoIs calls after a second connection, want 2", n)
	}
}
