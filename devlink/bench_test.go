package devlink

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// mixedCapture builds about size bytes of console output mixing every line
// shape: coloured and plain log lines in each timestamp form, the port's
// DISCO and handshake lines, telemetry frames, plain printf output, a
// hexdump and, now and then, a whole panic report and ROM banner.
func mixedCapture(size int) ([]byte, int) {
	shapes := []string{
		"\x1b[0;32mI (%d) wifi: sta ip: 192.168.1.42, mask: 255.255.255.0, gw: 192.168.1.1\x1b[0m\r\n",
		"D (%d) ts_disco: Ping sent peer=3 to 203.0.113.5:41641 txid=9f8e7d6c5b4a\r\n",
		"I (%d) ts_disco: Pong recv from 203.0.113.5:41641 → peer 3 direct\r\n",
		"\x1b[0;33mW (%d) wireguard: [WireGuard] HANDSHAKE_RESPONSE: 2803037f:7\x1b[0m\r\n",
		"@TP1 S seq=41 up=%d rst=poweron rssi=-61 wdis=0 hif=131072 hmin=127488 hlb=69632 psf=8157184 bad=0 *6656D985\r\n",
		"I (10:12:%02d.035) app: periodic timer fired, heap_free=81234\r\n",
		"regular printf output number %d from the application\r\n",
		"\x1b[0;31mE (%d) esp-tls: mbedtls_ssl_handshake returned -0x7780\x1b[0m\r\n",
		"0x3ffb5bc0   54 68 65 20 77 61 79 20  74 6f 20 67 65 74 20 73  |The way to get s| %d\r\n",
		"V (%d) ts_netmap: DERP home server: derp1f.tailscale.com:443 (region 1) heap_free=81234\r\n",
		// Wrapped lines (ESPHome, PlatformIO + Arduino) and microlink's status.
		"[14:04:29][D][esp-idf:000]: I (%d) wifi_init: tcp rx win: 5744\n",
		"[14:04:%02d]\n",
		"W (%d) ml_derp: DERP status: connected=0 fd=-1 rx=74096 tx=245596 loops=1164446\r\n",
		"10:41:07.118 > [  1736][E][WiFiClient.cpp:268] connect(): socket error on fd %d\r\n",
	}
	crash := "Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\r\n" +
		"PC      : 0x400d6b5e  PS      : 0x00060b30  A0      : 0x800d6c2a  A1      : 0x3fc9bd60  \r\n" +
		"Backtrace: 0x400d6b5b:0x3fc9bd60 0x400d6c27:0x3fc9bd90 |<-CORRUPTED\r\n" +
		"Rebooting...\r\nESP-ROM:esp32s3-20210327\r\nrst:0xc (RTC_SW_CPU_RST),boot:0x2b (SPI_FAST_FLASH_BOOT)\r\n" +
		// A RISC-V panic glued onto an ESPHome-wrapped line, with a stack dump.
		"[14:04:29][D][esp-idf:000]: I (676) phy_init: phGuru Meditation Error: Core  0 panic'ed (Illegal instruction). Exception was unhandled.\n" +
		"[14:04:29]MEPC    : 0x40001be4  RA      : 0x42075ee2  SP      : 0x3fca11b0  GP      : 0x3fc8e600  \n" +
		"[14:04:29]Stack memory:\n" +
		"[14:04:29]3fca11b0: 0x00000000 0x3fc94d58 0x42075f1a 0x00000001 0x3fca664c 0x3c09ffd4 0x4200d3c2 0x00000000\n"
	var b bytes.Buffer
	b.Grow(size + 1024)
	lines := 0
	for i := 0; b.Len() < size; i++ {
		if i%5000 == 4999 {
			b.WriteString(crash)
			lines += strings.Count(crash, "\n")
			continue
		}
		fmt.Fprintf(&b, shapes[i%len(shapes)], i%60)
		lines++
	}
	return b.Bytes(), lines
}

// BenchmarkParseCapture measures Splitter + ParseLine + Filter over a
// ≥50 MB mixed capture fed in 4 KiB reads (a serial read size).
func BenchmarkParseCapture(b *testing.B) {
	data, lines := mixedCapture(50 << 20)
	f, _ := ParseFilter("wifi:W ts_disco:I *:V")
	shown := 0
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var s Splitter
		emit := func(l *Line) {
			if f.Match(l) {
				shown++
			}
		}
		for i := 0; i < len(data); i += 4096 {
			s.Feed(data[i:min(i+4096, len(data))], emit)
		}
		s.Flush(emit)
	}
	b.ReportMetric(float64(lines), "lines/op")
	_ = shown
}

// TestParseAllocsPerLine holds the hot path to ≤ 1 allocation per line.
func TestParseAllocsPerLine(t *testing.T) {
	data, lines := mixedCapture(1 << 20)
	f, _ := ParseFilter("wifi:W ts_disco:I *:V")
	var s Splitter
	emit := func(l *Line) { f.Match(l) }
	allocs := testing.AllocsPerRun(3, func() {
		for i := 0; i < len(data); i += 4096 {
			s.Feed(data[i:min(i+4096, len(data))], emit)
		}
		s.Flush(emit)
	})
	if per := allocs / float64(lines); per > 1 {
		t.Errorf("%.3f allocations per line, want ≤ 1", per)
	} else {
		t.Logf("%.0f allocations for %d lines (%.4f per line)", allocs, lines, per)
	}
}

// BenchmarkStateApply measures the device model over the same capture
// (telemetry frames, port lines, crashes), the dashboard's per-line cost.
func BenchmarkStateApply(b *testing.B) {
	data, lines := mixedCapture(50 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var s Splitter
		st := NewState()
		emit := func(l *Line) { st.ApplyLine(l, time.Time{}, nil) }
		for i := 0; i < len(data); i += 4096 {
			s.Feed(data[i:min(i+4096, len(data))], emit)
		}
		s.Flush(emit)
	}
	b.ReportMetric(float64(lines), "lines/op")
}

// BenchmarkMonitorCapture measures tail's piped path: Splitter + ParseLine
// + the monitor emulation (filter, auto-colour) writing into a reused
// buffer, over the same capture.
func BenchmarkMonitorCapture(b *testing.B) {
	data, lines := mixedCapture(50 << 20)
	f, _ := ParseFilter("wifi:W ts_disco:I *:V")
	out := make([]byte, 0, 1<<16)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var s Splitter
		m := Monitor{Filter: f}
		emit := func(l *Line) {
			if m.Shows(l) {
				out = m.Append(out[:0], l)
			}
		}
		for i := 0; i < len(data); i += 4096 {
			s.Feed(data[i:min(i+4096, len(data))], emit)
		}
		s.Flush(emit)
	}
	b.ReportMetric(float64(lines), "lines/op")
}
