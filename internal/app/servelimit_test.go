package app

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tailscale.com/client/tailscale/apitype"

	"github.com/tailpath/tailpath/internal/metrics"
)

// slowReader is a ResponseWriter whose caller never reads: the first
// Write blocks until release is closed, as a handler writing to a
// connection whose far end stopped reading blocks until the write
// timeout.
type slowReader struct {
	h       http.Header
	code    int
	release <-chan struct{}
	blocked *atomic.Int64
}

func (w *slowReader) Header() http.Header { return w.h }
func (w *slowReader) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *slowReader) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	if w.code == 200 {
		w.blocked.Add(1)
		<-w.release
	}
	return len(b), nil
}

// TestServeBudgetFlood: one caller floods serve with requests it never
// reads while Prometheus scrapes. The flood holds only its own caller's
// slots (the rest of it gets 429), and every scrape of Prometheus (the
// token's bearer, a --scraper node) and of another allowed caller is
// served. Counted, never timed.
func TestServeBudgetFlood(t *testing.T) {
	const (
		self    = "100.64.0.1"
		mine    = "100.64.0.2"
		theirs  = "100.64.0.3"
		monitor = "100.64.0.4"
		token   = "s3cret-token"
		flood   = 20
		scrapes = 30
	)
	c := &whoisClient{nodes: map[string]*apitype.WhoIsResponse{
		self:    node("nSELF", "nas", 1, "alice@example.com"),
		mine:    node("nMINE", "laptop", 1, "alice@example.com"),
		theirs:  node("nTHEIRS", "bobs-pc", 2, "bob@example.com"),
		monitor: node("nMON", "prometheus", 1, "alice@example.com", "tag:monitoring"),
	}}
	type from struct{ remote, auth string }
	local := from{"127.0.0.1", ""}
	for _, tt := range []struct {
		name     string
		access   func() *Access
		flooder  from
		scrapers []from
	}{
		{"this machine floods, Prometheus has the token", func() *Access { return &Access{Token: token} }, local, []from{{"127.0.0.1", "Bearer " + token}}},
		{"a tailnet node floods, Prometheus is a --scraper node", func() *Access {
			return &Access{Allow: []string{AllowSelf, "bob@example.com"}, Scraper: []string{"tag:monitoring"}}
		}, from{theirs, ""}, []from{{monitor, ""}}},
		{"this machine floods, another allowed node reads", func() *Access { return &Access{} }, local, []from{{mine, ""}}},
		{"a tailnet node floods, this machine and Prometheus read", func() *Access {
			return &Access{Allow: []string{AllowSelf, "bob@example.com"}, Token: token}
		}, from{theirs, ""}, []from{local, {theirs, "Bearer " + token}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.access()
			a.client, a.ListenHost = c, "0.0.0.0"
			s := &Serve{store: &metrics.Store{}}
			h := a.Handler(s.mux(metrics.Handler(metrics.NewGatherer(s.store, metrics.Options{}), nil)))
			req := func(f from) *http.Request {
				r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
				r.Host, r.RemoteAddr = self+":9473", f.remote+":40000"
				localIP := self
				if f.remote == "127.0.0.1" {
					r.Host, localIP = "localhost:9473", "127.0.0.1"
				}
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(&net.TCPAddr{IP: net.ParseIP(localIP), Port: 9473})))
				if f.auth != "" {
					r.Header.Set("Authorization", f.auth)
				}
				return r
			}

			release := make(chan struct{})
			var blocked atomic.Int64
			var mu sync.Mutex
			codes := map[int]int{}
			var wg sync.WaitGroup
			for range flood {
				wg.Go(func() {
					w := &slowReader{h: http.Header{}, release: release, blocked: &blocked}
					h.ServeHTTP(w, req(tt.flooder))
					mu.Lock()
					codes[w.code]++
					mu.Unlock()
				})
			}
			// Until every flood request is answered or stuck writing.
			for {
				mu.Lock()
				n := 0
				for _, k := range codes {
					n += k
				}
				mu.Unlock()
				if n+int(blocked.Load()) == flood {
					break
				}
				time.Sleep(time.Millisecond)
			}
			held := blocked.Load()
			for i := range scrapes {
				for _, sc := range tt.scrapers {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req(sc))
					if rec.Code != 200 || !strings.Contains(rec.Body.String(), "tailpath_") {
						t.Fatalf("scrape %d from %v during the flood: %d %.200q", i, sc, rec.Code, rec.Body.String())
					}
				}
			}
			close(release)
			wg.Wait()
			if held != callerInFlight || codes[200] != callerInFlight || codes[http.StatusTooManyRequests] != flood-callerInFlight {
				t.Errorf("the flood held %d slots and got %v; want %d served and %d refused with 429", held, codes, callerInFlight, flood-callerInFlight)
			}
		})
	}
}

// TestServeBudgetPools: the scrapers' pool and the others' are bounded
// on their own: many callers, each within its own limit, fill the
// others' pool (503), and Prometheus still gets its slots.
func TestServeBudgetPools(t *testing.T) {
	var b budget
	var releases []func()
	for i := range othersInFlight {
		r, e := b.take(caller{key: "node:" + string(rune('a'+i))})
		if e != nil {
			t.Fatalf("caller %d refused: %v", i, e.msg)
		}
		releases = append(releases, r)
	}
	if _, e := b.take(caller{key: "node:z"}); e == nil || e.code != http.StatusServiceUnavailable {
		t.Errorf("a caller past the others' pool: %v, want 503", e)
	}
	for i := range scraperInFlight {
		r, e := b.take(caller{key: "token", scraper: true})
		if e != nil {
			t.Fatalf("scrape %d refused with the others' pool full: %v", i, e.msg)
		}
		releases = append(releases, r)
	}
	if _, e := b.take(caller{key: "token", scraper: true}); e == nil || e.code != http.StatusServiceUnavailable {
		t.Errorf("a scrape past the scrapers' pool: %v, want 503", e)
	}
	for _, r := range releases {
		r()
	}
	if b.scrapers != 0 || b.others != 0 || len(b.byCaller) != 0 {
		t.Errorf("slots left after every release: %d scrapes, %d others, %v", b.scrapers, b.others, b.byCaller)
	}
}
