package main

import (
	"context"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/firmware"
	"github.com/tailpath/tailpath/probes/lab"
)

// demoReplaySpeed is how much faster than the board the demo replays the
// firmware scenario (about two minutes of the CoreS3 case at 1×).
const demoReplaySpeed = 1.0

func init() {
	demoHooks = append(demoHooks, func(ctx context.Context, d *dashboard, l *lab.Lab) error {
		// The simulated CoreS3: the bundled firmware's scenario capture,
		// replayed at the pace of its own timestamps.
		addDevicePanes(d, &devlink.Source{Replay: pacedReplay(ctx, firmware.ScenarioLines(), demoReplaySpeed)})
		return nil
	})
}
