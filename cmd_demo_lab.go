//go:build demo

package main

// The demo's lab tailnet, only in builds with the demo tag: it links
// Tailscale's own node (tsnet, gVisor's network stack), about 40 packages
// and 20 MB that the everyday binary leaves out (docs/perf.md).

import (
	"context"
	"fmt"
	"io"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/internal/dashboard"
	"github.com/tailpath/tailpath/internal/report"
	"github.com/tailpath/tailpath/probes/lab"
)

// maybeRunLabNode runs this process as a lab node and exits when it was
// re-executed as one (the demo's DERP-only node is a child process).
func maybeRunLabNode() { lab.MaybeRunNode() }

// start starts the lab and shows it as f asks.
func (f *demoFlags) start(ctx context.Context, stdio cli.IO) error {
	if !f.status && !f.labOnly && f.serve == "" {
		// Fail before the lab's few seconds of start-up, not after.
		if err := dashboard.NeedTerminal(stdio.Stdin); err != nil {
			return err
		}
	}
	prog := app.NewProgress(stdio.Stderr)
	prog.Step("starting the lab tailnet on 127.0.0.1")
	l, err := lab.Start(ctx, lab.Options{Progress: prog.Step, LogFile: f.logFile})
	prog.Done()
	if err != nil {
		return fmt.Errorf("demo: starting the lab tailnet: %w", err)
	}
	defer l.Close()

	switch {
	case f.status:
		return demoStatus(ctx, l, f.json, stdio.Stdout)
	case f.labOnly:
		fmt.Fprintf(stdio.Stdout, "lab tailnet running; the observer's LocalAPI socket is\n  %s\ntry: tailpath --socket %s\nCtrl-C stops the lab.\n", l.ObserverSocket(), l.ObserverSocket())
		<-ctx.Done()
		return nil
	}
	if f.serve != "" {
		srcs, err := app.DemoSources(ctx, l, f.interval)
		if err != nil {
			return err
		}
		return app.ServeDemo(ctx, srcs, f.serve, stdio.Stderr)
	}
	d, err := dashboard.Demo(ctx, l, f.interval)
	if err != nil {
		return err
	}
	return d.Run(ctx, stdio.Stdin, stdio.Stdout)
}

// demoStatus prints the observer's view once, as tailpath status does,
// linked to the simulated board (app.DemoStatus).
func demoStatus(ctx context.Context, l *lab.Lab, asJSON bool, w io.Writer) error {
	s, err := app.DemoStatus(ctx, l)
	if err != nil {
		return err
	}
	return report.Print(w, s, asJSON)
}
