package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

func TestWriteStatusJSONEmpty(t *testing.T) {
	var b bytes.Buffer
	for _, s := range []*join.Snapshot{nil, {}} {
		for _, asJSON := range []bool{true, false} {
			if err := Print(&b, s, asJSON); err == nil {
				t.Errorf("snapshot %v, JSON %v: no error", s, asJSON)
			}
		}
	}
	if b.Len() != 0 {
		t.Errorf("wrote %q", b.String())
	}
}

// TestStatusTableWidth: the table fits a terminal (the reason cut to what
// the other columns leave), and prints every cell whole on a file or pipe
// (width 0) or a terminal wide enough.
func TestStatusTableWidth(t *testing.T) {
	snap := peerstest.Snapshot()
	long := "device-no-public-endpoint: board's endpoints never reached control, so peers can only reach it through DERP"
	snap.Peers[0].Verdict.Reason = "device-no-public-endpoint"
	snap.Peers[0].Verdict.Summary = safetext.New(long)
	ls := peerstest.Joined(snap)
	for _, tc := range []struct {
		width int
		whole bool
	}{{0, true}, {200, true}, {120, false}, {80, false}} {
		t.Run(fmt.Sprint(tc.width), func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTable(&b, ls, tc.width); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if got := strings.Contains(out, long); got != tc.whole {
				t.Errorf("reason whole = %v, want %v:\n%s", got, tc.whole, out)
			}
			if tc.width == 0 {
				return
			}
			for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
				if strings.HasPrefix(l, "self:") || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "⇄") {
					continue // prose lines wrap as the terminal wraps them
				}
				if w := ansi.StringWidth(l); w > tc.width {
					t.Errorf("line %d cells wide on a %d-column terminal: %q", w, tc.width, l)
				}
			}
			if !tc.whole && !strings.Contains(out, "device-no-public-endpoint:") {
				t.Errorf("reason cut inside its id:\n%s", out)
			}
		})
	}
}

// TestStepForNamesAFew: a step that settles many peers names the first
// MaxStepPeers and counts the rest, so its line stays a line.
func TestStepForNamesAFew(t *testing.T) {
	st := probes.Step{Self: true, Decides: []probes.ReasonID{"disco-unanswered"}}
	for i := range 250 {
		st.Peers = append(st.Peers, safetext.New(fmt.Sprintf("peer%04d", i)))
	}
	got := StepFor(st, probes.ModeStatus)
	want := "for this node, peer0000, peer0001, peer0002, peer0003, peer0004, peer0005, peer0006, peer0007 and 242 more: decides disco-unanswered"
	if !strings.HasPrefix(got, want) {
		t.Errorf("StepFor = %q, want it to start %q", got, want)
	}
	st.Peers = st.Peers[:MaxStepPeers]
	if got := StepFor(st, probes.ModeStatus); strings.Contains(got, "more") || !strings.Contains(got, "peer0007: decides") {
		t.Errorf("StepFor of %d peers = %q, want every one named", MaxStepPeers, got)
	}
}
