package snapshot

import (
	"context"
	"errors"

	"github.com/tailpath/tailpath/probes/tailscaled"
)

// errNoMetrics is the Recorder's answer for metrics when the client it
// wraps cannot ask for them.
var errNoMetrics = errors.New("404 Not Found: this LocalAPI client cannot ask for metrics")

var (
	_ tailscaled.UserMetricsReader   = (*Recorder)(nil)
	_ tailscaled.DaemonMetricsReader = (*Recorder)(nil)
)

// UserMetrics passes the call on (tailscaled.UserMetricsReader): a capture
// keeps the traffic counters Gather made of it (File.Traffic), not the
// text.
func (r *Recorder) UserMetrics(ctx context.Context) ([]byte, error) {
	if c, ok := r.c.(tailscaled.UserMetricsReader); ok {
		return c.UserMetrics(ctx)
	}
	return nil, errNoMetrics
}

// DaemonMetrics passes the call on (tailscaled.DaemonMetricsReader).
func (r *Recorder) DaemonMetrics(ctx context.Context) ([]byte, error) {
	if c, ok := r.c.(tailscaled.DaemonMetricsReader); ok {
		return c.DaemonMetrics(ctx)
	}
	return nil, errNoMetrics
}
