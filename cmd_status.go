package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/columns"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/termcolor"
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
	if err := printStatus(stdio.Stdout, ls, f.json); err != nil {
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

// printStatus writes s as `tailpath status` does: JSON (writeStatusJSON)
// when asJSON, else the table (writeStatusTable). Warnings are not written;
// callers print s.Warnings where they belong. Reused by the demo.
func printStatus(w io.Writer, s *link.Snapshot, asJSON bool) error {
	if s == nil || s.Snapshot == nil {
		return errors.New("status: no snapshot")
	}
	if asJSON {
		return writeStatusJSON(w, s)
	}
	return writeStatusTable(w, s, termcolor.Width(w))
}

// statusJSON is the stable JSON shape of `tailpath status --json`.
type statusJSON struct {
	Time         time.Time `json:"time"`
	BackendState string    `json:"backend_state"`
	// Self carries this node's own verdict (self.verdict,
	// probes.DiagnoseSelf); absent when nothing at this end holds.
	Self     probes.Self     `json:"self"`
	Peers    []statusPeer    `json:"peers"`
	Board    *link.Board     `json:"board,omitempty"`
	Regions  []probes.Region `json:"derp_regions,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
	// ControlAPI is how the control-API read went (state, matches);
	// absent when it was not asked (no credentials, --no-api).
	ControlAPI *probes.APIStatus `json:"control_api,omitempty"`
	// Hidden counts peers left out as `tailscale status` leaves them out
	// (shared-in nodes, Mullvad exit nodes); --all lists them.
	Hidden int `json:"hidden,omitempty"`
	// Snapshot says, for --from, what was read: when it was taken, what
	// inputs were recognised and which lines ignored.
	Snapshot *snapshotJSON `json:"snapshot,omitempty"`
}

// statusPeer is one peer in status --json: probes.Peer's fields and its
// path changes. The peer is pointed to, not copied (1,000 peers are 0.7 MB).
type statusPeer struct {
	*probes.Peer
	// PathChanges are the peer's paths as tailpath observed them, oldest
	// first; one snapshot (status) observes one, its path then.
	PathChanges []link.PathChange `json:"path_changes"`
}

// writeStatusJSON writes s as indented JSON: {"time", "backend_state",
// "self", "peers" (never null; each with "path_changes"), "board" (when a
// board reported: its evidence and the "peer_id" it is, whose verdict then
// includes the board's Device.* checks), "derp_regions" (sorted by id),
// "warnings"}. Field names are the JSON tags of probes' and link's types
// and are stable. Strings in s are already sanitised by localapi.Gather;
// JSON escaping keeps any remaining bytes inert.
func writeStatusJSON(w io.Writer, s *link.Snapshot) error {
	return encodeStatusJSON(w, statusJSONOf(s))
}

// statusJSONOf is s in status --json's shape.
func statusJSONOf(s *link.Snapshot) statusJSON {
	out := statusJSON{
		Time:         s.Time,
		BackendState: s.BackendState,
		Self:         s.Self,
		Peers:        make([]statusPeer, len(s.Peers)),
		Board:        s.Board,
		Warnings:     s.Warnings,
		ControlAPI:   s.ControlAPI,
		Hidden:       s.Hidden,
	}
	for i := range s.Peers {
		p := &s.Peers[i]
		out.Peers[i] = statusPeer{Peer: p, PathChanges: s.Changes(p.ID)}
	}
	for id := range s.Regions {
		out.Regions = append(out.Regions, s.Regions[id])
	}
	sortRegions(out.Regions)
	return out
}

// encodeStatusJSON writes out as json.MarshalIndent(out, "", "  ") and a
// newline would, without reflection for each peer (writeStatusJSONFast).
func encodeStatusJSON(w io.Writer, out statusJSON) error {
	return writeStatusJSONFast(w, &out)
}

func sortRegions(rs []probes.Region) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].ID < rs[j-1].ID; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// Column width caps (display cells) for the table on a terminal.
const (
	maxNameWidth = 24
	maxOSWidth   = 10
	maxPathWidth = 48
	// minReasonWidth is the least REASON keeps on a narrow terminal (the
	// terminal wraps the line rather than the reason losing its words).
	minReasonWidth = 32
)

// writeStatusTable writes a self line, a board line when a board is linked
// to a peer, and one row per peer: NAME, OS, PATH (tailscale status's
// words), LATENCY, HOME DERP, TX/RX, REASON. On a terminal width columns
// wide the long cells are cut to fit it (fitColumns); width 0 (a file or
// pipe) prints every cell whole.
func writeStatusTable(w io.Writer, s *link.Snapshot, width int) error {
	self := s.Self
	var b strings.Builder
	fmt.Fprintf(&b, "self: %s", orDash(self.Name))
	if self.OS != "" {
		fmt.Fprintf(&b, " (%s)", self.OS)
	}
	if len(self.TailscaleIPs) > 0 {
		fmt.Fprintf(&b, " %s", self.TailscaleIPs[0])
	}
	fmt.Fprintf(&b, "; home DERP %s; %s", derpText(self.HomeDERP, self.HomeDERPCode), natText(self))
	if st := cmp.Or(s.BackendState, "unknown"); st != "Running" {
		fmt.Fprintf(&b, "; state %s", st)
	}
	fmt.Fprintln(w, b.String())
	writeSelfVerdict(w, self.Verdict)
	for _, h := range self.Health {
		fmt.Fprintf(w, "# health: %s\n", h)
	}
	if id := s.BoardID(); id != "" {
		for _, p := range s.Peers {
			if p.ID == id {
				fmt.Fprintf(w, "board: %s (its own telemetry is in the verdict)\n", orDash(p.Name))
			}
		}
	}
	if s.Hidden > 0 {
		fmt.Fprintf(w, "# %d peers not shown, as tailscale status hides them (shared-in nodes, Mullvad exit nodes); --all lists them\n", s.Hidden)
	}
	if len(s.Peers) == 0 {
		_, err := fmt.Fprintln(w, "no peers")
		return err
	}
	rows := [][]string{{"NAME", "OS", "PATH", "LATENCY", "HOME DERP", "TX/RX", "REASON"}}
	peerSide, unknownPeerSide := false, false
	for _, p := range s.Peers {
		reason := string(p.Verdict.Reason)
		if sum := p.Verdict.Summary; strings.HasPrefix(sum, reason) {
			reason = sum
		} else if sum != "" {
			reason += ": " + sum
		}
		if p.Verdict.PeerSide {
			reason = "⇄ " + reason
			peerSide = true
		}
		unknownPeerSide = unknownPeerSide || peerSideUnknown(p.Verdict)
		rows = append(rows, []string{
			cutTo(orDash(p.Name), maxNameWidth, width),
			cutTo(orDash(p.OS), maxOSWidth, width),
			cutTo(orDash(p.Path.Text), maxPathWidth, width),
			units.Latency(p.Latency),
			derpText(p.HomeDERP, p.HomeDERPCode),
			units.Bytes(p.TxBytes) + "/" + units.Bytes(p.RxBytes),
			reason,
		})
	}
	if width > 0 {
		rows = fitColumns(rows, width)
	}
	if _, err := io.WriteString(w, strings.Join(columns.Lines(rows, ""), "\n")+"\n"); err != nil {
		return err
	}
	if peerSide {
		fmt.Fprintln(w, "⇄ rests on the peer's own facts (its NetInfo, the control API or its snapshot)")
	}
	_, err := io.WriteString(w, peerSideLine(s.ControlAPI, unknownPeerSide))
	return err
}

// writeSelfVerdict writes the self's own verdict (probes.DiagnoseSelf)
// under the self line: "self verdict: ID: summary (also: …)", then its
// fix; nothing when there is none.
func writeSelfVerdict(w io.Writer, v *probes.Verdict) {
	if v == nil {
		return
	}
	line := "self verdict: " + string(v.Reason) + ": " + v.Summary
	if len(v.Also) > 0 {
		also := make([]string, len(v.Also))
		for i, a := range v.Also {
			also[i] = string(a)
		}
		line += " (also " + strings.Join(also, ", ") + ")"
	}
	fmt.Fprintln(w, line)
	if v.Fix != "" {
		fmt.Fprintf(w, "# fix: %s\n", v.Fix)
	}
}

// cutTo cuts s to max cells with "…" on a terminal (width > 0); whole otherwise.
func cutTo(s string, max, width int) string {
	if width <= 0 {
		return s
	}
	return ansi.Truncate(s, max, "…")
}

// fitColumns makes every row fit width cells. REASON, last, gets what
// the other columns leave. While that is under minReasonWidth, it leaves
// out TX/RX, cuts OS, NAME and PATH down to their floors, each by as much
// as needed, then leaves out LATENCY, then HOME DERP (status --json has
// them all); REASON then takes what is left, at least
// 12 cells (a narrower terminal wraps). It returns the rows (a column left
// out is gone from every row).
func fitColumns(rows [][]string, width int) [][]string {
	col := func(name string) int {
		for i, h := range rows[0] {
			if h == name {
				return i
			}
		}
		return -1
	}
	widthOf := func(c int) int {
		w := 0
		for _, r := range rows {
			w = max(w, ansi.StringWidth(r[c]))
		}
		return w
	}
	// others is the line without REASON's cells, gaps included.
	others := func() int {
		t := columns.Gap * (len(rows[0]) - 1)
		for c := range rows[0][:len(rows[0])-1] {
			t += widthOf(c)
		}
		return t
	}
	cutCol := func(c, to int) {
		for _, r := range rows[1:] {
			r[c] = ansi.Truncate(r[c], to, "…")
		}
	}
	cut := func(name string, floor int) {
		c := col(name)
		w := widthOf(c)
		if to := max(w-(others()+minReasonWidth-width), floor, ansi.StringWidth(name)); to < w {
			cutCol(c, to)
		}
	}
	drop := func(name string) {
		c := col(name)
		for i, r := range rows {
			rows[i] = append(r[:c:c], r[c+1:]...)
		}
	}
	for _, step := range []func(){
		func() { drop("TX/RX") },
		func() { cut("OS", 6) },
		func() { cut("NAME", 12) },
		func() { cut("PATH", 24) },
		func() { drop("LATENCY") },
		func() { drop("HOME DERP") },
	} {
		if others()+minReasonWidth <= width {
			break
		}
		step()
	}
	last := len(rows[0]) - 1
	if to := max(width-others(), 12); to < widthOf(last) {
		cutCol(last, to)
	}
	return rows
}

// peerSideUnknown reports whether a relayed verdict has a peer-side check
// it could not fill.
func peerSideUnknown(v probes.Verdict) bool {
	for _, c := range v.Checks {
		if c.State == probes.CheckUnknown && (strings.HasPrefix(c.Field, "Peer.") || strings.HasPrefix(c.Field, "API.")) {
			return true
		}
	}
	return false
}

// peerSideLine says, once, where the peer's side came from, or what
// would fill it; "" when there is nothing to say.
func peerSideLine(st *probes.APIStatus, unknown bool) string {
	switch {
	case st == nil && unknown:
		return "# the peers' own NAT, UDP and port mapping are unknown: a read-only Tailscale API key (TAILSCALE_API_KEY, scope devices:core:read) would fill them\n"
	case st == nil:
		return ""
	case st.State == "ok":
		return fmt.Sprintf("# peer side: control API, %s matched (%d not listed by the API, %s not in this netmap)\n",
			units.Count(st.Matched, "peer", "peers"), st.PeersMissing, units.Count(st.DevicesUnmatched, "device", "devices"))
	}
	return "# peer side: control API unavailable (" + st.State + "); see the warning above\n"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func derpText(id int, code string) string {
	switch {
	case code != "":
		return strconv.Quote(code)
	case id != 0:
		return strconv.Itoa(id)
	}
	return "-"
}

// natText is our NAT facts in a few words: what UDP does ("UDP off by
// policy" with only-tcp-443, "UDP untested" when the DERP map has no STUN),
// the NAT type (measured on IPv4 only) and port mapping.
func natText(self probes.Self) string {
	n := self.NAT
	if n == nil {
		return "NAT unknown"
	}
	var parts []string
	switch {
	case self.OnlyTCP443:
		parts = append(parts, "UDP off by policy (only-tcp-443)")
	case n.WorkingUDP != nil && !*n.WorkingUDP && self.NoSTUN:
		parts = append(parts, "UDP untested (no STUN in the DERP map)")
	case n.WorkingUDP != nil && !*n.WorkingUDP:
		parts = append(parts, "UDP blocked")
	case n.WorkingUDP != nil:
		parts = append(parts, "UDP ok")
	}
	switch {
	case n.MappingVariesByDestIP == nil:
		parts = append(parts, "NAT type unknown")
	case n.FromCLI:
		// The CLI's netcheck measures from a socket of its own
		// (cmd/tailscale/cli/netcheck.go, netcheck.Client.Standalone on
		// an OS-assigned port), not tailscaled's.
		what := "easy"
		if *n.MappingVariesByDestIP {
			what = "hard"
		}
		parts = append(parts, "NAT type unknown (the CLI's netcheck read "+what+" from a port of its own)")
	case *n.MappingVariesByDestIP:
		parts = append(parts, "hard NAT")
	case self.STUNServers == 1 || n.STUNRegions == 1:
		// netcheck compares two STUN servers' mappings: with one, a hard
		// NAT reads false too.
		parts = append(parts, "NAT type unknown (one STUN server)")
	default:
		parts = append(parts, "easy NAT")
	}
	if n.HavePortMap {
		parts = append(parts, "port mapped")
	}
	return strings.Join(parts, ", ")
}
