package probes

import (
	"strings"
	"testing"
	"time"
)

// TestPingRunCutOffIsNoEvidence: a ping the probe's budget cut off is not
// tried (PingRun.CutOff, probes/discoping), so a run of nothing but such pings
// says nothing about the peer, where a run whose ping timed out on its own
// is no-handshake's evidence; cut-off pings beside answered ones leave the
// answered ones' evidence as it was.
func TestPingRunCutOffIsNoEvidence(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	self := easySelf()
	for _, tc := range []struct {
		name       string
		run        PingRun
		wantReason ReasonID
		wantValue  string // the PingRun check's value
		wantNote   string
	}{
		{"a ping that timed out on its own: silent", PingRun{Tries: 1, Probe: true}, ReasonNoHandshake, "1 tries, 0 pongs", ""},
		{"a ping the budget cut off: not tried", PingRun{CutOff: 1, Unfinished: true, Probe: true}, ReasonUnexplained,
			"0 tries, 0 pongs, 1 cut off by the probe's time limit", "the probe ran out of time first"},
		{"no ping sent before the budget ended", PingRun{Unfinished: true, Probe: true}, ReasonUnexplained, "0 tries, 0 pongs", "ran out of time"},
		{"pongs through DERP, then one cut off", PingRun{Tries: 2, Pongs: 2, Via: "DERP(nyc)", CutOff: 1, Unfinished: true, Probe: true}, ReasonDiscoUnanswered,
			"2 tries, 2 pongs, last via DERP(nyc), 1 cut off by the probe's time limit", "pongs came only through DERP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
			p.WireGuard, p.NoHandshakeSince = WGNone, now.Add(-time.Minute)
			run := tc.run
			run.At = now.Add(-5 * time.Second)
			p.PingRun = &run
			v := Diagnose(self, p, testRegions, now)
			if v.Reason != tc.wantReason {
				t.Errorf("reason %s, want %s; checks %+v", v.Reason, tc.wantReason, v.Checks)
			}
			found := false
			for _, c := range v.Checks {
				if c.Field != "PingRun" {
					continue
				}
				found = true
				if string(c.Value) != tc.wantValue || !strings.Contains(string(c.Note), tc.wantNote) {
					t.Errorf("PingRun check %q (%s), want %q with %q", c.Value, c.Note, tc.wantValue, tc.wantNote)
				}
			}
			if !found {
				t.Errorf("no PingRun check in %+v", v.Checks)
			}
		})
	}
}
