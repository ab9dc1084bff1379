package tailscaled

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tailpath/tailpath/probes"
)

// cmpOpts compares netip values by ==.
var cmpOpts = []cmp.Option{cmpopts.EquateComparable(netip.Addr{}, netip.AddrPort{}, netip.Prefix{})}

// fixtureNow is the clock for fixture tests; fixture timestamps are around it.
var fixtureNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func boolp(b bool) *bool { return &b }

func hasReason(rs []probes.ReasonID, r probes.ReasonID) bool { return slices.Contains(rs, r) }

// checkStates asserts the Check invariants: every check has a State,
// Failed exactly when State is fail, and an "unknown" value is never
// marked ok or failed.
func checkStates(t *testing.T, cs []probes.Check) {
	t.Helper()
	for _, c := range cs {
		switch {
		case c.State == "":
			t.Errorf("%s has no State", c.Field)
		case c.Failed != (c.State == probes.CheckFail):
			t.Errorf("%s: Failed %v but State %q", c.Field, c.Failed, c.State)
		case c.Value == "unknown" && c.State != probes.CheckUnknown:
			t.Errorf("%s = unknown marked %q, want %q", c.Field, c.State, probes.CheckUnknown)
		}
	}
}

func checksText(cs []probes.Check) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %v %s=%s (%s)\n", c.Failed, c.Field, c.Value, c.Note)
	}
	return b.String()
}

// judgedAt is gatherAt, then the gather judged as the joiner judges it
// (probes.Judge over a copy of its peers: the gather itself keeps no
// verdicts).
func judgedAt(ctx context.Context, c LocalClient, prev *probes.Snapshot, now time.Time, opts GatherOptions) (*probes.Snapshot, error) {
	snap, err := gatherAt(ctx, c, prev, now, opts)
	if err != nil {
		return nil, err
	}
	return judged(snap), nil
}

// judged is a copy of s with every verdict written by probes.Judge.
func judged(s *probes.Snapshot) *probes.Snapshot {
	j := *s
	j.Peers = slices.Clone(s.Peers)
	probes.Judge(&j, nil)
	return &j
}
