package main

import (
	"context"
	"time"

	"github.com/tailpath/tailpath/internal/cli"
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
Needs no root and no network beyond loopback.

Only builds with the demo tag have it: the lab links Tailscale's own node
(tsnet, with gVisor's network stack), which everyday builds leave out.
From a checkout: go run -tags demo . demo`

// demoShort is `tailpath demo`'s line in tailpath's usage.
const demoShort = "start a lab tailnet on loopback and show it in the dashboard"

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
		Short: demoShort,
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
	return f.start(ctx, stdio)
}
