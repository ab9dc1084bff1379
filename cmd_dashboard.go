package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/internal/dashboard"
	"github.com/tailpath/tailpath/probes/paste"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// dashboardFlags are the flags of the default command (the dashboard).
type dashboardFlags struct {
	// from shows a saved snapshot (or pasted tailscale output) read-only
	// instead of the local tailscaled.
	from []string
	// socket is the tailscaled LocalAPI socket; "" is the platform default.
	socket string
	// interval is how often Status is polled.
	interval time.Duration
	// all keeps the peers `tailscale status` hides (shared-in nodes,
	// Mullvad exit nodes).
	all bool
	// port is "" (no device), "auto", a device path, or "-" for a capture
	// on stdin.
	port string
	// baud is the serial speed in bits per second.
	baud int
	// elf is the firmware ELF(s) for decoding backtraces and binary logs.
	elf string
	// logFile, when set, receives every device line as it arrives.
	logFile string
	// reset asks for one deliberate hard reset of the board after opening
	// the port (opening never resets it otherwise).
	reset bool
	// eol is what the Log pane's console sends for Enter: CR, LF or CRLF.
	eol string
	api apiFlags
}

const dashboardUsage = `usage: tailpath [flags]

With no command, tailpath runs the dashboard against the local tailscaled:
peers and why each is relayed, and with --port a board's Device and Log
panes; the host's TCP tuning is the last pane. S saves a snapshot of the
evidence; --from FILE shows a saved one (or pasted tailscale output),
read-only.`

// dashboardShort is the dashboard's line in tailpath's usage.
const dashboardShort = "the dashboard: peers, paths and why relayed (default)"

func dashboardCommand() *cli.Command {
	var f dashboardFlags
	fs := cli.NewFlagSet("tailpath")
	fs.StringVar(&f.socket, "socket", "", "tailscaled LocalAPI socket (default: the platform's)")
	fs.Var(listFlag{&f.from}, "from", "show this saved snapshot (or pasted tailscale status/netcheck/ping output) read-only instead of the local tailscaled")
	fs.DurationVar(&f.interval, "interval", 2*time.Second, "how often to poll tailscaled's status")
	fs.BoolVar(&f.all, "all", false, "also list the peers 'tailscale status' hides (shared-in nodes, Mullvad exit nodes)")
	f.api.register(fs)
	f.registerDevice(fs)
	return &cli.Command{
		Name:  "",
		Short: dashboardShort,
		Usage: dashboardUsage,
		Flags: fs,
		Run:   f.run,
	}
}

func (f *dashboardFlags) registerDevice(fs *flag.FlagSet) {
	fs.StringVar(&f.port, "port", "", `CoreS3 serial port: "auto", a path, or "-" to replay a capture from stdin (default: no device)`)
	fs.IntVar(&f.baud, "baud", 115200, "serial speed in bits per second")
	fs.StringVar(&f.elf, "elf", "", "firmware ELF to decode backtraces and binary logs with (app.elf[,bootloader.elf])")
	fs.StringVar(&f.logFile, "log-file", "", "append every device line to this file")
	fs.BoolVar(&f.reset, "reset", false, "hard-reset the board once after opening the port (opening alone never resets it)")
	fs.StringVar(&f.eol, "eol", "CR", `line ending the Log pane's console (key i) sends: "CR", "LF" or "CRLF"`)
}

func (f *dashboardFlags) run(ctx context.Context, args []string, stdio cli.IO) error {
	if len(f.from) > 0 {
		return f.runFrom(ctx, args, stdio)
	}
	if err := cli.NoArgs(args); err != nil {
		return err
	}
	api, err := f.api.open()
	if err != nil {
		return cli.UsageError{Err: err}
	}
	client := tailscaled.NewClient(f.socket)
	d := dashboard.Dashboard{
		Sources: app.Sources{
			ControlAPI: api,
			Client:     client,
			Socket:     f.socket,
			Interval:   f.interval,
			All:        f.all,
			// The host's own TCP tuning (on other systems the pane says
			// "Linux only"), first saying whether tailnet TCP is the
			// kernel's at all.
			Tuning: &tune.Control{Inputs: app.TuneDaemon(f.socket, tune.Inputs{})},
		},
		Title: "tailpath",
	}
	if f.port != "" {
		eol, err := devlink.EOLBytes(f.eol)
		if err != nil {
			return cli.UsageError{Err: err}
		}
		err = d.AttachDevice(dashboard.DeviceOptions{Port: f.port, Baud: f.baud, ELF: f.elf, LogFile: f.logFile, Reset: f.reset, EOL: eol}, stdio.Stdin)
		if err != nil {
			return err
		}
	}
	return d.Run(ctx, stdio.Stdin, stdio.Stdout)
}

// runFrom is the dashboard over a saved snapshot or pasted output (the
// files of --from and any after it), read-only.
func (f *dashboardFlags) runFrom(ctx context.Context, args []string, stdio cli.IO) error {
	if f.port != "" {
		return cli.UsageErrorf("--from shows saved evidence: --port does not apply")
	}
	if err := dashboard.NeedTerminal(stdio.Stdin); err != nil {
		return err
	}
	var raws []paste.Raw
	for _, name := range append(append([]string(nil), f.from...), args...) {
		if name == "-" {
			return cli.UsageErrorf(`--from -: the dashboard reads keys from stdin; give a file`)
		}
		raw, err := paste.ReadInput(ctx, name, nil)
		if err != nil {
			return cli.InputError{Err: fmt.Errorf("--from: %w", err)}
		}
		raws = append(raws, raw)
	}
	file, err := paste.Parse(raws, time.Now())
	if err != nil {
		return cli.InputError{Err: fmt.Errorf("--from: %w", err)}
	}
	file.All = file.All || f.all
	d := dashboard.Dashboard{Title: "tailpath", Replay: file}
	return d.Run(ctx, stdio.Stdin, stdio.Stdout)
}
