package sysctl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestNormalizeCleans: a value read from the kernel or a sandbox root is
// outside text; `tailpath tune` prints it, so it is cleaned where read,
// word by word.
func TestNormalizeCleans(t *testing.T) {
	for in, want := range map[string]string{
		"cubic\x1b]0;pwned\x07\nbbr\x1b[2J": "cubic bbr",
		"6.1.0\x1b[31m-13-amd64\x07":        "6.1.0-13-amd64",
		"4096\t131072\t6291456\n":           "4096 131072 6291456",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		name    string
		keys    map[string]string
		want    Settings
		missing []string
		wantErr error
	}{
		{
			name: "modern",
			keys: modernKeys,
			want: Settings{
				TCPMem:  Triple{46509, 62012, 93018},
				TCPRmem: Triple{4096, 131072, 6291456}, TCPWmem: Triple{4096, 16384, 4194304},
				RmemMax: 212992, WmemMax: 212992, CongestionControl: "cubic",
				AvailableCC: []string{"reno", "cubic", "bbr"}, DefaultQdisc: "fq_codel",
				MTUProbing: 0, SlowStartAfterIdle: 1, NotsentLowat: 4294967295,
			},
		},
		{
			name: "synology 4.4 lacks nothing but has small buffers",
			keys: synologyKeys,
			want: Settings{
				TCPMem:  Triple{46509, 62012, 93018},
				TCPRmem: Triple{4096, 87380, 6291456}, TCPWmem: Triple{4096, 16384, 4194304},
				RmemMax: 212992, WmemMax: 212992, CongestionControl: "cubic",
				AvailableCC: []string{"cubic", "reno"}, DefaultQdisc: "pfifo_fast",
				SlowStartAfterIdle: 1, NotsentLowat: -1,
			},
		},
		{
			name: "old kernel without notsent_lowat and default_qdisc",
			keys: copyKeys(modernKeys, map[string]string{KeyNotsentLowat: "", KeyDefaultQdisc: ""}),
			want: Settings{
				TCPMem:  Triple{46509, 62012, 93018},
				TCPRmem: Triple{4096, 131072, 6291456}, TCPWmem: Triple{4096, 16384, 4194304},
				RmemMax: 212992, WmemMax: 212992, CongestionControl: "cubic",
				AvailableCC: []string{"reno", "cubic", "bbr"}, SlowStartAfterIdle: 1,
			},
			missing: []string{KeyDefaultQdisc, KeyNotsentLowat},
		},
		{
			name: "spaces instead of tabs, extra whitespace",
			keys: copyKeys(modernKeys, map[string]string{KeyTCPRmem: "  4096   87380\t\t33554432  "}),
			want: Settings{
				TCPMem:  Triple{46509, 62012, 93018},
				TCPRmem: Triple{4096, 87380, 33554432}, TCPWmem: Triple{4096, 16384, 4194304},
				RmemMax: 212992, WmemMax: 212992, CongestionControl: "cubic",
				AvailableCC: []string{"reno", "cubic", "bbr"}, DefaultQdisc: "fq_codel",
				SlowStartAfterIdle: 1, NotsentLowat: 4294967295,
			},
		},
		{
			name:    "garbage triple",
			keys:    copyKeys(modernKeys, map[string]string{KeyTCPWmem: "4096 lots 9"}),
			wantErr: ErrInvalid,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := fakeHost(t, copyKeys(tt.keys, map[string]string{KeyTCPMem: "46509\t62012\t93018"}), 0)
			got, err := h.Read()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Read error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			var missing []string
			for k := range got.Missing {
				missing = append(missing, k)
				if !strings.Contains(got.Missing[k], ErrNoKey.Error()) {
					t.Errorf("Missing[%s] = %q, want it to say %q", k, got.Missing[k], ErrNoKey)
				}
			}
			if diff := cmp.Diff(tt.missing, missing, cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("missing keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Settings{}, "Raw", "Missing")); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
			if v := got.Raw[KeyTCPWmem]; v != "4096 16384 4194304" {
				t.Errorf("Raw tcp_wmem = %q, want whitespace-normalised %q", v, "4096 16384 4194304")
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	t.Run("missing proc", func(t *testing.T) {
		h := AtRoot(filepath.Join(t.TempDir(), "nope"))
		_, err := h.Read()
		if !errors.Is(err, ErrNoProc) {
			t.Fatalf("Read on a missing /proc = %v, want ErrNoProc", err)
		}
		if _, err := h.ReadRaw(KeyTCPRmem); !errors.Is(err, ErrNoProc) || errors.Is(err, ErrNoKey) {
			t.Fatalf("ReadRaw on a missing /proc = %v, want ErrNoProc and not ErrNoKey", err)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		h, _ := fakeHost(t, modernKeys, 0)
		_, err := h.ReadRaw("net.ipv4.tcp_no_such_thing")
		if !errors.Is(err, ErrNoKey) || errors.Is(err, ErrNoProc) {
			t.Fatalf("ReadRaw missing key = %v, want ErrNoKey and not ErrNoProc", err)
		}
	})
	h, dir := fakeHost(t, modernKeys, 0)
	writeFile(t, filepath.Join(dir, "secret"), "outside\n")
	if err := os.Symlink(filepath.Join(dir, "secret"), filepath.Join(h.SysRoot(), "net", "ipv4", "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../secret", filepath.Join(h.SysRoot(), "net", "ipv4", "evilrel")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "../secret", "/etc/passwd", "net..ipv4", ".net", "net.ipv4.", "net/ipv4/tcp_rmem", "net.ipv4.evil", "net.ipv4.evilrel", "net.ipv4.tcp\x00rmem"} {
		t.Run("bad key "+key, func(t *testing.T) {
			v, err := h.ReadRaw(key)
			if !errors.Is(err, ErrBadKey) {
				t.Fatalf("ReadRaw(%q) = %q, %v; want ErrBadKey", key, v, err)
			}
			if err := h.WriteRaw(key, "1"); !errors.Is(err, ErrBadKey) {
				t.Fatalf("WriteRaw(%q) = %v; want ErrBadKey", key, err)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "secret")); string(b) != "outside\n" {
		t.Fatalf("file outside the root was changed: %q", b)
	}
}

func TestParseTriple(t *testing.T) {
	tests := []struct {
		in   string
		want Triple
		ok   bool
	}{
		{"4096 131072 50000000", Triple{4096, 131072, 50000000}, true},
		{"4096\t87380\t6291456\n", Triple{4096, 87380, 6291456}, true},
		{"4096 4096 4096", Triple{4096, 4096, 4096}, true},
		{"4096 131072", Triple{}, false},
		{"4096 131072 5 7", Triple{}, false},
		{"4096 131072 4096", Triple{}, false}, // default > max
		{"9000 4096 65536", Triple{}, false},  // min > default
		{"0 4096 65536", Triple{}, false},
		{"-1 4096 65536", Triple{}, false},
		{"4k 16k 4M", Triple{}, false},
		{"4096 131072 99999999999", Triple{}, false}, // > INT_MAX
		{"", Triple{}, false},
	}
	for _, tt := range tests {
		got, err := ParseTriple(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseTriple(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseTriple(%q) error %v does not wrap ErrInvalid", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseTriple(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestSameValue(t *testing.T) {
	if !SameValue("4096\t131072\t6291456\n", " 4096 131072  6291456") {
		t.Error("tab- and space-separated triples should compare equal")
	}
	if SameValue("4096 131072 6291456", "4096 131072 6291457") {
		t.Error("different triples compared equal")
	}
}

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  string // "" means ok
	}{
		{"400Mbit", 400e6, ""},
		{"400Mbit/s", 400e6, ""},
		{"400mbit", 400e6, ""},
		{"1Gbit", 1e9, ""},
		{"1.5G", 1.5e9, ""},
		{"350Mbps", 350e6, ""},
		{"50MB/s", 400e6, ""},
		{"100000bit", 1e5, ""},
		{"10 Mbit", 10e6, ""},
		{"100000", 0, `"100000": missing unit (e.g. 100000Mbit; units bit, kbit, Mbit, Gbit, Tbit, or MB/s for bytes)`},
		{"400", 0, `"400": missing unit`},
		{"fast", 0, `"fast": want a positive number with a unit`},
		{"-5Mbit", 0, `"-5Mbit": want a positive number`},
		{"0", 0, `"0": want a positive number`},
		{"5Xbit", 0, `"5Xbit": unknown unit "X"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBandwidth(tt.in)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseBandwidth(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseBandwidth(%q) = %v, %v; want an ErrInvalid starting %q", tt.in, got, err, tt.err)
			}
		})
	}
}

// TestParseRTT: a round trip needs its unit and must be positive; the
// error starts with the quoted input.
func TestParseRTT(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  string // "" means ok
	}{
		{"20ms", 20 * time.Millisecond, ""},
		{" 1.5s ", 1500 * time.Millisecond, ""},
		{"20", 0, `"20": missing unit (e.g. 20ms)`},
		{"fast", 0, `"fast": not a duration`},
		{"-5ms", 0, `"-5ms": must be positive`},
		{"0s", 0, `"0s": must be positive`},
	} {
		got, err := ParseRTT(tt.in)
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseRTT(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tt.err) || !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseRTT(%q) = %v, %v; want an ErrInvalid starting %q", tt.in, got, err, tt.err)
		}
	}
}

// TestFormatBandwidthFlag: the hint reads back as the same bandwidth.
func TestFormatBandwidthFlag(t *testing.T) {
	for _, bps := range []float64{400e6, 1e9, 2.5e12, 1500, 999} {
		s := FormatBandwidthFlag(bps)
		if got, err := ParseBandwidth(s); err != nil || got != bps {
			t.Errorf("FormatBandwidthFlag(%g) = %q, which reads back as %g, %v", bps, s, got, err)
		}
	}
	if got := FormatBandwidthFlag(400e6); got != "400Mbit" {
		t.Errorf("FormatBandwidthFlag(400e6) = %q, want 400Mbit", got)
	}
}

func mustSettings(t *testing.T, keys map[string]string) Settings {
	t.Helper()
	h, _ := fakeHost(t, keys, 0)
	s, err := h.Read()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRecommend(t *testing.T) {
	modern := mustSettings(t, modernKeys)
	syno := mustSettings(t, synologyKeys)
	tuned := mustSettings(t, copyKeys(modernKeys, map[string]string{
		KeyTCPRmem: "4096 131072 50000000", KeyTCPWmem: "4096 131072 50000000",
		KeyRmemMax: "67108864", KeyWmemMax: "67108864",
	}))
	bbrOK := &BBRStatus{State: BBRAvailable, Kernel: "6.1.0", KernelMajor: 6, KernelMinor: 1}
	bbrOld := &BBRStatus{State: BBRLoadable, Kernel: "4.9.0", KernelMajor: 4, KernelMinor: 9, NeedsFQ: true}
	bbrNo := &BBRStatus{State: BBRImpossible, Kernel: "4.4.302+", KernelMajor: 4, KernelMinor: 4, Why: "kernel 4.4.302+ predates BBR (mainline since 4.9)", Missing: "a kernel ≥ 4.9"}
	const gib = 1 << 30
	raised := func(to string) []string {
		return []string{"net.ipv4.tcp_rmem=4096 87380 " + to, "net.ipv4.tcp_wmem=4096 16384 " + to, "net.core.rmem_max=" + to, "net.core.wmem_max=" + to}
	}
	tests := []struct {
		name      string
		cur       Settings
		target    Target
		mem       int64
		bbr       *BBRStatus
		bdp, want int64
		bufMax    int64
		changes   []string // "key=new"
		limit     string   // substring of LimitWhy; "" means the buffers do not limit
		notLimit  string   // NotLimit(), when they do not
		suffices  bool
		warn      string // substring of a warning, "" for none
		note      string
	}{
		{
			// The case: a stock DSM's 4-6 MiB maxima are far above
			// a gigabit LAN's need, so nothing is raised.
			name: "1 Gbit at 2 ms on stock DSM: buffers are not the limit", cur: syno, bbr: bbrNo, mem: 2 * gib,
			target: Target{Bandwidth: 1e9, RTT: 2 * time.Millisecond},
			bdp:    250_000, want: 500_000, bufMax: 1 << 20,
			notLimit: "buffers are not the limit (need 488.3 KiB, have 4 MiB)", suffices: true,
		},
		{
			name: "NAS case 400 Mbit at 20 ms on DSM: 4 MiB is enough", cur: syno, bbr: bbrNo, mem: 2 * gib,
			target: Target{Bandwidth: 400e6, RTT: 20 * time.Millisecond},
			bdp:    1_000_000, want: 2_000_000, bufMax: 2 << 20,
			notLimit: "buffers are not the limit (need 1.9 MiB, have 4 MiB)", suffices: true,
		},
		{
			name: "NAS case with a connection measured send-buffer limited: raised to the 16 MiB floor", cur: syno, bbr: bbrNo, mem: 2 * gib,
			target: Target{Bandwidth: 400e6, RTT: 20 * time.Millisecond, BufferLimited: 1},
			bdp:    1_000_000, want: 2_000_000, bufMax: 16 << 20,
			changes: raised("16777216"), limit: "1 tailnet connection(s) measured limited by this host's send buffer",
		},
		{
			name: "1 Gbit at 50 ms on DSM: the arithmetic says 4 MiB is short", cur: syno, bbr: bbrNo, mem: 2 * gib,
			target: Target{Bandwidth: 1e9, RTT: 50 * time.Millisecond},
			bdp:    6_250_000, want: 12_500_000, bufMax: 16 << 20,
			changes: raised("16777216"), limit: "the arithmetic: tcp_wmem max is 4 MiB, below the 11.9 MiB the target needs",
		},
		{
			name: "--floor 0: the buffer max is what the target needs, rounded up", cur: syno, bbr: bbrNo, mem: 2 * gib,
			target: Target{Bandwidth: 1e9, RTT: 50 * time.Millisecond, FloorSet: true},
			bdp:    6_250_000, want: 12_500_000, bufMax: 12 << 20,
			changes: raised("12582912"), limit: "the arithmetic",
		},
		{
			name: "--floor 16MiB where buffers do not limit: raised as asked, and said so", cur: syno, bbr: bbrNo, mem: 2 * gib,
			target: Target{Bandwidth: 400e6, RTT: 20 * time.Millisecond, Floor: 16 << 20, FloorSet: true},
			bdp:    1_000_000, want: 2_000_000, bufMax: 16 << 20,
			changes: raised("16777216"), notLimit: "buffers are not the limit (need 1.9 MiB, have 4 MiB)",
			note: "raising to --floor 16 MiB as asked, although buffers are not the limit",
		},
		{
			name: "tuned buffers, a connection in MTU trouble: tcp_mtu_probing=1", cur: tuned, bbr: bbrOK, mem: 16 * gib,
			target: Target{Bandwidth: 400e6, RTT: 20 * time.Millisecond, MTUTrouble: 1},
			bdp:    1_000_000, want: 2_000_000, bufMax: 2 << 20,
			changes: []string{"net.ipv4.tcp_mtu_probing=1"}, notLimit: "buffers are not the limit (need 1.9 MiB, have 47.7 MiB)",
		},
		{
			name: "MTU trouble with tcp_mtu_probing already 1: nothing to change", bbr: bbrOK, mem: 16 * gib,
			cur: mustSettings(t, copyKeys(modernKeys, map[string]string{
				KeyTCPRmem: "4096 131072 50000000", KeyTCPWmem: "4096 131072 50000000",
				KeyRmemMax: "67108864", KeyWmemMax: "67108864", KeyMTUProbing: "1",
			})),
			target: Target{Bandwidth: 400e6, RTT: 20 * time.Millisecond, MTUTrouble: 2},
			bdp:    1_000_000, want: 2_000_000, bufMax: 2 << 20,
			notLimit: "buffers are not the limit", suffices: true,
		},
		{
			// tcp_mem unknown: the kernel's default pressure is about RAM/16
			// = 16 MiB for all sockets, 4 MiB for each of 4 bulk
			// connections, which wins over the 16 MiB floor; the current
			// 6 MiB tcp_rmem max is above it and kept (never lowered).
			name: "buffer limited on a 256 MiB box: capped by tcp_mem", cur: syno, bbr: bbrNo, mem: 256 << 20,
			target: Target{Bandwidth: 400e6, RTT: 20 * time.Millisecond, BufferLimited: 2},
			bdp:    1_000_000, want: 2_000_000, bufMax: 4 << 20,
			changes: []string{"net.core.rmem_max=4194304", "net.core.wmem_max=4194304"}, limit: "2 tailnet connection(s)",
			warn: "above what tcp_mem allows for 4 bulk connections (4 MiB each)",
		},
		{
			name: "NAS case with --bbr on DSM 4.4: BBR refused with the reason", cur: syno, bbr: bbrNo, mem: 2 * gib,
			target: Target{Bandwidth: 400e6, RTT: 20 * time.Millisecond, BBR: true, BufferLimited: 1},
			bdp:    1_000_000, want: 2_000_000, bufMax: 16 << 20,
			changes: raised("16777216"), limit: "measured",
			warn: "BBR is not possible here: kernel 4.4.302+ predates BBR",
		},
		{
			name: "1 Gbit at 150 ms, bbr available: note suggests it", cur: modern, bbr: bbrOK, mem: 16 * gib,
			target: Target{Bandwidth: 1e9, RTT: 150 * time.Millisecond},
			bdp:    18_750_000, want: 37_500_000, bufMax: 36 << 20,
			changes: []string{
				"net.ipv4.tcp_rmem=4096 131072 37748736", "net.ipv4.tcp_wmem=4096 16384 37748736",
				"net.core.rmem_max=37748736", "net.core.wmem_max=37748736",
			},
			limit: "the arithmetic", note: "RTT 150ms > 100 ms: BBR usually helps",
		},
		{
			name: "400 Mbit at 120 ms with --bbr on 4.9: bbr and fq", cur: modern, bbr: bbrOld, mem: 16 * gib,
			target: Target{Bandwidth: 400e6, RTT: 120 * time.Millisecond, BBR: true},
			bdp:    6_000_000, want: 12_000_000, bufMax: 16 << 20,
			changes: []string{
				"net.ipv4.tcp_rmem=4096 131072 16777216", "net.ipv4.tcp_wmem=4096 16384 16777216",
				"net.core.rmem_max=16777216", "net.core.wmem_max=16777216",
				"net.ipv4.tcp_congestion_control=bbr", "net.core.default_qdisc=fq",
			},
			limit: "the arithmetic",
		},
		{
			name: "already tuned like the NAS fix: suffices", cur: tuned, bbr: bbrOK, mem: 16 * gib,
			target: Target{Bandwidth: 400e6, RTT: 20 * time.Millisecond},
			bdp:    1_000_000, want: 2_000_000, bufMax: 2 << 20,
			notLimit: "buffers are not the limit", suffices: true,
		},
		{
			name: "10 Gbit at 100 ms on a small box: capped by memory", cur: modern, bbr: bbrOK, mem: 1 * gib,
			target: Target{Bandwidth: 10e9, RTT: 100 * time.Millisecond, Headroom: 1.5},
			bdp:    125_000_000, want: 187_500_000, bufMax: 16 << 20,
			changes: []string{
				"net.ipv4.tcp_rmem=4096 131072 16777216", "net.ipv4.tcp_wmem=4096 16384 16777216",
				"net.core.rmem_max=16777216", "net.core.wmem_max=16777216",
			},
			limit: "the arithmetic", warn: "tcp_mem allows 16 MiB for each of 4 bulk connections",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Recommend(tt.cur, tt.target, tt.mem, tt.bbr)
			if err != nil {
				t.Fatal(err)
			}
			if r.BDPBytes != tt.bdp || r.WantBytes != tt.want || r.BufferMax != tt.bufMax {
				t.Errorf("BDP, want, max = %d, %d, %d; want %d, %d, %d", r.BDPBytes, r.WantBytes, r.BufferMax, tt.bdp, tt.want, tt.bufMax)
			}
			var got []string
			for _, c := range r.Changes {
				got = append(got, c.Key+"="+c.New)
				if c.Old != tt.cur.Raw[c.Key] {
					t.Errorf("change %s Old = %q, want current %q", c.Key, c.Old, tt.cur.Raw[c.Key])
				}
			}
			if diff := cmp.Diff(tt.changes, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if tt.limit == "" && r.BuffersLimit || tt.limit != "" && (!r.BuffersLimit || !strings.Contains(r.LimitWhy, tt.limit)) {
				t.Errorf("BuffersLimit %v (%q), want limit %q", r.BuffersLimit, r.LimitWhy, tt.limit)
			}
			if got := r.NotLimit(); tt.notLimit == "" && got != "" || !strings.HasPrefix(got, tt.notLimit) {
				t.Errorf("NotLimit() = %q, want %q", got, tt.notLimit)
			}
			if r.Suffices != tt.suffices {
				t.Errorf("Suffices = %v, want %v", r.Suffices, tt.suffices)
			}
			if !contains(r.Warnings, tt.warn) {
				t.Errorf("warnings %q lack %q", r.Warnings, tt.warn)
			}
			if tt.warn == "" && len(r.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", r.Warnings)
			}
			if !contains(r.Notes, tt.note) {
				t.Errorf("notes %q lack %q", r.Notes, tt.note)
			}
			if len(r.Steps) < 5 || r.Steps[2].Bytes != tt.bdp {
				t.Errorf("steps %+v: want the BDP as step 3", r.Steps)
			}
			// Every recommended triple must itself validate.
			if err := Validate(r.Changes, func(string) bool { return true }); err != nil {
				t.Errorf("recommended changes do not validate: %v", err)
			}
		})
	}
}

func contains(list []string, sub string) bool {
	if sub == "" {
		return true
	}
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestRecommendBadInput(t *testing.T) {
	for _, tg := range []Target{
		{Bandwidth: 0, RTT: time.Millisecond},
		{Bandwidth: 1e6, RTT: 0},
		{Bandwidth: 1e6, RTT: time.Millisecond, Headroom: 0.5},
	} {
		if _, err := Recommend(Settings{}, tg, 0, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("Recommend(%+v) = %v, want ErrInvalid", tg, err)
		}
	}
}

func TestBBRDetection(t *testing.T) {
	release := "5.10.0-28-amd64"
	tests := []struct {
		name    string
		keys    map[string]string
		setup   func(t *testing.T, dir string)
		state   BBRAvailability
		needsFQ bool
		why     string
		missing string
	}{
		{
			name:  "built in and listed",
			keys:  modernKeys,
			state: BBRAvailable, why: "bbr is in tcp_available_congestion_control",
		},
		{
			name: "listed with the module loaded",
			keys: modernKeys,
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "proc", "modules"), "tcp_bbr 20480 3 - Live 0x0000000000000000\nsch_fq 24576 2 - Live 0x0\n")
			},
			state: BBRAvailable, why: "module tcp_bbr loaded",
		},
		{
			name: "loadable module on disk",
			keys: copyKeys(modernKeys, map[string]string{KeyAvailableCC: "reno cubic", KeyOSRelease: release}),
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "lib", "modules", release, "kernel", "net", "ipv4", "tcp_bbr.ko.xz"), "\xfd7zXZ")
			},
			state: BBRLoadable, why: "tcp_bbr.ko.xz exists",
		},
		{
			name: "loadable module found via modules.dep",
			keys: copyKeys(modernKeys, map[string]string{KeyAvailableCC: "reno cubic", KeyOSRelease: release}),
			setup: func(t *testing.T, dir string) {
				base := filepath.Join(dir, "lib", "modules", release)
				writeFile(t, filepath.Join(base, "modules.dep"), "kernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko\nupdates/net/tcp_bbr.ko.zst:\n")
				writeFile(t, filepath.Join(base, "updates", "net", "tcp_bbr.ko.zst"), "x")
			},
			state: BBRLoadable, why: "updates/net/tcp_bbr.ko.zst",
		},
		{
			name: "config says module, file absent",
			keys: copyKeys(modernKeys, map[string]string{KeyAvailableCC: "reno cubic", KeyOSRelease: release}),
			setup: func(t *testing.T, dir string) {
				writeConfigGz(t, filepath.Join(dir, "proc", "config.gz"), "CONFIG_TCP_CONG_CUBIC=y\nCONFIG_TCP_CONG_BBR=m\n")
			},
			state: BBRLoadable, why: "CONFIG_TCP_CONG_BBR=m",
		},
		{
			// Debian/Ubuntu have no /proc/config.gz; under systemd's
			// ProtectKernelModules /lib/modules is hidden, /boot is not.
			name: "no config.gz, /boot/config-<release> says module",
			keys: copyKeys(modernKeys, map[string]string{KeyAvailableCC: "reno cubic", KeyOSRelease: release}),
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "boot", "config-"+release), "CONFIG_TCP_CONG_CUBIC=y\nCONFIG_TCP_CONG_BBR=m\n")
				writeFile(t, filepath.Join(dir, "boot", "config-4.19.0-other"), "# CONFIG_TCP_CONG_BBR is not set\n")
			},
			state: BBRLoadable, why: "CONFIG_TCP_CONG_BBR=m in /boot/config-" + release,
		},
		{
			name: "/boot/config-<release> says not set",
			keys: copyKeys(modernKeys, map[string]string{KeyAvailableCC: "reno cubic", KeyOSRelease: release}),
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "boot", "config-"+release), "# CONFIG_TCP_CONG_BBR is not set\n")
			},
			state: BBRImpossible, why: "kernel built without BBR", missing: "CONFIG_TCP_CONG_BBR=y or =m",
		},
		{
			name: "4.9 kernel with module needs fq",
			keys: copyKeys(modernKeys, map[string]string{KeyAvailableCC: "reno cubic", KeyOSRelease: "4.9.0-19-amd64"}),
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "lib", "modules", "4.9.0-19-amd64", "kernel", "net", "ipv4", "tcp_bbr.ko"), "x")
			},
			state: BBRLoadable, needsFQ: true, why: "tcp_bbr.ko exists",
		},
		{
			name: "Synology DSM 4.4: absent with an old kernel",
			keys: synologyKeys,
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, "etc.defaults", "VERSION"), "productversion=\"7.1.1\"\nos_name=\"DSM\"\n")
			},
			state: BBRImpossible, why: "kernel 4.4.302+ predates BBR (mainline since 4.9)", missing: "Synology ships this model with a 4.4 kernel and no tcp_bbr, and no package adds it",
		},
		{
			name:  "old kernel elsewhere",
			keys:  synologyKeys,
			state: BBRImpossible, why: "kernel 4.4.302+ predates BBR", missing: "upgrade the kernel, or keep cubic",
		},
		{
			name: "config says not set",
			keys: copyKeys(modernKeys, map[string]string{KeyAvailableCC: "reno cubic", KeyOSRelease: release}),
			setup: func(t *testing.T, dir string) {
				writeConfigGz(t, filepath.Join(dir, "proc", "config.gz"), "CONFIG_TCP_CONG_CUBIC=y\n# CONFIG_TCP_CONG_BBR is not set\n")
			},
			state: BBRImpossible, why: "kernel built without BBR", missing: "CONFIG_TCP_CONG_BBR=y or =m",
		},
		{
			name:  "new kernel, no module, no config",
			keys:  copyKeys(modernKeys, map[string]string{KeyAvailableCC: "reno cubic", KeyOSRelease: release}),
			state: BBRImpossible, why: "no tcp_bbr module under", missing: "tcp_bbr module",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, dir := fakeHost(t, tt.keys, 0)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			b, err := h.BBR()
			if err != nil {
				t.Fatal(err)
			}
			if b.State != tt.state || b.NeedsFQ != tt.needsFQ {
				t.Errorf("State, NeedsFQ = %s, %v; want %s, %v (why: %s)", b.State, b.NeedsFQ, tt.state, tt.needsFQ, b.Why)
			}
			if !strings.Contains(b.Why, tt.why) {
				t.Errorf("Why = %q, want it to contain %q", b.Why, tt.why)
			}
			if !strings.Contains(b.Missing, tt.missing) || (tt.missing == "") != (b.Missing == "") {
				t.Errorf("Missing = %q, want it to contain %q", b.Missing, tt.missing)
			}
		})
	}
	t.Run("missing proc", func(t *testing.T) {
		if _, err := AtRoot(t.TempDir()).BBR(); !errors.Is(err, ErrNoProc) {
			t.Fatalf("BBR() = %v, want ErrNoProc", err)
		}
	})
}

func TestParseKernelVersion(t *testing.T) {
	for in, want := range map[string][3]int{
		"4.4.302+":        {4, 4, 1},
		"6.18.44-fc-v782": {6, 18, 1},
		"4.13":            {4, 13, 1},
		"5":               {0, 0, 0},
		"x.y.z":           {0, 0, 0},
		"":                {0, 0, 0},
	} {
		ma, mi, ok := ParseKernelVersion(in)
		okI := 0
		if ok {
			okI = 1
		}
		if got := [3]int{ma, mi, okI}; got != want {
			t.Errorf("ParseKernelVersion(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestMemTotal(t *testing.T) {
	h, _ := fakeHost(t, modernKeys, 2048)
	n, err := h.MemTotal()
	if err != nil || n != 2048*1024 {
		t.Fatalf("MemTotal = %d, %v; want %d", n, err, 2048*1024)
	}
	// The missing file is /proc/meminfo, and the text says so, not /proc/sys.
	if _, err := AtRoot(t.TempDir()).MemTotal(); !errors.Is(err, ErrNoMeminfo) || errors.Is(err, ErrNoProc) ||
		!strings.Contains(err.Error(), "/proc/meminfo not found") || strings.Contains(err.Error(), "/proc/sys") {
		t.Fatalf("MemTotal without /proc = %v, want ErrNoMeminfo naming /proc/meminfo", err)
	}
	if _, err := parseMemTotal([]byte("MemFree: 5 kB\n")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("parseMemTotal without MemTotal = %v, want ErrInvalid", err)
	}
}

var _ = fs.ErrNotExist

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string // "" means ok
	}{
		{"16MiB", 16 << 20, ""},
		{"16 MiB", 16 << 20, ""},
		{"16M", 16 << 20, ""},
		{"512KiB", 512 << 10, ""},
		{"1GiB", 1 << 30, ""},
		{"16MB", 16e6, ""},
		{"16777216", 16777216, ""},
		{"0", 0, ""},
		{"1.5MiB", 3 << 19, ""},
		{"16Mb", 0, `"16Mb": unknown unit "Mb"`},
		{"-1MiB", 0, `"-1MiB": want a size like 16MiB`},
		{"big", 0, `"big": want a size like 16MiB`},
		{"1.5", 0, `"1.5": not a whole number of bytes`},
		{"9999999999GiB", 0, `"9999999999GiB": too large`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBytes(tt.in)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseBytes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseBytes(%q) = %v, %v; want an ErrInvalid starting %q", tt.in, got, err, tt.err)
			}
		})
	}
}

// FuzzParseBytes: any input gives a non-negative size or an ErrInvalid
// naming the input, never a panic; a parsed size formats and parses back.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"16MiB", "0", "1.5 GiB", "16MB", "-1", "1e9", "..", "16777216"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), fmt.Sprintf("%q", s)) {
				t.Fatalf("ParseBytes(%q): %v", s, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseBytes(%q) = %d", s, n)
		}
		if back, err := ParseBytes(strconv.FormatInt(n, 10)); err != nil || back != n {
			t.Fatalf("ParseBytes(%d) = %d, %v", n, back, err)
		}
	})
}
