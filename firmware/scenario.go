package firmware

import (
	_ "embed"
	"strconv"
	"strings"
	"time"
)

// scenarioLog is the CoreS3 scenario capture: the exact console stream
// (ESP-IDF log lines, the Tailscale port's lines, telemetry frames) that
// host/scenario.c produces from the real portable core, two boots long
// (the old firmware, then the fixed one). Lines end in "\n". `tailpath demo`
// replays it as the simulated board (ScenarioLines); tests that want the
// bytes read testdata/scenario.log.
//
//go:embed testdata/scenario.log
var scenarioLog string

// ScenarioLine is one line of the scenario capture.
type ScenarioLine struct {
	// At is when the board printed it, measured from the start of the
	// capture: the line's uptime (log timestamp or a frame's up=), plus the
	// length of the earlier boots. Lines without a time (ROM banner, raw
	// printf) take the previous line's. Never decreases.
	At time.Duration
	// Text is the line without its "\n".
	Text string
}

// ScenarioLines splits the scenario capture into lines with their times, so a
// replayer can pace them (e.g. sleep until start+At/speed before sending).
func ScenarioLines() []ScenarioLine {
	var (
		out        []ScenarioLine
		base, last time.Duration // base: length of earlier boots
		sawUptime  bool
	)
	for _, l := range strings.SplitAfter(scenarioLog, "\n") {
		if l == "" {
			continue
		}
		l = strings.TrimSuffix(l, "\n")
		if strings.HasPrefix(l, "ESP-ROM:") && sawUptime {
			base = last // a reset: uptime restarts at 0
		}
		if ms, ok := lineUptime(l); ok {
			sawUptime = true
			if at := base + time.Duration(ms)*time.Millisecond; at > last {
				last = at
			}
		}
		out = append(out, ScenarioLine{At: last, Text: l})
	}
	return out
}

// lineUptime returns the uptime in ms of an ESP-IDF log line "L (123) tag: …"
// or a telemetry frame's "up=123" field.
func lineUptime(l string) (uint64, bool) {
	if strings.HasPrefix(l, "@TP") {
		i := strings.Index(l, " up=")
		if i < 0 {
			return 0, false
		}
		rest := l[i+4:]
		if j := strings.IndexByte(rest, ' '); j >= 0 {
			rest = rest[:j]
		}
		v, err := strconv.ParseUint(rest, 10, 32)
		return v, err == nil
	}
	if len(l) > 4 && strings.ContainsRune("EWIDV", rune(l[0])) && l[1] == ' ' && l[2] == '(' {
		j := strings.IndexByte(l, ')')
		if j < 0 {
			return 0, false
		}
		v, err := strconv.ParseUint(l[3:j], 10, 32)
		return v, err == nil
	}
	return 0, false
}
