package app

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/net/tsaddr"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// AllowSelf is the --allow word for the nodes of the user this node
// belongs to (tagged nodes are no one's: they match only their tags).
const AllowSelf = "self"

// Access decides who may read what `tailpath serve` serves:
//
//   - a caller presenting the bearer Token may read, whoever it is
//     (Prometheus' authorization setting; a wrong token is refused);
//   - every other caller is identified with LocalAPI WhoIs (as
//     tailscaled's own peerapi does, ipn/ipnlocal/peerapi.go): a caller
//     with a Tailscale address by that address, a caller on loopback by
//     its address and port. With userspace networking tailscaled's
//     netstack hands a tailnet connection to this node's address to
//     127.0.0.1:port (wgengine/netstack/netstack.go acceptTCP, the
//     isTailscaleIP case) and registers the loopback address and port it
//     dialed from as that peer (forwardTCP, RegisterIPPortIdentity), so
//     WhoIs of the caller's loopback address names the real node
//     (ipn/ipnlocal/local.go WhoIs, through the ProxyMapper). A node,
//     however it arrives, may read when Allow or Scraper names it:
//     AllowSelf (untagged nodes owned by the user this node is owned by,
//     or this node itself), a user's login name, or "tag:name" (a node
//     carrying that tag); 403 otherwise;
//   - a loopback caller tailscaled did not register is this machine's
//     user and may read, unless its request came through a proxy
//     (tailscale serve's or funnel's identity headers, X-Forwarded-For,
//     Forwarded): whoever the proxy serves is no local caller. While
//     tailscaled cannot be asked, a loopback caller is local only if
//     tailscaled was reached before at this socket (it is down, so it
//     forwards nothing); otherwise 503 (but /healthz, which says why);
//   - anyone else is refused (401 when a token would let them in, else
//     403).
//
// Before any of that, the request's Host must name this server (the
// listen address, the connection's local address, localhost, or this
// node's MagicDNS name or Tailscale addresses): a browser page that
// rebinds its own name to 127.0.0.1 cannot read it (421).
//
// A caller let in then takes a slot of its request budget (budget):
// the token's bearers and the Scraper nodes are Prometheus and have a
// budget of their own; every other caller may have callerInFlight
// requests in flight, all of them together othersInFlight.
type Access struct {
	// Allow lists who on the tailnet may read; nil means AllowSelf.
	Allow []string
	// Scraper lists the tailnet nodes that are Prometheus (ParseAllow's
	// syntax): they may read, and their requests have the scrapers'
	// budget, which no other caller can use up.
	Scraper []string
	// Token, when not empty, is the bearer token that lets any caller
	// read, with the scrapers' budget.
	Token string
	// ListenHost is the host part of the listen address (an IP literal or
	// "localhost"), accepted as Host.
	ListenHost string

	// client answers WhoIs; self gives this node's MagicDNS name and
	// addresses for the Host check and its own identity (both set by
	// Serve.Run).
	client tailscaled.LocalClient
	self   func() *join.Snapshot

	// reached is set once tailscaled answered at client's socket.
	reached atomic.Bool

	mu    sync.Mutex
	cache map[netip.Addr]whoisEntry

	budget budget
}

// ParseAllow checks a comma-separated --allow list: AllowSelf, a login
// (name@domain) or tag:name.
func ParseAllow(s string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		switch {
		case a == "":
			continue
		case a == AllowSelf:
		case strings.HasPrefix(a, "tag:") && len(a) > len("tag:") && !strings.ContainsAny(a, " @"):
		case strings.Count(a, "@") == 1 && !strings.HasPrefix(a, "@") && !strings.ContainsAny(a, " "):
		default:
			return nil, fmt.Errorf("%q: want %q (nodes of this node's user), a user's login (alice@example.com) or a tag (tag:monitoring)", a, AllowSelf)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty: want %q, logins or tags, comma-separated", AllowSelf)
	}
	return out, nil
}

// whoisTTL is how long a caller's WhoIs answer is reused: a scraper asks
// every 15 s or so, and a node's owner and tags rarely change.
const whoisTTL = time.Minute

// maxWhoisCache bounds the cache (it is emptied when full).
const maxWhoisCache = 1024

// whoisTimeout bounds one WhoIs.
const whoisTimeout = 5 * time.Second

// whoisEntry is one cached WhoIs answer (res nil: not a tailnet node, or
// the LocalAPI failed: why).
type whoisEntry struct {
	res *apitype.WhoIsResponse
	why string
	at  time.Time
}

// noteUp records that tailscaled answered at the client's socket (serve's
// source saw it up, or a WhoIs got an answer).
func (a *Access) noteUp() { a.reached.Store(true) }

// whois identifies addr (a Tailscale IP) through the LocalAPI, with the
// cache.
func (a *Access) whois(ctx context.Context, addr netip.Addr) (*apitype.WhoIsResponse, string) {
	now := time.Now()
	a.mu.Lock()
	e, ok := a.cache[addr]
	a.mu.Unlock()
	if ok && now.Sub(e.at) < whoisTTL {
		return e.res, e.why
	}
	ctx, cancel := context.WithTimeout(ctx, whoisTimeout)
	defer cancel()
	res, err := a.client.WhoIs(ctx, addr.String())
	e = whoisEntry{res: res, at: now}
	switch {
	case err != nil:
		e.res, e.why = nil, "tailscaled does not know it ("+safetext.Clean(err.Error())+")"
	case res == nil || res.Node == nil:
		e.res, e.why = nil, "tailscaled does not know it"
	}
	if err == nil || errors.Is(err, local.ErrPeerNotFound) {
		a.noteUp()
	}
	if err != nil && ctx.Err() != nil {
		return e.res, e.why // not cached: tailscaled was slow, not sure
	}
	a.mu.Lock()
	if a.cache == nil || len(a.cache) >= maxWhoisCache {
		a.cache = map[netip.Addr]whoisEntry{}
	}
	a.cache[addr] = e
	a.mu.Unlock()
	return e.res, e.why
}

// whoisProto is the LocalAPI's WhoIs for one protocol (local.Client has
// it): a loopback caller is asked as TCP only, so that a UDP flow
// tailscaled forwarded from the same port is not taken for it.
type whoisProto interface {
	WhoIsProto(ctx context.Context, proto, remoteAddr string) (*apitype.WhoIsResponse, error)
}

// connKey is the context key of a connection's connIdent (ConnContext).
type connKey struct{}

// connIdent is who a loopback connection is, once known: a connection's
// caller cannot change while it lasts, and tailscaled's registration of a
// forwarded one lasts as long (forwardTCP unregisters it when the
// connection ends), so one WhoIs serves every request on it.
type connIdent struct {
	mu    sync.Mutex
	known bool
	res   *apitype.WhoIsResponse // nil: not registered, a local caller
}

// ConnContext is serve's http.Server.ConnContext: it gives each connection
// the place its loopback caller's identity is kept.
func (a *Access) ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &connIdent{})
}

// loopbackKind is what a loopback caller turned out to be.
type loopbackKind int

const (
	loopbackLocal   loopbackKind = iota // tailscaled registered no tailnet flow there
	loopbackNode                        // a tailnet connection tailscaled forwarded
	loopbackUnknown                     // tailscaled could not be asked
)

// identifyLoopback asks tailscaled whether ap (a loopback caller's address
// and port) is a connection it forwarded from the tailnet: the node, or
// local, or unknown with why.
func (a *Access) identifyLoopback(ctx context.Context, ap netip.AddrPort) (loopbackKind, *apitype.WhoIsResponse, string) {
	if a.client == nil {
		return loopbackLocal, nil, "" // no tailscaled to forward anything (tests)
	}
	ci, _ := ctx.Value(connKey{}).(*connIdent)
	if ci != nil {
		ci.mu.Lock()
		defer ci.mu.Unlock()
		if ci.known {
			if ci.res != nil {
				return loopbackNode, ci.res, ""
			}
			return loopbackLocal, nil, ""
		}
	}
	wctx, cancel := context.WithTimeout(ctx, whoisTimeout)
	defer cancel()
	var res *apitype.WhoIsResponse
	var err error
	if wp, ok := a.client.(whoisProto); ok {
		res, err = wp.WhoIsProto(wctx, "tcp", ap.String())
	} else {
		res, err = a.client.WhoIs(wctx, ap.String())
	}
	switch {
	case err == nil && res != nil && res.Node != nil:
		a.noteUp()
	case err == nil || errors.Is(err, local.ErrPeerNotFound):
		a.noteUp()
		res = nil
	case errors.Is(tailscaled.ConnectError(err, ""), tailscaled.ErrNotRunning) && a.reached.Load():
		// tailscaled was reached here before and is down now: it
		// forwards nothing, so the caller is local. Not kept: it may be
		// back by the next request.
		return loopbackLocal, nil, ""
	default:
		return loopbackUnknown, nil, safetext.Clean(tailscaled.ConnectError(err, "").Error())
	}
	if ci != nil {
		ci.known, ci.res = true, res
	}
	if res != nil {
		return loopbackNode, res, ""
	}
	return loopbackLocal, nil, ""
}

// proxyHeaders are the request headers a proxy in front of serve adds:
// tailscale serve's and funnel's identity headers
// (ipn/ipnlocal/serve.go addTailscaleIdentityHeaders,
// addProxyForwardedHeaders) and any reverse proxy's. A loopback caller
// carrying one is the proxy, serving someone else.
var proxyHeaders = []string{"Tailscale-User-Login", "Tailscale-User-Name", "Tailscale-Funnel-Request", "Tailscale-Headers-Info", "X-Forwarded-For", "Forwarded"}

// matches says whether the node caller (identified by WhoIs) is one list
// names, given this node's own WhoIs (nil when unknown).
func matches(list []string, caller, self *apitype.WhoIsResponse) bool {
	n := caller.Node
	login := ""
	if !n.IsTagged() && caller.UserProfile != nil {
		login = caller.UserProfile.LoginName
	}
	for _, w := range list {
		switch {
		case w == AllowSelf:
			if self != nil && self.Node != nil {
				if n.StableID == self.Node.StableID ||
					(!n.IsTagged() && !self.Node.IsTagged() && n.User != 0 && n.User == self.Node.User) {
					return true
				}
			}
		case strings.HasPrefix(w, "tag:"):
			if slices.Contains(n.Tags, w) {
				return true
			}
		default:
			if login != "" && strings.EqualFold(login, w) {
				return true
			}
		}
	}
	return false
}

// describe names a node caller for a refusal: its name and its owner (its
// login, or its tags).
func describe(caller *apitype.WhoIsResponse) (name, owner string) {
	n := caller.Node
	name = safetext.Clean(n.ComputedName)
	if name == "" {
		name = safetext.Clean(n.Name)
	}
	switch {
	case n.IsTagged():
		owner = safetext.Clean(strings.Join(n.Tags, ", "))
	case caller.UserProfile != nil && caller.UserProfile.LoginName != "":
		owner = safetext.Clean(caller.UserProfile.LoginName)
	}
	return name, owner
}

// hostOK reports whether host (a request's Host, with or without a port)
// names this server: the listen host, the connection's local address,
// localhost, or this node's MagicDNS name (full or its first label) or
// Tailscale addresses.
func (a *Access) hostOK(host string, local netip.Addr) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if host == "localhost" || (a.ListenHost != "" && host == strings.ToLower(strings.Trim(a.ListenHost, "[]"))) {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if ip == local {
			return true
		}
		if ls := a.latest(); ls != nil && slices.Contains(ls.Self.TailscaleIPs, ip) {
			return true
		}
		return false
	}
	if ls := a.latest(); ls != nil && ls.Self.DNSName != "" {
		dns := strings.ToLower(strings.TrimSuffix(string(ls.Self.DNSName), "."))
		first, _, _ := strings.Cut(dns, ".")
		return host == dns || host == first
	}
	return false
}

func (a *Access) latest() *join.Snapshot {
	if a.self == nil {
		return nil
	}
	return a.self()
}

// selfWhoIs is this node's own WhoIs: of the address the connection
// arrived on when that is a Tailscale address, else of this node's first
// Tailscale address as the latest snapshot gives it (a connection
// tailscaled forwarded arrives on loopback); nil when unknown.
func (a *Access) selfWhoIs(ctx context.Context, local netip.Addr) *apitype.WhoIsResponse {
	if local.IsValid() && tsaddr.IsTailscaleIP(local) {
		self, _ := a.whois(ctx, local)
		return self
	}
	if ls := a.latest(); ls != nil {
		for _, ip := range ls.Self.TailscaleIPs {
			if self, _ := a.whois(ctx, ip); self != nil {
				return self
			}
		}
	}
	return nil
}

// errRefused carries the status and text a refused request gets.
type errRefused struct {
	code int
	msg  string
}

func (e *errRefused) Error() string { return e.msg }

// caller is who a request let in comes from, for its budget.
type caller struct {
	// key names the caller: "token", "local", or "node:" and its
	// stable id.
	key string
	// scraper: Prometheus (the token, or a Scraper node).
	scraper bool
}

// check decides r: the caller to serve it for, or the refusal.
func (a *Access) check(r *http.Request) (caller, *errRefused) {
	var local netip.Addr
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(la.String()); err == nil {
			local = ap.Addr().Unmap()
		}
	}
	if !a.hostOK(r.Host, local) {
		return caller{}, &errRefused{http.StatusMisdirectedRequest, fmt.Sprintf("Host %q is not this server: ask for it by its address, localhost, or this node's MagicDNS name (a page rebinding its own name to this machine cannot read it)", safetext.Clean(r.Host))}
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if ok && a.Token != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(a.Token)) == 1 {
			return caller{key: "token", scraper: true}, nil
		}
		return caller{}, &errRefused{http.StatusUnauthorized, "the bearer token is not the one in serve's --token-file"}
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return caller{}, &errRefused{http.StatusForbidden, "unknown caller address"}
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	remote := ap.Addr()
	refuse := func(why string) *errRefused {
		if a.Token != "" {
			return &errRefused{http.StatusUnauthorized, why + "; present serve's bearer token (--token-file) to read"}
		}
		return &errRefused{http.StatusForbidden, why + "; only this machine and the tailnet nodes --allow names may read (or give serve a --token-file and present the token)"}
	}
	var node *apitype.WhoIsResponse
	switch {
	case remote.IsLoopback():
		kind, res, why := a.identifyLoopback(r.Context(), ap)
		switch kind {
		case loopbackUnknown:
			if r.URL.Path == "/healthz" {
				// Which sources are up, and tailscaled's socket: what
				// whoever runs serve needs to see why it cannot tell.
				return caller{key: "local"}, nil
			}
			return caller{}, &errRefused{http.StatusServiceUnavailable, "cannot tell whether this loopback caller is this machine's or a tailnet peer tailscaled forwarded: " + why + "; try again, or present serve's bearer token (--token-file)"}
		case loopbackLocal:
			for _, h := range proxyHeaders {
				if r.Header.Get(h) != "" {
					return caller{}, refuse("this request came through a proxy on this machine (it carries " + h + "), so its caller is not this machine's user: tailscale serve and funnel hide who asks")
				}
			}
			return caller{key: "local"}, nil
		}
		node = res
	case tsaddr.IsTailscaleIP(remote) && a.client != nil:
		res, why := a.whois(r.Context(), remote)
		if res == nil {
			return caller{}, refuse(fmt.Sprintf("%s: %s", remote, why))
		}
		node = res
	default:
		return caller{}, refuse(fmt.Sprintf("%s is neither loopback nor a tailnet address", remote))
	}
	self := a.selfWhoIs(r.Context(), local)
	c := caller{key: "node:" + string(node.Node.StableID)}
	allow := a.Allow
	if allow == nil {
		allow = []string{AllowSelf}
	}
	switch {
	case matches(a.Scraper, node, self):
		c.scraper = true
		return c, nil
	case matches(allow, node, self):
		return c, nil
	case self == nil && (slices.Contains(allow, AllowSelf) || slices.Contains(a.Scraper, AllowSelf)):
		return caller{}, &errRefused{http.StatusServiceUnavailable, "this node's own identity is not known yet (tailscaled has not answered serve); try again"}
	}
	name, owner := describe(node)
	who := remote.String()
	if remote.IsLoopback() {
		who = "through tailscaled"
		if len(node.Node.Addresses) > 0 {
			who = node.Node.Addresses[0].Addr().String() + " " + who
		}
	}
	if owner != "" {
		who = owner + ", " + who
	}
	// Only the caller's own identity: serve's --allow is not a stranger's
	// to read.
	return caller{}, &errRefused{http.StatusForbidden, fmt.Sprintf("%s (%s) may not read this server; ask its owner to add you to serve's --allow", name, who)}
}

// Handler wraps h so that only requests check lets through reach it,
// each within its caller's budget; the others get their status and a
// one-line JSON error.
func (a *Access) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, e := a.check(r)
		if e == nil {
			var release func()
			release, e = a.budget.take(c)
			if e == nil {
				defer release()
				h.ServeHTTP(w, r)
				return
			}
		}
		switch e.code {
		case http.StatusUnauthorized:
			w.Header().Set("WWW-Authenticate", `Bearer realm="tailpath serve"`)
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", "1")
		}
		writeJSON(w, e.code, map[string]string{"error": e.msg})
	})
}
