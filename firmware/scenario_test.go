package firmware

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestScenarioLines(t *testing.T) {
	disk, err := os.ReadFile("testdata/scenario.log")
	if err != nil {
		t.Fatal(err)
	}
	if scenarioLog != string(disk) {
		t.Fatal("embedded scenario differs from testdata/scenario.log")
	}
	lines := ScenarioLines()
	if got, want := len(lines), bytes.Count(disk, []byte("\n")); got != want {
		t.Fatalf("%d lines, want %d", got, want)
	}
	var prev time.Duration
	banners := 0
	for i, l := range lines {
		if l.At < prev {
			t.Fatalf("line %d %q at %v before previous %v", i, l.Text, l.At, prev)
		}
		prev = l.At
		if strings.HasPrefix(l.Text, "ESP-ROM:") {
			banners++
		}
		if l.Text == "I (34012) ts_disco: Pong recv from 203.0.113.7:41641 → peer 2 direct" && l.At != 34012*time.Millisecond {
			t.Errorf("first direct pong at %v, want 34.012s", l.At)
		}
	}
	if banners != 2 {
		t.Errorf("%d ROM banners, want 2 boots", banners)
	}
	// Boot 2 starts after boot 1's 150 s and runs 180 s (its relay outage
	// ends at 160 s).
	if last := lines[len(lines)-1].At; last < 320*time.Second || last > 331*time.Second {
		t.Errorf("capture ends at %v, want ~330s", last)
	}
	if lines[0].At != 0 {
		t.Errorf("first line at %v, want 0", lines[0].At)
	}
}
