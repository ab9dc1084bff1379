package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/internal/dashboard"
	"github.com/tailpath/tailpath/internal/report"
	"github.com/tailpath/tailpath/probes/lab"
)

// demoFlags are the flags of tailpath demo.
type demoFlags struct {
	// status prints the lab's status once (like tailpath status) and exits.
	status bool
	// json selects JSON for --status.
	json bool
	// logFile (--lab-log) receives the lab components' logs (control, DERP,
	// nodes); the dashboard's --log-file is the device log instead.
	logFile string
	// interval is how often Status is polled.
	interval time.Duration
	// labOnly runs the lab without the dashboard until interrupted, printing
	// the observer's LocalAPI socket for other tools (tailpath --socket,
	// tailpath status --socket).
	labOnly bool
	// serve, when set, serves the demo (lab, simulated board, sandbox
	// tuning) as tailpath serve does, on this address, instead of the
	// dashboard.
	serve string
}

const demoUsage = `usage: tailpath demo [--status [--json] | --lab-only | --serve 127.0.0.1:9473]

Starts a lab tailnet made of real Tailscale code on 127.0.0.1 (control, two
DERP regions and a STUN-only one, and five nodes: the observer the dashboard watches, a
direct peer, a DERP-only peer in a child process that advertises no
endpoints, an idle peer and an offline one), then shows it in the dashboard.
Needs no root and no network beyond loopback.`

func demoCommand() *cli.Command {
	var f demoFlags
	fs := cli.NewFlagSet("tailpath demo")
	fs.BoolVar(&f.status, "status", false, "print the lab's peers, paths and verdicts once and exit")
	fs.BoolVar(&f.json, "json", false, "with --status: print JSON")
	fs.StringVar(&f.logFile, "lab-log", "", "append the lab's own logs (control, DERP, nodes) to this file")
	fs.BoolVar(&f.labOnly, "lab-only", false, "run only the lab tailnet until interrupted and print its LocalAPI socket (for 'tailpath --socket' or 'tailpath status --socket')")
	fs.DurationVar(&f.interval, "interval", 2*time.Second, "how often to poll the observer's status")
	fs.StringVar(&f.serve, "serve", "", "instead of the dashboard, serve the demo's metrics as 'tailpath serve' does on this address (e.g. 127.0.0.1:9473)")
	return &cli.Command{
		Name:  "demo",
		Short: "start a lab tailnet on loopback and show it in the dashboard",
		Usage: demoUsage,
		Flags: fs,
		Run:   f.run,
	}
}

func (f *demoFlags) run(ctx context.Context, args []string, stdio cli.IO) error {
	if err := cli.NoArgs(args); err != nil {
		return err
	}
	if f.json && !f.status {
		return cli.UsageErrorf("--json needs --status")
	}
	if f.serve != "" {
		if f.status || f.labOnly {
			return cli.UsageErrorf("--serve goes alone, without --status or --lab-only")
		}
		if err := checkListen(f.serve); err != nil {
			return cli.UsageErrorf("--serve %v", err)
		}
	}
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
