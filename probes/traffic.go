package probes

import (
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Traffic is tailscaled's own count of the bytes and packets it sent to
// and received from peers, by path, since it started: its client metrics
// (wgengine/magicsock/magicsock.go registerMetrics:
// tailscaled_{inbound,outbound}_{bytes,packets}_total{path=direct_ipv4|
// direct_ipv6|derp|peer_relay_ipv4|peer_relay_ipv6}, the user metrics any
// local user may read, and the same counters under their clientmetric
// names, magicsock_{recv,send}_data[_bytes]_{ipv4,ipv6,derp,
// peer_relay_ipv4,peer_relay_ipv6}, which only an operator may). Node-wide,
// not per peer: it answers "am I sending most bytes through DERP?".
type Traffic struct {
	// At is when tailscaled was asked.
	At time.Time `json:"at"`
	// Source is where the counters came from: "usermetrics" (LocalAPI
	// /localapi/v0/usermetrics, read permission) or "clientmetrics"
	// (/localapi/v0/metrics, write permission); "" when none answered.
	Source string `json:"source,omitempty"`
	// Err says why the counters are unknown (a daemon that serves
	// neither, a refused request); "" when they are known.
	Err safetext.Text `json:"error,omitempty"`
	// BytesIn, BytesOut, PacketsIn, PacketsOut are the totals since
	// tailscaled started, by path (IPv4 and IPv6 added).
	BytesIn    PathCounts `json:"bytes_in"`
	BytesOut   PathCounts `json:"bytes_out"`
	PacketsIn  PathCounts `json:"packets_in"`
	PacketsOut PathCounts `json:"packets_out"`
	// HomeChanges is tailscaled's derp_home_change counter (how often its
	// home DERP moved since it started); nil when not read (the user
	// metrics do not carry it).
	HomeChanges *int64 `json:"home_changes,omitempty"`
	// Rates are per second over the last poll; nil on the first poll or
	// when the counters went back (tailscaled restarted).
	Rates *TrafficRates `json:"rates,omitempty"`
}

// PathCounts are one counter by path.
type PathCounts struct {
	Direct    int64 `json:"direct"`
	DERP      int64 `json:"derp"`
	PeerRelay int64 `json:"peer_relay"`
}

// Total is the three paths added.
func (c PathCounts) Total() int64 { return c.Direct + c.DERP + c.PeerRelay }

// PathRates are one counter's rate (per second) by path.
type PathRates struct {
	Direct    float64 `json:"direct"`
	DERP      float64 `json:"derp"`
	PeerRelay float64 `json:"peer_relay"`
}

// Total is the three paths added.
func (r PathRates) Total() float64 { return r.Direct + r.DERP + r.PeerRelay }

// TrafficRates are Traffic's counters per second over Seconds.
type TrafficRates struct {
	Seconds    float64   `json:"seconds"`
	BytesIn    PathRates `json:"bytes_in"`
	BytesOut   PathRates `json:"bytes_out"`
	PacketsIn  PathRates `json:"packets_in"`
	PacketsOut PathRates `json:"packets_out"`
}

// Known reports whether t holds counters.
func (t *Traffic) Known() bool { return t != nil && t.Source != "" && t.Err == "" }

// RatesSince returns t's rates against prev, an earlier reading of the
// same daemon; nil when either is unknown, prev is not earlier, or a
// counter went back (tailscaled restarted).
func (t *Traffic) RatesSince(prev *Traffic) *TrafficRates {
	if !t.Known() || !prev.Known() || !t.At.After(prev.At) {
		return nil
	}
	dt := t.At.Sub(prev.At).Seconds()
	r := &TrafficRates{Seconds: dt}
	ok := true
	rate := func(cur, old PathCounts) PathRates {
		if cur.Direct < old.Direct || cur.DERP < old.DERP || cur.PeerRelay < old.PeerRelay {
			ok = false
		}
		return PathRates{
			Direct:    float64(cur.Direct-old.Direct) / dt,
			DERP:      float64(cur.DERP-old.DERP) / dt,
			PeerRelay: float64(cur.PeerRelay-old.PeerRelay) / dt,
		}
	}
	r.BytesIn = rate(t.BytesIn, prev.BytesIn)
	r.BytesOut = rate(t.BytesOut, prev.BytesOut)
	r.PacketsIn = rate(t.PacketsIn, prev.PacketsIn)
	r.PacketsOut = rate(t.PacketsOut, prev.PacketsOut)
	if !ok {
		return nil
	}
	return r
}

// DERPShare is the part of all bytes (in and out) since tailscaled
// started that went through DERP, 0 to 1; -1 when unknown or nothing moved.
func (t *Traffic) DERPShare() float64 {
	if !t.Known() {
		return -1
	}
	all := t.BytesIn.Total() + t.BytesOut.Total()
	if all <= 0 {
		return -1
	}
	return float64(t.BytesIn.DERP+t.BytesOut.DERP) / float64(all)
}
