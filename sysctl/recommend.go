package sysctl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Bounds for a recommended buffer max, bytes. The floor is Red Hat tuned's
// network-throughput value (16 MiB); the cap keeps one socket from claiming
// an absurd share of memory (ESnet's 100 ms/10G profile uses 32-64 MiB).
const (
	FloorBufferBytes = 16 << 20
	CapBufferBytes   = 256 << 20
	// DefaultHeadroom multiplies the BDP: the kernel counts packet overhead
	// (skb truesize) against the buffer and advertises only part of tcp_rmem
	// as window, so a buffer of exactly one BDP falls short.
	DefaultHeadroom = 2.0
	// TailscaledUDPBufferBytes is the UDP buffer tailscaled asks for
	// (7340032); without CAP_NET_ADMIN rmem_max/wmem_max clamp it.
	TailscaledUDPBufferBytes = 7340032
	// DefaultBulkConns is how many bulk connections (backups, uploads) are
	// assumed to run at full buffer at once when sharing tcp_mem.
	DefaultBulkConns = 4
	// PageBytes is the page size tcp_mem counts in (4 KiB on x86 and on the
	// ARM boards NAS systems use).
	PageBytes = 4096
	mib       = 1 << 20
)

// Target is what the recommendation is for.
type Target struct {
	// Bandwidth is the throughput to sustain, bits per second.
	Bandwidth float64 `json:"bandwidth_bps"`
	// BandwidthSource says where Bandwidth came from ("--bandwidth", "default").
	BandwidthSource string `json:"bandwidth_source"`
	// RTT is the round trip to the peers that matter.
	RTT time.Duration `json:"rtt_ns"`
	// RTTSource says where RTT came from ("--rtt", "tailscale ping nas", "tcp_info").
	RTTSource string `json:"rtt_source"`
	// Headroom multiplies the BDP; 0 means DefaultHeadroom. Must be ≥ 1.
	Headroom float64 `json:"headroom"`
	// BBR asks for bbr (and fq where the kernel needs it) when it can work.
	BBR bool `json:"bbr"`
	// BulkConns is how many bulk connections are expected at full buffer at
	// once; tcp_mem is shared among them. 0 means DefaultBulkConns.
	BulkConns int `json:"bulk_conns,omitempty"`
	// MTUTrouble counts the tailnet connections whose full-size segments
	// go unacknowledged (sockdiag's MTU verdict): with it, and
	// tcp_mtu_probing 0, the recommendation sets it to 1.
	MTUTrouble int `json:"mtu_trouble,omitempty"`
	// BufferLimited counts the tailnet connections measured limited by
	// this host's buffers (sockdiag's send-buffer verdicts): with any, the
	// buffers are raised even when the arithmetic says they suffice.
	BufferLimited int `json:"buffer_limited,omitempty"`
	// Floor is the smallest buffer max to raise to, bytes, when FloorSet
	// (--floor; 0 means none). Unset, FloorBufferBytes applies, and only
	// when a buffer change is needed anyway.
	Floor    int64 `json:"floor_bytes,omitempty"`
	FloorSet bool  `json:"floor_set,omitempty"`
	// Elsewhere, when set, names the limit that is not this host's
	// buffers (a relayed path, a kernel regression, an offload, a
	// forwarding box): the arithmetic is shown, but no buffer key is
	// raised on it alone. A tailnet connection measured buffer limited
	// (BufferLimited) or --floor still raises them.
	Elsewhere string `json:"elsewhere,omitempty"`
}

// floor is the floor in force and how the arithmetic names it.
func (t Target) floor() (int64, string) {
	if t.FloorSet {
		return t.Floor, "--floor " + FormatBytes(t.Floor)
	}
	return FloorBufferBytes, "--floor " + FormatBytes(FloorBufferBytes)
}

// Step is one line of the arithmetic, for the pane and --json.
type Step struct {
	// Label names the quantity ("BDP = bandwidth × RTT").
	Label string `json:"label"`
	// Text is the value in words ("1.0 MB (1000000 bytes)").
	Text string `json:"text"`
	// Bytes is the value in bytes where it is a size; 0 otherwise.
	Bytes int64 `json:"bytes,omitempty"`
	// Source is where an input came from, the parenthesis that ends Text
	// ("flag --rtt"); empty for a computed step.
	Source string `json:"source,omitempty"`
}

// Value is Text without its Source.
func (s Step) Value() string {
	if s.Source == "" {
		return s.Text
	}
	return strings.TrimSuffix(s.Text, " ("+s.Source+")")
}

// Change is one key to set: its current and wanted values and why.
type Change struct {
	Key string `json:"key"`
	// Old is the current value ("" when the key is missing): whitespace-
	// normalised in a Recommendation, exactly as the kernel printed it
	// (without the trailing newline) in what Apply wrote and the state file,
	// so a revert writes back the same bytes.
	Old string `json:"old"`
	New string `json:"new"`
	Why string `json:"why,omitempty"`
}

// String renders "key: old → new".
func (c Change) String() string {
	return fmt.Sprintf("%s: %s → %s", c.Key, orNone(Normalize(c.Old)), Normalize(c.New))
}

func orNone(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

// Recommendation is the tuning for a Target, with the arithmetic shown.
type Recommendation struct {
	Target Target `json:"target"`
	// BDPBytes is bandwidth × RTT in bytes.
	BDPBytes int64 `json:"bdp_bytes"`
	// WantBytes is BDPBytes × headroom.
	WantBytes int64 `json:"want_bytes"`
	// BufferMax is WantBytes rounded up to a MiB and clamped to bounds.
	BufferMax int64 `json:"buffer_max_bytes"`
	// Clamp explains a clamp of WantBytes; empty when none applied.
	Clamp string `json:"clamp,omitempty"`
	// MemCap is the per-socket maximum tcp_mem allows for the expected bulk
	// connections (rounded down to a MiB), bytes; 0 when tcp_mem and RAM
	// are both unknown.
	MemCap int64 `json:"mem_cap_bytes,omitempty"`
	// Recommended values (never lower than the current ones).
	TCPRmem Triple `json:"tcp_rmem"`
	TCPWmem Triple `json:"tcp_wmem"`
	RmemMax int64  `json:"rmem_max"`
	WmemMax int64  `json:"wmem_max"`
	// Steps is the arithmetic, in order.
	Steps []Step `json:"steps"`
	// Changes are the keys whose current value falls short, in apply order.
	Changes []Change `json:"changes"`
	// BuffersLimit is true when something says this host's buffers are
	// the limit: the arithmetic (a current max below WantBytes), a tailnet
	// connection measured buffer limited, or an explicit --floor above the
	// current max. Only then are the buffer keys in Changes.
	BuffersLimit bool `json:"buffers_limit"`
	// LimitWhy says what said so; empty when BuffersLimit is false.
	LimitWhy string `json:"limit_why,omitempty"`
	// HaveBytes is the smaller of the current tcp_rmem and tcp_wmem
	// maxima (the ones autotuning grows to), bytes; 0 when neither is known.
	HaveBytes int64 `json:"have_bytes,omitempty"`
	// Suffices is true when the current values already meet the target.
	Suffices bool `json:"suffices"`
	// Notes are advice that needs no change ("RTT > 100 ms: BBR would help").
	Notes []string `json:"notes,omitempty"`
	// Warnings are risks (memory) and things that cannot be done (no BBR).
	Warnings []string `json:"warnings,omitempty"`
	// BBR is the evidence used for the congestion control advice; nil if not gathered.
	BBR *BBRStatus `json:"bbr,omitempty"`
}

// Recommend computes buffer sizes (and bbr/fq when asked and possible) for
// t from the current settings. memTotal is MemTotal in bytes (0 = unknown)
// and bbr the BBR evidence (nil = not gathered). It is pure: no I/O.
// Errors wrap ErrInvalid for a non-positive bandwidth or RTT or a headroom < 1.
//
// Long on purpose: the recommendation's rules in the order tune prints them,
// each reading the sizes the ones before it chose.
func Recommend(cur Settings, t Target, memTotal int64, bbr *BBRStatus) (Recommendation, error) {
	if !(t.Bandwidth > 0) || math.IsInf(t.Bandwidth, 0) {
		return Recommendation{}, fmt.Errorf("%w: bandwidth must be positive, got %v bit/s", ErrInvalid, t.Bandwidth)
	}
	if t.RTT <= 0 {
		return Recommendation{}, fmt.Errorf("%w: RTT must be positive, got %v", ErrInvalid, t.RTT)
	}
	if t.Headroom == 0 {
		t.Headroom = DefaultHeadroom
	}
	if !(t.Headroom >= 1) || t.Headroom > 100 {
		return Recommendation{}, fmt.Errorf("%w: headroom must be between 1 and 100, got %v", ErrInvalid, t.Headroom)
	}
	r := Recommendation{Target: t, BBR: bbr}
	bytesPerSec := t.Bandwidth / 8
	bdp := bytesPerSec * t.RTT.Seconds()
	r.BDPBytes = int64(math.Ceil(bdp))
	want := bdp * t.Headroom
	if want > math.MaxInt64/2 {
		want = math.MaxInt64 / 2
	}
	r.WantBytes = int64(math.Ceil(want))
	src := func(s string) string {
		if s == "" {
			return ""
		}
		return " (" + s + ")"
	}
	r.Steps = append(r.Steps,
		Step{Label: "bandwidth", Text: FormatBandwidth(t.Bandwidth) + " = " + FormatBytes(int64(bytesPerSec)) + "/s" + src(t.BandwidthSource), Source: t.BandwidthSource},
		Step{Label: "RTT", Text: t.RTT.String() + src(t.RTTSource), Source: t.RTTSource},
		Step{Label: "BDP = bandwidth × RTT", Text: FormatBytes(r.BDPBytes), Bytes: r.BDPBytes},
		Step{Label: fmt.Sprintf("× headroom %g", t.Headroom), Text: FormatBytes(r.WantBytes), Bytes: r.WantBytes},
	)
	// Do the buffers limit? The arithmetic says so when a maximum
	// autotuning grows to is below what the target needs; a measurement
	// says so when a tailnet connection stalled on this host's send
	// buffer. Otherwise no buffer key changes, unless --floor asks for it.
	have, haveWhich := haveBuffers(cur)
	r.HaveBytes = have
	floor, floorName := t.floor()
	short := have > 0 && have < r.WantBytes
	switch {
	case short && t.Elsewhere == "":
		r.BuffersLimit = true
		r.LimitWhy = fmt.Sprintf("the arithmetic: %s is %s, below the %s the target needs", haveWhich, FormatBytes(have), FormatBytes(r.WantBytes))
	case t.BufferLimited > 0:
		r.BuffersLimit = true
		r.LimitWhy = fmt.Sprintf("%d tailnet connection(s) measured limited by this host's send buffer", t.BufferLimited)
	}
	raising := r.BuffersLimit || t.FloorSet && have > 0 && have < floor
	if !raising {
		floor = 0 // the floor applies only to a change made anyway
	}

	buf := roundUp(r.WantBytes, mib)
	hi := int64(CapBufferBytes)
	hiWhy := "the 256 MiB cap"
	if memTotal > 0 && memTotal/8 < hi {
		hi = memTotal / 8 / mib * mib
		hiWhy = fmt.Sprintf("1/8 of this machine's %s RAM", FormatBytes(memTotal))
		if hi < floor {
			hi = floor
		}
	}
	// tcp_mem bounds all TCP sockets together: N bulk connections each at
	// full buffer must stay under its pressure threshold, else every
	// connection is squeezed. This cap wins over the floor.
	conns := t.BulkConns
	if conns <= 0 {
		conns = DefaultBulkConns
	}
	pool, poolSteps := tcpMemPool(cur, memTotal)
	r.Steps = append(r.Steps, poolSteps...)
	memCapped := false
	if pool > 0 {
		per := pool / int64(conns)
		perRounded := per / mib * mib
		if perRounded == 0 {
			perRounded = max(per/(64<<10)*(64<<10), 64<<10)
		}
		r.Steps = append(r.Steps, Step{Label: fmt.Sprintf("÷ %d bulk connections", conns), Text: FormatBytes(per) + " per socket", Bytes: per})
		r.MemCap = perRounded
		if perRounded < hi {
			hi, memCapped = perRounded, true
			hiWhy = fmt.Sprintf("tcp_mem ÷ %d bulk connections", conns)
		}
	}
	switch {
	case buf < floor && floor <= hi:
		r.Clamp = "raised to " + floorName
		if !t.FloorSet {
			r.Clamp += " (the default)" // a choice: the floor is no measurement
		}
		buf = floor
	case buf < floor && buf <= hi:
		// The floor itself is more than the cap allows: stop at the cap.
		r.Clamp = "raised only to " + hiWhy + " (below " + floorName + ")"
		buf = hi
	case buf > hi:
		r.Clamp = "lowered to " + hiWhy
		if memCapped {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the target needs %s per socket, but tcp_mem allows %s for each of %d bulk connections (more would push every TCP socket into memory pressure); expect at most %s per connection at %v",
				FormatBytes(r.WantBytes), FormatBytes(hi), conns, FormatBandwidth(float64(hi)*8/t.Headroom/t.RTT.Seconds()), t.RTT))
			r.Notes = append(r.Notes, raiseTCPMemNote(cur, memTotal, r.WantBytes, conns))
		} else {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the target needs %s per socket but that exceeds %s; capped at %s, so expect less than %s at %v",
				FormatBytes(r.WantBytes), hiWhy, FormatBytes(hi), FormatBandwidth(t.Bandwidth), t.RTT))
		}
		buf = hi
	}
	if r.MemCap > 0 && (cur.TCPWmem.Max > r.MemCap || cur.TCPRmem.Max > r.MemCap) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the current buffer max (tcp_rmem %s, tcp_wmem %s) is above what tcp_mem allows for %d bulk connections (%s each); tailpath never lowers it, but expect memory pressure when they all run at full window",
			FormatBytes(cur.TCPRmem.Max), FormatBytes(cur.TCPWmem.Max), conns, FormatBytes(r.MemCap)))
	}
	r.BufferMax = buf
	r.TCPRmem, r.TCPWmem, r.RmemMax, r.WmemMax = cur.TCPRmem, cur.TCPWmem, cur.RmemMax, cur.WmemMax
	add := func(key, old, new, why string) {
		if !SameValue(old, new) {
			r.Changes = append(r.Changes, Change{Key: key, Old: Normalize(old), New: new, Why: why})
		}
	}
	if !raising {
		text := "unknown: tcp_rmem and tcp_wmem not readable"
		switch {
		case short:
			text = fmt.Sprintf("%s < %s, but not raised: %s", FormatBytes(have), FormatBytes(r.WantBytes), t.Elsewhere)
		case have > 0:
			text = fmt.Sprintf("%s ≥ %s needed", FormatBytes(have), FormatBytes(r.WantBytes))
		}
		r.Steps = append(r.Steps, Step{Label: "current max (" + haveWhich + ")", Text: text, Bytes: have})
	} else {
		last := "rounded up to a MiB"
		if r.Clamp != "" {
			last = r.Clamp
		}
		r.Steps = append(r.Steps, Step{Label: "buffer max, " + last, Text: FormatBytes(buf), Bytes: buf})
		if memTotal > 0 && buf > memTotal/32 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s per socket is over 1/32 of %s RAM: a few busy connections at full window could press memory (tcp_mem limits the total)",
				FormatBytes(buf), FormatBytes(memTotal)))
		}
		if !r.BuffersLimit {
			r.Notes = append(r.Notes, fmt.Sprintf("raising to %s as asked, although buffers are not the limit (need %s, have %s)", floorName, FormatBytes(r.WantBytes), FormatBytes(have)))
		}
		if t.BufferLimited > 0 && have >= buf {
			r.Notes = append(r.Notes, fmt.Sprintf("%d connection(s) stalled on a send buffer already at %s, as much as the target asks for: the link is faster or farther than --bandwidth × --rtt say; pass the real ones", t.BufferLimited, FormatBytes(have)))
		}
		r.TCPRmem = raise(cur.TCPRmem, buf, 131072)
		r.TCPWmem = raise(cur.TCPWmem, buf, 16384)
		r.RmemMax = max(cur.RmemMax, buf)
		r.WmemMax = max(cur.WmemMax, buf)
		add(KeyTCPRmem, cur.Raw[KeyTCPRmem], r.TCPRmem.String(), "receive window autotuning may grow to the buffer max")
		add(KeyTCPWmem, cur.Raw[KeyTCPWmem], r.TCPWmem.String(), "send buffer autotuning may grow to the buffer max")
		add(KeyRmemMax, cur.Raw[KeyRmemMax], strconv.FormatInt(r.RmemMax, 10), "caps SO_RCVBUF set by programs (tailscaled asks for 7 MiB UDP buffers)")
		add(KeyWmemMax, cur.Raw[KeyWmemMax], strconv.FormatInt(r.WmemMax, 10), "caps SO_SNDBUF set by programs")
	}

	if _, known := cur.Raw[KeyMTUProbing]; known && t.MTUTrouble > 0 && cur.MTUProbing == 0 {
		add(KeyMTUProbing, cur.Raw[KeyMTUProbing], "1", fmt.Sprintf("%d tailnet connection(s) lose full-size segments: with 1, TCP lowers its segment size once it detects the black hole (buffers do not help there)", t.MTUTrouble))
	}

	longRTT := t.RTT > 100*time.Millisecond
	switch {
	case t.BBR && bbr == nil:
		r.Warnings = append(r.Warnings, "BBR requested but its availability was not checked; not recommending it")
	case t.BBR && !bbr.CanWork():
		r.Warnings = append(r.Warnings, "BBR is not possible here: "+bbr.Why+"; needs "+bbr.Missing)
	case t.BBR:
		why := "BBR keeps throughput up on long or lossy paths"
		if bbr.State == BBRLoadable {
			why += "; writing it loads tcp_bbr"
		}
		add(KeyCongestionControl, cur.Raw[KeyCongestionControl], "bbr", why)
		if bbr.NeedsFQ {
			add(KeyDefaultQdisc, cur.Raw[KeyDefaultQdisc], "fq", fmt.Sprintf("kernel %s is before 4.13: BBR needs fq for pacing (new interfaces only; restart tailscaled or `tc qdisc replace dev tailscale0 root fq`)", bbr.Kernel))
		} else if cur.DefaultQdisc != "fq" {
			r.Notes = append(r.Notes, "fq is optional with BBR since 4.13 (BBR paces by itself, fq does it with less CPU); default_qdisc stays "+orNone(cur.DefaultQdisc))
		}
	case longRTT && bbr != nil && bbr.CanWork() && cur.CongestionControl != "bbr":
		r.Notes = append(r.Notes, fmt.Sprintf("RTT %v > 100 ms: BBR usually helps here and is %s; pass --bbr", t.RTT, bbr.State))
	case longRTT && bbr != nil && !bbr.CanWork():
		r.Notes = append(r.Notes, fmt.Sprintf("RTT %v > 100 ms: BBR would help but is impossible: %s", t.RTT, bbr.Why))
	}
	r.Suffices = len(r.Changes) == 0
	return r, nil
}

// NotLimit is the buffer verdict when nothing says the buffers limit:
// "buffers are not the limit (need 1.9 MiB, have 4 MiB)"; empty when they
// do (LimitWhy says why) or when the current maxima are unknown.
func (r Recommendation) NotLimit() string {
	if r.BuffersLimit || r.HaveBytes == 0 {
		return ""
	}
	if e := r.Target.Elsewhere; e != "" {
		return fmt.Sprintf("buffers are not the limit: %s (need %s, have %s)", e, FormatBytes(r.WantBytes), FormatBytes(r.HaveBytes))
	}
	return fmt.Sprintf("buffers are not the limit (need %s, have %s)", FormatBytes(r.WantBytes), FormatBytes(r.HaveBytes))
}

// haveBuffers returns the smaller known maximum of tcp_rmem and tcp_wmem
// (what autotuning may grow a socket's buffers to) and its name; 0 when
// neither key was read.
func haveBuffers(cur Settings) (int64, string) {
	_, rOK := cur.Raw[KeyTCPRmem]
	_, wOK := cur.Raw[KeyTCPWmem]
	rOK, wOK = rOK && cur.TCPRmem.Max > 0, wOK && cur.TCPWmem.Max > 0
	switch {
	case rOK && wOK && cur.TCPRmem.Max == cur.TCPWmem.Max:
		return cur.TCPRmem.Max, "tcp_rmem and tcp_wmem max"
	case rOK && (!wOK || cur.TCPRmem.Max < cur.TCPWmem.Max):
		return cur.TCPRmem.Max, "tcp_rmem max"
	case wOK:
		return cur.TCPWmem.Max, "tcp_wmem max"
	}
	return 0, "tcp_rmem, tcp_wmem max"
}

// tcpMemPool returns the bytes all TCP sockets may use before memory
// pressure (tcp_mem's middle value), and the arithmetic steps saying where
// it came from: the sysctl, else the kernel's boot-time default of about
// RAM/16, else 0 (unknown).
func tcpMemPool(cur Settings, memTotal int64) (int64, []Step) {
	if m := cur.TCPMem; m.Default > 0 {
		pool := m.Default * PageBytes
		return pool, []Step{{Label: "tcp_mem pressure (all TCP sockets)",
			Text: fmt.Sprintf("%d pages × 4 KiB = %s (max %d pages = %s)", m.Default, FormatBytes(pool), m.Max, FormatBytes(m.Max*PageBytes)), Bytes: pool}}
	}
	if memTotal > 0 {
		pool := memTotal / 16
		return pool, []Step{{Label: "tcp_mem pressure (all TCP sockets)",
			Text: fmt.Sprintf("about %s: the kernel's default, RAM %s / 16 (tcp_mem not readable)", FormatBytes(pool), FormatBytes(memTotal)), Bytes: pool}}
	}
	return 0, nil
}

// raiseTCPMemNote says whether RAM allows raising tcp_mem so conns
// sockets of want bytes fit under the pressure threshold (within 1/8 of
// RAM, twice the kernel's default share), and the exact value if so.
func raiseTCPMemNote(cur Settings, memTotal, want int64, conns int) string {
	need := want * int64(conns)
	if memTotal <= 0 {
		return fmt.Sprintf("raising net.ipv4.tcp_mem would lift this cap, but RAM is unknown, so tailpath does not suggest a value (%d × %s = %s would have to fit under its pressure value)", conns, FormatBytes(want), FormatBytes(need))
	}
	if need > memTotal/8 {
		return fmt.Sprintf("RAM (%s) is too small to raise tcp_mem that far: %d × %s = %s is over 1/8 of RAM; lower --bandwidth or --rtt, or expect fewer bulk connections (--bulk-conns)",
			FormatBytes(memTotal), conns, FormatBytes(want), FormatBytes(need))
	}
	pressure := (need + PageBytes - 1) / PageBytes
	low, hi := pressure*3/4, pressure*3/2
	if cur.TCPMem.Min > low {
		low = min(cur.TCPMem.Min, pressure)
	}
	return fmt.Sprintf("RAM allows more: net.ipv4.tcp_mem = %d %d %d (pages; pressure = %d × %s, within 1/8 of RAM) would lift this cap; set it by hand if this box has the memory to spare",
		low, pressure, hi, conns, FormatBytes(want))
}

// raise returns cur with Max raised to at least buf, keeping a sane Min and
// Default (filled with 4096 and def when unset or inconsistent).
func raise(cur Triple, buf, def int64) Triple {
	out := cur
	if out.Min <= 0 {
		out.Min = 4096
	}
	if out.Default <= 0 {
		out.Default = def
	}
	if out.Max < buf {
		out.Max = buf
	}
	if out.Min > out.Default {
		out.Min = min(4096, out.Default)
	}
	if out.Default > out.Max {
		out.Default = out.Max
	}
	return out
}

func roundUp(n, to int64) int64 {
	if n <= 0 {
		return 0
	}
	return (n + to - 1) / to * to
}

// FormatBytes renders n bytes with a binary unit: "16 MiB", "976.6 KiB", "512 B".
func FormatBytes(n int64) string {
	f := float64(n)
	switch {
	case n >= 1<<30:
		return trimFloat(f/(1<<30)) + " GiB"
	case n >= 1<<20:
		return trimFloat(f/(1<<20)) + " MiB"
	case n >= 1<<10:
		return trimFloat(f/(1<<10)) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// FormatBandwidth renders bits per second: "400 Mbit/s", "1 Gbit/s".
func FormatBandwidth(bps float64) string {
	switch {
	case bps >= 1e9:
		return trimFloat(bps/1e9) + " Gbit/s"
	case bps >= 1e6:
		return trimFloat(bps/1e6) + " Mbit/s"
	case bps >= 1e3:
		return trimFloat(bps/1e3) + " kbit/s"
	}
	return trimFloat(bps) + " bit/s"
}

func trimFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// ParseBandwidth parses a bandwidth with its unit: "400Mbit", "400Mbit/s",
// "350Mbps", "1Gbit", "1.5G", "50MB/s" (bytes) or "100000bit". A plain
// number is refused: "400" could mean bits, bytes or megabits. Errors wrap
// ErrInvalid and their text starts with the quoted input ("\"400\": missing
// unit …"), ready to follow a flag name.
func ParseBandwidth(s string) (float64, error) {
	in := strings.TrimSpace(s)
	t := strings.TrimSuffix(strings.TrimSuffix(in, "/s"), "ps")
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, &inputError{fmt.Sprintf("%q: want a positive number with a unit, like 400Mbit or 1Gbit", s)}
	}
	if unit == "" {
		return 0, &inputError{fmt.Sprintf("%q: missing unit (e.g. %sMbit; units bit, kbit, Mbit, Gbit, Tbit, or MB/s for bytes)", s, num)}
	}
	mult := 1.0
	bytes := false
	switch {
	case strings.HasSuffix(unit, "B"):
		bytes = true
		unit = strings.TrimSuffix(unit, "B")
	case strings.HasSuffix(strings.ToLower(unit), "bit"):
		unit = unit[:len(unit)-3]
	case strings.HasSuffix(unit, "b"):
		unit = strings.TrimSuffix(unit, "b")
	}
	switch strings.ToLower(unit) {
	case "":
	case "k":
		mult = 1e3
	case "m":
		mult = 1e6
	case "g":
		mult = 1e9
	case "t":
		mult = 1e12
	default:
		return 0, &inputError{fmt.Sprintf("%q: unknown unit %q (use bit, kbit, Mbit, Gbit, Tbit, or MB/s for bytes)", s, unit)}
	}
	v *= mult
	if bytes {
		v *= 8
	}
	return v, nil
}

// FormatBandwidthFlag writes bits/s the way ParseBandwidth reads it
// ("400Mbit"), for a hint naming a flag's value.
func FormatBandwidthFlag(bps float64) string {
	for _, u := range []struct {
		unit string
		div  float64
	}{{"Tbit", 1e12}, {"Gbit", 1e9}, {"Mbit", 1e6}, {"kbit", 1e3}} {
		if bps >= u.div {
			return strconv.FormatFloat(bps/u.div, 'g', -1, 64) + u.unit
		}
	}
	return strconv.FormatFloat(bps, 'g', -1, 64) + "bit"
}

// ParseRTT parses a round trip: a positive duration with a unit ("20ms",
// "1.5s"). Errors wrap ErrInvalid and their text starts with the quoted
// input, ready to follow a flag name.
func ParseRTT(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		if _, nerr := strconv.ParseFloat(strings.TrimSpace(s), 64); nerr == nil {
			return 0, &inputError{fmt.Sprintf("%q: missing unit (e.g. %sms)", s, strings.TrimSpace(s))}
		}
		return 0, &inputError{fmt.Sprintf("%q: not a duration (e.g. 20ms or 1.5s)", s)}
	}
	if d <= 0 {
		return 0, &inputError{fmt.Sprintf("%q: must be positive (e.g. 20ms)", s)}
	}
	return d, nil
}

// ParseBytes parses a size: a whole number of bytes ("16777216", as
// sysctls count them), or a number with a unit: KiB, MiB, GiB (also K, M,
// G, as the kernel's own parameters read them) or kB, MB, GB (powers of
// ten). Errors wrap ErrInvalid and their text starts with the quoted input,
// ready to follow a flag name.
func ParseBytes(s string) (int64, error) {
	in := strings.TrimSpace(s)
	i := 0
	for i < len(in) && (in[i] >= '0' && in[i] <= '9' || in[i] == '.') {
		i++
	}
	num, unit := in[:i], strings.TrimSpace(in[i:])
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) {
		return 0, &inputError{fmt.Sprintf("%q: want a size like 16MiB (or a number of bytes)", s)}
	}
	mult := map[string]float64{"": 1, "B": 1, "K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20, "G": 1 << 30, "GiB": 1 << 30,
		"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9}[unit]
	if mult == 0 {
		return 0, &inputError{fmt.Sprintf("%q: unknown unit %q (use KiB, MiB, GiB, or kB, MB, GB)", s, unit)}
	}
	v *= mult
	if v > 1<<62 {
		return 0, &inputError{fmt.Sprintf("%q: too large", s)}
	}
	if v != math.Trunc(v) {
		return 0, &inputError{fmt.Sprintf("%q: not a whole number of bytes", s)}
	}
	return int64(v), nil
}

// inputError is a bad value a person typed: its text is only the detail (no
// "invalid sysctl value" prefix), and errors.Is(err, ErrInvalid) holds.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return ErrInvalid }

// MemTotal returns MemTotal from /proc/meminfo in bytes. Errors:
// ErrNoMeminfo when /proc/meminfo is missing, ErrInvalid when it has no
// parsable MemTotal, or the read error.
func (h Host) MemTotal() (int64, error) {
	p := filepath.Join(h.proc(), "meminfo")
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("%w at %s: the limits that depend on RAM are skipped (is procfs mounted there?)", ErrNoMeminfo, p)
		}
		return 0, fmt.Errorf("reading %s: %w", p, err)
	}
	return parseMemTotal(b)
}

func parseMemTotal(b []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			break
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			break
		}
		if len(f) > 1 && f[1] == "kB" {
			if n > math.MaxInt64/1024 {
				break
			}
			n *= 1024
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: /proc/meminfo has no MemTotal line", ErrInvalid)
}
