package probes

import (
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// TestPreferredDERP: Tailscale's rule (net/netcheck
// addReportHistoryAndSetPreferredDERP, v1.102.5) on one report each: the
// candidate by best recent latency times RegionScore, and the old home
// kept unless the candidate is 10 ms and a third faster than its latency
// in this report, or reached otherwise.
func TestPreferredDERP(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   HomeInput
		home int
		cand int
		kept HomeKeep
	}{
		{"first report: the fastest", HomeInput{Latency: map[int]time.Duration{1: 30 * ms, 2: 10 * ms}}, 2, 2, ""},
		{"ties go to the lower id", HomeInput{Latency: map[int]time.Duration{3: 10 * ms, 2: 10 * ms}}, 2, 2, ""},
		{"home is the fastest", HomeInput{Latency: map[int]time.Duration{1: 30 * ms, 2: 10 * ms}, Prev: 2}, 2, 2, ""},
		// 14 - 5 = 9 ms < 10 ms (preferredDERPAbsoluteDiff).
		{"faster by under 10 ms: kept", HomeInput{Latency: map[int]time.Duration{1: 14 * ms, 2: 5 * ms}, Prev: 1}, 1, 2, KeepMargin},
		// 40 - 28 = 12 ms, but 28 > 40/3*2 = 26.66 ms.
		{"10 ms faster but not a third: kept", HomeInput{Latency: map[int]time.Duration{1: 40 * ms, 2: 28 * ms}, Prev: 1}, 1, 2, KeepThird},
		{"10 ms and a third faster: moves", HomeInput{Latency: map[int]time.Duration{1: 40 * ms, 2: 20 * ms}, Prev: 1}, 2, 2, ""},
		// The history: the old home's best of the last 5 minutes is
		// still 1 ms, so it is the candidate whatever it is now.
		{"made far, history still fast: stays", HomeInput{Latency: map[int]time.Duration{1: 80 * ms, 2: 10 * ms}, BestRecent: map[int]time.Duration{1: ms}, Prev: 1}, 1, 1, ""},
		{"made far, history aged out: moves", HomeInput{Latency: map[int]time.Duration{1: 80 * ms, 2: 10 * ms}, Prev: 1}, 2, 2, ""},
		// A score below 1 prefers its region.
		{"scored: the slower region preferred", HomeInput{Latency: map[int]time.Duration{1: 20 * ms, 2: 15 * ms}, Scores: map[int]float64{1: 0.5}}, 1, 1, ""},
		{"home did not answer, not heard: moves", HomeInput{Latency: map[int]time.Duration{2: 20 * ms}, Prev: 1}, 2, 2, ""},
		// oldRegionCurLatency is 0, so 0 - bestAny < 10 ms keeps it.
		{"home did not answer, frames heard: kept", HomeInput{Latency: map[int]time.Duration{2: 20 * ms}, Prev: 1, HeardPrev: true}, 1, 2, KeepMargin},
		// With nothing measured, the candidate is 0: "changing", and a
		// home heard within 8 s stays by the margin check (0 - 0).
		{"no latency at all, frames heard: kept", HomeInput{Prev: 1, HeardPrev: true}, 1, 0, KeepMargin},
		{"no latency at all, frames within the keep-alive: kept", HomeInput{Prev: 1, AlivePrev: true}, 1, 0, KeepHeard},
		{"no latency at all", HomeInput{Prev: 1}, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PreferredDERP(tc.in)
			if got.Home != tc.home || got.Candidate != tc.cand || got.Kept != tc.kept {
				t.Errorf("PreferredDERP = home %d candidate %d kept %q, want %d %d %q", got.Home, got.Candidate, got.Kept, tc.home, tc.cand, tc.kept)
			}
		})
	}
}

var homeRegions = map[int]Region{
	901: {ID: 901, Code: "lab1"}, 902: {ID: 902, Code: "lab2"}, 903: {ID: 903, Code: "lab3", STUNOnly: true},
}

// TestExplainHome: the home, how far it is from the best, and the rule's
// reading in words.
func TestExplainHome(t *testing.T) {
	lat := func(kv ...int) map[int]time.Duration {
		m := map[int]time.Duration{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = time.Duration(kv[i+1]) * ms
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		self    Self
		regions map[int]Region
		why     HomeWhy
		far     bool
		behind  time.Duration
		words   []string
	}{
		{"unknown home", Self{}, homeRegions, HomeUnknown, false, 0, []string{"unknown"}},
		{"no latencies", Self{HomeDERP: 901, NAT: &NATInfo{}}, homeRegions, HomeUnknown, false, 0, []string{"lab1", "no DERP latencies"}},
		{"nearest", Self{HomeDERP: 901, NAT: &NATInfo{DERPLatency: lat(901, 10, 902, 25)}}, homeRegions, HomeBest, false, 0, []string{"lab1 (10 ms) is the nearest"}},
		{"kept by the margin", Self{HomeDERP: 902, NAT: &NATInfo{DERPLatency: lat(901, 10, 902, 15)}}, homeRegions, HomeKeptMargin, false, 5 * ms, []string{"stays", "at least 10 ms faster", "5.0 ms behind"}},
		{"kept by the third", Self{HomeDERP: 902, NAT: &NATInfo{DERPLatency: lat(901, 28, 902, 40)}}, homeRegions, HomeKeptThird, false, 12 * ms, []string{"more than a third faster"}},
		{"made far: moves once the history lets it", Self{HomeDERP: 902, DERPLatencyFrom: "netcheck", NetInfoLatency: map[int]time.Duration{902: 300 * time.Microsecond},
			NAT: &NATInfo{DERPLatency: lat(901, 10, 902, 80, 903, 20)}}, homeRegions, HomeMoves, true, 70 * ms,
			[]string{"lab1 (10 ms) beats home lab2 (80 ms)", "last 5 minutes", "last reported lab2 at 0.3 ms", "far: 70 ms behind lab1", "measured by tailpath"}},
		{"scored", Self{HomeDERP: 902, NAT: &NATInfo{DERPLatency: lat(901, 10, 902, 15)}}, map[int]Region{901: homeRegions[901], 902: {ID: 902, Code: "lab2", Score: 0.5}}, HomeScored, false, 5 * ms, []string{"RegionScore (lab2 ×0.5)"}},
		{"home silent", Self{HomeDERP: 902, NAT: &NATInfo{DERPLatency: lat(901, 10)}}, homeRegions, HomeUnreachable, false, 0, []string{"did not answer", "moves home to lab1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := ExplainHome(tc.self, tc.regions, false)
			if hc.Why != tc.why || hc.Far != tc.far || hc.Behind != tc.behind {
				t.Errorf("why %q far %v behind %v, want %q %v %v (%s)", hc.Why, hc.Far, hc.Behind, tc.why, tc.far, tc.behind, hc.Text)
			}
			for _, w := range tc.words {
				if !strings.Contains(string(hc.Text), w) {
					t.Errorf("text lacks %q: %s", w, hc.Text)
				}
			}
		})
	}
	// Heard from: a home that did not answer is kept while frames arrive.
	hc := ExplainHome(Self{HomeDERP: 902, NAT: &NATInfo{DERPLatency: lat(901, 10)}}, homeRegions, true)
	if !strings.Contains(string(hc.Text), "keeps it while DERP frames") {
		t.Errorf("heard home: %s", hc.Text)
	}
}

// TestFarOwnHome: far-home-derp names this node's own home when it is
// far from here (the peer answers through it), whatever the peer's
// home; not when near, not when the DERP map's RegionScore prefers it,
// and not on latencies too old to judge.
func TestFarOwnHome(t *testing.T) {
	peer := Peer{Name: "hb", Active: true, HomeDERP: 901, HomeDERPCode: "lab1",
		Path: Path{Kind: PathDERP, DERPCode: "lab1", Text: `active; relay "lab1"`}}
	self := func(home int, lat902 time.Duration) Self {
		return Self{HomeDERP: home, DERPLatencyFrom: "netcheck", DERPLatencyAt: fixtureNow.Add(-time.Minute),
			NAT: &NATInfo{DERPLatency: map[int]time.Duration{901: 10 * ms, 902: lat902}}}
	}
	regions := func(score float64) map[int]Region {
		return map[int]Region{901: {ID: 901, Code: "lab1"}, 902: {ID: 902, Code: "lab2", Score: score}}
	}
	for _, tc := range []struct {
		name  string
		self  Self
		score float64
		holds bool
		check CheckState
	}{
		{"own home far", self(902, 80*ms), 0, true, CheckFail},
		{"own home near", self(902, 15*ms), 0, false, ""},
		{"own home is the relay's and near", self(901, 80*ms), 0, false, ""},
		{"own home far, scored to be preferred", self(902, 80*ms), 0.1, false, CheckInfo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Diagnose(tc.self, peer, regions(tc.score), fixtureNow)
			held := false
			for _, a := range append([]ReasonID{v.Reason}, v.Also...) {
				held = held || a == ReasonFarHomeDERP
			}
			if held != tc.holds {
				t.Errorf("far-home-derp held %v, want %v (reason %s also %v)", held, tc.holds, v.Reason, v.Also)
			}
			var got CheckState
			for _, c := range v.Checks {
				if c.Field == "Self.HomeDERP" {
					got = c.Mark()
					if tc.holds && !strings.Contains(string(c.Value), `"lab2"=80ms, best "lab1"=10ms`) || tc.holds && !strings.Contains(string(c.Note), "+70ms") {
						t.Errorf("check %+v lacks the numbers", c)
					}
				}
			}
			if got != tc.check {
				t.Errorf("Self.HomeDERP check %q, want %q", got, tc.check)
			}
		})
	}
	// Latencies older than DERPLatencyMaxAge judge nothing.
	old := self(902, 80*ms)
	old.DERPLatencyAt = fixtureNow.Add(-time.Hour)
	if v := Diagnose(old, peer, regions(0), fixtureNow); containsReason(v, ReasonFarHomeDERP) {
		t.Errorf("far-home-derp on hour-old latencies: %v", v.Also)
	}
}

func containsReason(v Verdict, id ReasonID) bool {
	if v.Reason == id {
		return true
	}
	for _, a := range v.Also {
		if a == id {
			return true
		}
	}
	return false
}

// TestLatencyText: a tenth of a millisecond below 10 ms.
func TestLatencyText(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "-", 300 * time.Microsecond: "0.3 ms", 9949 * time.Microsecond: "9.9 ms", 42400 * time.Microsecond: "42 ms"} {
		if got := LatencyText(d); got != want {
			t.Errorf("LatencyText(%v) = %q, want %q", d, got, want)
		}
	}
}
