package report

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/internal/columns"
	"github.com/tailpath/tailpath/internal/selftext"
	"github.com/tailpath/tailpath/internal/units"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// Column width caps (display cells) for the table on a terminal.
const (
	maxNameWidth = 24
	maxOSWidth   = 10
	maxPathWidth = 48
	// minReasonWidth is the least REASON keeps on a narrow terminal (the
	// terminal wraps the line rather than the reason losing its words).
	minReasonWidth = 32
)

// WriteTable writes a self line, a board line when a board is linked
// to a peer, and one row per peer: NAME, OS, PATH (tailscale status's
// words), LATENCY, HOME DERP, TX/RX, REASON. On a terminal width columns
// wide the long cells are cut to fit it (fitColumns); width 0 (a file or
// pipe) prints every cell whole.
func WriteTable(w io.Writer, s *join.Snapshot, width int) error {
	self := s.Self
	var b strings.Builder
	fmt.Fprintf(&b, "self: %s", orDash(string(self.Name)))
	if self.OS != "" {
		fmt.Fprintf(&b, " (%s)", self.OS)
	}
	if len(self.TailscaleIPs) > 0 {
		fmt.Fprintf(&b, " %s", self.TailscaleIPs[0])
	}
	fmt.Fprintf(&b, "; home DERP %s; %s", derpText(self.HomeDERP, string(self.HomeDERPCode)), natText(self, &s.Tailnet))
	if st := cmp.Or(s.BackendState, "unknown"); st != "Running" {
		fmt.Fprintf(&b, "; state %s", st)
	}
	fmt.Fprintln(w, b.String())
	writeSelfVerdict(w, self.Verdict)
	for _, h := range self.Health {
		fmt.Fprintf(w, "# health: %s\n", h)
	}
	writeSelfBlock(w, s.Snapshot, width)
	if id := s.BoardID(); id != "" {
		for _, p := range s.Peers {
			if p.ID == id {
				fmt.Fprintf(w, "board: %s (its own telemetry is in the verdict)\n", orDash(string(p.Name)))
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
		if sum := string(p.Verdict.Summary); strings.HasPrefix(sum, reason) {
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
			cutTo(orDash(string(p.Name)), maxNameWidth, width),
			cutTo(orDash(string(p.OS)), maxOSWidth, width),
			cutTo(orDash(string(p.Path.Text)), maxPathWidth, width),
			units.Latency(p.Latency),
			derpText(p.HomeDERP, string(p.HomeDERPCode)),
			units.BytesPair(p.TxBytes, p.RxBytes),
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

// writeSelfBlock writes this node's own end, as the Self tab shows it
// (internal/selftext): one row per fact, "self <part> <label> <words>",
// before the peers. On a terminal (width > 0) the words are cut to fit.
func writeSelfBlock(w io.Writer, s *probes.Snapshot, width int) {
	if s == nil || s.Self.View == nil {
		return
	}
	var rows [][]string
	for _, sec := range selftext.Sections(selftext.Input{Self: &s.Self, Regions: s.Regions, Now: s.Time, Brief: true}) {
		for i, r := range sec.Rows {
			part := ""
			if i == 0 {
				part = sec.Title
			}
			rows = append(rows, []string{"self", part, strings.TrimSpace(r.Label), string(r.Text)})
		}
	}
	lines := columns.Lines(rows, "")
	for _, l := range lines {
		if width > 0 {
			l = cutTo(l, width, width)
		}
		fmt.Fprintln(w, strings.TrimRight(l, " "))
	}
}

// writeSelfVerdict writes the self's own verdict (probes.Judge)
// under the self line: "self verdict: ID: summary (also: …)", then its
// fix; nothing when there is none.
func writeSelfVerdict(w io.Writer, v *probes.Verdict) {
	if v == nil {
		return
	}
	line := "self verdict: " + string(v.Reason) + ": " + string(v.Summary)
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
		if c.State == probes.CheckUnknown && (strings.HasPrefix(string(c.Field), "Peer.") || strings.HasPrefix(string(c.Field), "API.")) {
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
// policy" with only-tcp-443, "UDP untested" when the DERP map has no STUN,
// "STUN unanswered" when a path of the gather proves UDP works), the NAT
// type (measured on IPv4 only) and port mapping.
func natText(self probes.Self, tn *probes.Tailnet) string {
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
	case n.WorkingUDP != nil && !*n.WorkingUDP && tn.UDPWorks():
		// netcheck's WorkingUDP is STUN to 3478 only; a direct peer
		// proves UDP itself (probes.Tailnet).
		parts = append(parts, "STUN unanswered (UDP works: "+string(tn.UDP)+" is "+string(tn.UDPHow)+")")
	case n.WorkingUDP != nil && !*n.WorkingUDP:
		parts = append(parts, "UDP blocked")
	case n.WorkingUDP != nil:
		parts = append(parts, "UDP ok")
	}
	switch {
	case n.MappingVariesByDestIP == nil:
		parts = append(parts, "NAT type unknown")
	case n.FromCLI && *n.MappingVariesByDestIP:
		// The CLI's netcheck measures from a socket of its own
		// (cmd/tailscale/cli/netcheck.go, netcheck.Client.Standalone on
		// an OS-assigned port), not tailscaled's, whose port a static-port
		// rule may single out (probes.cliHard).
		parts = append(parts, "NAT type unknown (the CLI's netcheck read hard from a port of its own)")
	case *n.MappingVariesByDestIP:
		parts = append(parts, "hard NAT")
	case self.STUNServers == 1 || n.STUNRegions == 1:
		// netcheck compares two STUN servers' mappings: with one, a hard
		// NAT reads false too.
		parts = append(parts, "NAT type unknown (one STUN server)")
	case n.FromCLI:
		parts = append(parts, "easy NAT (the CLI's netcheck)")
	default:
		parts = append(parts, "easy NAT")
	}
	if n.HavePortMap {
		parts = append(parts, "port mapped")
	}
	return strings.Join(parts, ", ")
}

// maxIgnoredShown is how many ignored lines the table's header lists.
const maxIgnoredShown = 10

// SnapshotHeader is the table's "# " lines for --from: when the snapshot
// was taken, what was redacted, the inputs recognised, the lines ignored.
func SnapshotHeader(s *SnapshotInfo) string {
	var b strings.Builder
	origin := "saved by tailpath"
	if s.Origin == snapshot.OriginPasted {
		origin = "pasted input"
	}
	taken := s.Taken.UTC().Format("2006-01-02 15:04:05Z")
	if s.TakenFrom != "" {
		taken += ", " + s.TakenFrom
	}
	fmt.Fprintf(&b, "# snapshot taken %s (%s: %s)\n", taken, origin, strings.Join(s.From, ", "))
	if r := s.Redacted; r != nil {
		fmt.Fprintf(&b, "# redacted: %s\n", strings.Join(r.Replaced, "; "))
	}
	for _, in := range s.Inputs {
		where := ""
		switch {
		case in.Name != "" && in.First == in.Last:
			where = fmt.Sprintf("%s:%d ", in.Name, in.First)
		case in.Name != "":
			where = fmt.Sprintf("%s:%d-%d ", in.Name, in.First, in.Last)
		}
		note := ""
		if in.Note != "" {
			note = ": " + in.Note
		}
		fmt.Fprintf(&b, "# recognised: %s%s%s\n", where, in.Kind, note)
	}
	for i, ig := range s.Ignored {
		if i == maxIgnoredShown {
			fmt.Fprintf(&b, "# ignored: %d more lines (--json lists them)\n", len(s.Ignored)-i)
			break
		}
		if ig.Text == "" {
			fmt.Fprintf(&b, "# ignored: %s:%d (text removed by --redact)\n", ig.Name, ig.Line)
			continue
		}
		fmt.Fprintf(&b, "# ignored: %s:%d %q\n", ig.Name, ig.Line, ig.Text)
	}
	return b.String()
}
