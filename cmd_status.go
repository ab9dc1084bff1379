package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/internal/report"
	"github.com/tailpath/tailpath/probes/discoping"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// statusFlags are tailpath status's flags.
type statusFlags struct {
	json    bool          // print the snapshot as JSON ({"self":…, "peers":[…]}) instead of a table
	socket  string        // tailscaled's LocalAPI socket; "" = the platform default
	timeout time.Duration // bound on the whole LocalAPI exchange
	// port is a board whose own evidence joins its peer's verdict: "" none,
	// "-" a capture on stdin (read to its end), "auto" or a path (listened
	// to for boardWait).
	port      string
	baud      int           // serial speed of a live port, bits per second
	boardWait time.Duration // how long to listen to a live port
	// all also lists the peers `tailscale status` hides (shared-in nodes,
	// Mullvad exit nodes); they are counted otherwise.
	all bool
	// netcheck measures fresh DERP latencies first (STUN from this
	// process, as `tailscale netcheck` does) so far-home-derp is judged;
	// without it NetInfo's latencies, of unknown age, are only shown.
	netcheck bool
	// probe runs a bounded DISCO ping run to every relayed peer before
	// diagnosing (probes/discoping): evidence for disco-unanswered.
	probe bool
	api   apiFlags
	snap  snapshotFlags // --save, --redact, --from, --peer-snapshot (cmd_status_snapshot.go)
	fs    *flag.FlagSet // to read flags given after --from's files
}

// statusExitNotRunningState is status's exit when tailscaled answered but
// is not Running (table mode; the table is still printed): a runtime
// failure, like tailscaled not answering at all.
const statusExitNotRunningState = cli.ExitError

const statusUsage = `usage: tailpath status [--json] [--all] [--netcheck] [--probe] [--api-key-file F | --no-api] [--socket PATH] [--timeout 10s] [--port auto|PATH|-]
                      [--save FILE|- [--redact]] [--peer-snapshot FILE]
       tailpath status --from FILE... [--json] [--redact] [--save FILE|-] [--peer-snapshot FILE]
       tailpath status --from FILE... --reply

Shows each peer's path in ` + "`tailscale status`" + ` words and why it is relayed.
With a read-only Tailscale API key (TAILSCALE_API_KEY, or an OAuth client
with the devices:core:read scope) it also reads each peer's own side of the
path (NAT type, UDP, port mapping, home DERP) from the control API, waiting
for it at most 2 s. With --port, a CoreS3 board's own telemetry (live, or a
capture on stdin) joins the verdict of the peer it is, as in the dashboard.

--probe first pings every relayed peer (one TSMP ping, then at most 10
DISCO pings each, 8 peers at once, 15 s in all, a second more per 8 peers
beyond 100, at most 60 s; progress on stderr), so a relayed path whose ends
look fine reads disco-unanswered or goes direct. A ping the time limit cuts
off counts as not tried, and the peers it did not finish are named.
Pinging keeps a peer active for about 45 s: it changes what it measures.

--save writes a snapshot of all the evidence (--redact: safe to share);
--from diagnoses a saved snapshot, or what people paste (tailscale status,
netcheck, ping, tailscaled log lines), offline; --peer-snapshot adds the
peer's own end from a snapshot saved on it (docs/snapshots.md). Both take
a file, or the URL of a node's tailpath serve (http://HOST:9473/snapshot.json).
--reply writes a redacted Markdown reply for the thread --from's paste came
from: what it shows, what is still open, and the commands to run and paste
back (the table's "to settle" block, docs/diagnosis.md).`

// statusShort is `tailpath status`'s line in tailpath's usage.
const statusShort = "one-shot table of peers, their paths and why each is relayed"

func statusCommand() *cli.Command {
	var f statusFlags
	fs := cli.NewFlagSet("tailpath status")
	fs.BoolVar(&f.json, "json", false, `print JSON ({"self":…, "peers":[…]}) instead of a table`)
	fs.StringVar(&f.socket, "socket", "", "tailscaled LocalAPI socket (default "+tailscaled.DefaultSocket()+")")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "give up on tailscaled after this long")
	fs.StringVar(&f.port, "port", "", `a board to link to its peer: "auto", a serial port path, or "-" for a capture on stdin (default: none)`)
	fs.IntVar(&f.baud, "baud", 115200, "serial speed in bits per second")
	fs.DurationVar(&f.boardWait, "board-wait", 6*time.Second, "with a live --port: how long to listen for the board's telemetry (it sends every 5 s)")
	fs.BoolVar(&f.all, "all", false, "also list the peers 'tailscale status' hides (shared-in nodes, Mullvad exit nodes)")
	fs.BoolVar(&f.netcheck, "netcheck", false, "measure DERP latencies first (a few STUN packets, up to 5 s) so a far relay region can be judged")
	fs.BoolVar(&f.probe, "probe", false, "ping every relayed peer first (at most 10 DISCO pings each, 8 at once, 15 s in all, up to 60 s for many peers; keeps them active ~45 s)")
	f.api.register(fs)
	f.snap.register(fs)
	f.fs = fs
	return &cli.Command{
		Name:  "status",
		Short: statusShort,
		Usage: statusUsage,
		Flags: fs,
		Run:   f.run,
	}
}

// run gathers one snapshot and prints it as a table or JSON.
func (f *statusFlags) run(ctx context.Context, args []string, stdio cli.IO) error {
	if len(f.snap.from) > 0 {
		return f.runFrom(ctx, args, stdio)
	}
	if err := cli.NoArgs(args); err != nil {
		return err
	}
	if err := f.snap.check(f.json); err != nil {
		return err
	}
	if f.snap.reply {
		return cli.UsageErrorf("--reply answers a pasted thread: use it with --from FILE (the pasted output)")
	}
	if f.timeout <= 0 {
		return cli.UsageErrorf("--timeout must be positive")
	}
	if f.port != "" && f.port != "-" && f.boardWait <= 0 {
		return cli.UsageErrorf("--board-wait must be positive")
	}

	api, err := f.api.open()
	if err != nil {
		return cli.UsageError{Err: err}
	}
	st, err := app.Status(ctx, app.StatusOptions{
		Socket: f.socket, Timeout: f.timeout, All: f.all, Netcheck: f.netcheck,
		Probe: f.probe, ProbeOptions: statusProbeOptions, API: api,
		Port: f.port, Baud: f.baud, BoardWait: f.boardWait, Stdin: stdio.Stdin,
		Record: f.snap.save != "" || f.snap.redact, Log: stdio.Stderr,
	})
	if err != nil {
		return err
	}
	ls, rec := st.Joined, st.Recorder
	if ls, err = app.ApplyPeerSnapshots(ctx, ls, f.snap.peers, stdio.Stderr); err != nil {
		return err
	}
	var printed bool
	if rec != nil {
		// --save / --redact: the snapshot, and what is printed of it
		// (warnings too are redacted with --redact).
		if ls, printed, err = f.saveLive(ctx, st, ls, stdio); err != nil {
			return err
		}
	}
	for _, w := range ls.Warnings {
		fmt.Fprintf(stdio.Stderr, "tailpath: warning: %s\n", w)
	}
	if printed {
		return nil
	}
	if err := report.Print(stdio.Stdout, ls, f.json); err != nil {
		return err
	}
	if f.json {
		return nil
	}
	if state := st.Joined.BackendState; state != "Running" {
		return &cli.CodeError{Code: statusExitNotRunningState, Err: fmt.Errorf("tailscaled is %s, not Running; run `tailscale up`", state)}
	}
	return nil
}

// statusProbeOptions are --probe's bounds (probe's limits; tests shorten
// the runs).
var statusProbeOptions = discoping.Options{}
