package app

import (
	"fmt"
	"net/http"
	"sync"
)

// The request budget of `tailpath serve` (Access.Handler): how many
// requests may be in flight at once. A request holds its slot until its
// answer is written, so a caller that reads slowly holds it up to the
// server's write timeout.
const (
	// scraperInFlight is the scrapers' own budget: the token's bearers
	// and the --scraper nodes. Prometheus scrapes a target one request
	// at a time; four leave room for two Prometheus servers and a
	// reload's overlap.
	scraperInFlight = 4
	// callerInFlight is what any other caller may have in flight: this
	// machine's users together (a loopback caller tailscaled did not
	// forward), or one tailnet node.
	callerInFlight = 2
	// othersInFlight is what all callers but the scrapers may have in
	// flight together.
	othersInFlight = 6
)

// budget counts the requests in flight by caller.
type budget struct {
	mu       sync.Mutex
	scrapers int
	others   int
	byCaller map[string]int
}

// take gives c a slot, or the refusal: 429 when c has its own requests
// in flight already, 503 when the pool it draws on is full. release gives
// the slot back.
func (b *budget) take(c caller) (release func(), _ *errRefused) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c.scraper {
		if b.scrapers >= scraperInFlight {
			return nil, &errRefused{http.StatusServiceUnavailable, fmt.Sprintf("%d scrapes are in flight already, the most serve answers at once; try again", scraperInFlight)}
		}
		b.scrapers++
		return func() {
			b.mu.Lock()
			b.scrapers--
			b.mu.Unlock()
		}, nil
	}
	if b.byCaller[c.key] >= callerInFlight {
		return nil, &errRefused{http.StatusTooManyRequests, fmt.Sprintf("you have %d requests in flight, the most serve answers a caller at once; wait for them (Prometheus gets a budget of its own with serve's --token-file or --scraper)", callerInFlight)}
	}
	if b.others >= othersInFlight {
		return nil, &errRefused{http.StatusServiceUnavailable, fmt.Sprintf("%d requests of other callers are in flight, the most serve answers at once; try again (Prometheus gets a budget of its own with serve's --token-file or --scraper)", othersInFlight)}
	}
	if b.byCaller == nil {
		b.byCaller = map[string]int{}
	}
	b.byCaller[c.key]++
	b.others++
	return func() {
		b.mu.Lock()
		if b.byCaller[c.key]--; b.byCaller[c.key] <= 0 {
			delete(b.byCaller, c.key)
		}
		b.others--
		b.mu.Unlock()
	}, nil
}
