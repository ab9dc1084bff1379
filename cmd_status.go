package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/columns"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/link"
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
}

// Exit statuses of tailpath status beyond the shared ones: 1 tailscaled
// answered but is not Running (table mode; the table is still printed); 2
// the status could not be read (tailscaled not running, permission denied,
// malformed reply, timeout), as for bad flags.
const (
	statusExitNotRunningState = 1
	statusExitNoDaemon        = 2
)

const statusUsage = `usage: tailpath status [--json] [--socket PATH] [--timeout 10s] [--port auto|PATH|-]

Shows each peer's path in ` + "`tailscale status`" + ` words and why it is relayed.
With --port, a CoreS3 board's own telemetry (live, or a capture on stdin)
joins the verdict of the peer it is, as in the dashboard.`

func statusCommand() *command {
	var f statusFlags
	fs := newFlagSet("tailpath status")
	fs.BoolVar(&f.json, "json", false, `print JSON ({"self":…, "peers":[…]}) instead of a table`)
	fs.StringVar(&f.socket, "socket", "", "tailscaled LocalAPI socket (default "+probes.DefaultSocket()+")")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "give up on tailscaled after this long")
	fs.StringVar(&f.port, "port", "", `a board to link to its peer: "auto", a serial port path, or "-" for a capture on stdin (default: none)`)
	fs.IntVar(&f.baud, "baud", 115200, "serial speed in bits per second")
	fs.DurationVar(&f.boardWait, "board-wait", 6*time.Second, "with a live --port: how long to listen for the board's telemetry (it sends every 5 s)")
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
	if err := noArgs(args); err != nil {
		return err
	}
	if f.timeout <= 0 {
		return usageErrorf("--timeout must be positive")
	}
	if f.port != "" && f.port != "-" && f.boardWait <= 0 {
		return usageErrorf("--board-wait must be positive")
	}

	gctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	snap, err := probes.Gather(gctx, probes.NewClient(f.socket), nil)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			sock := f.socket
			if sock == "" {
				sock = probes.DefaultSocket()
			}
			err = fmt.Errorf("no answer from local tailscaled (socket %s) within %v; is it hung? Try a longer --timeout", sock, f.timeout)
		}
		return &codeError{statusExitNoDaemon, err}
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
		}
		linker.SetDevice(board)
	}
	ls := linker.SetSnapshot(snap)
	for _, w := range ls.Warnings {
		fmt.Fprintf(stdio.Stderr, "tailpath: warning: %s\n", w)
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
	return writeStatusTable(w, s)
}

// statusJSON is the stable JSON shape of `tailpath status --json`.
type statusJSON struct {
	Time         time.Time       `json:"time"`
	BackendState string          `json:"backend_state"`
	Self         probes.Self     `json:"self"`
	Peers        []statusPeer    `json:"peers"`
	Board        *link.Board     `json:"board,omitempty"`
	Regions      []probes.Region `json:"derp_regions,omitempty"`
	Warnings     []string        `json:"warnings,omitempty"`
}

// statusPeer is one peer in status --json: probes.Peer's fields and its
// path changes.
type statusPeer struct {
	probes.Peer
	// PathChanges are the peer's paths as tailpath observed them, oldest
	// first; one snapshot (status) observes one, its path then.
	PathChanges []link.PathChange `json:"path_changes"`
}

// writeStatusJSON writes s as indented JSON: {"time", "backend_state",
// "self", "peers" (never null; each with "path_changes"), "board" (when a
// board reported: its evidence and the "peer_id" it is, whose verdict then
// includes the board's Device.* checks), "derp_regions" (sorted by id),
// "warnings"}. Field names are the JSON tags of probes' and link's types
// and are stable. Strings in s are already sanitised by probes.Gather;
// JSON escaping keeps any remaining bytes inert.
func writeStatusJSON(w io.Writer, s *link.Snapshot) error {
	out := statusJSON{
		Time:         s.Time,
		BackendState: s.BackendState,
		Self:         s.Self,
		Peers:        make([]statusPeer, len(s.Peers)),
		Board:        s.Board,
		Warnings:     s.Warnings,
	}
	for i, p := range s.Peers {
		out.Peers[i] = statusPeer{Peer: p, PathChanges: s.Changes(p.ID)}
	}
	for id := range s.Regions {
		out.Regions = append(out.Regions, s.Regions[id])
	}
	sortRegions(out.Regions)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func sortRegions(rs []probes.Region) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].ID < rs[j-1].ID; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// Column width caps (display cells) for the table.
const (
	maxNameWidth   = 24
	maxOSWidth     = 10
	maxPathWidth   = 48
	maxReasonWidth = 60
)

// writeStatusTable writes a self line, a board line when a board is linked
// to a peer, and one row per peer: NAME, OS, PATH (tailscale status's
// words), LATENCY, HOME DERP, TX/RX, REASON.
func writeStatusTable(w io.Writer, s *link.Snapshot) error {
	self := s.Self
	var b strings.Builder
	fmt.Fprintf(&b, "self: %s", orDash(self.Name))
	if self.OS != "" {
		fmt.Fprintf(&b, " (%s)", self.OS)
	}
	if len(self.TailscaleIPs) > 0 {
		fmt.Fprintf(&b, " %s", self.TailscaleIPs[0])
	}
	fmt.Fprintf(&b, "; home DERP %s; %s", derpText(self.HomeDERP, self.HomeDERPCode), natText(self.NAT))
	if s.BackendState != "Running" {
		fmt.Fprintf(&b, "; state %s", s.BackendState)
	}
	fmt.Fprintln(w, b.String())
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
	if len(s.Peers) == 0 {
		_, err := fmt.Fprintln(w, "no peers")
		return err
	}
	rows := [][]string{{"NAME", "OS", "PATH", "LATENCY", "HOME DERP", "TX/RX", "REASON"}}
	for _, p := range s.Peers {
		reason := string(p.Verdict.Reason)
		if sum := p.Verdict.Summary; strings.HasPrefix(sum, reason) {
			reason = sum
		} else if sum != "" {
			reason += ": " + sum
		}
		rows = append(rows, []string{
			ansi.Truncate(orDash(p.Name), maxNameWidth, "…"),
			ansi.Truncate(orDash(p.OS), maxOSWidth, "…"),
			ansi.Truncate(orDash(p.Path.Text), maxPathWidth, "…"),
			units.Latency(p.Latency),
			derpText(p.HomeDERP, p.HomeDERPCode),
			units.Bytes(p.TxBytes) + "/" + units.Bytes(p.RxBytes),
			ansi.Truncate(reason, maxReasonWidth, "…"),
		})
	}
	_, err := io.WriteString(w, strings.Join(columns.Lines(rows, ""), "\n")+"\n")
	return err
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

func natText(n *probes.NATInfo) string {
	if n == nil {
		return "NAT unknown"
	}
	var parts []string
	if n.WorkingUDP != nil && !*n.WorkingUDP {
		parts = append(parts, "UDP blocked")
	} else if n.WorkingUDP != nil {
		parts = append(parts, "UDP ok")
	}
	switch {
	case n.MappingVariesByDestIP == nil:
		parts = append(parts, "NAT type unknown")
	case *n.MappingVariesByDestIP:
		parts = append(parts, "hard NAT")
	default:
		parts = append(parts, "easy NAT")
	}
	if n.HavePortMap {
		parts = append(parts, "port mapped")
	}
	return strings.Join(parts, ", ")
}
