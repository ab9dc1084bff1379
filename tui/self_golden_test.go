package tui

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/selfpane"
)

// selfSnapshots are peerstest's tailnet with this node's own facts filled
// in as a live gather has them: a hard NAT, home "nyc" far (182 ms) beside
// "sfo" (24 ms), "tok" silent in the report, a health warning, a version
// with a known bug, and tailscaled's traffic counters read twice, 5 s
// apart; judged by the joiner (Self.View).
func selfSnapshots() (*join.Snapshot, *join.Snapshot) {
	t, f := true, false
	snap := peerstest.Snapshot()
	snap.Self.Version = "1.96.0-t0123456-g0123456"
	snap.Self.NAT = &probes.NATInfo{WorkingUDP: &t, WorkingIPv6: &f, MappingVariesByDestIP: &t, UPnP: &f, PMP: &f, PCP: &f,
		DERPLatency: map[int]time.Duration{1: 182 * time.Millisecond, 2: 24 * time.Millisecond}}
	snap.Self.DERPLatencyFrom = "netinfo"
	snap.Self.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("192.168.1.20:41641"), netip.MustParseAddrPort("198.51.100.20:61022")}
	snap.Self.STUNServers, snap.Self.DERPRegions = 3, 3
	snap.Self.Health = []safetext.Text{"Tailscale could not connect to the 'tok' relay server."}
	tr := func(at time.Time, derp, direct int64) *probes.Traffic {
		return &probes.Traffic{At: at, Source: "usermetrics",
			BytesIn:  probes.PathCounts{Direct: direct, DERP: derp},
			BytesOut: probes.PathCounts{Direct: direct / 2, DERP: derp / 2, PeerRelay: 4096}}
	}
	first := snap
	first.Self.Traffic = tr(peerstest.Time.Add(-5*time.Second), 40<<20, 10<<20)
	second := snap
	second.Self.Traffic = tr(peerstest.Time, 46<<20, 11<<20)
	second.Self.Traffic.Rates = second.Self.Traffic.RatesSince(first.Self.Traffic)
	first.Self.Traffic.Rates = &probes.TrafficRates{Seconds: 5, BytesIn: probes.PathRates{DERP: 900_000, Direct: 200_000}}
	var a, b join.Joiner
	return a.SetSnapshot(&first), b.SetSnapshot(&second)
}

// selfModel is the dashboard at w×h on the Self tab with both readings.
func selfModel(t *testing.T, w, h int) Model {
	one, two := selfSnapshots()
	opts := testOptions()
	opts.Version = "v0.9.0"
	opts.Netcheck = func() tea.Cmd { return nil }
	opts.PingDERP = func() tea.Cmd { return nil }
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: w, Height: h}, one, two, keyMsg("6"))
	if m.Focused() != selfpane.Title {
		t.Fatalf("6 focused %q", m.Focused())
	}
	return m
}

// TestGoldenSelf draws the Self tab at 80×24 and 120×30 and compares the
// pane's part of each (Model.Body) with testdata/TestGoldenSelf/*.golden
// (go generate ./..., or go test ./tui/ -run TestGoldenSelf -update):
// every part's first words fit, the home and why it is home, the far
// region, the sparkline, the known bug.
func TestGoldenSelf(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 30}} {
		t.Run(fmt.Sprint(sz[0]), func(t *testing.T) {
			m := selfModel(t, sz[0], sz[1])
			view := screen(m)
			checkScreen(t, "self", view, sz[0], sz[1])
			checkFooter(t, view)
			for _, want := range []string{"6 Self]", "NAT", "hard NAT", "home nyc", "far", "DERP"} {
				if !strings.Contains(view, want) {
					t.Errorf("the Self tab lacks %q:\n%s", want, view)
				}
			}
			requirePaneGolden(t, m)
		})
	}
}

// TestSelfScrollsToEveryPart: at 80×24 the parts below the fold are
// reached with G (the Self tab scrolls, as every text pane does).
func TestSelfScrollsToEveryPart(t *testing.T) {
	m := selfModel(t, 80, 24)
	m, _ = step(t, m, keyMsg("G"))
	view := screen(m)
	for _, want := range []string{"in range", "update to 1.98.0 or later"} {
		if !strings.Contains(view, want) {
			t.Errorf("after G the Self tab lacks %q:\n%s", want, view)
		}
	}
	m, _ = step(t, m, keyMsg("g"))
	if !strings.Contains(screen(m), "hard NAT") {
		t.Errorf("g did not go back to the top:\n%s", screen(m))
	}
}

// TestSelfNoColor: under NO_COLOR (the ASCII profile: bold and reverse
// only) and TERM=dumb (no escapes at all) the Self tab reads the same in
// words: its marks are words ("far", "hard NAT"), never colour alone. The
// whole screen is checked; the goldens (testdata/TestSelfNoColor/*.golden)
// hold the pane's part of it (Model.Body) as the terminal gets it, styles
// and all.
func TestSelfNoColor(t *testing.T) {
	m := selfModel(t, 80, 24)
	content := m.View().Content
	through := func(p colorprofile.Profile, s string) string {
		var out bytes.Buffer
		w := &colorprofile.Writer{Forward: &out, Profile: p}
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	for _, tc := range []struct {
		name    string
		profile colorprofile.Profile
	}{{"no_color", colorprofile.ASCII}, {"dumb", colorprofile.NoTTY}} {
		t.Run(tc.name, func(t *testing.T) {
			got := through(tc.profile, content)
			if strings.Contains(got, "38;") || strings.Contains(got, "48;") || strings.Contains(got, "[3") && strings.Contains(got, "\x1b[3") {
				t.Errorf("%s: a colour survived: %q", tc.name, got)
			}
			if tc.profile == colorprofile.NoTTY && strings.ContainsRune(got, '\x1b') {
				t.Errorf("TERM=dumb: an escape survived: %q", got)
			}
			if unstyled(got) != unstyled(content) {
				t.Errorf("%s: the words changed:\n%s\nwant\n%s", tc.name, unstyled(got), unstyled(content))
			}
			teatest.RequireEqualOutput(t, []byte(through(tc.profile, m.Body())))
		})
	}
}

// TestSelfKeys: n and d call the commands handed in, once each until
// their answers come; the answers are shown; without them (a replayed
// snapshot) the keys do nothing and are not offered.
func TestSelfKeys(t *testing.T) {
	one, _ := selfSnapshots()
	var nc, dc int
	opts := testOptions()
	opts.Netcheck = func() tea.Cmd { nc++; return nil }
	opts.PingDERP = func() tea.Cmd { dc++; return nil }
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 120, Height: 40}, one, keyMsg("6"), keyMsg("n"), keyMsg("n"), keyMsg("d"))
	if nc != 1 || dc != 1 {
		t.Errorf("netcheck ran %d times, the DERP ping %d, want once each while busy", nc, dc)
	}
	if v := screen(m); !strings.Contains(v, "measuring…") || !strings.Contains(v, "pinging the home DERP…") {
		t.Errorf("no busy rows:\n%s", v)
	}
	m, _ = step(t, m,
		selfpane.NetcheckMsg{Report: &probes.DERPLatencyReport{At: peerstest.Time, ByRegion: map[int]time.Duration{1: time.Millisecond, 2: time.Millisecond}}, How: "as `tailscale netcheck` does"},
		selfpane.DERPPingMsg{Region: 1, Code: "nyc", RTT: 190 * time.Millisecond, At: peerstest.Time})
	v := screen(m)
	for _, want := range []string{"2 regions answered", "nyc 190 ms over HTTPS", "against 182 ms in the report"} {
		if !strings.Contains(v, want) {
			t.Errorf("the answers lack %q:\n%s", want, v)
		}
	}
	step(t, m, keyMsg("n"))
	if nc != 2 {
		t.Errorf("n after the answer ran netcheck %d times in all, want 2", nc)
	}

	ro, _ := step(t, New(testOptions()), tea.WindowSizeMsg{Width: 120, Height: 40}, one, keyMsg("6"), keyMsg("n"), keyMsg("d"))
	if v := screen(ro); strings.Contains(v, "measuring…") || strings.Contains(v, "netcheck now") {
		t.Errorf("a read-only Self tab offers or runs n:\n%s", v)
	}
}

// TestSelfSnapshotAges: replayed, the ages count from the snapshot's
// clock (Options.Now), not the wall clock.
func TestSelfSnapshotAges(t *testing.T) {
	_, two := selfSnapshots()
	opts := testOptions()
	opts.Now = func() time.Time { return peerstest.Time.Add(30 * time.Second) }
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 120, Height: 40}, two, keyMsg("6"))
	if v := screen(m); !strings.Contains(v, "as of 30s ago") {
		t.Errorf("the age is not counted from the snapshot's clock:\n%s", v)
	}
}
