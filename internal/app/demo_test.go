package app

import (
	"strings"
	"testing"

	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/firmware"
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
