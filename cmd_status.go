package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/report"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/hostnet"
	"github.com/tailpath/tailpath/probes/link"
	"github.com/tailpath/tailpath/probes/localapi"
	"github.com/tailpath/tailpath/probes/probe"
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
	// diagnosing (probes/probe): evidence for disco-unanswered.
	probe bool
	api   apiFlags
	snap  snapshotFlags // --save, --redact, --from, --peer-snapshot (cmd_status_snapshot.go)
	fs    *flag.FlagSet // to read flags given after --from's files
}

// statusExitNotRunningState is status's exit when tailscaled answered but
// is not Running (table mode; the table is still printed): a runtime
// failure, like tailscaled not answering at all.
const statusExitNotRunningState = exitError

const statusUsage = `usage: tailpath status [--json] [--all] [--netcheck] [--probe] [--api-key-file F | --no-api] [--socket PATH] [--timeout 10s] [--port auto|PATH|-]
                      [--save FILE|- [--redact]] [--peer-snapshot FILE]
       tailpath status --from FILE... [--json] [--redact] [--save FILE|-] [--peer-snapshot FILE]

Shows each peer's path in ` + "`tailscale status`" + ` words and why it is relayed.
With a read-only Tailscale API key (TAILSCALE_API_KEY, or an OAuth client
with the devices:core:read scope) it also reads each peer's own side of the
path (NAT type, UDP, port mapping, home DERP) from the control API, waiting
for it at most 2 s. With --port, a CoreS3 board's own telemetry (live, or a
capture on stdin) joins the verdict of the peer it is, as in the dashboard.

--probe first pings every relayed peer (one TSMP ping, then at most 10
DISCO pings each, 8 peers at once, 15 s in all; progress on stderr), so a
relayed path whose ends look fine reads disco-unanswered or goes direct.
Pinging keeps a peer active for about 45 s: it changes what it measures.

--save writes a snapshot of all the evidence (--redact: safe to share);
--from diagnoses a saved snapshot, or what people paste (tailscale status,
netcheck, ping, tailscaled log lines), offline; --peer-snapshot adds the
peer's own end from a snapshot saved on it (docs/snapshots.md). Both take
a file, or the URL of a node's tailpath serve (http://HOST:9473/snapshot.json).`

func statusCommand() *command {
	var f statusFlags
	fs := newFlagSet("tailpath status")
	fs.BoolVar(&f.json, "json", false, `print JSON ({"self":…, "peers":[…]}) instead of a table`)
	fs.StringVar(&f.socket, "socket", "", "tailscaled LocalAPI socket (default "+localapi.DefaultSocket()+")")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "give up on tailscaled after this long")
	fs.StringVar(&f.port, "port", "", `a board to link to its peer: "auto", a serial port path, or "-" for a capture on stdin (default: none)`)
	fs.IntVar(&f.baud, "baud", 115200, "serial speed in bits per second")
	fs.DurationVar(&f.boardWait, "board-wait", 6*time.Second, "with a live --port: how long to listen for the board's telemetry (it sends every 5 s)")
	fs.BoolVar(&f.all, "all", false, "also list the peers 'tailscale status' hides (shared-in nodes, Mullvad exit nodes)")
	fs.BoolVar(&f.netcheck, "netcheck", false, "measure DERP latencies first (a few STUN packets, up to 5 s) so a far relay region can be judged")
	fs.BoolVar(&f.probe, "probe", false, "ping every relayed peer first (at most 10 DISCO pings each, 8 at once, 15 s in all; keeps them active ~45 s)")
	f.api.register(fs)
	f.snap.register(fs)
	f.fs = fs
	return &command{
		name:  "status",
		short: "one-shot table of peers, their paths and why each is relayed",
		usage: statusUsage,
		flags: fs,
		run:   f.run,
	}
}

// run gathers one snapshot and prints it as a table or JSON.
func (f *statusFlags) run(ctx context.Context, args []string, stdio IO) error {
	if len(f.snap.from) > 0 {
		return f.runFrom(ctx, args, stdio)
	}
	if err := noArgs(args); err != nil {
		return err
	}
	if err := f.snap.check(f.json); err != nil {
		return err
	}
	if f.timeout <= 0 {
		return usageErrorf("--timeout must be positive")
	}
	if f.port != "" && f.port != "-" && f.boardWait <= 0 {
		return usageErrorf("--board-wait must be positive")
	}

	api, err := f.api.open()
	if err != nil {
		return usageError{err}
	}
	gctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	peerSide := startPeerSide(gctx, api)
	var client localapi.LocalClient = localapi.NewClient(f.socket)
	rec := f.snap.recorder(client)
	if rec != nil {
		client = rec
	}
	// This host's interfaces and firewall (probes/hostnet): evidence
	// when tailscaled runs here, which the diagnosis checks.
	opts := localapi.GatherOptions{All: f.all, Host: hostnet.Read}
	if f.netcheck {
		opts.Latency = measureForStatus(gctx, client, stdio.Stderr)
	}
	snap, err := localapi.GatherWith(gctx, client, nil, opts)
	if err == nil && f.probe {
		snap, err = probeRelayed(ctx, client, snap, opts, f.timeout, stdio.Stderr)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			sock := f.socket
			if sock == "" {
				sock = localapi.DefaultSocket()
			}
			err = fmt.Errorf("no answer from local tailscaled (socket %s) within %v; is it hung? Try a longer --timeout", sock, f.timeout)
		}
		return err
	}
	var extras snapshotExtras
	if peerSide != nil {
		facts, st := peerSide()
		extras.facts, extras.api = facts, &st
		probes.ApplyPeerFacts(snap, facts, st)
		if st.Err != "" {
			snap.Warnings = append(snap.Warnings, st.Err)
		}
	}
	var linker link.Linker
	if f.port != "" {
		board := app.ReadBoard(ctx, f.port, f.baud, f.boardWait, stdio.Stdin)
		if !board.TailnetIP.IsValid() && board.Hostname == "" {
			why := "it sent no N telemetry frame"
			if board.Link.Err != nil && !errors.Is(board.Link.Err, devlink.ErrReplayEnded) {
				why = board.Link.Err.Error()
			}
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("--port %s: the board did not name its tailnet address or host name (%s); no peer is linked to it", f.port, why))
		} else if w := boardNotInNetmap(f.port, link.EvidenceFrom(board), snap.Peers); w != "" {
			snap.Warnings = append(snap.Warnings, w)
		}
		linker.SetDevice(board)
	}
	ls := linker.SetSnapshot(snap)
	if ls, err = f.snap.applyPeers(ctx, ls, stdio.Stderr); err != nil {
		return err
	}
	var printed bool
	if rec != nil {
		// --save / --redact: the snapshot, and what is printed of it
		// (warnings too are redacted with --redact).
		if ls, printed, err = f.saveLive(ctx, rec, ls, extras, stdio); err != nil {
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
	if snap.BackendState != "Running" {
		return &codeError{statusExitNotRunningState, fmt.Errorf("tailscaled is %s, not Running; run `tailscale up`", snap.BackendState)}
	}
	return nil
}

// boardNotInNetmap says so when the board named itself but no peer is it
// (probes.DeviceEvidence.Matches, as the linker links): its evidence then
// joins no verdict. "" when a peer is the board.
func boardNotInNetmap(port string, d probes.DeviceEvidence, peers []probes.Peer) string {
	for i := range peers {
		if d.Matches(&peers[i]) {
			return ""
		}
	}
	var who []string
	if d.TailnetIP.IsValid() {
		who = append(who, d.TailnetIP.String())
	}
	if d.Hostname != "" {
		who = append(who, "host "+safetext.Clean(d.Hostname))
	}
	return fmt.Sprintf("--port %s: the board (%s) is not in this netmap: no peer has its address or name, so its evidence joins no verdict (is it logged in to this tailnet? `tailscale status --json` lists the peers)",
		port, strings.Join(who, ", "))
}

// probeRelayed runs the bounded probe (probes/probe) over snap's relayed
// peers, saying what it does on w, and gathers again with the runs as
// each peer's PingRun (evidence the verdicts then read); snap when no
// peer is relayed. The probe has its own budget (15 s); the second gather
// gets timeout.
func probeRelayed(ctx context.Context, c localapi.LocalClient, snap *probes.Snapshot, opts localapi.GatherOptions, timeout time.Duration, w io.Writer) (*probes.Snapshot, error) {
	peers := probe.Targets(snap)
	if len(peers) == 0 {
		fmt.Fprintln(w, "tailpath: --probe: no relayed peer to ping")
		return snap, nil
	}
	fmt.Fprintf(w, "tailpath: probing %s: a TSMP ping, then up to %d DISCO pings each, %d at once, at most %v (each stays active ~45s after)\n",
		units.Count(len(peers), "relayed peer", "relayed peers"), probe.MaxPings, probe.MaxParallel, probe.MaxBudget)
	runs := probe.Run(ctx, c, peers, statusProbeOptions, func(p probes.ProbeProgress) {
		switch {
		case p.Finished:
			fmt.Fprintf(w, "tailpath: probe done in %v: %d of %d reached a direct path\n", p.Elapsed.Round(100*time.Millisecond), p.Direct, p.Total)
		case p.Peer != "":
			fmt.Fprintf(w, "tailpath: probe %d/%d %s: %s\n", p.Done, p.Total, safetext.Clean(p.Peer), runText(p.Run))
		}
	})
	for i := range snap.Peers {
		if r := runs[snap.Peers[i].ID]; r != nil {
			snap.Peers[i].PingRun = r
		}
	}
	gctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return localapi.GatherWith(gctx, c, snap, opts)
}

// statusProbeOptions are --probe's bounds (probe's limits; tests shorten
// the runs).
var statusProbeOptions = probe.Options{}

// runText is a probe run in a few words.
func runText(r *probes.PingRun) string {
	if r == nil {
		return "not pinged (out of time)"
	}
	s := fmt.Sprintf("%s, %s", units.Count(r.Tries, "ping", "pings"), units.Count(r.Pongs, "pong", "pongs"))
	switch {
	case r.Direct:
		s += ", direct"
	case r.Pongs > 0:
		s += " via " + r.Via + ", none direct"
	default:
		s += ": no answer"
	}
	return s
}

// statusAPIWait is how long status waits for the control API after
// starting both reads: the local verdicts never wait longer for it.
const statusAPIWait = 2 * time.Second

// startPeerSide starts reading the control API beside the LocalAPI and
// returns the function that waits for it, giving up statusAPIWait after
// the start; nil when api is nil.
func startPeerSide(ctx context.Context, api *controlapi.ControlAPI) func() (*probes.APIFacts, probes.APIStatus) {
	if api == nil {
		return nil
	}
	type result struct {
		facts *probes.APIFacts
		err   error
	}
	ch := make(chan result, 1)
	deadline := time.Now().Add(statusAPIWait)
	go func() {
		facts, err := api.Fetch(ctx)
		ch <- result{facts, err}
	}()
	return func() (*probes.APIFacts, probes.APIStatus) {
		select {
		case r := <-ch:
			if r.err != nil {
				return nil, probes.APIStatus{State: "error", Err: r.err.Error()}
			}
			return r.facts, probes.APIStatus{State: "ok", At: r.facts.At}
		case <-time.After(time.Until(deadline)):
			return nil, probes.APIStatus{State: "pending",
				Err: fmt.Sprintf("control API: no answer within %v; the peer's side of each path is unknown in this report", statusAPIWait)}
		}
	}
}

// measureForStatus measures DERP latencies for status --netcheck within
// 5 s; on failure it says why on w and returns nil (NetInfo's latencies
// then serve, shown but not judged).
func measureForStatus(ctx context.Context, c localapi.LocalClient, w io.Writer) *probes.DERPLatencyReport {
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// With an exit node in use, this process's STUN packets would cross
	// the tunnel and measure the exit node's latencies.
	if st, err := c.Status(mctx); err == nil && st.ExitNodeStatus != nil {
		fmt.Fprintln(w, "tailpath: warning: --netcheck: an exit node carries this host's traffic, so a measurement from here would be the exit node's; skipped")
		return nil
	}
	dm, err := c.CurrentDERPMap(mctx)
	if err != nil {
		fmt.Fprintf(w, "tailpath: warning: --netcheck: DERP map: %v\n", err)
		return nil
	}
	rep, err := localapi.MeasureDERPLatency(mctx, dm)
	if err != nil {
		fmt.Fprintf(w, "tailpath: warning: --netcheck: %v\n", err)
		return nil
	}
	return rep
}
