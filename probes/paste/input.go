package paste

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// fetchTimeout bounds fetching one http(s) input (another node's
// `tailpath serve` /snapshot.json).
const fetchTimeout = 20 * time.Second

// maxRedirects is how many redirects fetching an input follows.
const maxRedirects = 3

// fetchClient fetches --from and --peer-snapshot URLs. It follows a
// redirect only to the same host and port (http on port 80 may move to
// https on 443), never from https to http, and at most maxRedirects
// times: a redirect elsewhere would make tailpath a blind request
// forger into whatever the serving machine can name, its answer's first
// line quoted back in the error.
var fetchClient = &http.Client{CheckRedirect: checkRedirect}

// redirectError is a redirect fetchClient refused.
type redirectError struct{ msg string }

func (e redirectError) Error() string { return e.msg }

// checkRedirect is fetchClient's redirect policy.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first, prev, next := via[0].URL, via[len(via)-1].URL, req.URL
	switch {
	case len(via) > maxRedirects:
		return redirectError{fmt.Sprintf("more than %d redirects; refused (give the final URL)", maxRedirects)}
	case prev.Scheme == "https" && next.Scheme != "https":
		return redirectError{fmt.Sprintf("redirected from https to %s://%s; refused (that would drop TLS)", next.Scheme, next.Host)}
	case !sameOrigin(first, next):
		return redirectError{fmt.Sprintf("redirected to %s://%s, another host or port; refused (only %s is asked; give the URL it redirects to if you trust it)", next.Scheme, next.Host, first.Host)}
	}
	return nil
}

// sameOrigin reports whether b names a's host and port (an upgrade from
// http:80 to https:443 included).
func sameOrigin(a, b *url.URL) bool {
	if !strings.EqualFold(a.Hostname(), b.Hostname()) {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if u.Scheme == "https" {
			return "443"
		}
		return "80"
	}
	pa, pb := port(a), port(b)
	return pa == pb || (a.Scheme == "http" && pa == "80" && b.Scheme == "https" && pb == "443")
}

// ReadInput reads one input of `tailpath status --from` or --peer-snapshot of at most
// MaxSize bytes: a file, "-" (stdin), or an http:// or https://
// URL (another node's `tailpath serve` /snapshot.json, fetched within
// fetchTimeout with fetchClient's redirect policy; a status other than
// 200 is an error quoting the body's first line, sanitised as the status
// line is).
func ReadInput(ctx context.Context, name string, stdin io.Reader) (Raw, error) {
	var r io.Reader
	if strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://") {
		ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, name, nil)
		if err != nil {
			return Raw{}, err
		}
		resp, err := fetchClient.Do(req)
		if err != nil {
			var re redirectError
			if errors.As(err, &re) {
				return Raw{}, fmt.Errorf("%s: %s", name, safetext.Clean(re.Error()))
			}
			return Raw{}, fmt.Errorf("%s (is tailpath serve running there, listening on an address this machine reaches? serve listens on loopback unless --listen names another)", safetext.Clean(err.Error()))
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			first, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			line, _, _ := strings.Cut(string(first), "\n")
			return Raw{}, fmt.Errorf("%s: %s: %s", name, safetext.Clean(resp.Status), safetext.Clean(line))
		}
		r = resp.Body
	} else if name == "-" {
		if stdin == nil {
			return Raw{}, errors.New(`"-" (stdin) is only for --from`)
		}
		r = stdin
	} else {
		fh, err := os.Open(name)
		if err != nil {
			return Raw{}, err
		}
		defer fh.Close()
		if fi, err := fh.Stat(); err == nil && fi.IsDir() {
			// Said in words, not by the read ("adir: read adir: is a directory").
			orStdin := ""
			if stdin != nil {
				orStdin = ", or - for stdin"
			}
			return Raw{}, fmt.Errorf("%s is a directory; pass a file (a snapshot, or pasted tailscale output)%s", name, orStdin)
		}
		r = fh
	}
	b, err := io.ReadAll(io.LimitReader(r, snapshot.MaxSize+1))
	if err != nil {
		return Raw{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > snapshot.MaxSize {
		return Raw{}, fmt.Errorf("%s: %w (more than %d MiB)", name, snapshot.ErrTooLarge, snapshot.MaxSize>>20)
	}
	return Raw{Name: name, Data: b}, nil
}
