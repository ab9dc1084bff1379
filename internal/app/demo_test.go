//go:build demo

package app

import (
	"context"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/firmware"
	"github.com/tailpath/tailpath/probes/lab"
	"tailscale.com/ipn/ipnstate"
)

// TestRelabelScenario: moving the capture's addresses onto the lab's keeps
// every telemetry frame valid (re-sealed CRC), changes every occurrence, and
// never re-replaces an address it wrote (100.64.0.9 → .2 while .2 → .1).
func TestRelabelScenario(t *testing.T) {
	m := map[string]string{scenarioBoardIP: "100.64.0.2", scenarioPeer2IP: "100.64.0.1", scenarioPeer3IP: "100.64.0.3"}
	in := firmware.ScenarioLines()
	out := relabelScenario(in, m)
	if len(out) != len(in) {
		t.Fatalf("%d lines out of %d", len(out), len(in))
	}
	var frames, boardFrames int
	for i, l := range out {
		if out[i].At != in[i].At {
			t.Fatalf("line %d moved in time", i)
		}
		if strings.Contains(l.Text, scenarioBoardIP) {
			t.Errorf("line %d still has the board's old address: %q", i, l.Text)
		}
		if !strings.HasPrefix(l.Text, "@TP") {
			continue
		}
		if _, err := telemetry.Parse([]byte(l.Text)); err != nil {
			t.Fatalf("line %d: relabelled frame does not parse: %v\n%s", i, err, l.Text)
		}
		frames++
		if strings.Contains(l.Text, " ip=100.64.0.2 ") {
			boardFrames++
		}
	}
	if frames == 0 || boardFrames == 0 {
		t.Errorf("%d frames, %d naming the board at its new address", frames, boardFrames)
	}
}

// TestRelabelRegions: the recording's DERP regions (1, 4, 7) become the
// lab's (901, 903, 902) in log lines and frames alike, so the board's
// evidence and the lab's peers speak of the same regions; frames stay
// valid and the board's state reads the lab's ids.
func TestRelabelRegions(t *testing.T) {
	hosts := map[uint16]string{901: "127.0.0.1:40901", 902: "127.0.0.1:40902"}
	out := relabelRegions(firmware.ScenarioLines(), scenarioRegions, hosts)
	old := regexp.MustCompile(`region [147]\b|derp=[147]\b|derp:[147]\b|near=[147]\b|rg=[147]\b|home [147] \(|derp[147]\.tailscale\.com|2803037f:[147]\b`)
	in := firmware.ScenarioLines()
	for i, l := range out {
		if m := old.FindString(l.Text); m != "" {
			t.Errorf("line %d keeps the recording's region %q: %s", i, m, l.Text)
		}
		at := telemetry.Index([]byte(in[i].Text))
		if at < 0 {
			continue
		}
		if _, err := telemetry.Parse([]byte(in[i].Text[at:])); err != nil {
			continue // a deliberately corrupt frame stays as it was
		}
		if _, err := telemetry.Parse([]byte(l.Text[telemetry.Index([]byte(l.Text)):])); err != nil {
			t.Errorf("line %d: a valid frame no longer parses: %v\n%s", i, err, l.Text)
		}
	}
	st := devlink.NewState()
	var sp devlink.Splitter
	for _, l := range out[:100] { // boot 1, before its path goes back to DERP
		sp.Feed([]byte(l.Text+"\n"), func(ln *devlink.Line) { st.ApplyLine(ln, time.Time{}, nil) })
	}
	if st.HomeDERP != 901 || st.NearestDERP != 902 || st.HomeDERPHost != "127.0.0.1" {
		t.Errorf("board state: home %d (%q), nearest %d; want 901 at 127.0.0.1 and 902", st.HomeDERP, st.HomeDERPHost, st.NearestDERP)
	}
}

// TestBoardPathSwitches: the lab's DERP-only node follows the board's own
// path to the observer: direct at 35 s, relayed again at 1m40 s (its probe
// table full), direct in the second boot; demo --status links the board as
// it stood before its first switch.
func TestBoardPathSwitches(t *testing.T) {
	observer := netip.MustParseAddr("100.64.0.1")
	lines := relabelScenario(firmware.ScenarioLines(), map[string]string{scenarioBoardIP: "100.64.0.2", scenarioPeer2IP: observer.String()})
	sw := boardPathSwitches(lines, observer)
	type change struct {
		At       time.Duration
		DERPOnly bool
	}
	var got []change
	for i, derpOnly := range sw {
		got = append(got, change{lines[i].At.Truncate(time.Second), derpOnly})
	}
	slices.SortFunc(got, func(a, b change) int { return int(a.At - b.At) })
	want := []change{{35 * time.Second, false}, {100 * time.Second, true}, {160 * time.Second, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("switches (-want +got):\n%s", diff)
	}
	if i, ok := firstDirect(sw); !ok || lines[i].At.Truncate(time.Second) != 35*time.Second {
		t.Errorf("first direct at line %d (%v)", i, ok)
	}
}

// TestDemoLabFollowsBoard: in the demo the lab's DERP-only node follows
// the replayed board: once the board reports its path to the observer
// direct, the observer's path to lab-derp goes direct too (its endpoints
// still unknown to control), and relayed again when the board's does.
// The replay runs 10× fast.
func TestDemoLabFollowsBoard(t *testing.T) {
	l := startTestLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src := demoBoard(ctx, l, 10)
	boardDirect := make(chan time.Time, 1)
	obs := l.ObserverIP()
	go func() {
		told := false
		for ev := range src.Run(ctx) {
			for _, p := range ev.State.Peers {
				if !told && p.IP == obs && p.Path.Kind == telemetry.PathDirect {
					told = true
					boardDirect <- time.Now()
				}
			}
		}
	}()
	var at time.Time
	select {
	case at = <-boardDirect:
	case <-ctx.Done():
		t.Fatal("the replayed board never went direct")
	}
	ps, err := l.WaitFor(ctx, lab.DERPName, "direct", func(ps *ipnstate.PeerStatus) bool { return ps.CurAddr != "" })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lab-derp direct (%s) %v after the board", ps.CurAddr, time.Since(at).Round(100*time.Millisecond))
	if len(ps.Addrs) != 0 {
		t.Errorf("control lists endpoints %v for the board's node", ps.Addrs)
	}
	if _, err := l.WaitFor(ctx, lab.DERPName, "relayed again", func(ps *ipnstate.PeerStatus) bool { return ps.CurAddr == "" && ps.Active }); err != nil {
		t.Fatal(err)
	}
	t.Logf("lab-derp relayed again %v after the board went direct", time.Since(at).Round(100*time.Millisecond))
}
