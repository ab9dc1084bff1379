package tune

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
)

// Unknown is how a field the kernel did not report is shown.
const Unknown = "unknown"

// Keep is the recommended column of a key that stays as it is (the CLI and
// the Tuning pane both show it).
const Keep = "keep"

// Row is one key of the current-vs-recommended table.
type Row struct {
	Key         string
	Current     safetext.Text // as the kernel printed it; "(missing)" when the kernel lacks the key
	Recommended string        // "" when unchanged
	Why         string
}

// Rows returns the table of every read key with the recommended value where
// it changes.
func (r Report) Rows() []Row {
	change := map[string]sysctl.Change{}
	for _, c := range r.Rec.Changes {
		change[c.Key] = c
	}
	var rows []Row
	for _, k := range sysctl.Keys {
		if k == sysctl.KeyAvailableCC {
			continue
		}
		cur, ok := r.Settings.Raw[k]
		if !ok {
			cur = "(missing)"
		}
		row := Row{Key: k, Current: safetext.New(cur)}
		if c, ok := change[k]; ok {
			row.Recommended, row.Why = c.New, c.Why
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteText renders the report for a terminal.
func (r Report) WriteText(w io.Writer) {
	sys := filepath.Join(r.Root, "sys")
	title := "TCP tuning for this host (" + sys + ")"
	if r.Sandbox {
		title = "TCP tuning for " + sys + " [sandbox: a copy, not this machine]"
	}
	// First: a limit other than the buffers, with its evidence and fix
	// (nothing below it would change what it says).
	for _, l := range r.LimitLines() {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w, title)
	if r.Tunnel.Mode == TunnelUserspace {
		// First: the rest of the report is about a kernel this host's
		// tailnet TCP never touches.
		for _, l := range r.UserspaceLines() {
			fmt.Fprintln(w, l)
		}
	}
	fmt.Fprintln(w, r.SystemLine())
	for _, l := range r.CPULines() {
		fmt.Fprintln(w, l)
	}
	if r.PersistWhere != "" {
		fmt.Fprintf(w, "--persist: %s\n", r.PersistWhere)
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "Buffer arithmetic")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range r.Rec.Steps {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Label, s.Text)
	}
	tw.Flush()
	if v := r.BufferVerdict(); v != "" {
		fmt.Fprintln(w, v)
	}
	fmt.Fprintln(w)

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "key\tcurrent\trecommended")
	for _, row := range r.Rows() {
		rec := row.Recommended
		if rec == "" {
			rec = Keep
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row.Key, row.Current, rec)
	}
	tw.Flush()
	fmt.Fprintln(w)

	fmt.Fprintf(w, "BBR: %s: %s\n", r.BBR.State, r.BBR.Why)
	if r.BBR.Missing != "" {
		fmt.Fprintf(w, "  missing: %s\n", r.BBR.Missing)
	}
	if r.BBR.NeedsFQ {
		fmt.Fprintf(w, "  kernel before 4.13: BBR needs the fq qdisc (default_qdisc is %s)\n", orUnknown(r.BBR.Qdisc))
	}
	cc := orUnknown(r.Settings.CongestionControl)
	if cc == "bbr" {
		cc = "bbr (already in use)"
	}
	fmt.Fprintf(w, "congestion control %s, default qdisc %s\n", cc, orUnknown(r.Settings.DefaultQdisc))
	for _, n := range r.Rec.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, x := range r.Rec.Warnings {
		fmt.Fprintf(w, "warning: %s\n", x)
	}
	fmt.Fprintln(w)

	if lines := r.PathLines(); len(lines) > 0 {
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w)
	}

	var sect strings.Builder
	if l := r.TunnelLine(); l != "" {
		fmt.Fprintln(&sect, l)
	}
	switch {
	case r.Link != nil:
		fmt.Fprintln(&sect, LinkLine(r.Link))
	case r.LinkErr != "" && r.Tunnel.Mode != TunnelUserspace:
		fmt.Fprintln(&sect, r.LinkErr)
	}
	r.writeConns(&sect)
	if sect.Len() > 0 {
		fmt.Fprintln(w, sect.String())
	}

	if len(r.Rec.Changes) == 0 {
		fmt.Fprintln(w, "No changes needed.")
		return
	}
	fmt.Fprintf(w, "%s (%d):\n", r.ChangesTitle(), len(r.Rec.Changes))
	for _, c := range r.Rec.Changes {
		fmt.Fprintf(w, "  %s\n", c)
	}
}

// UserspaceLines say that tailnet TCP here is tailscaled's own, why
// tailpath thinks so, and the fix: what goes first when Tunnel.Mode is
// TunnelUserspace; nil otherwise. The evidence quotes tailscaled and the
// host's files.
func (r Report) UserspaceLines() []safetext.Text {
	t := r.Tunnel
	if t.Mode != TunnelUserspace {
		return nil
	}
	out := []safetext.Text{safetext.New(strings.ToUpper(UserspaceSays[:1]) + UserspaceSays[1:])}
	for _, e := range t.Evidence {
		out = append(out, safetext.New("  evidence: "+e))
	}
	out = append(out, "  "+UserspaceScope)
	for i, f := range t.Fix {
		out = append(out, safetext.Format("    %d. %s", i+1, f))
	}
	return out
}

// TunnelLine words a kernel or unknown tunnel mode on one line for the
// connections section ("tailnet TCP is the kernel's, …: tailscale0
// exists, a kernel TUN (mtu 1280)"); empty for
// userspace networking (UserspaceLines says it, first) and for a report
// saved before tailpath asked. The evidence quotes tailscaled and the
// host's files.
func (r Report) TunnelLine() safetext.Text {
	t := r.Tunnel
	switch t.Mode {
	case TunnelKernel:
		return safetext.New("tailnet TCP is the kernel's, so these sysctls govern it: " + t.Evidence[0])
	case TunnelUnknown:
		why := "no tailscaled was asked, and this root says nothing about tailscale0"
		if len(t.Evidence) > 0 {
			why = strings.Join(t.Evidence, "; ")
		}
		return safetext.New("tailnet TCP: not known whether the kernel's or tailscaled's own: " + why)
	}
	return ""
}

// ChangesTitle heads the list of changes: in userspace networking they
// are for traffic outside the tailnet, never the fix for it.
func (r Report) ChangesTitle() string {
	if r.Tunnel.Mode == TunnelUserspace {
		return "Changes, for traffic outside the tailnet only"
	}
	return "Changes"
}

// BufferVerdict is the one line under the arithmetic on whether this
// host's buffers are the limit: "buffers limit: …" with what said so, or
// "buffers are not the limit (need X, have Y); …" with what the tailnet
// connections point at instead. Empty when the maxima are unknown. It
// quotes the kernel's values.
func (r Report) BufferVerdict() safetext.Text {
	rec := r.Rec
	if rec.BuffersLimit {
		return safetext.New("buffers limit: " + rec.LimitWhy)
	}
	s := rec.NotLimit()
	if s == "" {
		return ""
	}
	return safetext.New(s + "; " + r.pointsAt())
}

// pointsAt says what the connection verdicts blame, other than this
// host's buffers.
func (r Report) pointsAt() string {
	if r.Tunnel.Mode == TunnelUserspace {
		return "tailnet TCP is tailscaled's own here, not the kernel's (see the top)"
	}
	if r.ConnsErr != "" {
		return "the tailnet connections could not be read to say what limits them"
	}
	if len(r.Conns) == 0 {
		return "no tailnet connection is open to say what limits (run a transfer, then tailpath tune again)"
	}
	n := map[sockdiag.VerdictKind]int{}
	for _, c := range r.Conns {
		n[c.Verdict.Kind]++
	}
	var parts []string
	for _, k := range []struct {
		kind sockdiag.VerdictKind
		what string
	}{
		{sockdiag.VerdictAppSndbuf, "the application's own SO_SNDBUF"},
		{sockdiag.VerdictRwnd, "the peer's receive window"},
		{sockdiag.VerdictMTU, "the MTU"},
		{sockdiag.VerdictRetrans, "loss"},
	} {
		if n[k.kind] > 0 {
			parts = append(parts, fmt.Sprintf("%s (%d)", k.what, n[k.kind]))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("the %d tailnet connection(s) show no limit of their own", len(r.Conns))
	}
	return "the tailnet connections point at " + strings.Join(parts, ", ")
}

// SystemLine is the header's second line: the platform, the file that
// identified it, the kernel and RAM ("Unraid 6.12.10 (/etc/unraid-version),
// kernel 6.1.79-Unraid, 15.6 GiB RAM").
func (r Report) SystemLine() string {
	s := orUnknown(r.Platform.Name)
	if r.Platform.Evidence != "" {
		s += " (" + r.Platform.Evidence + ")"
	}
	s += ", kernel " + orUnknown(r.BBR.Kernel)
	if r.MemTotal > 0 {
		s += ", " + sysctl.FormatBytes(r.MemTotal) + " RAM"
	}
	return s
}

func (r Report) writeConns(w io.Writer) {
	if r.ConnsErr != "" {
		fmt.Fprintf(w, "tailnet TCP connections: %s\n", r.ConnsErr)
		return
	}
	if len(r.Conns) == 0 {
		if !r.Sandbox || r.Tunnel.Mode == TunnelUserspace {
			fmt.Fprintln(w, r.NoConns())
		}
		return
	}
	fmt.Fprintf(w, "tailnet TCP connections (%d):\n", len(r.Conns))
	if v := r.Verdict(); v != "" {
		fmt.Fprintf(w, "  %s\n", v)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  remote\trtt\tcwnd\tretrans\tdelivery\tsndbuf-lim\trwnd-lim\tcc\tverdict")
	for _, c := range r.Conns {
		fmt.Fprintf(tw, "  %s\n", strings.Join(safetext.Strings(ConnCells(c)), "\t"))
	}
	tw.Flush()
	for _, a := range r.ConnAdvice() {
		fmt.Fprintf(w, "  %s\n", a)
	}
}

// NoConns says there is no tailnet TCP connection to show, and why none
// can be there in userspace networking.
func (r Report) NoConns() string {
	if r.Tunnel.Mode == TunnelUserspace {
		return "tailnet TCP connections: none in the kernel (userspace networking: tailscaled's own stack carries them)"
	}
	return "tailnet TCP connections: none open"
}

// Verdict sums the connections' verdicts in one line for the header of
// the connections section: which causes buffers fix and which they do not.
// Empty when every connection is healthy or there are none.
func (r Report) Verdict() string {
	n := map[sockdiag.VerdictKind]int{}
	for _, c := range r.Conns {
		n[c.Verdict.Kind]++
	}
	var parts []string
	add := func(k sockdiag.VerdictKind, what string) {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], what))
		}
	}
	add(sockdiag.VerdictSndbuf, "buffer limited (applying raises tcp_wmem max)")
	add(sockdiag.VerdictWmemMax, "capped by net.core.wmem_max (applying raises it)")
	add(sockdiag.VerdictRwnd, "limited by the peer's receive window (tune the peer)")
	add(sockdiag.VerdictAppSndbuf, "application-limited by its own SO_SNDBUF (sysctls will not help)")
	if r.Settings.MTUProbing >= 1 {
		add(sockdiag.VerdictMTU, "with MTU trouble (buffers will not help, and tcp_mtu_probing is on: --mtu-probe PEER measures the path)")
	} else {
		add(sockdiag.VerdictMTU, "with MTU trouble (buffers will not help: tcp_mtu_probing=1 lets TCP find a size that gets through; --mtu-probe PEER measures it)")
	}
	add(sockdiag.VerdictRetrans, "retransmitting (loss on the path)")
	if len(parts) == 0 {
		return ""
	}
	return "verdict: " + strings.Join(parts, "; ")
}

// ConnAdvice explains each connection that is not healthy: the numbers
// behind its verdict and what to do, saying so when sysctls will not help.
func (r Report) ConnAdvice() []safetext.Text {
	var out []safetext.Text
	for _, c := range r.Conns {
		v := c.Verdict
		if v.Kind == sockdiag.VerdictHealthy || v.Kind == sockdiag.VerdictUnknown {
			continue
		}
		s := c.Remote.String() + ": " + v.Detail
		if v.Fix != "" {
			s += "; do: " + v.Fix
		}
		out = append(out, safetext.New(s))
	}
	return out
}

// ConnCells renders one connection as table cells: remote, RTT±var, cwnd,
// retrans now/total, delivery rate, send-buffer and receive-window limited
// shares of busy time, congestion control, verdict. The congestion
// control's name is the kernel's (sock_diag).
func ConnCells(c sockdiag.Conn) []safetext.Text {
	i := c.Info
	if i == nil {
		i = &sockdiag.TCPInfo{}
	}
	rtt := Unknown
	if i.RTT != nil {
		rtt = roundDur(*i.RTT)
		if i.RTTVar != nil {
			rtt += "±" + roundDur(*i.RTTVar)
		}
	}
	retrans := u32(i.Retrans) + "/" + u32(i.TotalRetrans)
	delivery := Unknown
	if i.DeliveryRate != nil {
		delivery = sysctl.FormatBandwidth(float64(*i.DeliveryRate) * 8)
	}
	pct := func(f func() (float64, bool)) string {
		if v, ok := f(); ok {
			return fmt.Sprintf("%.0f%%", v*100)
		}
		return Unknown
	}
	cc := c.CC
	if cc == "" {
		cc = Unknown
	}
	sndbuf := pct(i.SndbufShare)
	if k := c.Verdict.Kind; (k == sockdiag.VerdictSndbuf || k == sockdiag.VerdictWmemMax) && strings.HasPrefix(c.Verdict.Detail, "send queue full") {
		// Judged by a full send queue at the buffer's ceiling, which the
		// limited-time counter (it runs only while the queue has drained
		// into flight) rarely sees: "0%" there would contradict the verdict.
		sndbuf = "full"
	}
	return safetext.All([]string{c.Remote.String(), rtt, u32(i.SndCwnd), retrans, delivery, sndbuf, pct(i.RwndShare), cc, c.Verdict.Text})
}

func u32(p *uint32) string {
	if p == nil {
		return Unknown
	}
	return strconv.FormatUint(uint64(*p), 10)
}

func roundDur(d time.Duration) string {
	switch {
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// LinkLine words tailscale0's link attributes on one line: "tailscale0:
// up, mtu 1280, qdisc fq_codel, dropped rx 0 tx 0" (the qdisc name
// cleaned; Unknown when the kernel gave none).
func LinkLine(l *sockdiag.Link) safetext.Text {
	state := "down"
	if l.Up {
		state = "up"
	}
	return safetext.Format("tailscale0: %s, mtu %d, qdisc %s, dropped rx %d tx %d", state, l.MTU, orUnknown(safetext.Clean(l.Qdisc)), l.RxDropped, l.TxDropped)
}

func orUnknown(s string) string {
	if s == "" {
		return Unknown
	}
	return s
}
