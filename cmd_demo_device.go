package main

import (
	"context"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/firmware"
	"github.com/tailpath/tailpath/probes/lab"
)

// demoReplaySpeed is how much faster than the board the demo replays the
// firmware scenario (about two minutes of the CoreS3 case at 1×).
const demoReplaySpeed = 1.0

// Tailnet addresses in the firmware scenario capture: the board itself and
// its two peers (peer 2 serves the file it downloads).
const (
	scenarioBoardIP = "100.64.0.9"
	scenarioPeer2IP = "100.64.0.2"
	scenarioPeer3IP = "100.64.0.3"
)

func init() {
	demoHooks = append(demoHooks, func(ctx context.Context, d *dashboard, l *lab.Lab) error {
		// The simulated CoreS3: the bundled firmware's scenario capture,
		// replayed at the pace of its own timestamps, with its tailnet
		// addresses moved onto the lab's: the board is the lab's DERP-only
		// node (the embedded client that never advertised an endpoint), and
		// the peer it downloads from is the observer.
		m := map[string]string{}
		for _, p := range l.Peers() {
			switch p.Name {
			case lab.DERPName:
				m[scenarioBoardIP] = p.TailscaleIP.String()
			case lab.DirectName:
				m[scenarioPeer3IP] = p.TailscaleIP.String()
			}
		}
		if ip, err := l.Observer().Status(ctx); err == nil && len(ip.TailscaleIPs) > 0 {
			m[scenarioPeer2IP] = ip.TailscaleIPs[0].String()
		}
		lines := relabelScenario(firmware.ScenarioLines(), m)
		addDevicePanes(d, &devlink.Source{Replay: pacedReplay(ctx, lines, demoReplaySpeed)}, nil)
		return nil
	})
}

// relabelScenario replaces whole tailnet addresses in the capture (from →
// to, all at once, so a replacement is never replaced again) and re-seals
// every telemetry frame it changed with its CRC-32 (docs/telemetry.md: over
// the bytes from "@" up to the space before "*").
func relabelScenario(lines []firmware.ScenarioLine, m map[string]string) []firmware.ScenarioLine {
	var pairs []string
	for from, to := range m {
		pairs = append(pairs, from, to)
	}
	r := strings.NewReplacer(pairs...)
	out := make([]firmware.ScenarioLine, len(lines))
	for i, l := range lines {
		text := r.Replace(l.Text)
		if text != l.Text && strings.HasPrefix(text, "@TP") {
			if star := strings.LastIndex(text, " *"); star > 0 {
				text = fmt.Sprintf("%s *%08X", text[:star], crc32.ChecksumIEEE([]byte(text[:star])))
			}
		}
		out[i] = firmware.ScenarioLine{At: l.At, Text: text}
	}
	return out
}
