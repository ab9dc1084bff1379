package app

import (
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// TestProbeRunText: status --probe's line per peer tells a ping the budget
// cut off (not tried) from one that got no answer, and a peer never
// reached from both; the warning names the unfinished peers, the first
// ten of them.
func TestProbeRunText(t *testing.T) {
	for _, tc := range []struct {
		run  *probes.PingRun
		want string
	}{
		{nil, "not pinged (out of time)"},
		{&probes.PingRun{Probe: true, Unfinished: true}, "not pinged (out of time)"},
		{&probes.PingRun{Tries: 3, Probe: true}, "3 pings, 0 pongs: no answer"},
		{&probes.PingRun{Tries: 2, Pongs: 2, Via: "DERP(nyc)"}, "2 pings, 2 pongs via DERP(nyc), none direct"},
		{&probes.PingRun{Tries: 3, Pongs: 1, Direct: true}, "3 pings, 1 pong, direct"},
		{&probes.PingRun{CutOff: 1, Unfinished: true}, "0 pings, 0 pongs; 1 ping cut off (out of time): not tried"},
		{&probes.PingRun{Tries: 1, Pongs: 1, Via: "DERP(nyc)", CutOff: 1, Unfinished: true}, "1 ping, 1 pong via DERP(nyc), none direct; 1 ping cut off (out of time): not tried"},
		{&probes.PingRun{Tries: 1, Pongs: 1, Via: "DERP(nyc)", Unfinished: true}, "1 ping, 1 pong via DERP(nyc), none direct; not finished (out of time)"},
	} {
		if got := runText(tc.run); got != tc.want {
			t.Errorf("runText(%+v) = %q, want %q", tc.run, got, tc.want)
		}
	}
	var left []safetext.Text
	for _, n := range strings.Fields("a b c d e f g h i j k l") {
		left = append(left, safetext.New(n))
	}
	w := string(unfinishedWarning(left, 40, 15*time.Second))
	for _, want := range []string{"--probe ran out of time (15s) before it finished 12 of 40 relayed peers: a, b, c, d, e, f, g, h, i, j, and 2 more;", "not tried"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
}
