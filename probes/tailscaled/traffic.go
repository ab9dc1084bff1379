package tailscaled

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"

	"tailscale.com/client/local"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// tailscaled's traffic counters by path, read for the Self tab
// (probes.Traffic). Two LocalAPI endpoints carry them (tailscale.com
// v1.102.5 ipn/localapi/localapi.go):
//   - /localapi/v0/usermetrics (serveUserMetrics): the user metrics,
//     tailscaled_{inbound,outbound}_{bytes,packets}_total{path=…}, for any
//     client that may read (no PermitWrite check);
//   - /localapi/v0/metrics (serveMetrics): every clientmetric, among them
//     magicsock_{recv,send}_data[_bytes]_{ipv4,ipv6,derp,peer_relay_ipv4,
//     peer_relay_ipv6} (the same counters: magicsock.go registerMetrics
//     registers each user metric's expvar under its clientmetric) and
//     derp_home_change; it answers 403 "metric access denied" without
//     write permission (root or `tailscale set --operator=$USER`).
//
// Both are Prometheus text. A daemon that serves neither, or refuses the
// second, leaves the split unknown and says why (Traffic.Err).

// UserMetricsReader is the LocalAPI call for the user metrics;
// *local.Client has it.
type UserMetricsReader interface {
	UserMetrics(ctx context.Context) ([]byte, error)
}

// DaemonMetricsReader is the LocalAPI call for every clientmetric (write
// permission); *local.Client has it.
type DaemonMetricsReader interface {
	DaemonMetrics(ctx context.Context) ([]byte, error)
}

var (
	_ UserMetricsReader   = (*local.Client)(nil)
	_ DaemonMetricsReader = (*local.Client)(nil)
)

// maxMetrics bounds the metrics text read (bytes); tailscaled's is a few
// kilobytes.
const maxMetrics = 1 << 20

// trafficMemo is what a gather remembers of the metrics endpoints for the
// next gather on its snapshot: why one answers no more, so a daemon that
// serves no user metrics, or refuses its clientmetrics, is not asked
// every poll. The zero value asks both.
type trafficMemo struct {
	// noUser, noDaemon: the endpoint is not served or refused for good
	// (on this connection); whyUser, whyDaemon say so.
	noUser, noDaemon   bool
	whyUser, whyDaemon string
}

// readTraffic asks c for its traffic counters as the memo of the last
// gather allows, and returns them (never nil, Err set when unknown) with
// the memo for the next. now dates them; zero dates them by the clock
// when the reply arrived.
func readTraffic(ctx context.Context, c LocalClient, m trafficMemo, now time.Time) (*probes.Traffic, trafficMemo) {
	t := &probes.Traffic{}
	whyUser, whyDaemon := m.whyUser, m.whyDaemon
	if !m.noUser {
		if ur, ok := c.(UserMetricsReader); !ok {
			m.noUser, whyUser = true, "this LocalAPI client cannot ask for usermetrics"
		} else if b, err := ur.UserMetrics(ctx); err != nil {
			whyUser = "usermetrics: " + metricsErr(err)
			if notServed(err) {
				m.noUser, whyUser = true, "this tailscaled serves no /localapi/v0/usermetrics (it predates them)"
			}
		} else if parseTraffic(t, b) {
			t.Source, t.At = "usermetrics", stamp(now)
			return t, m
		} else {
			m.noUser, whyUser = true, "its usermetrics hold no traffic counters"
		}
	}
	if !m.noDaemon {
		if dr, ok := c.(DaemonMetricsReader); !ok {
			m.noDaemon, whyDaemon = true, "this LocalAPI client cannot ask for clientmetrics"
		} else if b, err := dr.DaemonMetrics(ctx); err != nil {
			whyDaemon = "clientmetrics: " + metricsErr(err)
			switch {
			case local.IsAccessDeniedError(err):
				m.noDaemon, whyDaemon = true, "its clientmetrics (/localapi/v0/metrics) need write permission: run as root or `sudo tailscale set --operator=$USER`"
			case notServed(err):
				m.noDaemon, whyDaemon = true, "it serves no /localapi/v0/metrics"
			}
		} else if parseTraffic(t, b) {
			t.Source, t.At = "clientmetrics", stamp(now)
			return t, m
		} else {
			m.noDaemon, whyDaemon = true, "its clientmetrics hold no traffic counters"
		}
	}
	if m.noUser {
		m.whyUser = whyUser
	}
	if m.noDaemon {
		m.whyDaemon = whyDaemon
	}
	var why []string
	for _, w := range []string{whyUser, whyDaemon} {
		if w != "" {
			why = append(why, w)
		}
	}
	*t = probes.Traffic{At: stamp(now), Err: safetext.New("traffic by path unknown: " + strings.Join(why, "; "))}
	return t, m
}

// notServed reports whether err is the LocalAPI's answer to a path it
// does not know (404).
func notServed(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "404 ") || strings.Contains(s, " 404 ") || strings.Contains(s, "404 Not Found")
}

// metricsErr is a short reason for a failed metrics request.
func metricsErr(err error) string {
	if local.IsAccessDeniedError(err) {
		return "permission denied"
	}
	return errText(err)
}

// parseTraffic adds text's counters to t.
func parseTraffic(t *probes.Traffic, text []byte) bool {
	if len(text) > maxMetrics {
		text = text[:maxMetrics]
	}
	found := false
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte{'\n'})
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		name, labels, value, ok := splitSample(string(line))
		if !ok {
			continue
		}
		if name == "derp_home_change" {
			n := int64(value)
			t.HomeChanges = &n
			continue
		}
		c, path := counterOf(t, name, labels)
		if c == nil {
			continue
		}
		n := int64(value)
		switch path {
		case "direct_ipv4", "direct_ipv6", "ipv4", "ipv6":
			c.Direct += n
		case "derp":
			c.DERP += n
		case "peer_relay_ipv4", "peer_relay_ipv6":
			c.PeerRelay += n
		default:
			continue
		}
		found = true
	}
	return found
}

// counterOf is the counter of t that sample name{labels} adds to, and
// the path it names (the path label, or the clientmetric name's suffix).
func counterOf(t *probes.Traffic, name, labels string) (*probes.PathCounts, string) {
	switch name {
	case "tailscaled_inbound_bytes_total":
		return &t.BytesIn, labelValue(labels, "path")
	case "tailscaled_outbound_bytes_total":
		return &t.BytesOut, labelValue(labels, "path")
	case "tailscaled_inbound_packets_total":
		return &t.PacketsIn, labelValue(labels, "path")
	case "tailscaled_outbound_packets_total":
		return &t.PacketsOut, labelValue(labels, "path")
	}
	for _, p := range []struct {
		prefix string
		c      *probes.PathCounts
	}{
		{"magicsock_recv_data_bytes_", &t.BytesIn},
		{"magicsock_send_data_bytes_", &t.BytesOut},
		{"magicsock_recv_data_", &t.PacketsIn},
		{"magicsock_send_data_", &t.PacketsOut},
	} {
		if path, ok := strings.CutPrefix(name, p.prefix); ok && labels == "" {
			return p.c, path
		}
	}
	return nil, ""
}

// splitSample splits a Prometheus text sample line `name{labels} value
// [timestamp]`; ok is false for anything else or a value that is not a
// finite non-negative number.
func splitSample(line string) (name, labels string, value float64, ok bool) {
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return "", "", 0, false
	}
	name, rest := line[:i], line[i:]
	if rest[0] == '{' {
		end := labelsEnd(rest)
		if end < 0 {
			return "", "", 0, false
		}
		labels, rest = rest[1:end], rest[end+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || len(fields) > 2 {
		return "", "", 0, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil || v < 0 || v > 1<<62 || v != v {
		return "", "", 0, false
	}
	return name, labels, v, true
}

// labelsEnd is the index of the '}' closing s's label set (s starts with
// '{'), skipping quoted values with their escapes; -1 when unclosed.
func labelsEnd(s string) int {
	quoted := false
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == '}':
			return i
		}
	}
	return -1
}

// labelValue is the value of label key in labels (`a="x",path="derp"`),
// unescaped; "" when absent.
func labelValue(labels, key string) string {
	for labels != "" {
		eq := strings.IndexByte(labels, '=')
		if eq < 0 || eq+1 >= len(labels) || labels[eq+1] != '"' {
			return ""
		}
		k := strings.TrimSpace(labels[:eq])
		rest := labels[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			val.WriteByte(rest[i])
		}
		if i >= len(rest) {
			return ""
		}
		if k == key {
			return val.String()
		}
		labels = strings.TrimLeft(rest[i+1:], ", ")
	}
	return ""
}

// trafficResult is readTraffic's answer.
type trafficResult struct {
	t *probes.Traffic
	m trafficMemo
}

// noteTraffic puts r in snap (Self.Traffic, with its rates against
// prev's) and its memo in snap's memo.
func noteTraffic(snap, prev *probes.Snapshot, r trafficResult) {
	if prev != nil {
		r.t.Rates = r.t.RatesSince(prev.Self.Traffic)
	}
	snap.Self.Traffic = r.t
	memoOf(snap).traffic = r.m
}

// stamp is now, or the clock when now is zero.
func stamp(now time.Time) time.Time {
	if now.IsZero() {
		return time.Now()
	}
	return now
}
