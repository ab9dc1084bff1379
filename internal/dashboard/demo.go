//go:build demo

package dashboard

import (
	"context"
	"time"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/probes/lab"
)

// DemoTitle is the demo dashboard's title.
const DemoTitle = "tailpath demo (lab tailnet on 127.0.0.1)"

// Demo returns the demo's dashboard over a started lab: DemoSources under
// the demo's title. ctx bounds the board's replay.
func Demo(ctx context.Context, l *lab.Lab, interval time.Duration) (*Dashboard, error) {
	srcs, err := app.DemoSources(ctx, l, interval)
	if err != nil {
		return nil, err
	}
	return &Dashboard{Sources: srcs, Title: DemoTitle}, nil
}
