package app

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/net/tsaddr"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes/link"
	"github.com/tailpath/tailpath/probes/localapi"
)

// AllowSelf is the --allow word for the nodes of the user this node
// belongs to (tagged nodes are no one's: they match only their tags).
const AllowSelf = "self"

// Access decides who may read what `tailpath serve` serves:
//
//   - a caller on loopback is this machine's user and may read;
//   - a caller presenting the bearer Token may read, whoever it is
//     (Prometheus' authorization setting; a wrong token is refused);
//   - a caller with a Tailscale address is identified with LocalAPI WhoIs
//     (as tailscaled's own peerapi does, ipn/ipnlocal/peerapi.go) and may
//     read when Allow names it: AllowSelf (untagged nodes owned by the
//     user this node is owned by, or this node itself), a user's login
//     name, or "tag:name" (a node carrying that tag); 403 otherwise;
//   - anyone else is refused (401 when a token would let them in, else
//     403).
//
// Before any of that, the request's Host must name this server (the
// listen address, the connection's local address, localhost, or this
// node's MagicDNS name or Tailscale addresses): a browser page that
// rebinds its own name to 127.0.0.1 cannot read it (421).
type Access struct {
	// Allow lists who on the tailnet may read; nil means AllowSelf.
	Allow []string
	// Token, when not empty, is the bearer token that lets any caller read.
	Token string
	// ListenHost is the host part of the listen address (an IP literal or
	// "localhost"), accepted as Host.
	ListenHost string

	// client answers WhoIs; self gives this node's MagicDNS name and
	// addresses for the Host check (both set by Serve.Run).
	client localapi.LocalClient
	self   func() *link.Snapshot

	mu    sync.Mutex
	cache map[netip.Addr]whoisEntry
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

// whoisEntry is one cached WhoIs answer (res nil: not a tailnet node, or
// the LocalAPI failed: why).
type whoisEntry struct {
	res *apitype.WhoIsResponse
	why string
	at  time.Time
}

// whois identifies addr through the LocalAPI, with the cache.
func (a *Access) whois(ctx context.Context, addr netip.Addr) (*apitype.WhoIsResponse, string) {
	now := time.Now()
	a.mu.Lock()
	e, ok := a.cache[addr]
	a.mu.Unlock()
	if ok && now.Sub(e.at) < whoisTTL {
		return e.res, e.why
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := a.client.WhoIs(ctx, addr.String())
	e = whoisEntry{res: res, at: now}
	switch {
	case err != nil:
		e.res, e.why = nil, "tailscaled does not know it ("+err.Error()+")"
	case res == nil || res.Node == nil:
		e.res, e.why = nil, "tailscaled does not know it"
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

// allowed says whether caller (identified by WhoIs) may read, given
// this node's own WhoIs (nil when unknown); name and owner (its login,
// or its tags) name the caller.
func (a *Access) allowed(caller, self *apitype.WhoIsResponse) (ok bool, name, owner string) {
	n := caller.Node
	name = safetext.Clean(n.ComputedName)
	if name == "" {
		name = safetext.Clean(n.Name)
	}
	login := ""
	if !n.IsTagged() && caller.UserProfile != nil {
		login = caller.UserProfile.LoginName
	}
	switch {
	case n.IsTagged():
		owner = safetext.Clean(strings.Join(n.Tags, ", "))
	case login != "":
		owner = safetext.Clean(login)
	}
	who := name
	allow := a.Allow
	if allow == nil {
		allow = []string{AllowSelf}
	}
	for _, w := range allow {
		switch {
		case w == AllowSelf:
			if self != nil && self.Node != nil {
				if n.StableID == self.Node.StableID ||
					(!n.IsTagged() && !self.Node.IsTagged() && n.User != 0 && n.User == self.Node.User) {
					return true, who, owner
				}
			}
		case strings.HasPrefix(w, "tag:"):
			if slices.Contains(n.Tags, w) {
				return true, who, owner
			}
		default:
			if login != "" && strings.EqualFold(login, w) {
				return true, who, owner
			}
		}
	}
	return false, who, owner
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

func (a *Access) latest() *link.Snapshot {
	if a.self == nil {
		return nil
	}
	return a.self()
}

// errRefused carries the status and text a refused request gets.
type errRefused struct {
	code int
	msg  string
}

func (e *errRefused) Error() string { return e.msg }

// check decides r: nil to serve it, else the refusal.
func (a *Access) check(r *http.Request) *errRefused {
	var local netip.Addr
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(la.String()); err == nil {
			local = ap.Addr().Unmap()
		}
	}
	if !a.hostOK(r.Host, local) {
		return &errRefused{http.StatusMisdirectedRequest, fmt.Sprintf("Host %q is not this server: ask for it by its address, localhost, or this node's MagicDNS name (a page rebinding its own name to this machine cannot read it)", r.Host)}
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if ok && a.Token != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(a.Token)) == 1 {
			return nil
		}
		return &errRefused{http.StatusUnauthorized, "the bearer token is not the one in serve's --token-file"}
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return &errRefused{http.StatusForbidden, "unknown caller address"}
	}
	remote := ap.Addr().Unmap()
	if remote.IsLoopback() {
		return nil
	}
	refuse := func(why string) *errRefused {
		if a.Token != "" {
			return &errRefused{http.StatusUnauthorized, why + "; present serve's bearer token (--token-file) to read"}
		}
		return &errRefused{http.StatusForbidden, why + "; only this machine and the tailnet nodes --allow names may read (or give serve a --token-file and present the token)"}
	}
	if !tsaddr.IsTailscaleIP(remote) || a.client == nil {
		return refuse(fmt.Sprintf("%s is neither loopback nor a tailnet address", remote))
	}
	caller, why := a.whois(r.Context(), remote)
	if caller == nil {
		return refuse(fmt.Sprintf("%s: %s", remote, why))
	}
	var self *apitype.WhoIsResponse
	if local.IsValid() && tsaddr.IsTailscaleIP(local) {
		self, _ = a.whois(r.Context(), local)
	}
	if ok, name, owner := a.allowed(caller, self); !ok {
		allow := a.Allow
		if allow == nil {
			allow = []string{AllowSelf}
		}
		who := remote.String()
		if owner != "" {
			who = owner + ", " + who
		}
		return &errRefused{http.StatusForbidden, fmt.Sprintf("%s (%s) may not read: serve's --allow is %s", name, who, strings.Join(allow, ","))}
	}
	return nil
}

// Handler wraps h so that only requests check lets through reach it; the
// others get their status and a one-line JSON error.
func (a *Access) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e := a.check(r); e != nil {
			if e.code == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="tailpath serve"`)
			}
			writeJSON(w, e.code, map[string]string{"error": e.msg})
			return
		}
		h.ServeHTTP(w, r)
	})
}
