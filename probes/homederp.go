package probes

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Tailscale's home DERP choice, mirrored from tailscale.com v1.102.5:
// net/netcheck/netcheck.go addReportHistoryAndSetPreferredDERP, run at the
// end of every netcheck report (finishAndStoreReport), whose
// PreferredDERP wgengine/magicsock maybeSetNearestDERP then makes home.
// The rule:
//
//  1. Each region's latency is its best over the reports of the last
//     HomeHistory (addReportAndPruneExpired, bestRecentLatencyLocked),
//     this report included, times the DERP map's HomeParams.RegionScore
//     for the region when one is set (> 0).
//  2. The candidate is the region of this report with the lowest such
//     latency.
//  3. Stickiness: when the candidate is not the current home and the
//     home is still accessible (it has a latency in this report, or a
//     DERP frame arrived from it since the report started or within
//     HomeFrameTime), the home stays if the candidate is less than
//     HomeStickyMargin faster than the home's latency in this report, or
//     not more than a third faster (candidate > home/3*2).
//  4. With no latency at all, a home that sent a frame within
//     PreferredDERPKeepAliveTimeout stays.
//
// (Its ForcePreferredDERP, set by `tailscale debug force-prefer-derp`,
// overrides all of this when the forced region answered; a daemon's
// override is not visible to tailpath.)
const (
	// HomeStickyMargin is preferredDERPAbsoluteDiff: a region must be at
	// least this much faster than the home before the home moves.
	HomeStickyMargin = 10 * time.Millisecond
	// HomeHistory is how long a report counts towards each region's best
	// latency: fullReportInterval (5 min) + ReportTimeout (5 s).
	HomeHistory = 5*time.Minute + 5*time.Second
	// HomeFrameTime is PreferredDERPFrameTime: a DERP frame from the home
	// this recently keeps it accessible without a latency.
	HomeFrameTime = 8 * time.Second
)

// HomeInput is what Tailscale's rule reads at the end of one report.
type HomeInput struct {
	// Latency is the report's RegionLatency by region id (the regions
	// that answered it).
	Latency map[int]time.Duration
	// BestRecent is each region's best latency over the earlier reports
	// still in the history (HomeHistory); nil or a missing region: only
	// this report's latency counts.
	BestRecent map[int]time.Duration
	// Prev is the home before the report (the previous PreferredDERP); 0
	// for none.
	Prev int
	// Scores are the DERP map's HomeParams.RegionScore by region id.
	Scores map[int]float64
	// HeardPrev: a DERP frame arrived from Prev since the report began or
	// within HomeFrameTime (the daemon's getLastDERPActivity).
	HeardPrev bool
	// AlivePrev: a DERP frame arrived from Prev within
	// PreferredDERPKeepAliveTimeout (two minutes: 2 × derp.KeepAlive),
	// which keeps it when the report has no latency at all.
	AlivePrev bool
}

// HomeKeep is why the rule kept the old home.
type HomeKeep string

const (
	// KeepMargin: the candidate is less than HomeStickyMargin faster.
	KeepMargin HomeKeep = "margin"
	// KeepThird: the candidate is not more than a third faster.
	KeepThird HomeKeep = "third"
	// KeepHeard: no latency at all, but the home sent DERP frames
	// within PreferredDERPKeepAliveTimeout.
	KeepHeard HomeKeep = "heard"
)

// HomeOutcome is the rule's result.
type HomeOutcome struct {
	// Home is the report's PreferredDERP after the rule; 0 for none.
	Home int
	// Candidate is the region with the lowest (scored) recent latency; 0
	// when the report has none.
	Candidate int
	// Kept says why the old home stayed although the candidate differs;
	// "" when it did not (or nothing differed).
	Kept HomeKeep
	// Scaled are the latencies compared: each region's best recent
	// latency times its RegionScore.
	Scaled map[int]time.Duration
}

// PreferredDERP applies Tailscale's home DERP rule (see the comment above
// HomeStickyMargin) to one report. Where Tailscale walks a Go map and
// keeps the first of equal latencies it meets (an arbitrary one), this
// keeps the lowest region id. Pure.
func PreferredDERP(in HomeInput) HomeOutcome {
	out := HomeOutcome{Scaled: make(map[int]time.Duration, len(in.Latency))}
	score := func(id int, d time.Duration) time.Duration {
		if s := in.Scores[id]; s > 0 {
			return time.Duration(float64(d) * s)
		}
		return d
	}
	ids := make([]int, 0, len(in.Latency))
	for id := range in.Latency {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var bestAny, oldCur time.Duration
	for _, id := range ids {
		d := in.Latency[id]
		best := d
		if r, ok := in.BestRecent[id]; ok && r < best {
			best = r
		}
		best = score(id, best)
		out.Scaled[id] = best
		if id == in.Prev {
			oldCur = score(id, d)
		}
		if out.Home == 0 || best < bestAny {
			bestAny, out.Home = best, id
		}
	}
	out.Candidate = out.Home
	if in.Prev != 0 && out.Home != in.Prev && (oldCur != 0 || in.HeardPrev) {
		switch {
		case oldCur-bestAny < HomeStickyMargin:
			out.Kept = KeepMargin
		case bestAny > oldCur/3*2:
			out.Kept = KeepThird
		}
		if out.Kept != "" {
			out.Home = in.Prev
		}
	}
	if out.Home == 0 && (in.AlivePrev || in.HeardPrev) && in.Prev != 0 {
		out.Home, out.Kept = in.Prev, KeepHeard
	}
	return out
}

// HomeWhy is why this node's home DERP region is what it is, in the terms
// of Tailscale's rule.
type HomeWhy string

const (
	// HomeBest: the home is the region the rule prefers on the latencies.
	HomeBest HomeWhy = "best"
	// HomeScored: another region is faster, but the DERP map's RegionScore
	// makes the home the preferred one.
	HomeScored HomeWhy = "scored"
	// HomeKeptMargin, HomeKeptThird: another region is faster, but not by
	// HomeStickyMargin, or not by a third: stickiness keeps the home.
	HomeKeptMargin HomeWhy = "kept-margin"
	HomeKeptThird  HomeWhy = "kept-third"
	// HomeMoves: the latencies say move; the daemon does at its next
	// report once the home's faster answers of the last HomeHistory have
	// left its report history.
	HomeMoves HomeWhy = "moves"
	// HomeUnreachable: the home did not answer the report.
	HomeUnreachable HomeWhy = "unreachable"
	// HomeUnknown: the home or the latencies are unknown.
	HomeUnknown HomeWhy = "unknown"
)

// HomeChoice is this node's home DERP region explained: how far it is
// from the best region, and why Tailscale keeps it or would move it.
type HomeChoice struct {
	// Home is this node's home region id (Self.HomeDERP); 0 unknown.
	Home int `json:"home"`
	// Best is the region with the lowest latency in the report (raw, not
	// scored); 0 when none answered.
	Best int `json:"best,omitempty"`
	// HomeLatency and BestLatency are their latencies in the report; 0
	// when the home did not answer. Nanoseconds in JSON.
	HomeLatency time.Duration `json:"home_latency_ns,omitempty"`
	BestLatency time.Duration `json:"best_latency_ns,omitempty"`
	// Behind is HomeLatency - BestLatency: what the home costs over the
	// best region, each way through it; 0 when the home is the best or
	// either is unknown.
	Behind time.Duration `json:"behind_ns,omitempty"`
	// Far: the home is far by tailpath's thresholds (at least
	// FarDERPFactor times and FarDERPMargin slower than the best), which
	// are wider than Tailscale's own margins, so Tailscale moves a far
	// home too once its history lets it.
	Far bool `json:"far,omitempty"`
	// Why is the rule's reading; MovesTo the region it would move to
	// (HomeMoves, HomeUnreachable).
	Why     HomeWhy `json:"why"`
	MovesTo int     `json:"moves_to,omitempty"`
	// From says which latencies: "netinfo" (tailscaled's own report) or
	// "netcheck" (tailpath's measurement, from its own socket).
	From string `json:"from,omitempty"`
	// Text says it in words, in Tailscale's terms.
	Text safetext.Text `json:"text"`
}

// ExplainHome explains self's home DERP region by Tailscale's rule
// (PreferredDERP) on self's latencies (NAT.DERPLatency: tailscaled's
// report, or tailpath's fresher measurement) and the regions' scores.
// The daemon's report history is not visible: when the latencies say the
// home should move, the explanation says the history may keep it for up
// to HomeHistory, and names an earlier faster answer tailscaled reported
// (NetInfoLatency) when there is one. heard says whether DERP traffic is
// known to arrive from the home (Tailnet.RegionUp). Pure.
func ExplainHome(self Self, regions map[int]Region, heard bool) HomeChoice {
	hc := HomeChoice{Home: self.HomeDERP, Why: HomeUnknown, From: self.DERPLatencyFrom}
	var lat map[int]time.Duration
	if self.NAT != nil {
		lat = self.NAT.DERPLatency
	}
	name := func(id int) string { return regionKey(regions, id) }
	switch {
	case hc.Home == 0:
		hc.Text = "home DERP region unknown: tailscaled has not reported one (logged out, or no netcheck yet)"
		return hc
	case len(lat) == 0:
		hc.Text = safetext.New("home " + name(hc.Home) + "; no DERP latencies measured yet, so why is unknown")
		return hc
	}
	for id, d := range lat {
		if hc.Best == 0 || d < hc.BestLatency || (d == hc.BestLatency && id < hc.Best) {
			hc.Best, hc.BestLatency = id, d
		}
	}
	hc.HomeLatency = lat[hc.Home]
	scores := map[int]float64{}
	for id, r := range regions {
		if r.Score > 0 {
			scores[id] = r.Score
		}
	}
	out := PreferredDERP(HomeInput{Latency: lat, Prev: hc.Home, Scores: scores, HeardPrev: heard})
	if hc.HomeLatency > 0 && hc.HomeLatency > hc.BestLatency {
		hc.Behind = hc.HomeLatency - hc.BestLatency
		hc.Far = hc.HomeLatency >= FarDERPFactor*hc.BestLatency && hc.Behind >= FarDERPMargin
	}
	var b strings.Builder
	home, best := name(hc.Home), name(hc.Best)
	switch {
	case hc.HomeLatency == 0:
		hc.Why, hc.MovesTo = HomeUnreachable, out.Candidate
		b.WriteString("home " + home + " did not answer the last report (no STUN or HTTPS reply)")
		if regions[hc.Home].NoHome {
			b.WriteString("; the DERP map marks it never to be measured or made home")
		}
		if out.Kept == KeepHeard || (out.Home == hc.Home && heard) {
			b.WriteString("; tailscaled keeps it while DERP frames from it keep arriving (within 8 s of a report)")
		} else if out.Candidate != 0 {
			b.WriteString("; tailscaled keeps it only while DERP frames from it keep arriving (within 8 s), else it moves home to " + name(out.Candidate) + " (" + LatencyText(lat[out.Candidate]) + ")")
		}
	case out.Candidate == hc.Home:
		hc.Why = HomeBest
		if hc.Best == hc.Home {
			b.WriteString("home " + home + " (" + LatencyText(hc.HomeLatency) + ") is the nearest region")
		} else {
			hc.Why = HomeScored
			b.WriteString("home " + home + " (" + LatencyText(hc.HomeLatency) + ") is preferred over the faster " + best + " (" + LatencyText(hc.BestLatency) + ") by the DERP map's RegionScore (" + scoreText(regions, hc.Home, hc.Best) + ")")
		}
	case out.Kept == KeepMargin:
		hc.Why = HomeKeptMargin
		b.WriteString("home " + home + " (" + LatencyText(hc.HomeLatency) + ") stays although " + name(out.Candidate) + " is faster (" + LatencyText(lat[out.Candidate]) + "): Tailscale moves home only for a region at least 10 ms faster (netcheck's preferredDERPAbsoluteDiff)")
	case out.Kept == KeepThird:
		hc.Why = HomeKeptThird
		b.WriteString("home " + home + " (" + LatencyText(hc.HomeLatency) + ") stays although " + name(out.Candidate) + " is faster (" + LatencyText(lat[out.Candidate]) + "): Tailscale moves home only for a region more than a third faster")
	default:
		hc.Why, hc.MovesTo = HomeMoves, out.Home
		to := name(out.Home)
		b.WriteString(to + " (" + LatencyText(lat[out.Home]) + ") beats home " + home + " (" + LatencyText(hc.HomeLatency) + ") by at least 10 ms and a third: Tailscale moves home there at its next report once " + home + "'s faster answers have left its report history (each region counts at its best over the last 5 minutes), so this home lasts at most about 5 minutes after it got slower")
		if old, ok := self.NetInfoLatency[hc.Home]; ok && old < hc.HomeLatency && self.DERPLatencyFrom == "netcheck" {
			b.WriteString("; tailscaled last reported " + home + " at " + LatencyText(old))
		}
	}
	if hc.Far {
		b.WriteString("; far: " + LatencyText(hc.Behind) + " behind " + best + ", each way through it")
	} else if hc.Behind > 0 && hc.Why != HomeMoves {
		b.WriteString("; " + LatencyText(hc.Behind) + " behind " + best)
	}
	if hc.From == "netcheck" {
		b.WriteString(" (latencies measured by tailpath, as `tailscale netcheck` does, from its own socket)")
	}
	hc.Text = safetext.New(b.String())
	return hc
}

// scoreText words the RegionScore of the two regions ("lab2 ×0.5").
func scoreText(regions map[int]Region, ids ...int) string {
	var parts []string
	for _, id := range ids {
		if s := regions[id].Score; s > 0 {
			parts = append(parts, regionKey(regions, id)+" ×"+strconv.FormatFloat(s, 'g', 3, 64))
		}
	}
	return strings.Join(parts, ", ")
}

// LatencyText words a DERP latency for people: "0.3 ms" below 10 ms,
// "42 ms" above; "-" for 0.
func LatencyText(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
	}
	return strconv.FormatInt(d.Round(time.Millisecond).Milliseconds(), 10) + " ms"
}
