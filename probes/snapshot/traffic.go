package snapshot

import (
	"context"
	"errors"

	"github.com/tailpath/tailpath/probes/localapi"
)

// errNoMetrics is the Recorder's answer for metrics when the client it
// wraps cannot ask for them.
var errNoMetrics = errors.New("404 Not Found: this LocalAPI client cannot ask for metrics")

var (
	_ localapi.UserMetricsReader   = (*Recorder)(nil)
	_ localapi.DaemonMetricsReader = (*Recorder)(nil)
)

// UserMetrics passes the call on (localapi.UserMetricsReader): a capture
// keeps the traffic counters Gather made of it (File.Traffic), not the
// text.
func (r *Recorder) UserMetrics(ctx context.Context) ([]byte, error) {
	if c, ok := r.c.(localapi.UserMetricsReader); ok {
		return c.UserMetrics(ctx)
	}
	return nil, errNoMetrics
}

// DaemonMetrics passes the call on (localapi.DaemonMetricsReader).
func (r *Recorder) DaemonMetrics(ctx context.Context) ([]byte, error) {
	if c, ok := r.c.(localapi.DaemonMetricsReader); ok {
		return c.DaemonMetrics(ctx)
	}
	return nil, errNoMetrics
}
