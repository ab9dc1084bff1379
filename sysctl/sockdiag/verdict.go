package sockdiag

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// VerdictKind is a stable id for a connection's health.
type VerdictKind string

const (
	// VerdictSndbuf: our send buffer limits the connection and autotuning
	// has grown it to tcp_wmem's max: raising tcp_wmem max helps.
	VerdictSndbuf VerdictKind = "sndbuf-limited"
	// VerdictWmemMax: the program set SO_SNDBUF above net.core.wmem_max and
	// the kernel cut it down: raising wmem_max helps.
	VerdictWmemMax VerdictKind = "sndbuf-wmem-max"
	// VerdictAppSndbuf: the program pinned a small SO_SNDBUF (autotuning is
	// off for that socket): no sysctl helps, the program's setting does.
	VerdictAppSndbuf VerdictKind = "app-sndbuf"
	// VerdictRwnd: the peer's receive window limits it: the peer's tcp_rmem.
	VerdictRwnd VerdictKind = "rwnd-limited"
	// VerdictMTU: full-size segments go unacknowledged while the
	// connection stays up (a path-MTU black hole): buffers will not help.
	VerdictMTU VerdictKind = "mtu"
	// VerdictRetrans: loss on the path.
	VerdictRetrans VerdictKind = "retransmitting"
	VerdictHealthy VerdictKind = "healthy"
	VerdictUnknown VerdictKind = "unknown"
)

// Verdict is one connection's judgement: Kind for code, Text for people.
type Verdict struct {
	Kind VerdictKind `json:"kind"`
	// Text is the phrase shown ("send buffer limited: raise tcp_wmem max").
	Text string `json:"text"`
	// Detail gives the numbers behind it ("sndbuf-limited 63% of busy time").
	Detail string `json:"detail,omitempty"`
	// Fix says what to do, and says so when sysctls will not help.
	Fix string `json:"fix,omitempty"`
	// SysctlsHelp is false when the cause is not a buffer sysctl (the
	// application's own setting, the MTU, the path): tuning will not fix it.
	SysctlsHelp bool `json:"sysctls_help"`
}

// Thresholds for Classify.
const (
	// LimitedShare: stalled this share of busy time or more counts as limited.
	LimitedShare = 0.2
	// RetransShareLimit: this share of bytes retransmitted or more counts as lossy.
	RetransShareLimit = 0.01
	// FullQueueShare: a send queue this full of its buffer counts as full,
	// for kernels without the limited-time counters (before 4.10).
	FullQueueShare = 0.9
)

// Limits are the host's settings a verdict is judged against; zero fields
// are unknown and the checks needing them are skipped.
type Limits struct {
	// TCPWmemMax is tcp_wmem's max: how far autotuning may grow a send buffer, bytes.
	TCPWmemMax int64
	// WmemMax is net.core.wmem_max: the cap on SO_SNDBUF set by programs, bytes.
	WmemMax int64
	// LinkMTU is tailscale0's MTU, bytes.
	LinkMTU uint32
	// MTUProbing is true when net.ipv4.tcp_mtu_probing is already 1 or 2,
	// so the MTU advice does not suggest setting it.
	MTUProbing bool
}

// Classify judges one connection, telling apart causes that buffer sysctls
// fix from those they do not, in this order:
//
//  1. MTU trouble: the oldest segment has timed out again and again (RTO
//     backoff ≥ 2, in loss recovery) while full-size segments are
//     outstanding: a path that drops big packets without telling.
//  2. Application-pinned send buffer: the buffer in effect (skmem tb) is
//     at most half of tcp_wmem's max, its queue is full, and the
//     connection has already moved 64 buffers' worth, so autotuning would
//     have grown it: the program set SO_SNDBUF (which turns autotuning
//     off). The limited-time counters need not show it: on a short path
//     the kernel rarely finds the queue empty with the buffer full.
//  3. Send-buffer limited (≥ LimitedShare of busy time, or a send queue
//     ≥ FullQueueShare of a buffer already at tcp_wmem's max, or of any
//     buffer on kernels before 4.10, which have no counters): exactly
//     2 × wmem_max means the program asked for more than wmem_max allows;
//     otherwise tcp_wmem's max is the limit.
//  4. Receive-window limited: the peer's tcp_rmem.
//  5. Retransmitting ≥ RetransShareLimit of bytes: loss on the path.
//  6. Healthy.
func Classify(c Conn, lim Limits) Verdict {
	t := c.Info
	if t == nil {
		return Verdict{Kind: VerdictUnknown, Text: "unknown: the kernel sent no tcp_info"}
	}
	if v, ok := mtuTrouble(t, lim); ok {
		return v
	}
	if v, ok := appPinned(c, t, lim); ok {
		return v
	}
	sb, sbOK := t.SndbufShare()
	rw, rwOK := t.RwndShare()
	// A full send queue is the other sign: on kernels before 4.10, which
	// have no counters, and whenever the buffer is already at tcp_wmem's
	// max (the counters only run while the queue has drained into flight,
	// which a sender stuck at its ceiling rarely lets happen).
	full := ""
	if m := c.Mem; m != nil && m.SndBuf > 0 && float64(m.WmemQueue) >= FullQueueShare*float64(m.SndBuf) {
		atMax := lim.TCPWmemMax > 0 && int64(m.SndBuf) >= lim.TCPWmemMax
		switch {
		case !sbOK:
			full = fmt.Sprintf("send queue full (%s queued of a %s buffer; kernel < 4.10 has no limited-time counters)", fmtBytes(int64(m.WmemQueue)), fmtBytes(int64(m.SndBuf)))
		case atMax:
			full = fmt.Sprintf("send queue full (%s queued of a %s buffer, tcp_wmem's max)", fmtBytes(int64(m.WmemQueue)), fmtBytes(int64(m.SndBuf)))
		}
	}
	if sbOK && sb >= LimitedShare || full != "" {
		detail := full
		if detail == "" {
			detail = fmt.Sprintf("send-buffer limited %.0f%% of busy time", sb*100)
		}
		return sndbufVerdict(c, t, lim, detail)
	}
	if rwOK && rw >= LimitedShare {
		return Verdict{Kind: VerdictRwnd, Text: "receive window limited: the peer's tcp_rmem",
			Detail:      fmt.Sprintf("receive-window limited %.0f%% of busy time", rw*100),
			Fix:         "raise tcp_rmem max on the receiving peer (run tailpath tune there); this host's sysctls will not help",
			SysctlsHelp: true}
	}
	if rs, ok := t.RetransShare(); ok && rs >= RetransShareLimit {
		text := "retransmitting: consider BBR"
		if c.CC == "bbr" {
			text = "retransmitting: loss on the path (already BBR)"
		}
		return Verdict{Kind: VerdictRetrans, Text: text, Detail: fmt.Sprintf("%.1f%% retransmitted", rs*100),
			Fix: "loss on the path: BBR copes better than cubic where the kernel has it (tailpath tune --bbr); bigger buffers do not cure loss"}
	}
	if !sbOK && !rwOK && t.BusyTime == nil {
		return Verdict{Kind: VerdictHealthy, Text: "healthy", Detail: "limited-time counters unknown (kernel < 4.10)"}
	}
	return Verdict{Kind: VerdictHealthy, Text: "healthy"}
}

// sndbufVerdict tells which buffer limit a send-buffer-limited connection hit.
func sndbufVerdict(c Conn, t *TCPInfo, lim Limits, detail string) Verdict {
	if c.Mem != nil && c.Mem.SndBuf > 0 {
		buf := int64(c.Mem.SndBuf)
		if !strings.Contains(detail, "buffer") {
			detail += ", send buffer " + fmtBytes(buf)
		}
		if lim.WmemMax > 0 && buf == 2*lim.WmemMax && (lim.TCPWmemMax == 0 || buf < lim.TCPWmemMax) {
			return Verdict{Kind: VerdictWmemMax, Text: "send buffer capped by net.core.wmem_max: raise it",
				Detail:      detail + fmt.Sprintf(" = 2 × wmem_max %s: the program set SO_SNDBUF and the kernel cut it to that", fmtBytes(lim.WmemMax)),
				Fix:         "tailpath tune --apply raises net.core.wmem_max, so the program gets the buffer it asks for",
				SysctlsHelp: true}
		}
	}
	return Verdict{Kind: VerdictSndbuf, Text: "send buffer limited: raise tcp_wmem max", Detail: detail,
		Fix: "tailpath tune --apply raises tcp_wmem max", SysctlsHelp: true}
}

// PinnedMovedBuffers is how many send buffers' worth a connection must have
// moved before a small buffer counts as pinned rather than not yet grown.
const PinnedMovedBuffers = 64

// appPinned reports a send buffer the program pinned small (see Classify).
func appPinned(c Conn, t *TCPInfo, lim Limits) (Verdict, bool) {
	m := c.Mem
	if m == nil || m.SndBuf == 0 || lim.TCPWmemMax == 0 {
		return Verdict{}, false
	}
	buf := int64(m.SndBuf)
	if buf*2 > lim.TCPWmemMax || float64(m.WmemQueue) < FullQueueShare*float64(buf) {
		return Verdict{}, false
	}
	// Kernels before 4.1 do not say how much a connection moved: a young
	// autotuned connection cannot be told apart there, so it counts.
	moved := "(kernel < 4.1 does not say how much was sent)"
	if t.BytesAcked != nil {
		if *t.BytesAcked < uint64(buf)*PinnedMovedBuffers {
			return Verdict{}, false
		}
		moved = "after " + fmtBytes(int64(*t.BytesAcked)) + " sent"
	}
	if lim.WmemMax > 0 && buf == 2*lim.WmemMax {
		return Verdict{}, false // asked for more than wmem_max: a sysctl case
	}
	detail := fmt.Sprintf("send buffer %s with its queue full (%s queued) %s, far below tcp_wmem max %s, which autotuning would have reached: the program set SO_SNDBUF, which turns autotuning off",
		fmtBytes(buf), fmtBytes(int64(m.WmemQueue)), moved, fmtBytes(lim.TCPWmemMax))
	if sb, ok := t.SndbufShare(); ok && sb > 0 {
		detail += fmt.Sprintf("; send-buffer limited %.0f%% of busy time", sb*100)
	}
	if t.RTT != nil && *t.RTT > 0 {
		detail += fmt.Sprintf("; at RTT %v it caps near %s", roundRTT(*t.RTT), fmtRate(float64(buf)/2/t.RTT.Seconds()*8))
	}
	return Verdict{Kind: VerdictAppSndbuf, Text: "application-limited: the program pinned SO_SNDBUF; sysctls will not help",
		Detail: detail,
		Fix:    "raise the program's own send-buffer setting, or stop it setting SO_SNDBUF so the kernel autotunes it; tailpath tune cannot fix this"}, true
}

// mtuTrouble spots a path-MTU black hole: in loss recovery with repeated
// timeouts of full-size segments while the connection is otherwise up.
func mtuTrouble(t *TCPInfo, lim Limits) (Verdict, bool) {
	if t.CAState != 4 || t.Retransmits < 2 && t.Backoff < 2 || t.Unacked == nil || *t.Unacked == 0 || t.SndMSS == nil {
		return Verdict{}, false
	}
	// Full-size segments: at least what a 1280-byte tunnel carries (MSS
	// 1200 and up), or near what the route allows. After TCP's own MTU
	// probing shrank the MSS to its search floor (1024) small segments
	// pass again and this no longer holds.
	mss := *t.SndMSS
	if mss < 1200 && (t.AdvMSS == nil || mss*10 < *t.AdvMSS*9) {
		return Verdict{}, false
	}
	pmtu := ""
	if t.PMTU != nil {
		pmtu = ", path MTU " + strconv.FormatUint(uint64(*t.PMTU), 10)
	}
	if lim.LinkMTU > 0 {
		pmtu += fmt.Sprintf(", tailscale0 MTU %d", lim.LinkMTU)
	}
	return Verdict{Kind: VerdictMTU, Text: "MTU trouble: full-size segments get no ACK; buffers will not help",
		Detail: fmt.Sprintf("%d timeouts in a row (backoff %d) with %d segment(s) of MSS %d unacknowledged%s: a path that drops big packets without telling (or a peer that vanished)",
			t.Retransmits, t.Backoff, *t.Unacked, mss, pmtu),
		Fix: mtuFix(lim)}, true
}

// mtuFix is what to do about MTU trouble, given whether TCP's own MTU
// probing is already on. It never advises a tunnel MTU below 1280: that is
// IPv6's minimum, so Linux would take IPv6 (the fd7a:115c:a1e0::/48
// address, peerAPI over IPv6, Funnel) off tailscale0, and Tailscale does not
// support it (tailscale/tailscale#8219). A path that cannot carry a
// 1280-byte tunnel packet is fixed on the path: the WAN MTU, or an MSS
// clamp on the router, and TCP's own probing on this host.
func mtuFix(lim Limits) string {
	const path = "if it carries less than the 1360 bytes a full 1280-byte tunnel packet needs, correct the WAN MTU of the router on the way, or clamp MSS there (--mtu-probe prints the rules); do not lower the tunnel MTU below 1280, which takes IPv6 off tailscale0; if nothing gets through, the peer is unreachable"
	if lim.MTUProbing {
		return "run tailpath tune --mtu-probe PEER to measure what the path carries (tcp_mtu_probing is on, yet TCP has not found a size that passes): " + path
	}
	return "set net.ipv4.tcp_mtu_probing=1 so TCP finds a segment size that passes, and run tailpath tune --mtu-probe PEER to measure what the path carries: " + path
}

func roundRTT(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

// fmtBytes renders bytes with a binary unit ("32 KiB", "4 MiB").
func fmtBytes(n int64) string {
	f := float64(n)
	switch {
	case n >= 1<<20:
		return trim(f/(1<<20)) + " MiB"
	case n >= 1<<10:
		return trim(f/(1<<10)) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// fmtRate renders bits per second ("13.1 Mbit/s").
func fmtRate(bps float64) string {
	switch {
	case bps >= 1e9:
		return trim(bps/1e9) + " Gbit/s"
	case bps >= 1e6:
		return trim(bps/1e6) + " Mbit/s"
	}
	return trim(bps/1e3) + " kbit/s"
}

func trim(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
