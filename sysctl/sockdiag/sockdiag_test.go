package sockdiag

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeInfo builds a tcp_info of n bytes with the given fields set.
func fakeInfo(n int, set map[int]uint64) []byte {
	b := make([]byte, n)
	if n > 0 {
		b[0] = 1 // ESTABLISHED
	}
	for off, v := range set {
		switch off {
		case offPacingRate, offBytesAcked, offBytesReceived, offDeliveryRate, offBusyTime, offRwndLimited, offSndbufLimited, offBytesSent, offBytesRetrans:
			if off+8 <= n {
				binary.NativeEndian.PutUint64(b[off:], v)
			}
		default:
			if off+4 <= n {
				binary.NativeEndian.PutUint32(b[off:], uint32(v))
			}
		}
	}
	return b
}

func TestParseTCPInfoLengths(t *testing.T) {
	set := map[int]uint64{offRTT: 20000, offSndCwnd: 10, offPacingRate: 5e6, offBusyTime: 1e6, offSndbufLimited: 5e5, offBytesSent: 1 << 20}
	tests := []struct {
		name                  string
		n                     int
		rtt, pacing, busy, bs bool
	}{
		{"empty", 0, false, false, false, false},
		{"2.6 kernel, 104 bytes", 104, true, false, false, false},
		{"4.9 kernel, 168 bytes", 168, true, true, false, false},
		{"4.10 kernel, 192 bytes", 192, true, true, true, false},
		{"modern, 280 bytes", 280, true, true, true, true},
		{"odd length 170", 170, true, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseTCPInfo(fakeInfo(tt.n, set))
			if got.Len != tt.n {
				t.Errorf("Len = %d", got.Len)
			}
			if (got.RTT != nil) != tt.rtt || (got.PacingRate != nil) != tt.pacing || (got.BusyTime != nil) != tt.busy || (got.BytesSent != nil) != tt.bs {
				t.Fatalf("known fields: rtt %v pacing %v busy %v bytes_sent %v; want %v %v %v %v",
					got.RTT != nil, got.PacingRate != nil, got.BusyTime != nil, got.BytesSent != nil, tt.rtt, tt.pacing, tt.busy, tt.bs)
			}
			if got.RTT != nil && *got.RTT != 20*time.Millisecond {
				t.Errorf("RTT = %v, want 20ms", *got.RTT)
			}
			if got.SndbufLimited != nil && *got.SndbufLimited != 500*time.Millisecond {
				t.Errorf("SndbufLimited = %v", *got.SndbufLimited)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	full := 280
	tests := []struct {
		name string
		info []byte
		cc   string
		want VerdictKind
		text string
	}{
		{"send buffer limited", fakeInfo(full, map[int]uint64{offBusyTime: 1e6, offSndbufLimited: 6e5, offRwndLimited: 3e5, offBytesSent: 1e6}), "cubic",
			VerdictSndbuf, "send buffer limited: raise tcp_wmem max"},
		{"receive window limited", fakeInfo(full, map[int]uint64{offBusyTime: 1e6, offRwndLimited: 5e5, offBytesSent: 1e6}), "cubic",
			VerdictRwnd, "receive window limited: the peer's tcp_rmem"},
		{"retransmitting", fakeInfo(full, map[int]uint64{offBusyTime: 1e6, offBytesSent: 1e6, offBytesRetrans: 5e4}), "cubic",
			VerdictRetrans, "retransmitting: consider BBR"},
		{"retransmitting already bbr", fakeInfo(full, map[int]uint64{offBusyTime: 1e6, offBytesSent: 1e6, offBytesRetrans: 5e4}), "bbr",
			VerdictRetrans, "retransmitting: loss on the path (already BBR)"},
		{"retransmitting by segments on 4.10", fakeInfo(192, map[int]uint64{offBusyTime: 1e6, offSegsOut: 1000, offTotalRetrans: 30}), "cubic",
			VerdictRetrans, "retransmitting: consider BBR"},
		{"healthy", fakeInfo(full, map[int]uint64{offBusyTime: 1e6, offSndbufLimited: 1e4, offBytesSent: 1e6, offBytesRetrans: 10}), "cubic",
			VerdictHealthy, "healthy"},
		{"old kernel healthy but unknown counters", fakeInfo(104, nil), "cubic", VerdictHealthy, "healthy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := ParseTCPInfo(tt.info)
			v := Judge(&info, tt.cc)
			if v.Kind != tt.want || v.Text != tt.text {
				t.Fatalf("Judge = %+v, want %s %q", v, tt.want, tt.text)
			}
		})
	}
	if v := Judge(nil, ""); v.Kind != VerdictUnknown {
		t.Errorf("Judge(nil) = %+v", v)
	}
}

// fakeMessage builds an inet_diag_msg with tcp_info and cong attributes.
func fakeMessage(family uint8, local, remote netip.AddrPort, info []byte, cc string) []byte {
	b := make([]byte, SizeofMsg)
	b[0], b[1] = family, 1
	binary.BigEndian.PutUint16(b[4:], local.Port())
	binary.BigEndian.PutUint16(b[6:], remote.Port())
	if family == 2 {
		a, r := local.Addr().As4(), remote.Addr().As4()
		copy(b[8:], a[:])
		copy(b[24:], r[:])
	} else {
		a, r := local.Addr().As16(), remote.Addr().As16()
		copy(b[8:], a[:])
		copy(b[24:], r[:])
	}
	binary.NativeEndian.PutUint32(b[60:], 1234) // wqueue
	binary.NativeEndian.PutUint32(b[64:], 1000) // uid
	attr := func(typ uint16, val []byte) {
		h := make([]byte, 4)
		binary.NativeEndian.PutUint16(h[0:], uint16(4+len(val)))
		binary.NativeEndian.PutUint16(h[2:], typ)
		b = append(b, h...)
		b = append(b, val...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	attr(5, []byte{0, 0, 0, 0}) // INET_DIAG_TOS: ignored
	if info != nil {
		attr(AttrInfo, info)
	}
	if cc != "" {
		attr(AttrCong, append([]byte(cc), 0))
	}
	return b
}

func TestParseMessage(t *testing.T) {
	info := fakeInfo(232, map[int]uint64{offRTT: 35000, offSndCwnd: 42, offBusyTime: 1e6, offSndbufLimited: 9e5})
	tests := []struct {
		name   string
		msg    []byte
		local  string
		remote string
		cc     string
		kind   VerdictKind
	}{
		{"ipv4 tailnet", fakeMessage(2, netip.MustParseAddrPort("100.101.102.103:51000"), netip.MustParseAddrPort("100.64.0.7:445"), info, "cubic"),
			"100.101.102.103:51000", "100.64.0.7:445", "cubic", VerdictSndbuf},
		{"ipv6 tailnet", fakeMessage(10, netip.MustParseAddrPort("[fd7a:115c:a1e0::1]:51000"), netip.MustParseAddrPort("[fd7a:115c:a1e0::2]:22"), info, "bbr"),
			"[fd7a:115c:a1e0::1]:51000", "[fd7a:115c:a1e0::2]:22", "bbr", VerdictSndbuf},
		{"v4-mapped", fakeMessage(10, netip.MustParseAddrPort("[::ffff:100.64.0.1]:1"), netip.MustParseAddrPort("[::ffff:100.64.0.2]:2"), nil, ""),
			"100.64.0.1:1", "100.64.0.2:2", "", VerdictUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseMessage(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{c.Local.String(), c.Remote.String(), c.CC, string(c.Verdict.Kind), c.State}
			want := []string{tt.local, tt.remote, tt.cc, string(tt.kind), "ESTABLISHED"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if c.SendQ != 1234 || c.UID != 1000 {
				t.Errorf("SendQ, UID = %d, %d", c.SendQ, c.UID)
			}
			if c.Info != nil && (*c.Info.RTT != 35*time.Millisecond || *c.Info.SndCwnd != 42) {
				t.Errorf("info RTT %v cwnd %d", *c.Info.RTT, *c.Info.SndCwnd)
			}
			if !IsTailnet(c.Remote.Addr()) {
				t.Errorf("IsTailnet(%v) = false", c.Remote.Addr())
			}
		})
	}
	if _, err := ParseMessage(make([]byte, 10)); !errors.Is(err, ErrShort) {
		t.Errorf("short message: %v", err)
	}
	bad := fakeMessage(2, netip.MustParseAddrPort("100.64.0.1:1"), netip.MustParseAddrPort("100.64.0.2:2"), info, "")
	binary.NativeEndian.PutUint16(bad[SizeofMsg:], 0xffff)
	if _, err := ParseMessage(bad); !errors.Is(err, ErrShort) {
		t.Errorf("overlong attribute: %v", err)
	}
}

func TestIsTailnet(t *testing.T) {
	for s, want := range map[string]bool{
		"100.64.0.1": true, "100.127.255.254": true, "100.128.0.1": false, "100.63.255.255": false,
		"fd7a:115c:a1e0::1": true, "fd7a:115c:a1e1::1": false, "::ffff:100.100.7.1": true, "127.0.0.1": false,
	} {
		if got := IsTailnet(netip.MustParseAddr(s)); got != want {
			t.Errorf("IsTailnet(%s) = %v, want %v", s, got, want)
		}
	}
}

func TestMarshalRequest(t *testing.T) {
	if b := MarshalRequest(10, DumpStates, TailnetFilter()); len(b) != SizeofReqV2+4+48 || binary.NativeEndian.Uint16(b[58:60]) != attrReqBytecode {
		t.Fatalf("request with filter: % x", b)
	}
	b := MarshalRequest(2, DumpStates, nil)
	if len(b) != SizeofReqV2 || b[0] != 2 || b[1] != 6 || b[2] != 0b100_1010 { // INFO, CONG, SKMEMINFO
		t.Fatalf("request header % x", b[:8])
	}
	if got := binary.NativeEndian.Uint32(b[4:8]); got != DumpStates || got&(1<<10) != 0 {
		t.Fatalf("states %#x must exclude LISTEN", got)
	}
}

func FuzzParseMessage(f *testing.F) {
	info := fakeInfo(232, map[int]uint64{offRTT: 35000, offBusyTime: 1e6, offSndbufLimited: 9e5})
	f.Add(fakeMessage(2, netip.MustParseAddrPort("100.101.102.103:51000"), netip.MustParseAddrPort("100.64.0.7:445"), info, "cubic"))
	f.Add(fakeMessage(10, netip.MustParseAddrPort("[fd7a:115c:a1e0::1]:51000"), netip.MustParseAddrPort("[fd7a:115c:a1e0::2]:22"), info[:104], "bbr"))
	f.Add(make([]byte, SizeofMsg))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseMessage(b)
		if err != nil {
			return
		}
		if c.Info != nil && c.Info.Len < 0 {
			t.Fatal("negative length")
		}
		if len(c.CC) > 16 {
			t.Fatalf("congestion control name not bounded: %q", c.CC)
		}
		_ = Judge(c.Info, c.CC)
		_ = Classify(c, Limits{TCPWmemMax: 4194304, WmemMax: 212992, LinkMTU: 1280})
		if short, err := ParseMessage(TruncateInfo(b, 144)); err == nil && short.Info != nil && short.Info.Len > 144 {
			t.Fatalf("TruncateInfo left %d bytes of tcp_info", short.Info.Len)
		}
	})
}

func FuzzParseTCPInfo(f *testing.F) {
	f.Add(fakeInfo(280, map[int]uint64{offRTT: 1, offBusyTime: 1 << 63, offSndbufLimited: 1<<64 - 1}))
	f.Add(fakeInfo(104, nil))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		info := ParseTCPInfo(b)
		if info.Len != len(b) {
			t.Fatalf("Len %d for %d bytes", info.Len, len(b))
		}
		if s, ok := info.SndbufShare(); ok && (s < 0 || s > 1) {
			t.Fatalf("share %v out of range", s)
		}
		if info.BytesRetrans != nil && len(b) < offBytesRetrans+8 {
			t.Fatal("field beyond the input reported as known")
		}
		_ = Judge(&info, "")
	})
}

func BenchmarkParseMessage(b *testing.B) {
	info := fakeInfo(280, map[int]uint64{offRTT: 35000, offBusyTime: 1e6, offSndbufLimited: 9e5})
	msg := fakeMessage(2, netip.MustParseAddrPort("100.101.102.103:51000"), netip.MustParseAddrPort("100.64.0.7:445"), info, "cubic")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseMessage(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// Judge is Classify without the host's settings or socket memory.
func Judge(t *TCPInfo, cc string) Verdict { return Classify(Conn{Info: t, CC: cc}, Limits{}) }
