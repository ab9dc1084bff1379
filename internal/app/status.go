package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/discoping"
	"github.com/tailpath/tailpath/probes/hostnet"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// This file is what a live `tailpath status` gathers: one snapshot from
// tailscaled (with this host's facts), the control API's facts beside it,
// an optional fresh DERP measurement and probe of the relayed peers, and
// a board's own evidence, linked into one *join.Snapshot.

// StatusOptions are what a live status gathers and where it reports.
type StatusOptions struct {
	// Socket is tailscaled's LocalAPI socket ("" the platform default);
	// Timeout bounds the LocalAPI exchange (each gather).
	Socket  string
	Timeout time.Duration
	// All also lists the peers `tailscale status` hides.
	All bool
	// Netcheck measures fresh DERP latencies first (MeasureDERPLatency).
	Netcheck bool
	// Probe runs the bounded DISCO probe of the relayed peers
	// (probes/discoping, within ProbeOptions) and gathers again.
	Probe        bool
	ProbeOptions discoping.Options
	// API reads the peers' own facts from the control API beside the
	// LocalAPI, waited for at most statusAPIWait; nil reads none.
	API *controlapi.ControlAPI
	// Port is a board whose evidence joins its peer's verdict: "" none,
	// "-" a capture on Stdin, "auto" or a path listened to for BoardWait
	// at Baud.
	Port      string
	Baud      int
	BoardWait time.Duration
	Stdin     io.Reader
	// Record gathers through a snapshot.Recorder, for a snapshot of the
	// evidence (status --save, --redact).
	Record bool
	// Log is where progress and warnings are written as they happen.
	Log io.Writer
}

// StatusResult is a live status: the joined snapshot, and what a saved
// snapshot of it needs besides.
type StatusResult struct {
	Joined *join.Snapshot
	// Recorder kept every LocalAPI reply (StatusOptions.Record); nil
	// otherwise.
	Recorder *snapshot.Recorder
	// PeerFacts and APIStatus are the control API's read; nil when it
	// was not asked.
	PeerFacts *probes.APIFacts
	APIStatus *probes.APIStatus
}

// Status gathers one live status. Errors are the gather's (through
// tailscaled.ConnectError), or a timeout saying that tailscaled did not
// answer within o.Timeout.
func Status(ctx context.Context, o StatusOptions) (*StatusResult, error) {
	gctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	peerSide := startPeerSide(gctx, o.API)
	var client tailscaled.LocalClient = tailscaled.NewClient(o.Socket)
	var rec *snapshot.Recorder
	if o.Record {
		rec = snapshot.NewRecorder(client)
		client = rec
	}
	// This host's interfaces and firewall (probes/hostnet): evidence
	// when tailscaled runs here, which the diagnosis checks.
	// Every peer's node when a snapshot records them (each is evidence)
	// or a board joins (its evidence is judged against control's
	// endpoints on any path); else those the verdicts read.
	opts := tailscaled.GatherOptions{All: o.All, Host: hostnet.Start, AllNodes: o.Record || o.Port != ""}
	if o.Netcheck {
		opts.Latency = measureForStatus(gctx, client, o.Log)
	}
	snap, err := tailscaled.GatherWith(gctx, client, nil, opts)
	if err == nil && o.Probe {
		snap, err = probeRelayed(ctx, client, snap, opts, o.ProbeOptions, o.Timeout, o.Log)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			sock := o.Socket
			if sock == "" {
				sock = tailscaled.DefaultSocket()
			}
			err = fmt.Errorf("no answer from local tailscaled (socket %s) within %v; is it hung? Try a longer --timeout", sock, o.Timeout)
		}
		return nil, err
	}
	res := &StatusResult{Recorder: rec}
	if peerSide != nil {
		facts, st := peerSide()
		res.PeerFacts, res.APIStatus = facts, &st
		probes.ApplyPeerFacts(snap, facts, st)
		if st.Err != "" {
			snap.Warnings = append(snap.Warnings, st.Err)
		}
	}
	// One judgement of a snapshot nothing else keeps: judged in place.
	joiner := join.Joiner{Owned: true}
	if o.Port != "" {
		board := ReadBoard(ctx, o.Port, o.Baud, o.BoardWait, o.Stdin)
		evidence := join.EvidenceFrom(board) // once: the warning and the Joiner read the same
		if !board.TailnetIP.IsValid() && board.Hostname == "" {
			why := "it sent no N telemetry frame"
			if board.Link.Err != nil && !errors.Is(board.Link.Err, devlink.ErrReplayEnded) {
				why = board.Link.ErrText().String()
			}
			snap.Warnings = append(snap.Warnings, safetext.New(fmt.Sprintf("--port %s: the board did not name its tailnet address or host name (%s); no peer is linked to it", o.Port, why)))
		} else if w := boardNotInNetmap(o.Port, evidence, snap.Peers); w != "" {
			snap.Warnings = append(snap.Warnings, safetext.New(w))
		}
		joiner.SetEvidence(evidence)
	}
	res.Joined = joiner.SetSnapshot(snap)
	return res, nil
}

// boardNotInNetmap says so when the board named itself but no peer is it
// (probes.DeviceEvidence.Matches, as the joiner links): its evidence then
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

// probeRelayed runs the bounded probe (probes/discoping, bounded by po) over
// snap's relayed peers, saying what it does on w, and gathers again with the runs as
// each peer's PingRun (evidence the verdicts then read); snap when no
// peer is relayed. The probe has its own budget (15 s, more for many
// peers); the second gather gets timeout. The peers whose runs the budget
// ended are named on w and in a warning of the snapshot (the table's and
// the JSON's).
func probeRelayed(ctx context.Context, c tailscaled.LocalClient, snap *probes.Snapshot, opts tailscaled.GatherOptions, po discoping.Options, timeout time.Duration, w io.Writer) (*probes.Snapshot, error) {
	peers := discoping.Targets(snap)
	if len(peers) == 0 {
		fmt.Fprintln(w, "tailpath: --probe: no relayed peer to ping")
		return snap, nil
	}
	budget := po.BudgetFor(len(peers))
	fmt.Fprintf(w, "tailpath: probing %s: a TSMP ping, then up to %d DISCO pings each, %d at once, at most %v (each stays active ~45s after)\n",
		units.Count(len(peers), "relayed peer", "relayed peers"), discoping.MaxPings, discoping.MaxParallel, budget)
	runs := discoping.Run(ctx, c, peers, po, func(p probes.ProbeProgress) {
		switch {
		case p.Finished:
			fmt.Fprintf(w, "tailpath: probe done in %v: %d of %d reached a direct path\n", p.Elapsed.Round(100*time.Millisecond), p.Direct, p.Total)
		case p.Peer != "":
			fmt.Fprintf(w, "tailpath: probe %d/%d %s: %s\n", p.Done, p.Total, p.Peer, runText(p.Run))
		}
	})
	for i := range snap.Peers {
		if r := runs[snap.Peers[i].ID]; r != nil {
			snap.Peers[i].PingRun = r
			if r.Latency > 0 {
				snap.Peers[i].Latency = r.Latency // GatherWith carries it over
			}
		}
	}
	var warning safetext.Text
	if left := discoping.Unfinished(peers, runs); len(left) > 0 {
		warning = unfinishedWarning(left, len(peers), budget)
		fmt.Fprintf(w, "tailpath: %s\n", warning)
	}
	gctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := tailscaled.GatherWith(gctx, c, snap, opts)
	if out != nil && warning != "" {
		out.Warnings = append(out.Warnings, warning)
	}
	return out, err
}

// unfinishedWarning names the peers (of total) whose probe runs the budget
// ended.
func unfinishedWarning(left []safetext.Text, total int, budget time.Duration) safetext.Text {
	const show = 10
	names := make([]string, 0, show+1)
	for _, n := range left[:min(len(left), show)] {
		names = append(names, string(n))
	}
	if len(left) > show {
		names = append(names, fmt.Sprintf("and %d more", len(left)-show))
	}
	return safetext.New(fmt.Sprintf("--probe ran out of time (%v) before it finished %d of %d relayed peers: %s; a ping it cut off counts as not tried, so their verdicts rest on what was answered or timed out; run it again to finish them",
		budget, len(left), total, strings.Join(names, ", ")))
}

// runText is a probe run in a few words.
func runText(r *probes.PingRun) string {
	if r == nil || (r.Tries == 0 && r.CutOff == 0 && r.Unfinished) {
		return "not pinged (out of time)"
	}
	s := fmt.Sprintf("%s, %s", units.Count(r.Tries, "ping", "pings"), units.Count(r.Pongs, "pong", "pongs"))
	switch {
	case r.Direct:
		s += ", direct"
	case r.Pongs > 0:
		s += " via " + string(r.Via) + ", none direct"
	case r.Tries > 0:
		s += ": no answer"
	}
	if r.CutOff > 0 {
		s += fmt.Sprintf("; %s cut off (out of time): not tried", units.Count(r.CutOff, "ping", "pings"))
	} else if r.Unfinished {
		s += "; not finished (out of time)"
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
				return nil, probes.APIStatus{State: "error", Err: safetext.Of(r.err)}
			}
			return r.facts, probes.APIStatus{State: "ok", At: r.facts.At}
		case <-time.After(time.Until(deadline)):
			return nil, probes.APIStatus{State: "pending",
				Err: safetext.New(fmt.Sprintf("control API: no answer within %v; the peer's side of each path is unknown in this report", statusAPIWait))}
		}
	}
}

// measureForStatus measures DERP latencies for status --netcheck within
// 5 s; on failure it says why on w and returns nil (NetInfo's latencies
// then serve, shown but not judged).
func measureForStatus(ctx context.Context, c tailscaled.LocalClient, w io.Writer) *probes.DERPLatencyReport {
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
		fmt.Fprintf(w, "tailpath: warning: --netcheck: DERP map: %s\n", safetext.Of(err))
		return nil
	}
	rep, err := tailscaled.MeasureDERPLatency(mctx, dm)
	if err != nil {
		fmt.Fprintf(w, "tailpath: warning: --netcheck: %s\n", safetext.Of(err))
		return nil
	}
	return rep
}
