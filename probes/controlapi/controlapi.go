// Package controlapi reads the peers' own facts from the Tailscale control
// API (the tailnet's device list with clientConnectivity) through
// tailscale.com/client/tailscale/v2: ControlAPI.Fetch once, Refresher in
// the background for a long-running source (probes/tailscaled.Source). What
// it reads becomes probes.APIFacts, which probes matches against the
// netmap's peers. Credentials are APISecrets, which never print.
package controlapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
	tsapi "tailscale.com/client/tailscale/v2"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/secretfile"
	"github.com/tailpath/tailpath/probes"
)

// APISecret is a credential for the control API. It prints as
// "[redacted]" in every format, in JSON and in panics, so a key cannot
// reach output, logs or snapshots by accident; Reveal gives the value to
// the one place that sends it.
type APISecret struct{ v string }

// NewAPISecret wraps s (surrounding white space removed).
func NewAPISecret(s string) APISecret { return APISecret{strings.TrimSpace(s)} }

// Reveal returns the secret itself.
func (s APISecret) Reveal() string { return s.v }

// IsZero reports whether no secret is set.
func (s APISecret) IsZero() bool { return s.v == "" }

// String and GoString hide the value.
func (s APISecret) String() string   { return "[redacted]" }
func (s APISecret) GoString() string { return "[redacted]" }

// Format hides the value for every verb (%v, %+v, %#v, %s, %q, %x).
func (s APISecret) Format(f fmt.State, _ rune) { io.WriteString(f, "[redacted]") }

// MarshalJSON writes "[redacted]".
func (s APISecret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// DefaultAPIBaseURL is the public control API.
const DefaultAPIBaseURL = "https://api.tailscale.com"

// APIConfig is how to reach the Tailscale control API, named as the
// Tailscale Terraform provider names its settings. Either APIKey, or
// OAuthClientID and OAuthClientSecret (a client with the read-only
// devices:core:read scope is enough).
type APIConfig struct {
	APIKey            APISecret
	OAuthClientID     string
	OAuthClientSecret APISecret
	// Tailnet is the tailnet's name; "-" (the default) is the key's own.
	Tailnet string
	// BaseURL is the API's base URL; "" means DefaultAPIBaseURL.
	BaseURL string
	// HTTP is the client to use; nil means one with a 30 s timeout.
	HTTP *http.Client `json:"-"`
}

// Configured reports whether c has credentials.
func (c APIConfig) Configured() bool {
	return !c.APIKey.IsZero() || (c.OAuthClientID != "" && !c.OAuthClientSecret.IsZero())
}

// APIConfigFromEnv reads TAILSCALE_API_KEY, TAILSCALE_OAUTH_CLIENT_ID,
// TAILSCALE_OAUTH_CLIENT_SECRET, TAILSCALE_TAILNET and TAILSCALE_BASE_URL
// through getenv (os.Getenv). The result has no credentials
// (Configured false) when none are set; an OAuth client id without its
// secret, or the reverse, is an error naming the missing variable.
func APIConfigFromEnv(getenv func(string) string) (APIConfig, error) {
	c := APIConfig{
		APIKey:            NewAPISecret(getenv("TAILSCALE_API_KEY")),
		OAuthClientID:     strings.TrimSpace(getenv("TAILSCALE_OAUTH_CLIENT_ID")),
		OAuthClientSecret: NewAPISecret(getenv("TAILSCALE_OAUTH_CLIENT_SECRET")),
		Tailnet:           strings.TrimSpace(getenv("TAILSCALE_TAILNET")),
		BaseURL:           strings.TrimSpace(getenv("TAILSCALE_BASE_URL")),
	}
	switch {
	case c.OAuthClientID != "" && c.OAuthClientSecret.IsZero():
		return c, errors.New("TAILSCALE_OAUTH_CLIENT_ID is set but TAILSCALE_OAUTH_CLIENT_SECRET is not")
	case c.OAuthClientID == "" && !c.OAuthClientSecret.IsZero():
		return c, errors.New("TAILSCALE_OAUTH_CLIENT_SECRET is set but TAILSCALE_OAUTH_CLIENT_ID is not")
	}
	return c, nil
}

// ErrKeyFileOpen is returned (wrapped) by ReadAPIKeyFile for a key file
// that group or others may read.
var ErrKeyFileOpen = secretfile.ErrTooOpen

// ReadAPIKeyFile reads an API key from path (its first line) with
// secretfile.Read: it refuses anything but a regular file (a FIFO or
// /dev/null fails at once, never blocking), a link, a file owned by
// another user than this one or root, and one that group or others may
// read (mode & 0o077 != 0, except on Windows, where modes do not say so),
// saying how to fix it; and a file that is empty. The error never
// contains the file's content.
func ReadAPIKeyFile(path string) (APISecret, error) {
	s, err := secretfile.Read(path, "--api-key-file")
	if err != nil {
		return APISecret{}, err
	}
	return NewAPISecret(s), nil
}

// ControlAPI reads devices from the Tailscale control API through
// tailscale.com/client/tailscale/v2, with all fields (clientConnectivity
// among them). Fetch is safe for concurrent use; Refresher adds the
// once-a-minute schedule and back-off.
type ControlAPI struct {
	client  *tsapi.Client
	secrets []APISecret
	// clientID is the OAuth client's id ("" with an API key).
	clientID string

	scrubOnce sync.Once
	scrub     *secretScrubber
}

// NewControlAPI returns a client for cfg; it fails when cfg has no
// credentials or a BaseURL that does not parse.
func NewControlAPI(cfg APIConfig) (*ControlAPI, error) {
	if !cfg.Configured() {
		return nil, errors.New("control API: no credentials (set TAILSCALE_API_KEY, or TAILSCALE_OAUTH_CLIENT_ID and TAILSCALE_OAUTH_CLIENT_SECRET)")
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultAPIBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("control API: TAILSCALE_BASE_URL %q is not a URL like %s", base, DefaultAPIBaseURL)
	}
	if u.Scheme != "https" && !loopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("control API: TAILSCALE_BASE_URL %q is not https: the key would cross the network in clear (plain http is allowed to loopback only)", base)
	}
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	// A copy whose transport keeps the raw device list: v2 decodes
	// mappingVariesByDestIP and clientSupports as plain bool, which would
	// make "not reported" read as false.
	capHC := *hc
	base2 := hc.Transport
	if base2 == nil {
		base2 = http.DefaultTransport
	}
	capHC.Transport = &captureTransport{base: base2}
	c := &tsapi.Client{BaseURL: u, UserAgent: "tailpath", Tailnet: cfg.Tailnet, HTTP: &capHC}
	a := &ControlAPI{client: c}
	if !cfg.APIKey.IsZero() {
		c.APIKey = cfg.APIKey.Reveal()
		a.secrets = append(a.secrets, cfg.APIKey)
	} else {
		c.Auth = &oauthClient{id: cfg.OAuthClientID, secret: cfg.OAuthClientSecret}
		a.secrets = append(a.secrets, cfg.OAuthClientSecret)
		a.clientID = cfg.OAuthClientID
	}
	return a, nil
}

// loopbackHost reports whether host names this machine.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// oauthClient is the OAuth client-credentials flow for tsapi.Client, like
// tsapi.OAuth but fetching tokens through the same *http.Client as the
// API calls (its timeout and transport): tsapi.OAuth fetches them with
// http.DefaultClient, which has no timeout, so a token endpoint that never
// answers would hang the read for ever.
type oauthClient struct {
	id     string
	secret APISecret
}

// HTTPClient implements tsapi.Auth.
func (o *oauthClient) HTTPClient(orig *http.Client, baseURL string) *http.Client {
	cfg := clientcredentials.Config{
		ClientID:     o.id,
		ClientSecret: o.secret.Reveal(),
		Scopes:       []string{"devices:core:read"},
		TokenURL:     baseURL + "/api/v2/oauth/token",
	}
	tokenClient := &http.Client{Transport: orig.Transport, Timeout: orig.Timeout}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, tokenClient)
	return &http.Client{
		Transport: &oauth2.Transport{Base: orig.Transport, Source: oauth2.ReuseTokenSource(nil, cfg.TokenSource(ctx))},
		Timeout:   orig.Timeout,
	}
}

// captureKey keys the capture of one request in its context.
type captureKey struct{}

// capture is what captureTransport saw of one request.
type capture struct {
	status int
	body   []byte
}

// captureTransport keeps the body of a request whose context carries a
// *capture, and hands the client an identical copy.
type captureTransport struct{ base http.RoundTripper }

// maxDeviceList bounds a device list read (a tailnet of 10,000 devices
// with all fields is a few MiB).
const maxDeviceList = 64 << 20

func (t *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	c, _ := req.Context().Value(captureKey{}).(*capture)
	if err != nil || c == nil {
		return res, err
	}
	c.status = res.StatusCode
	b, rerr := io.ReadAll(io.LimitReader(res.Body, maxDeviceList))
	res.Body.Close()
	if rerr != nil {
		return nil, rerr
	}
	c.body = b
	res.Body = io.NopCloser(bytes.NewReader(b))
	return res, nil
}

// APIError is a failed control-API read; Status is the HTTP status (0 for
// a network error). Error() is actionable and never holds key material.
type APIError struct {
	Status int
	msg    string
}

func (e *APIError) Error() string { return e.msg }

// Retryable reports whether trying again later may help (429, 5xx, network).
func (e *APIError) Retryable() bool {
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Fetch lists the tailnet's devices with all fields and returns their
// facts for matching. Errors are *APIError: 401 (the key is invalid or
// expired), 403 (the credentials lack the devices:core:read scope), 404
// (no such tailnet), 429 and 5xx (retry later), network errors, or a reply
// that does not parse.
func (a *ControlAPI) Fetch(ctx context.Context) (*probes.APIFacts, error) {
	c := &capture{}
	_, err := a.client.Devices().List(context.WithValue(ctx, captureKey{}, c), tsapi.WithFields(tsapi.IncludeFieldsAll))
	if err != nil || c.status/100 != 2 {
		return nil, a.apiError(c.status, err)
	}
	facts, perr := parseDevices(c.body, time.Now())
	if perr != nil {
		return nil, &APIError{Status: c.status, msg: parseFailed + ": " + a.clean(perr.Error())}
	}
	return facts, nil
}

// apiError turns a failed read into an actionable *APIError: the words
// for its status (apiMessage), then what the API or the network said,
// scrubbed of the credentials (clean), in parentheses.
func (a *ControlAPI) apiError(status int, err error) *APIError {
	var ae tsapi.APIError
	if errors.As(err, &ae) && status == 0 {
		status = ae.Status
	}
	msg := apiMessage(status)
	if err != nil && status != http.StatusUnauthorized && status != http.StatusForbidden {
		if detail := a.clean(err.Error()); detail != "" {
			msg += " (" + truncate(detail, 160) + ")"
		}
	}
	return &APIError{Status: status, msg: msg}
}

// apiMessage is tailpath's own words for a failed read with HTTP status
// status (0: no answer), before any detail.
func apiMessage(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "control API: 401 Unauthorized: the API key or OAuth client is invalid, expired or revoked; create a read-only one (scope devices:core:read) and set TAILSCALE_API_KEY or TAILSCALE_OAUTH_CLIENT_ID/_SECRET"
	case status == http.StatusForbidden:
		return "control API: 403 Forbidden: the credentials may not list devices; an OAuth client needs the devices:core:read scope, an API key a user who may see the tailnet's devices"
	case status == http.StatusNotFound:
		return "control API: 404 Not Found: no such tailnet; TAILSCALE_TAILNET should be the tailnet's name, or \"-\" for the key's own"
	case status == http.StatusTooManyRequests:
		return "control API: 429 Too Many Requests: rate limited; retrying later"
	case status >= 500 && status <= 999:
		return "control API: " + strconv.Itoa(status) + " " + http.StatusText(status) + ": the API is failing; retrying later"
	case status >= 100 && status <= 999:
		return "control API: " + strconv.Itoa(status) + " " + http.StatusText(status)
	}
	return "control API: cannot reach it"
}

// parseFailed starts the error of a device list that does not parse.
const parseFailed = "control API: the device list did not parse"

// APIErrorSummary returns an APIStatus.Err without what the API or the
// network said (the part in parentheses, or a parse error's text): only
// tailpath's own words for the status remain. A redacted snapshot keeps
// this, since a misconfigured server may echo a request, credentials
// included, in its error body.
func APIErrorSummary(msg string) string {
	if msg == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(msg, "control API: "); ok && len(rest) >= 3 {
		if code, err := strconv.Atoi(rest[:3]); err == nil {
			if m := apiMessage(code); strings.HasPrefix(msg, m) {
				return m
			}
		}
	}
	for _, m := range []string{apiMessage(0), parseFailed} {
		if strings.HasPrefix(msg, m) {
			return m
		}
	}
	return "control API: failed (the details are left out of a redacted snapshot)"
}

// authRE finds HTTP credentials as a server may echo them: the scheme
// and its token ("Basic dHNrZXkt…", "Bearer …").
var authRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(basic|bearer)(\s+|%20|\+)[A-Za-z0-9+/_.~%-]+=*`)
})

// tskeyRE finds a Tailscale key or OAuth client secret by its prefix, in
// any case.
var tskeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)tskey-[a-z0-9_-]+`) })

// clean removes any credential from s and sanitises it: each secret in
// every form an echo may give it (secretScrubber: whole or in pieces,
// any case, hex, base64 of it or of a line holding it), any Basic or
// Bearer credential, and anything shaped like a Tailscale key.
func (a *ControlAPI) clean(s string) string {
	s = a.scrubber().scrub(s)
	s = authRE().ReplaceAllString(s, "$1 [redacted]")
	s = tskeyRE().ReplaceAllString(s, "[redacted]")
	return cleanString(s)
}

// scrubber is a's secrets' scrubber, made once.
func (a *ControlAPI) scrubber() *secretScrubber {
	a.scrubOnce.Do(func() {
		var secrets []string
		for _, sec := range a.secrets {
			secrets = append(secrets, sec.Reveal())
		}
		a.scrub = newSecretScrubber(secrets...)
	})
	return a.scrub
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// apiDevice is the part of the API's device (GET
// /api/v2/tailnet/{tailnet}/devices?fields=all) tailpath reads, with the
// booleans of clientConnectivity as pointers so that "not reported"
// stays apart from false.
type apiDevice struct {
	NodeID             string   `json:"nodeId"`
	Addresses          []string `json:"addresses"`
	ClientVersion      string   `json:"clientVersion"`
	UpdateAvailable    *bool    `json:"updateAvailable"`
	LastSeen           string   `json:"lastSeen"`
	ConnectedToControl *bool    `json:"connectedToControl"`
	ClientConnectivity *struct {
		Endpoints             []string `json:"endpoints"`
		MappingVariesByDestIP *bool    `json:"mappingVariesByDestIP"`
		Latency               map[string]struct {
			Preferred bool    `json:"preferred"`
			LatencyMs float64 `json:"latencyMs"`
		} `json:"latency"`
		ClientSupports *struct {
			HairPinning *bool `json:"hairPinning"`
			IPv6        *bool `json:"ipv6"`
			PCP         *bool `json:"pcp"`
			PMP         *bool `json:"pmp"`
			UDP         *bool `json:"udp"`
			UPnP        *bool `json:"upnp"`
		} `json:"clientSupports"`
	} `json:"clientConnectivity"`
}

// parseDevices decodes the API's {"devices": [...]} reply. A device's
// latencies are keyed by region *name* ("New York City"); they stay keyed
// so until APIFacts.Match maps them to codes. Outside strings are
// sanitised.
func parseDevices(body []byte, at time.Time) (*probes.APIFacts, error) {
	var doc struct {
		Devices []apiDevice `json:"devices"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	f := probes.NewAPIFacts(at, len(doc.Devices))
	for i := range doc.Devices {
		d := &doc.Devices[i]
		s := &probes.PeerSide{Source: probes.SourceControlAPI, At: at, ClientVersion: safetext.New(probes.ClientVersion(d.ClientVersion)), UpdateAvailable: d.UpdateAvailable}
		preferred := ""
		if t, err := time.Parse(time.RFC3339, d.LastSeen); err == nil && !(d.ConnectedToControl != nil && *d.ConnectedToControl) {
			s.LastSeen = t
		}
		if cc := d.ClientConnectivity; cc != nil {
			s.Endpoints = parseAddrs(cc.Endpoints)
			s.MappingVariesByDestIP = cc.MappingVariesByDestIP
			if cs := cc.ClientSupports; cs != nil {
				s.ClientSupports = probes.ClientSupports{UDP: cs.UDP, IPv6: cs.IPv6, HairPinning: cs.HairPinning, UPnP: cs.UPnP, PMP: cs.PMP, PCP: cs.PCP}
			}
			if len(cc.Latency) > 0 {
				s.DERPLatencyMs = make(map[string]float64, len(cc.Latency))
				for name, l := range cc.Latency {
					if l.LatencyMs <= 0 || l.LatencyMs > 3.6e6 {
						continue
					}
					key := cleanString(name)
					s.DERPLatencyMs[key] = l.LatencyMs
					if l.Preferred {
						preferred = key
					}
				}
			}
		}
		var addrs []netip.Addr
		for _, a := range d.Addresses {
			if ip, err := netip.ParseAddr(a); err == nil {
				addrs = append(addrs, ip)
			} else if p, err := netip.ParsePrefix(a); err == nil {
				addrs = append(addrs, p.Addr())
			}
		}
		f.Add(s, cleanString(d.NodeID), addrs, preferred)
	}
	return f, nil
}

// Refresher keeps APIFacts fresh for a long-running source: it fetches at
// most once per Interval, at once on Refresh, and after a retryable error
// backs off (doubling from Interval to 15 minutes). A 401/403/404 error is
// not retried until Refresh. Create with NewRefresher, start with Run.
type Refresher struct {
	api      *ControlAPI
	interval time.Duration
	poke     chan struct{}

	mu     sync.Mutex
	facts  *probes.APIFacts
	status probes.APIStatus
}

// DefaultAPIInterval is how often a Refresher reads the device list.
const DefaultAPIInterval = time.Minute

// NewRefresher returns a Refresher for api; interval 0 means DefaultAPIInterval.
func NewRefresher(api *ControlAPI, interval time.Duration) *Refresher {
	if interval <= 0 {
		interval = DefaultAPIInterval
	}
	return &Refresher{api: api, interval: interval, poke: make(chan struct{}, 1), status: probes.APIStatus{State: "pending"}}
}

// fetch reads the API within 30 s, returning when ctx ends even if the
// read does not (it then finishes on its own within its timeout).
func (r *Refresher) fetch(ctx context.Context) (*probes.APIFacts, error) {
	type result struct {
		facts *probes.APIFacts
		err   error
	}
	ch := make(chan result, 1)
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	go func() {
		defer cancel()
		facts, err := r.api.Fetch(fctx)
		ch <- result{facts, err}
	}()
	select {
	case res := <-ch:
		return res.facts, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Refresh asks for a fetch now (the dashboard's r key); it never blocks.
func (r *Refresher) Refresh() {
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// Latest returns the last facts read (nil before the first success) and
// the source's status.
func (r *Refresher) Latest() (*probes.APIFacts, probes.APIStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.facts, r.status
}

// Run fetches until ctx ends, calling updated (if not nil) after every
// fetch, successful or not. It returns when ctx ends.
func (r *Refresher) Run(ctx context.Context, updated func()) {
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.poke:
		case <-time.After(wait):
		}
		facts, err := r.fetch(ctx)
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		switch {
		case err == nil:
			r.facts = facts
			r.status = probes.APIStatus{State: "ok", At: facts.At}
			wait = r.interval
		default:
			st := r.status
			st.State, st.Err = "error", safetext.Of(err)
			r.status = st
			var ae *APIError
			switch {
			case errors.As(err, &ae) && !ae.Retryable():
				wait = 24 * time.Hour // until Refresh
			case wait < r.interval:
				wait = r.interval
			default:
				wait = min(2*wait, 15*time.Minute)
			}
		}
		r.mu.Unlock()
		if updated != nil {
			updated()
		}
	}
}

// parseAddrs parses endpoint strings ("ip:port"), skipping any that do not
// parse.
func parseAddrs(ss []string) []netip.AddrPort {
	var out []netip.AddrPort
	for _, s := range ss {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			out = append(out, ap)
		}
	}
	return out
}

// cleanString sanitises one outside string.
func cleanString(s string) string { return safetext.Clean(s) }
