package sockdiag

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordedLimits are the settings of the namespace the samples came from
// (testdata/recorded/limits.txt).
var recordedLimits = Limits{TCPWmemMax: 4194304, WmemMax: 4194304}

// loadRecorded returns a recorded raw sock_diag message.
func loadRecorded(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "recorded", name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// seedLimits are the settings the tunnel samples were recorded with (the
// seed NAS: tcp_wmem "4096 16384 16384").
var seedLimits = Limits{TCPWmemMax: 16384, WmemMax: 4194304, LinkMTU: 1280}

// TestRecordedTunnelVerdicts classifies the samples recorded over a
// 1280-MTU tunnel at 20 ms RTT (TestTunPathNetns), as the 6.18 kernel sent
// them and cut to the 144 bytes a 4.4 kernel sends.
func TestRecordedTunnelVerdicts(t *testing.T) {
	for _, tt := range []struct {
		file string
		want VerdictKind
		says string
	}{
		{"seed-nas-before", VerdictSndbuf, "of a 16 KiB buffer"},
		{"tunnel-blackhole", VerdictMTU, "segment(s) of MSS 1228 unacknowledged, path MTU 1280, tailscale0 MTU 1280"},
	} {
		b, err := os.ReadFile(filepath.Join("..", "tune", "seednas", "conns", tt.file+".hex"))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{len(raw), 144} {
			c, err := ParseMessage(TruncateInfo(raw, n))
			if err != nil {
				t.Fatal(err)
			}
			v := Classify(c, seedLimits)
			if v.Kind != tt.want || !strings.Contains(v.Detail, tt.says) {
				t.Errorf("%s (tcp_info %d bytes): %s (%s), want %s saying %q", tt.file, c.Info.Len, v.Kind, v.Detail, tt.want, tt.says)
			}
			if n == 144 && tt.want == VerdictSndbuf && !strings.Contains(v.Detail, "kernel < 4.10") {
				t.Errorf("4.4 sample: %q should say the counters are missing", v.Detail)
			}
		}
	}
}

// TestRecordedVerdicts classifies connections recorded on a real kernel:
// the application-pinned sender and the MTU black hole must not be blamed
// on sysctls; TCP's own MTU probing clears the black hole verdict. Older
// kernels' shorter tcp_info (4.4: 144 bytes, no limited-time counters)
// give the same answers from skmem and the RTO state.
func TestRecordedVerdicts(t *testing.T) {
	tests := []struct {
		file string
		want VerdictKind
		not  VerdictKind
		says string
	}{
		{"pinned-sndbuf", VerdictAppSndbuf, "", "send buffer 8 KiB with its queue full"},
		{"autotuned", "", VerdictAppSndbuf, ""},
		{"mtu-blackhole", VerdictMTU, "", "with 2 segment(s) of MSS 32768 unacknowledged"},
		{"mtu-blackhole-probing", "", VerdictMTU, ""},
	}
	for _, tt := range tests {
		for _, n := range []int{0, 144, 104} {
			name := tt.file
			raw := loadRecorded(t, tt.file)
			if n > 0 {
				raw = TruncateInfo(raw, n)
				name += "/tcp_info " + string(rune('0'+n/100)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10))
			}
			t.Run(name, func(t *testing.T) {
				c, err := ParseMessage(raw)
				if err != nil {
					t.Fatal(err)
				}
				if n > 0 && c.Info.Len != n {
					t.Fatalf("tcp_info length %d, want %d", c.Info.Len, n)
				}
				if c.Mem == nil || c.Mem.SndBuf == 0 {
					t.Fatalf("no skmeminfo: %+v", c.Mem)
				}
				v := Classify(c, recordedLimits)
				if tt.want != "" && v.Kind != tt.want || tt.not != "" && v.Kind == tt.not {
					t.Fatalf("verdict %s (%s); want %q, not %q", v.Kind, v.Detail, tt.want, tt.not)
				}
				if !strings.Contains(v.Detail, tt.says) {
					t.Errorf("detail %q lacks %q", v.Detail, tt.says)
				}
				if (v.Kind == VerdictAppSndbuf || v.Kind == VerdictMTU) && (v.SysctlsHelp || !strings.Contains(v.Text, "will not help") || v.Fix == "") {
					t.Errorf("%+v: must say sysctls will not help and what will", v)
				}
				// Without the host's limits nothing can be called pinned.
				if Classify(c, Limits{}).Kind == VerdictAppSndbuf {
					t.Error("app-sndbuf without knowing tcp_wmem max")
				}
			})
		}
	}
}

func TestClassifySndbufCauses(t *testing.T) {
	info := ParseTCPInfo(fakeInfo(232, map[int]uint64{offBusyTime: 1e6, offSndbufLimited: 6e5, offBytesAcked: 1 << 30, offRTT: 20000}))
	tests := []struct {
		name string
		mem  *SkMem
		want VerdictKind
	}{
		{"no skmem: tcp_wmem", nil, VerdictSndbuf},
		{"buffer at tcp_wmem max", &SkMem{SndBuf: 4194304, WmemQueue: 4194304}, VerdictSndbuf},
		{"SO_SNDBUF above wmem_max, cut to 2 × wmem_max", &SkMem{SndBuf: 425984, WmemQueue: 425984}, VerdictWmemMax},
		{"SO_SNDBUF small, queue full", &SkMem{SndBuf: 65536, WmemQueue: 65536}, VerdictAppSndbuf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Classify(Conn{Info: &info, Mem: tt.mem}, Limits{TCPWmemMax: 4194304, WmemMax: 212992})
			if v.Kind != tt.want {
				t.Fatalf("verdict %s (%s), want %s", v.Kind, v.Detail, tt.want)
			}
		})
	}
	// A 4.4 kernel: no counters; a full queue at the tcp_wmem max is the sign.
	old := ParseTCPInfo(fakeInfo(144, map[int]uint64{offBytesAcked: 100 << 20, offRTT: 20000}))
	v := Classify(Conn{Info: &old, Mem: &SkMem{SndBuf: 4194304, WmemQueue: 4000000}}, Limits{TCPWmemMax: 4194304})
	if v.Kind != VerdictSndbuf || !strings.Contains(v.Detail, "kernel < 4.10") {
		t.Errorf("4.4 kernel with a full queue: %+v", v)
	}
}

func FuzzParseSkMem(f *testing.F) {
	f.Add(make([]byte, 36))
	f.Add(make([]byte, 32))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok := ParseSkMem(b)
		if ok != (len(b) >= 24) || !ok && m != (SkMem{}) {
			t.Fatalf("ParseSkMem(%d bytes) = %+v, %v", len(b), m, ok)
		}
	})
}

// TruncateInfo returns a copy of the inet_diag message msg whose tcp_info
// attribute is cut to n bytes, as an older kernel sends it (4.4: 144
// bytes), for replaying recorded samples. Malformed attributes end the copy.
func TruncateInfo(msg []byte, n int) []byte {
	if len(msg) < SizeofMsg {
		return append([]byte(nil), msg...)
	}
	out := append([]byte(nil), msg[:SizeofMsg]...)
	rest := msg[SizeofMsg:]
	for len(rest) >= 4 {
		l := int(binary.NativeEndian.Uint16(rest[0:2]))
		if l < 4 || l > len(rest) {
			break
		}
		typ := binary.NativeEndian.Uint16(rest[2:4])
		val := rest[4:l]
		if typ&0x3fff == AttrInfo && len(val) > n {
			val = val[:max(n, 0)]
		}
		var h [4]byte
		binary.NativeEndian.PutUint16(h[0:], uint16(4+len(val)))
		binary.NativeEndian.PutUint16(h[2:], typ)
		out = append(append(out, h[:]...), val...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
		rest = rest[min((l+3)&^3, len(rest)):]
	}
	return out
}
