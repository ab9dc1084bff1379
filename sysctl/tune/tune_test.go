package tune

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/sysctltest"
)

// sampleHost is a sandbox with sysctltest.SampleKeys (6.1 defaults, bbr built in).
func sampleHost(t *testing.T) sysctl.Host {
	t.Helper()
	h, sample, err := sysctltest.NewSandbox(t.TempDir(), sysctl.AtRoot(filepath.Join(t.TempDir(), "none")))
	if err != nil || !sample {
		t.Fatalf("NewSandbox: sample=%v err=%v", sample, err)
	}
	return h
}

func ptr[T any](v T) *T { return &v }

func conn(remote string, rtt time.Duration, rate uint64) sockdiag.Conn {
	info := &sockdiag.TCPInfo{Len: 232, RTT: &rtt, RTTVar: ptr(rtt / 10), SndCwnd: ptr(uint32(40)),
		Retrans: ptr(uint32(0)), TotalRetrans: ptr(uint32(3)), DeliveryRate: &rate,
		BusyTime: ptr(time.Second), SndbufLimited: ptr(700 * time.Millisecond), RwndLimited: ptr(time.Duration(0))}
	return sockdiag.Conn{Remote: netip.MustParseAddrPort(remote), State: "ESTABLISHED", CC: "cubic", Info: info,
		Verdict: sockdiag.Classify(sockdiag.Conn{Info: info, CC: "cubic"}, sockdiag.Limits{})}
}

func TestGatherSources(t *testing.T) {
	h := sampleHost(t)
	conns := []sockdiag.Conn{conn("100.64.0.7:445", 22*time.Millisecond, 1_375_000), conn("100.64.0.8:22", 140*time.Millisecond, 40_000_000)}
	tests := []struct {
		name          string
		in            Inputs
		bw            float64
		rtt           time.Duration
		bwSrc, rttSrc string
		err           string
	}{
		{"flags", Inputs{Bandwidth: 400e6, RTT: 20 * time.Millisecond, BandwidthSource: "flag --bandwidth", RTTSource: "flag --rtt"}, 400e6, 20 * time.Millisecond, "flag --bandwidth", "flag --rtt", ""},
		{"given without a source", Inputs{Bandwidth: 400e6, RTT: 20 * time.Millisecond}, 400e6, 20 * time.Millisecond, "given", "given", ""},
		{"demo", Inputs{Bandwidth: 400e6, RTT: 20 * time.Millisecond, BandwidthSource: "demo: the NAS case", RTTSource: "demo: the NAS case"}, 400e6, 20 * time.Millisecond, "demo: the NAS case", "demo: the NAS case", ""},
		{"measured from tcp_info", Inputs{}, 320e6, 140 * time.Millisecond, "measured: best delivery rate of 2", "measured: highest smoothed RTT (tcp_info) of 2", ""},
		{"peer ping", Inputs{Bandwidth: 1e9, Peer: "nas", PeerRTT: func(_ context.Context, p string) (time.Duration, error) {
			return 18 * time.Millisecond, nil
		}}, 1e9, 18 * time.Millisecond, "given", "measured: tailnet ping to nas", ""},
		{"peer without tailscaled support", Inputs{Peer: "nas"}, 0, 0, "", "", "needs tailscaled support in this build; pass --rtt instead"},
		{"peer ping fails", Inputs{Peer: "nas", PeerRTT: func(context.Context, string) (time.Duration, error) {
			return 0, errors.New("no such peer")
		}}, 0, 0, "", "", "--peer nas: measuring RTT: no such peer; pass --rtt instead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Host, in.Sandbox = h, true
			in.Conns = func(context.Context) ([]sockdiag.Conn, error) { return conns, nil }
			r, err := Gather(context.Background(), in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Gather error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tg := r.Rec.Target
			if tg.Bandwidth != tt.bw || tg.RTT != tt.rtt || !strings.HasPrefix(tg.BandwidthSource, tt.bwSrc) || !strings.HasPrefix(tg.RTTSource, tt.rttSrc) {
				t.Fatalf("target = %+v; want %v (%s), %v (%s)", tg, tt.bw, tt.bwSrc, tt.rtt, tt.rttSrc)
			}
		})
	}
}

func TestWriteText(t *testing.T) {
	h := sampleHost(t)
	r, err := Gather(context.Background(), Inputs{Host: h, Sandbox: true, Bandwidth: 400e6, RTT: 20 * time.Millisecond,
		Conns: func(context.Context) ([]sockdiag.Conn, error) {
			c := conn("100.64.0.7:445", 22*time.Millisecond, 1_375_000)
			c.Info.DeliveryRate = nil // an old kernel: shown as unknown
			return []sockdiag.Conn{c}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	r.WriteText(&b)
	out := b.String()
	for _, want := range []string{
		"[sandbox: a copy, not this machine]",
		"BDP = bandwidth × RTT",
		"976.6 KiB",
		"net.ipv4.tcp_wmem",
		"4096 16384 16777216",
		"net.ipv4.tcp_congestion_control     cubic",
		"BBR: available: bbr is in tcp_available_congestion_control",
		"100.64.0.7:445",
		"send buffer limited: raise tcp_wmem max",
		"unknown",
		"Changes (4):",
		"net.core.rmem_max: 212992 → 16777216",
		"net.ipv4.tcp_mtu_probing            0                    keep\n", // the same word as the pane
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "(keep)") {
		t.Errorf("output says (keep), the pane says keep:\n%s", out)
	}
}

// TestWriteTextTitle: the header names this host or the sandbox copy.
func TestWriteTextTitle(t *testing.T) {
	tests := []struct {
		name string
		rep  Report
		want string
	}{
		{"host", Report{Root: "/proc"}, "TCP tuning for this host (/proc/sys)\n"},
		{"sandbox", Report{Root: "/tmp/s/proc", Sandbox: true}, "TCP tuning for /tmp/s/proc/sys [sandbox: a copy, not this machine]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			tt.rep.WriteText(&b)
			first, _, _ := strings.Cut(b.String(), "\n")
			if diff := cmp.Diff(tt.want, first+"\n"); diff != "" {
				t.Errorf("title (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunApplyPersistRevert(t *testing.T) {
	h := sampleHost(t)
	state := filepath.Join(t.TempDir(), "tune-state.json")
	in := Inputs{Host: h, Sandbox: true, Bandwidth: 400e6, RTT: 150 * time.Millisecond, BBR: true}
	before, _ := h.Read()
	var out bytes.Buffer
	act := Action{Apply: true, Persist: true, Yes: true, StatePath: state, Cmdline: []string{"tailpath", "tune", "--apply"}}
	if err := Run(context.Background(), in, act, nil, &out); err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	after, _ := h.Read()
	if after.TCPWmem.Max != 15<<20+1<<20 || after.CongestionControl != "bbr" {
		t.Fatalf("after apply: wmem %v cc %q\n%s", after.TCPWmem, after.CongestionControl, out.String())
	}
	conf, err := os.ReadFile(filepath.Join(h.SysctlDir, sysctl.PersistFile))
	if err != nil || !strings.Contains(string(conf), "net.ipv4.tcp_congestion_control = bbr\n") {
		t.Fatalf("persisted file: %v\n%s", err, conf)
	}
	for _, want := range []string{"set net.ipv4.tcp_rmem:", "undo with: tailpath tune --revert", "persisted on "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// Applying again changes nothing.
	out.Reset()
	if err := Run(context.Background(), in, act, nil, &out); err != nil || !strings.Contains(out.String(), "No changes needed.") {
		t.Fatalf("second apply: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := Run(context.Background(), in, Action{Revert: true, Yes: true, StatePath: state}, nil, &out); err != nil {
		t.Fatalf("revert: %v\n%s", err, out.String())
	}
	reverted, _ := h.Read()
	if diff := cmp.Diff(before.Raw, reverted.Raw); diff != "" {
		t.Errorf("after revert (-before +after):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(h.SysctlDir, sysctl.PersistFile)); !os.IsNotExist(err) {
		t.Errorf("persisted file survived revert: %v", err)
	}
}

func TestRunRefusals(t *testing.T) {
	h := sampleHost(t)
	in := Inputs{Host: h, Bandwidth: 400e6, RTT: 100 * time.Millisecond, Conns: func(context.Context) ([]sockdiag.Conn, error) { return nil, nil },
		Link: func(string) (sockdiag.Link, error) {
			return sockdiag.Link{}, fmt.Errorf("tailscale0: %w", sockdiag.ErrNoLink)
		}}
	state := filepath.Join(t.TempDir(), "s.json")
	notRoot := func() bool { return false }
	root := func() bool { return true }
	tests := []struct {
		name  string
		act   Action
		stdin string
		is    error
		msg   string
	}{
		{"not root", Action{Apply: true, IsRoot: notRoot, Cmdline: []string{"tailpath", "tune", "--bandwidth", "400Mbit", "--apply"}}, "", os.ErrPermission,
			"changing sysctls needs root; run:\n  sudo tailpath tune --bandwidth 400Mbit --apply"},
		{"revert not root", Action{Revert: true, IsRoot: notRoot, Cmdline: []string{"tailpath", "tune", "--revert"}}, "", os.ErrPermission, "sudo tailpath tune --revert"},
		{"no terminal, no --yes", Action{Apply: true, IsRoot: root}, "", ErrNeedsYes, "not applied: no terminal to confirm on; pass --yes"},
		{"answered no", Action{Apply: true, IsRoot: root, Terminal: true}, "n\n", ErrNotConfirmed, `answered "n"`},
		{"persist without apply", Action{Persist: true, IsRoot: root}, "", nil, "--persist needs --apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := h.Read()
			tt.act.StatePath = state
			var out bytes.Buffer
			err := Run(context.Background(), in, tt.act, strings.NewReader(tt.stdin), &out)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Run = %v; want %v with %q", err, tt.is, tt.msg)
			}
			after, _ := h.Read()
			if diff := cmp.Diff(before.Raw, after.Raw); diff != "" {
				t.Errorf("values changed (-before +after):\n%s", diff)
			}
		})
	}
	// A yes on the terminal applies.
	var out bytes.Buffer
	if err := Run(context.Background(), in, Action{Apply: true, IsRoot: root, Terminal: true, StatePath: state}, strings.NewReader("y\n"), &out); err != nil {
		t.Fatalf("answered yes: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Apply these 4 change(s)? [y/N]") || !strings.Contains(out.String(), "tailscale0: interface not found") {
		t.Errorf("output:\n%s", out.String())
	}
	// With a state file now, revert asks too: no, then without a terminal,
	// change nothing; yes reverts.
	applied, _ := h.Read()
	for _, act := range []Action{{Revert: true, IsRoot: root, Terminal: true}, {Revert: true, IsRoot: root}} {
		act.StatePath = state
		out.Reset()
		err := Run(context.Background(), in, act, strings.NewReader("n\n"), &out)
		if !errors.Is(err, ErrNotConfirmed) || errors.Is(err, ErrNeedsYes) == act.Terminal {
			t.Errorf("revert %+v: %v", act, err)
		}
		if now, _ := h.Read(); !cmp.Equal(applied.Raw, now.Raw) {
			t.Errorf("revert %+v changed values", act)
		}
	}
	out.Reset()
	if err := Run(context.Background(), in, Action{Revert: true, IsRoot: root, Terminal: true, StatePath: state}, strings.NewReader("y\n"), &out); err != nil {
		t.Fatalf("revert answered yes: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Revert these 4 key(s)? [y/N]") || !strings.Contains(out.String(), "reverted 4 key(s)") {
		t.Errorf("revert output:\n%s", out.String())
	}
}

func TestRunJSON(t *testing.T) {
	h := sampleHost(t)
	var out bytes.Buffer
	if err := Run(context.Background(), Inputs{Host: h, Sandbox: true, Bandwidth: 1e9, RTT: 100 * time.Millisecond}, Action{JSON: true}, nil, &out); err != nil {
		t.Fatal(err)
	}
	var o Output
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if o.Report == nil || o.Report.Rec.BDPBytes != 12_500_000 || len(o.Report.Rec.Steps) == 0 || o.Report.BBR.State != sysctl.BBRAvailable {
		t.Fatalf("JSON report: %+v", o.Report)
	}
}
