package peers

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// FormatRate renders a byte rate (bytes per second) in binary units with at
// most three significant digits: "0B/s" is shown as "-", then "512B/s",
// "12.3KiB/s", "123KiB/s", "1.2MiB/s". Negative, NaN and infinite rates are
// shown as "-". The result is at most 9 cells wide below 1000 TiB/s.
func FormatRate(bytesPerSec float64) string {
	if bytesPerSec <= 0 || math.IsNaN(bytesPerSec) || math.IsInf(bytesPerSec, 0) {
		return "-"
	}
	units := [...]string{"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"}
	v, i := bytesPerSec, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	switch {
	case i == 0:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + units[i]
	case v < 99.95:
		return strconv.FormatFloat(v, 'f', 1, 64) + units[i]
	default:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + units[i]
	}
}

// FormatLatency renders a round trip: "-" for 0 (not measured), "0.4ms" and
// "3.2ms" below 10 ms, "42ms" up to 10 s, then "12s".
func FormatLatency(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	case d < 10*time.Second:
		return strconv.FormatInt(int64(math.Round(float64(d)/float64(time.Millisecond))), 10) + "ms"
	default:
		return strconv.FormatInt(int64(math.Round(d.Seconds())), 10) + "s"
	}
}

// formatAgo renders how long ago t was relative to now: "12s ago", "3m ago",
// "2h ago", "4d ago"; "never" for the zero time; "just now" for the future.
func formatAgo(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
}

// derpCode names a peer's home DERP region: the code from the peer, else the
// code from the snapshot's DERP map, else "#<id>"; "-" when unknown.
func derpCode(p *probes.Peer, regions map[int]probes.Region) string {
	if p.HomeDERPCode != "" {
		return safetext.Clean(p.HomeDERPCode)
	}
	if p.HomeDERP == 0 {
		return "-"
	}
	if r, ok := regions[p.HomeDERP]; ok && r.Code != "" {
		return safetext.Clean(r.Code)
	}
	return "#" + strconv.Itoa(p.HomeDERP)
}

// reasonText is the one-phrase reason for the table: the verdict summary,
// else the reason id.
func reasonText(v *probes.Verdict) string {
	if v.Summary != "" {
		return safetext.Clean(v.Summary)
	}
	if v.Reason == "" {
		return "-"
	}
	return string(v.Reason)
}

// pathRank orders paths relayed-first: DERP relay, peer relay, direct,
// idle, offline, unknown.
func pathRank(k probes.PathKind) int {
	switch k {
	case probes.PathDERP:
		return 0
	case probes.PathPeerRelay:
		return 1
	case probes.PathDirect:
		return 2
	case probes.PathIdle:
		return 3
	case probes.PathOffline:
		return 4
	default:
		return 5
	}
}

// joinAddrs renders addresses comma-separated.
func joinAddrs[T fmt.Stringer](xs []T) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x.String())
	}
	return b.String()
}
