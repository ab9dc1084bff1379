package devlink

import (
	"bytes"
	"fmt"
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
	}
	crash := "Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\r\n" +
		"PC      : 0x400d6b5e  PS      : 0x00060b30  A0      : 0x800d6c2a  A1      : 0x3fc9bd60  \r\n" +
		"Backtrace: 0x400d6b5b:0x3fc9bd60 0x400d6c27:0x3fc9bd90 |<-CORRUPTED\r\n" +
		"Rebooting...\r\nESP-ROM:esp32s3-20210327\r\nrst:0xc (RTC_SW_CPU_RST),boot:0x2b (SPI_FAST_FLASH_BOOT)\r\n"
	var b bytes.Buffer
	b.Grow(size + 1024)
	lines := 0
	for i := 0; b.Len() < size; i++ {
		if i%5000 == 4999 {
			b.WriteString(crash)
			lines += 6
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
