package tune

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
)

// TestLimitRank: limits come in their order (path, kernel, cpu, offload,
// forwarding), a kernel hit the tailscaled here works around is no limit,
// and the CPU is one only below or within 1.5× of the target.
func TestLimitRank(t *testing.T) {
	hit := KernelHit{KernelHit: sysctl.KernelHit{Bug: sysctl.KernelBugs[0], Sure: true, Why: "6.1.103 is in 6.1.103–6.1.106"}}
	fwd := &Forwarding{ExitNode: true, From: "test", IPv4: "1", IPv6: "1"}
	ceiling := func(bps float64) *Crypto {
		return &Crypto{Here: true, Measured: &CryptoMeasure{Cores: 4, Packet: CryptoPacket, OneCore: bps / 4, AllCores: bps}}
	}
	relayed := &PeerPath{Peer: "nas", Chosen: "named by --peer", Kind: PathDERP, Text: `active; relay "fra"`, Reason: "local-hard-nat", Summary: "hard NAT here", Fix: "enable NAT-PMP"}
	tests := []struct {
		name   string
		r      Report
		target float64
		want   string
	}{
		{"everything", Report{Path: relayed, Kernel: []KernelHit{hit}, Crypto: ceiling(500e6), Forwarding: fwd}, 1e9, "path kernel cpu forwarding"},
		{"a direct path is no limit", Report{Path: &PeerPath{Kind: "direct"}, Crypto: ceiling(10e9)}, 1e9, ""},
		{"mitigated kernel hit", Report{Kernel: []KernelHit{{KernelHit: hit.KernelHit, Mitigated: "tailscaled 1.80.3 has the workaround"}}, Crypto: ceiling(10e9)}, 1e9, ""},
		{"unsure kernel hit", Report{Kernel: []KernelHit{{KernelHit: sysctl.KernelHit{Bug: sysctl.KernelBugs[0]}}}}, 1e9, ""},
		{"CPU within 1.5×", Report{Crypto: ceiling(1.4e9)}, 1e9, "cpu"},
		{"CPU beyond 1.5×", Report{Crypto: ceiling(1.6e9)}, 1e9, ""},
		{"a measurement that is not of this machine", Report{Crypto: &Crypto{Measured: &CryptoMeasure{AllCores: 1e6}}}, 1e9, ""},
		{"forwarding alone", Report{Forwarding: fwd, Crypto: ceiling(10e9)}, 1e9, "forwarding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.judgeLimits(tt.target, 0, "")
			var kinds []string
			for _, l := range tt.r.Limits {
				kinds = append(kinds, string(l.Kind))
				if l.Says == "" || len(l.Fix) == 0 {
					t.Errorf("%s: no words or no fix: %+v", l.Kind, l)
				}
			}
			if got := strings.Join(kinds, " "); got != tt.want {
				t.Errorf("limits %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOffloadLimit: TSO on a bridge in the forwarded path is the verdict
// only with throughput far below the ceiling; without a figure it is a
// note; UDP GRO forwarding off on a forwarding box's WAN is a limit with
// Tailscale's command, and none at all on a box that forwards nothing.
func TestOffloadLimit(t *testing.T) {
	bridge := Iface{Name: "br0", Roles: []string{"lan 192.168.1.0/24"}, Bridge: true, Ports: []string{"eth0"}, Features: map[string]bool{FeatTSO: true}}
	sub := &Forwarding{Routes: []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24")}, From: "test"}
	base := func() Report {
		return Report{Forwarding: sub, Crypto: &Crypto{Here: true, Measured: &CryptoMeasure{Cores: 4, AllCores: 3e9, OneCore: 1e9}},
			Offloads: &Offloads{WAN: "eth4", TUN: "tailscale0", Ifaces: []Iface{bridge}}}
	}
	r := base()
	r.judgeLimits(1e9, 0.5e6, "flag --observed")
	if len(r.Limits) == 0 || r.Limits[0].Kind != LimitOffload || !strings.Contains(strings.Join(r.Limits[0].Fix, "\n"), "ethtool -K br0 tso off") {
		t.Errorf("far below: limits %+v", r.Limits)
	}
	r = base()
	r.judgeLimits(1e9, 0, "")
	if len(r.Limits) == 0 || r.Limits[0].Kind != LimitForwarding || len(r.OffloadNotes) != 1 {
		t.Errorf("no throughput: limits %+v, notes %q", r.Limits, r.OffloadNotes)
	}
	r = base()
	r.judgeLimits(1e9, 900e6, "flag --observed")
	if r.Limits[0].Kind == LimitOffload {
		t.Errorf("900 Mbit/s of a 3 Gbit/s ceiling is not far below: %+v", r.Limits[0])
	}
	r = base()
	r.Offloads.UDPGRO = &GROCheck{Suboptimal: true, Warning: udpGROWarning("eth4")}
	r.judgeLimits(1e9, 0, "")
	if r.Limits[0].Kind != LimitOffload || !strings.Contains(r.Limits[0].Fix[0], "ethtool -K eth4 rx-udp-gro-forwarding on rx-gro-list off") {
		t.Errorf("GRO off: limits %+v", r.Limits)
	}
	r.Forwarding, r.Limits = &Forwarding{From: "test"}, nil
	r.judgeLimits(1e9, 0, "")
	if len(r.Limits) != 0 {
		t.Errorf("a box that forwards nothing: limits %+v", r.Limits)
	}
}

// TestNoBufferChangeWhileLimitHolds: the sample host's 4 MiB tcp_wmem is
// short of 1 Gbit/s × 20 ms, so tune raises it; on a kernel in the
// regression's range it raises nothing, says why first, and shows what
// the arithmetic alone would have asked for.
func TestNoBufferChangeWhileLimitHolds(t *testing.T) {
	h := sampleHost(t)
	in := Inputs{Host: h, Sandbox: true, Bandwidth: 1e9, RTT: 20 * time.Millisecond, Crypto: func(context.Context) (CryptoMeasure, error) {
		return CryptoMeasure{Fixed: true, Cores: 2, OneCore: 1e9, AllCores: 2e9}, nil
	}}
	r, err := Gather(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rec.Changes) == 0 || len(r.Limits) != 0 {
		t.Fatalf("6.1 sample: changes %v, limits %v; want the buffer raise and no limit", r.Rec.Changes, r.Limits)
	}
	if err := os.WriteFile(filepath.Join(h.SysRoot(), "kernel", "osrelease"), []byte("6.1.103\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Gather(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rec.Changes) != 0 || len(r.Limits) != 1 || r.Limits[0].Kind != LimitKernel {
		t.Fatalf("6.1.103: changes %v, limits %+v; want no change and the kernel first", r.Rec.Changes, r.Limits)
	}
	var b strings.Builder
	r.WriteText(&b)
	out := b.String()
	if !strings.HasPrefix(out, "Limit: kernel: kernel 6.1.103 has a known regression (virtio-net-hdr-gso-einval)") ||
		!strings.Contains(out, "4 MiB < 4.8 MiB, but not raised: the limit is a kernel regression (see the first line)") ||
		!strings.Contains(out, "No changes needed.") {
		t.Errorf("output:\n%s", out)
	}
	// A connection measured buffer limited is evidence of its own: it
	// still raises the buffers.
	in.Conns = func(context.Context) ([]sockdiag.Conn, error) {
		return []sockdiag.Conn{conn("100.64.0.7:445", 22*time.Millisecond, 1_375_000)}, nil
	}
	r, err = Gather(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rec.Changes) == 0 || !r.Rec.BuffersLimit {
		t.Errorf("measured send-buffer limited on 6.1.103: changes %v; want the raise", r.Rec.Changes)
	}
}
