// Package tune is `tailpath tune` without the flag parsing: it gathers the
// host's TCP tuning, the BBR evidence, the tailnet TCP connections and the
// tailscale0 link, computes a recommendation, renders it as text or JSON,
// and applies, persists or reverts it. The Tuning pane reads and changes
// the host through Control (watch.go) and shows what screen.go words for
// it as safetext.Text, cleaned here; this package never imports Bubble Tea.
package tune

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
)

// Defaults used when neither a flag nor a measurement gives a value.
const (
	DefaultBandwidth = 1e9                   // bits/s: a gigabit LAN
	DefaultRTT       = 20 * time.Millisecond // the NAS case's tailnet RTT
)

// ErrNotLinux says the real host's tuning can only be read on Linux.
var ErrNotLinux = errors.New("TCP tuning is Linux only (sysctls under /proc/sys)")

// Inputs say what to recommend for and where to look.
type Inputs struct {
	// Host locates /proc, /lib/modules and /etc/sysctl.d (zero: the real machine).
	Host sysctl.Host
	// Sandbox marks Host as a copy, not the real machine (shown as "sandbox").
	Sandbox bool
	// Bandwidth is the target in bits/s; 0 means measure, else DefaultBandwidth.
	Bandwidth float64
	// RTT is the round trip; 0 means Peer, else measure, else DefaultRTT.
	RTT time.Duration
	// BandwidthSource names where a non-zero Bandwidth came from, shown
	// beside it ("flag --bandwidth", "demo: the NAS case"); "" means "given".
	BandwidthSource string
	// RTTSource names where a non-zero RTT came from ("flag --rtt"); "" means "given".
	RTTSource string
	// Peer names a tailnet peer whose ping RTT to use (needs PeerRTT).
	Peer string
	// PeerRTT measures the RTT to a peer (tailnet ping through tailscaled);
	// nil means that is not available in this build.
	PeerRTT func(ctx context.Context, peer string) (time.Duration, error)
	// Headroom multiplies the BDP; 0 means sysctl.DefaultHeadroom.
	Headroom float64
	// BBR asks for bbr (and fq where needed) when it can work.
	BBR bool
	// BulkConns is how many bulk connections share tcp_mem at full buffer;
	// 0 means sysctl.DefaultBulkConns.
	BulkConns int
	// Floor is the buffer floor when FloorSet (--floor); unset, the
	// default floor applies only to a change needed anyway (sysctl.Target).
	Floor    int64
	FloorSet bool
	// DaemonTUN asks tailscaled whether it runs with a kernel TUN
	// (LocalAPI Status.TUN); nil means do not ask (a sandbox, a snapshot),
	// and the interface and the platform's files decide (Report.Tunnel).
	DaemonTUN func(ctx context.Context) (bool, error)
	// Daemon names the tailscaled DaemonTUN asks (its socket), for the evidence.
	Daemon string
	// Conns lists tailnet TCP connections; nil means sockdiag.Dump (Linux),
	// or none for a sandbox.
	Conns func(ctx context.Context) ([]sockdiag.Conn, error)
	// Link reads an interface; nil means sockdiag.LinkInfo, or for a
	// sandbox ROOT/sys/class/net when the root has it.
	Link func(name string) (sockdiag.Link, error)
	// Crypto measures this machine's ChaCha20-Poly1305 ceiling; nil means
	// MeasureCryptoOnce (about a second, once per process). Tests pass
	// a fixed measure (tunetest.FixedCrypto) so their output does not
	// depend on this machine.
	Crypto func(ctx context.Context) (CryptoMeasure, error)
	// Progress, when set, is told what takes time (the crypto
	// measurement), for a person waiting on stderr.
	Progress func(string)
	// Prefs asks tailscaled for its version and advertised routes
	// (LocalAPI Status and prefs); nil means do not ask (a root's
	// tailscaled.state and package database answer instead).
	Prefs func(ctx context.Context) (DaemonPrefs, error)
	// PeerPath asks tailscaled for the path to the peer named by Peer, or
	// to the busiest peer when Peer is "", with its verdict; nil means do
	// not ask.
	PeerPath func(ctx context.Context, peer string) (PeerPath, error)
	// Observed is the throughput seen through this box, bits/s (--observed;
	// 0 unknown), and ObservedSource where it came from.
	Observed       float64
	ObservedSource string
}

// Report is everything tune shows: one gathering.
type Report struct {
	Time    time.Time `json:"time"`
	Sandbox bool      `json:"sandbox,omitempty"`
	// Root is the /proc root read ("/proc" for the real machine).
	Root string `json:"proc_root"`
	// Platform is the detected system (DSM, Unraid, TrueNAS SCALE, …).
	Platform sysctl.Platform `json:"platform"`
	// PersistWhere says where --persist keeps the values on this platform
	// (it names the platform's files and what they say).
	PersistWhere safetext.Text         `json:"persist_where"`
	Settings     sysctl.Settings       `json:"settings"`
	BBR          sysctl.BBRStatus      `json:"bbr"`
	MemTotal     int64                 `json:"mem_total_bytes"`
	Rec          sysctl.Recommendation `json:"recommendation"`
	Conns        []sockdiag.Conn       `json:"connections"`
	ConnsErr     safetext.Text         `json:"connections_error,omitempty"`
	Link         *sockdiag.Link        `json:"tailscale0,omitempty"`
	LinkErr      safetext.Text         `json:"tailscale0_error,omitempty"`
	// Tunnel says whether tailnet TCP here is the kernel's at all
	// (userspace networking); its zero value (Mode "") is a report saved
	// before tailpath asked.
	Tunnel Tunnel   `json:"tunnel"`
	Notes  []string `json:"notes,omitempty"`

	// Limits are what, other than the buffers, holds tailnet throughput
	// down here, the verdict first (limit.go); nil when nothing does.
	Limits []Limit `json:"limits,omitempty"`
	// CPU is the processor (nil when /proc/cpuinfo is unreadable:
	// CPUErr), Crypto the ChaCha20-Poly1305 ceiling.
	CPU    *sysctl.CPU `json:"cpu,omitempty"`
	CPUErr string      `json:"cpu_error,omitempty"`
	Crypto *Crypto     `json:"crypto,omitempty"`
	// Tailscale is tailscaled's version where known, TailscaleFrom where
	// it was read.
	Tailscale     string `json:"tailscale_version,omitempty"`
	TailscaleFrom string `json:"tailscale_version_from,omitempty"`
	// Kernel are the known kernel regressions whose range holds this
	// kernel (sysctl.KernelBugs).
	Kernel []KernelHit `json:"kernel_regressions,omitempty"`
	// Forwarding is whether this box forwards (exit node, subnet router).
	Forwarding *Forwarding `json:"forwarding,omitempty"`
	// Offloads are the default-route, TUN and forwarded interfaces'
	// features; OffloadNotes what they suggest short of a limit.
	Offloads     *Offloads `json:"offloads,omitempty"`
	OffloadNotes []string  `json:"offload_notes,omitempty"`
	// Path is the path to --peer or the busiest peer (nil when tailscaled
	// was not asked: PathErr says why when it was).
	Path    *PeerPath     `json:"path,omitempty"`
	PathErr safetext.Text `json:"path_error,omitempty"`
	// Observed is the throughput seen (bits/s, --observed; 0 unknown).
	Observed       float64 `json:"observed_bps,omitempty"`
	ObservedSource string  `json:"observed_source,omitempty"`
}

// KernelHit is a known kernel regression whose range holds this kernel,
// and whether the tailscaled here works around it.
type KernelHit struct {
	sysctl.KernelHit
	// Mitigated says why the hit is not the limit (tailscaled's version
	// has the client workaround); "" when it is, or it is not known.
	Mitigated string `json:"mitigated,omitempty"`
}

// Gather reads the settings, BBR evidence, memory, connections and link
// and computes the recommendation. Errors: sysctl.ErrNoProc (wrapped with
// ErrNotLinux off Linux), PeerRTT's error for --peer, sysctl.ErrInvalid for
// bad targets. Connection and link trouble is reported in the Report, not
// as an error.
//
// Long on purpose: each input read in turn with its own fallback, the later
// ones reading the earlier ones' results.
func Gather(ctx context.Context, in Inputs) (Report, error) {
	r := Report{Time: time.Now(), Sandbox: in.Sandbox, Root: in.Host.Proc}
	if r.Root == "" {
		r.Root = "/proc"
	}
	var err error
	r.Settings, err = in.Host.Read()
	if err != nil {
		if errors.Is(err, sysctl.ErrNoProc) && runtime.GOOS != "linux" {
			return r, fmt.Errorf("%w: this is %s", ErrNotLinux, runtime.GOOS)
		}
		return r, err
	}
	r.Platform = in.Host.Platform()
	r.PersistWhere = safetext.New(in.Host.PersistWhere(r.Platform))
	r.BBR, err = in.Host.BBRFor(r.Platform)
	if err != nil {
		return r, err
	}
	if m, err := in.Host.MemTotal(); err == nil {
		r.MemTotal = m
	} else {
		r.Notes = append(r.Notes, "memory size unknown: "+err.Error())
	}
	var dp *DaemonPrefs
	var dpErr error
	if in.Prefs != nil {
		dctx, cancel := context.WithTimeout(ctx, daemonTimeout)
		p, err := in.Prefs(dctx)
		cancel()
		if err == nil {
			dp = &p
		} else {
			dpErr = err
		}
	}
	r.cpuFacts(ctx, in, dp)
	r.kernelFacts(in)

	conns := in.Conns
	if conns == nil && !in.Sandbox {
		conns = func(ctx context.Context) ([]sockdiag.Conn, error) { return sockdiag.Dump(ctx, sockdiag.Options{}) }
	}
	if conns != nil {
		c, err := conns(ctx)
		if err != nil {
			r.ConnsErr = safetext.Of(err)
		}
		r.Conns = c
	}
	link := in.Link
	if link == nil && !in.Sandbox {
		link = func(name string) (sockdiag.Link, error) {
			l, err := sockdiag.LinkInfo(name)
			if errors.Is(err, sockdiag.ErrNoLink) {
				// A TUN named otherwise (--tun=NAME) still holds the
				// node's Tailscale address.
				if other, ok := tailnetInterface(); ok {
					return sockdiag.LinkInfo(other)
				}
			}
			return l, err
		}
	}
	switch {
	case link != nil:
		l, err := link(sockdiag.TailscaleInterface)
		if err != nil {
			r.LinkErr = safetext.Of(err)
		} else {
			r.Link = &l
		}
	case in.Sandbox:
		if l, ok, err := sysfsLink(in.Host, sockdiag.TailscaleInterface); ok && err != nil {
			r.LinkErr = safetext.Of(err)
		} else if ok {
			r.Link = &l
		}
	}
	r.tunnel(ctx, in)
	r.forwarding(ctx, in, dp, dpErr)
	r.offloads(in)
	r.peerPath(ctx, in)

	// Judge each connection against this host's limits: a small send
	// buffer means something else when tcp_wmem could have grown it.
	lim := sockdiag.Limits{TCPWmemMax: r.Settings.TCPWmem.Max, WmemMax: r.Settings.WmemMax, MTUProbing: r.Settings.MTUProbing >= 1}
	if r.Link != nil {
		lim.LinkMTU = r.Link.MTU
	}
	for i := range r.Conns {
		r.Conns[i].Verdict = sockdiag.Classify(r.Conns[i], lim)
	}

	t := sysctl.Target{Bandwidth: in.Bandwidth, RTT: in.RTT, Headroom: in.Headroom, BBR: in.BBR, BulkConns: in.BulkConns, Floor: in.Floor, FloorSet: in.FloorSet}
	t.BandwidthSource, t.RTTSource = orGiven(in.BandwidthSource), orGiven(in.RTTSource)
	if t.Bandwidth == 0 {
		if bw, n := measuredBandwidth(r.Conns); bw > 0 {
			t.Bandwidth = bw
			t.BandwidthSource = fmt.Sprintf("measured: best delivery rate of %d tailnet connection(s), a lower bound; pass --bandwidth for the link speed", n)
		} else {
			t.Bandwidth = DefaultBandwidth
			t.BandwidthSource = "default: no --bandwidth and no busy tailnet connection to measure"
		}
	}
	if t.RTT == 0 {
		switch {
		case in.Peer != "" && in.PeerRTT == nil:
			return r, fmt.Errorf("--peer %s: measuring the RTT to a peer needs tailscaled support in this build; pass --rtt instead (e.g. from `tailscale ping %s`)", in.Peer, in.Peer)
		case in.Peer != "":
			d, err := in.PeerRTT(ctx, in.Peer)
			if err != nil {
				return r, fmt.Errorf("--peer %s: measuring RTT: %w; pass --rtt instead", in.Peer, err)
			}
			t.RTT, t.RTTSource = d, "measured: tailnet ping to "+in.Peer
		default:
			if d, n := measuredRTT(r.Conns); d > 0 {
				t.RTT, t.RTTSource = d, fmt.Sprintf("measured: highest smoothed RTT (tcp_info) of %d tailnet connection(s)", n)
			} else {
				t.RTT, t.RTTSource = DefaultRTT, "default: pass --rtt or --peer NAME"
			}
		}
	}
	for _, c := range r.Conns {
		switch c.Verdict.Kind {
		case sockdiag.VerdictMTU:
			t.MTUTrouble++
		case sockdiag.VerdictSndbuf, sockdiag.VerdictWmemMax:
			t.BufferLimited++
		}
	}
	r.Observed, r.ObservedSource = in.Observed, orGiven(in.ObservedSource)
	if in.Observed == 0 {
		r.ObservedSource = ""
	}
	r.judgeLimits(t.Bandwidth, r.Observed, r.ObservedSource)
	for _, l := range r.Limits {
		if l.Kind == LimitCPU {
			// Buffers sized for more than the CPU can encrypt buy nothing:
			// the arithmetic is for the ceiling.
			if ceil, how := r.Crypto.Ceiling(); ceil > 0 && ceil < t.Bandwidth {
				t.BandwidthSource = fmt.Sprintf("this CPU's crypto ceiling (%s), below the %s target (%s)", how, sysctl.FormatBandwidth(t.Bandwidth), t.BandwidthSource)
				t.Bandwidth = ceil
			}
			continue
		}
		if t.Elsewhere == "" {
			t.Elsewhere = "the limit is " + limitNoun(l.Kind) + " (see the first line)"
		}
	}
	r.Rec, err = sysctl.Recommend(r.Settings, t, r.MemTotal, &r.BBR)
	if err != nil {
		return r, err
	}
	sort.Slice(r.Conns, func(i, j int) bool { return r.Conns[i].Remote.String() < r.Conns[j].Remote.String() })
	return r, nil
}

// orGiven labels a value the caller passed without naming its source.
func orGiven(src string) string {
	if src == "" {
		return "given"
	}
	return src
}

// measuredBandwidth returns the best delivery rate (bits/s) among
// connections that carried at least 1 Mbit/s, and how many had one.
func measuredBandwidth(conns []sockdiag.Conn) (float64, int) {
	var best float64
	n := 0
	for _, c := range conns {
		if c.Info == nil || c.Info.DeliveryRate == nil {
			continue
		}
		bps := float64(*c.Info.DeliveryRate) * 8
		if bps < 1e6 {
			continue
		}
		n++
		best = max(best, bps)
	}
	return best, n
}

// measuredRTT returns the highest smoothed RTT among established
// connections that report one, and how many did.
func measuredRTT(conns []sockdiag.Conn) (time.Duration, int) {
	var worst time.Duration
	n := 0
	for _, c := range conns {
		if c.Info == nil || c.Info.RTT == nil || *c.Info.RTT <= 0 || c.State != "ESTABLISHED" {
			continue
		}
		n++
		worst = max(worst, *c.Info.RTT)
	}
	return worst, n
}
