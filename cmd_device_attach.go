package main

import (
	"context"
	"errors"
)

// attachDevice wires a serial device into the dashboard.
func attachDevice(ctx context.Context, d *dashboard, f *deviceFlags, stdio IO) error {
	return errors.New("--port: the device pane is not wired into the dashboard yet; use 'tailpath tail --port " + f.port + "' for the log")
}
