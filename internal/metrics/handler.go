package metrics

import (
	"compress/gzip"
	"net/http"

	"github.com/klauspost/compress/gzhttp"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRuntimeRegistry returns a registry with the Go runtime (go_*),
// process (process_*: CPU seconds, resident memory, open files) and build
// info (go_build_info) collectors, for Options.Extra and Handler.
func NewRuntimeRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
	)
	return reg
}

// Handler serves g at /metrics (through g.Transactional, so each scrape's
// memory serves the next): the Prometheus text format, OpenMetrics
// when the scraper asks for it (Prometheus does), gzip when accepted. reg,
// when not nil, gets promhttp's own counters (scrapes by status code,
// scrapes in flight, gathering errors); give it the registry that g
// gathers as Extra so they are served too. It sets no limit of its own on
// scrapes in flight: one shared by every caller would let one slow
// caller starve Prometheus, so the server in front budgets requests per
// caller (tailpath serve: app.Access). Building a scrape never blocks (it
// reads the Store), so there is no timeout here: promhttp's would buffer
// the whole response to enforce it; the server's write timeout bounds a
// slow reader.
func Handler(g *Gatherer, reg prometheus.Registerer) http.Handler {
	opts := promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
		// gzip is gzhttp's, below, at its fastest level.
		DisableCompression: true,
	}
	var h http.Handler
	if reg == nil {
		h = promhttp.HandlerForTransactional(g.Transactional(), opts)
	} else {
		opts.Registry = reg
		h = promhttp.InstrumentMetricHandler(reg, promhttp.HandlerForTransactional(g.Transactional(), opts))
	}
	return gzipFast(h)
}

// gzipFast compresses responses for clients that accept gzip (Prometheus
// does) at gzip.BestSpeed: a 1,000-peer scrape (460 KB of text) shrinks
// about tenfold at a third of the CPU the default level costs.
var gzipFast = func() func(http.Handler) http.HandlerFunc {
	wrap, err := gzhttp.NewWrapper(gzhttp.CompressionLevel(gzip.BestSpeed), gzhttp.EnableZstd(false))
	if err != nil {
		panic(err) // the options above are valid
	}
	return wrap
}()
