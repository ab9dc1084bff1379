package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui/tuning"
)

// DemoTitle is the demo dashboard's title.
const DemoTitle = "tailpath demo (lab tailnet on 127.0.0.1)"

// Demo returns the demo's dashboard over a started lab: its observer as the
// tailscaled, the lab's control API (each node's own NetInfo) as the peers'
// side of each path, the bundled firmware's scenario as the board (Device
// and Log panes), and a sandbox copy of this host's /proc/sys as the
// Tuning pane's host. ctx bounds the replay.
func Demo(ctx context.Context, l *lab.Lab, interval time.Duration) (*Dashboard, error) {
	api, err := controlapi.NewControlAPI(l.ControlAPIConfig())
	if err != nil {
		return nil, err
	}
	d := &Dashboard{
		ControlAPI: api,
		Client:     l.Observer(),
		Socket:     l.ObserverSocket(),
		Interval:   interval,
		Title:      DemoTitle,
		Device:     demoBoard(ctx, l, demoReplaySpeed),
	}
	opts, err := demoTuning(l)
	if err != nil {
		return nil, err
	}
	d.Tuning = &opts
	return d, nil
}

// demoTuning is the seed NAS (DSM on Linux 4.4, no BBR, 20 ms to its
// peer), its tailnet connections replayed from recorded tcp_info, in a
// sandbox copy in the lab's directory that apply and revert really write.
func demoTuning(l *lab.Lab) (tuning.Options, error) {
	dir := filepath.Join(l.Dir(), "tuning-sandbox")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return tuning.Options{}, fmt.Errorf("demo: tuning sandbox: %w", err)
	}
	c, err := tune.SeedNASControl(dir)
	if err != nil {
		return tuning.Options{}, fmt.Errorf("demo: tuning sandbox: %w", err)
	}
	return tuning.OptionsFor(c), nil
}
