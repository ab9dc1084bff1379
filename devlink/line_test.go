package devlink

import (
	"bytes"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// lineView is the comparable summary of a parsed Line.
type lineView struct {
	Kind     Kind
	Level    Level
	Time     TimeForm
	TimeText string
	Tag      string
	Msg      string
	Colored  bool
	Cut      int
	Uptime   time.Duration
	Clock    time.Duration
	Wall     time.Time
}

func view(l *Line) lineView {
	return lineView{Kind: l.Kind, Level: l.Level, Time: l.TimeForm, TimeText: string(l.TimeText), Tag: string(l.Tag),
		Msg: string(l.Msg), Colored: l.Colored, Cut: l.Cut, Uptime: l.Uptime, Clock: l.Clock, Wall: l.Wall}
}

// lineCases are shaped like public ESP-IDF, ROM and ESP32 Tailscale port logs.
var lineCases = []struct {
	name, in string
	want     lineView
}{
	{"uptime coloured", "\x1b[0;32mI (90000) wifi: connected to ap\x1b[0m\r\n",
		lineView{Kind: KindLog, Level: 'I', Time: TimeUptime, TimeText: "90000", Tag: "wifi", Msg: "connected to ap", Colored: true, Uptime: 90 * time.Second}},
	{"debug uncoloured", "D (201) heap_init: New heap initialised at 0x3ffae6e0\n",
		lineView{Kind: KindLog, Level: 'D', Time: TimeUptime, TimeText: "201", Tag: "heap_init", Msg: "New heap initialised at 0x3ffae6e0", Uptime: 201 * time.Millisecond}},
	{"clock", "I (10:12:51.035) hello_world: info4\n",
		lineView{Kind: KindLog, Level: 'I', Time: TimeClock, TimeText: "10:12:51.035", Tag: "hello_world", Msg: "info4", Clock: 10*time.Hour + 12*time.Minute + 51*time.Second + 35*time.Millisecond}},
	{"date", "W (24-06-19 10:12:51.035) app: low\n",
		lineView{Kind: KindLog, Level: 'W', Time: TimeDate, TimeText: "24-06-19 10:12:51.035", Tag: "app", Msg: "low",
			Clock: 10*time.Hour + 12*time.Minute + 51*time.Second + 35*time.Millisecond, Wall: time.Date(2024, 6, 19, 10, 12, 51, 35e6, time.UTC)}},
	{"unix ms", "E (1718795571035) app: boom\n",
		lineView{Kind: KindLog, Level: 'E', Time: TimeUnix, TimeText: "1718795571035", Tag: "app", Msg: "boom", Wall: time.UnixMilli(1718795571035).UTC()}},
	{"no time", "\x1b[0;32mI hello_world: info6 without timestamp\x1b[0m\n",
		lineView{Kind: KindLog, Level: 'I', Tag: "hello_world", Msg: "info6 without timestamp", Colored: true}},
	{"dram log", "E spi_flash: cache disabled\n",
		lineView{Kind: KindLog, Level: 'E', Tag: "spi_flash", Msg: "cache disabled"}},
	{"prose is plain", "I think so: maybe\n", lineView{Kind: KindPlain}},
	{"bold colour", "\x1b[1;31mE (623) foo: This is an example error\x1b[0m\n",
		lineView{Kind: KindLog, Level: 'E', Time: TimeUptime, TimeText: "623", Tag: "foo", Msg: "This is an example error", Colored: true, Uptime: 623 * time.Millisecond}},
	{"plain printf", "regular printf\n", lineView{Kind: KindPlain}},
	{"empty", "\n", lineView{Kind: KindPlain}},
	{"rom", "ESP-ROM:esp32s3-20210327\r\n", lineView{Kind: KindROM}},
	{"rom mid-line", "I (5123) app: half a li\x00ESP-ROM:esp32s3-20210327\r\n",
		lineView{Kind: KindROM, Level: 'I', Time: TimeUptime, TimeText: "5123", Tag: "app", Msg: "half a li\x00ESP-ROM:esp32s3-20210327", Cut: 24, Uptime: 5123 * time.Millisecond}},
	{"ets", "ets Jun  8 2016 00:22:57\n", lineView{Kind: KindROM}},
	{"reset", "rst:0x15 (USB_UART_CHIP_RESET),boot:0x28 (SPI_FAST_FLASH_BOOT)\r\n", lineView{Kind: KindReset}},
	{"reset mid-line", "garbagerst:0xc (RTC_SW_CPU_RST),boot:0x8 (SPI_FAST_FLASH_BOOT)\n", lineView{Kind: KindReset, Cut: 7}},
	{"guru", "Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\n", lineView{Kind: KindPanic}},
	{"registers", "PC      : 0x400d6b5e  PS      : 0x00060b30  A0      : 0x800d6c2a  A1      : 0x3fc9bd60  \n", lineView{Kind: KindRegisters}},
	{"registers row", "A2      : 0x00000000  A3      : 0x3fc9bd8c  A4      : 0x00000001  A5      : 0x3fc99c40  \n", lineView{Kind: KindRegisters}},
	{"backtrace", "Backtrace: 0x400d6b5b:0x3fc9bd60 0x400d6c27:0x3fc9bd90 |<-CORRUPTED\n", lineView{Kind: KindBacktrace}},
	{"abort", "abort() was called at PC 0x40081a2b on core 0\n", lineView{Kind: KindAbort}},
	{"stack overflow", "***ERROR*** A stack overflow in task wifi has been detected.\n", lineView{Kind: KindStackOverflow}},
	{"assert", "assert failed: xQueueSemaphoreTake queue.c:1545 (( pxQueue ))\n", lineView{Kind: KindAssert}},
	{"corrupt heap", "CORRUPT HEAP: Bad head at 0x3fc9f2a0. Expected 0xabba1234 got 0x3fc9f2b0\n", lineView{Kind: KindCorruptHeap}},
	{"brownout", "Brownout detector was triggered\n", lineView{Kind: KindBrownout}},
	{"elf sha", "ELF file SHA256: 0f1e2d3c4b5a6978\n", lineView{Kind: KindELFSHA}},
	{"app banner sha", "I (245) app_init: ELF file SHA256:  0f1e2d3c4...\n",
		lineView{Kind: KindELFSHA, Level: 'I', Time: TimeUptime, TimeText: "245", Tag: "app_init", Msg: "ELF file SHA256:  0f1e2d3c4...", Uptime: 245 * time.Millisecond}},
	{"rebooting", "Rebooting...\n", lineView{Kind: KindRebooting}},
	{"telemetry", "@TP1 S seq=41 up=34012 rst=poweron *6656D985\r\n", lineView{Kind: KindTelemetry}},
	{"hexdump", "0x3ffb5bc0   54 68 65 20 77 61 79 20  74 6f 20 67 65 74 20 73  |The way to get s|\n", lineView{Kind: KindHexdump}},
	{"task wdt", "E (15372) task_wdt: Task watchdog got triggered. The following tasks/users did not reset the watchdog in time:\n",
		lineView{Kind: KindLog, Level: 'E', Time: TimeUptime, TimeText: "15372", Tag: "task_wdt", Msg: "Task watchdog got triggered. The following tasks/users did not reset the watchdog in time:", Uptime: 15372 * time.Millisecond}},
	{"invalid utf8", "I (1) x: \xff\xfe bad\n",
		lineView{Kind: KindLog, Level: 'I', Time: TimeUptime, TimeText: "1", Tag: "x", Msg: "\xff\xfe bad", Uptime: time.Millisecond}},
	{"wifi blob", "I (588) wifi:state: run -> init (fc0)\r\n",
		lineView{Kind: KindLog, Level: 'I', Time: TimeUptime, TimeText: "588", Msg: "wifi:state: run -> init (fc0)", Uptime: 588 * time.Millisecond}},
	{"unclosed paren", "I (123 tag: msg\n", lineView{Kind: KindPlain}},
}

func TestParseLine(t *testing.T) {
	for _, tc := range lineCases {
		t.Run(tc.name, func(t *testing.T) {
			var l Line
			ParseLine([]byte(tc.in), &l)
			if diff := cmp.Diff(tc.want, view(&l)); diff != "" {
				t.Errorf("ParseLine(%q) (-want +got):\n%s", tc.in, diff)
			}
			if !bytes.Equal(l.Raw, []byte(tc.in)) {
				t.Errorf("Raw = %q, want the input unchanged", l.Raw)
			}
		})
	}
}

func TestCloneDetaches(t *testing.T) {
	buf := []byte("I (5) tag: hello\n")
	var l Line
	ParseLine(buf, &l)
	c := l.Clone()
	copy(buf, bytes.Repeat([]byte("x"), len(buf)))
	if got := string(c.Tag) + "|" + string(c.Msg) + "|" + string(c.Raw); got != "tag|hello|I (5) tag: hello\n" {
		t.Errorf("clone changed with its source: %q", got)
	}
}

func TestSplitterChunking(t *testing.T) {
	in := "I (1) a: one\r\nplain\npartial"
	want := []string{"I (1) a: one\r\n", "plain\n", "partial"}
	// Every way of cutting the input in two must give the same lines.
	for cut := 0; cut <= len(in); cut++ {
		var s Splitter
		var got []string
		emit := func(l *Line) { got = append(got, string(l.Raw)) }
		s.Feed([]byte(in[:cut]), emit)
		s.Feed([]byte(in[cut:]), emit)
		s.Flush(emit)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("cut at %d (-want +got):\n%s", cut, diff)
		}
	}
}

// TestSplitterBinaryLog feeds each Log V2 binary capture: the text ROM
// banner stays text, binary frames are recognised as such, and no binary
// noise is classified as log lines.
func TestSplitterBinaryLog(t *testing.T) {
	for _, tc := range []struct {
		set       int
		frames    int    // at least
		firstText string // the ROM banner's first line
	}{
		{0, 13, "ESP-ROM:esp32s3-20210327"},
		{1, 30, "ets Jul 29 2019"},
	} {
		set := binlogSets[tc.set]
		t.Run(set.name, func(t *testing.T) {
			data, err := os.ReadFile(set.get(t).capture)
			if err != nil {
				t.Fatal(err)
			}
			var s Splitter
			var text []string
			frames, raw := 0, 0
			emit := func(l *Line) {
				raw += len(l.Raw)
				if l.Kind == KindBinary {
					frames++
					return
				}
				text = append(text, string(l.Text))
			}
			for i := 0; i < len(data); i += 37 { // odd chunk size to cross frame edges
				s.Feed(data[i:min(i+37, len(data))], emit)
			}
			s.Flush(emit)
			if raw != len(data) {
				t.Errorf("emitted %d bytes, want all %d", raw, len(data))
			}
			if frames < tc.frames {
				t.Errorf("found %d binary frames, want the capture's frames (≥%d)", frames, tc.frames)
			}
			if len(text) == 0 || !strings.HasPrefix(text[0], tc.firstText) {
				t.Errorf("first text line = %q, want the ROM banner", text[:min(1, len(text))])
			}
			for _, l := range text[1:] {
				if strings.ContainsAny(l, "\x00\x01\x02") {
					t.Errorf("binary bytes leaked into a text line: %q", l)
				}
			}
		})
	}
}

func TestFilter(t *testing.T) {
	lines := []string{"E (1) wifi: e", "W (1) wifi: w", "I (1) wifi: i", "D (1) wifi: d", "V (1) wifi: v", "I (1) app: i", "V (1) app: v", "plain"}
	for _, tc := range []struct {
		filter string
		want   string // one letter per line: y shown, n hidden
	}{
		{"", "yyyyyyyy"},
		{"*:V", "yyyyyyyy"},
		{"*:N", "nnnnnnnn"},
		{"wifi", "yyyyynnn"},
		{"wifi:W", "yynnnnnn"},
		{"wifi:W *:I", "yynnnyny"},
		{"wifi:n app:V", "nnnnnyyn"},
		{"*:E", "ynnnnnny"},
		{"wifi:* *:e", "yyyyynny"},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			f, err := ParseFilter(tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, s := range lines {
				var l Line
				ParseLine([]byte(s), &l)
				if f.Match(&l) {
					got.WriteByte('y')
				} else {
					got.WriteByte('n')
				}
			}
			if diff := cmp.Diff(tc.want, got.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{":E", "wifi:X", "a:b:c"} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("ParseFilter(%q) succeeded, want an error", bad)
		}
	}
}

func TestPCsOnlyFromProgramCounters(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint64
	}{
		{"Backtrace: 0x400d6b5b:0x3fc9bd60 0x400d6c27:0x3fc9bd90", []uint64{0x400d6b5b, 0x400d6c27}},
		{"abort() was called at PC 0x40081a2b on core 0", []uint64{0x40081a2b}},
		{"PC      : 0x400d6b5e  PS      : 0x00060b30  A0      : 0x800d6c2a  A1      : 0x3fc9bd60", []uint64{0x400d6b5e}},
		{"A0      : 0x800d6c2a  A1      : 0x3fc9bd60  A2      : 0x400d1111  A3      : 0x3fc9bd60", nil},
		{"I (361) another_world: Register 0x40080000", nil},
		{"EXCVADDR: 0x00000000  LBEG    : 0x40056f5c  LEND    : 0x40056f72  LCOUNT  : 0xffffffff", nil},
	} {
		var l Line
		ParseLine([]byte(tc.in), &l)
		if diff := cmp.Diff(tc.want, PCs(&l)); diff != "" {
			t.Errorf("PCs(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParsePortLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want PortFact
	}{
		{"I (5120) ts_disco: Ping sent peer=3 to 203.0.113.5:41641 txid=9f8e7d6c5b4a",
			PortFact{Kind: FactDiscoPing, Peer: 3, Addr: netip.MustParseAddrPort("203.0.113.5:41641"), HeapFree: -1}},
		{"I (5170) ts_disco: Pong recv from 203.0.113.5:41641 → peer 3 direct",
			PortFact{Kind: FactDiscoPong, Peer: 3, Addr: netip.MustParseAddrPort("203.0.113.5:41641"), HeapFree: -1}},
		{"I (5200) ts_disco: CallMeMaybe sent peer=2 to derp=7 with 3 eps",
			PortFact{Kind: FactCallMeMaybe, Peer: 2, DERPRegion: 7, Endpoints: 3, HeapFree: -1}},
		{"D (9000) ts_disco: pending pool full (64), dropping ping peer=4",
			PortFact{Kind: FactDiscoPoolFull, Peer: 4, HeapFree: -1}},
		{"I (6000) wireguard: [WireGuard] HANDSHAKE_RESPONSE: 2803037f:7",
			PortFact{Kind: FactHandshake, Peer: -1, ViaDERP: true, DERPRegion: 7, HeapFree: -1}},
		{"I (6001) wireguard: good handshake from 04030201:41641",
			PortFact{Kind: FactHandshake, Peer: -1, Addr: netip.MustParseAddrPort("1.2.3.4:41641"), HeapFree: -1}},
		{"I (3000) ts_netmap: DERP home server: derp1f.tailscale.com:443 (region 1) heap_free=81234",
			PortFact{Kind: FactHomeDERP, Peer: -1, Host: "derp1f.tailscale.com", DERPRegion: 1, HeapFree: 81234}},
		{"I (3100) ts_derp: connected heap_free=80000", PortFact{Peer: -1, HeapFree: 80000}},
		// microlink (ESPHome's Tailscale component).
		{"W (53640000) ml_derp: DERP status: connected=0 fd=-1 rx=74096 tx=245596 loops=1164446",
			PortFact{Kind: FactRelayStatus, Peer: -1, HeapFree: -1, Connected: 0, RelayRx: 74096, RelayTx: 245596}},
		{"[12:00:01][W][ml_derp:318]: DERP status: connected=1 fd=54 rx=10 tx=12 loops=99",
			PortFact{Kind: FactRelayStatus, Peer: -1, HeapFree: -1, Connected: 1, RelayRx: 10, RelayTx: 12}},
		{"W (2000) ml_derp: HEARTBEAT: loop=812 conn=1 rx=40 tx=41 stack_free=2100",
			PortFact{Kind: FactRelayStatus, Peer: -1, HeapFree: -1, Connected: 1, RelayRx: 40, RelayTx: 41}},
		{"W (9000) ml_derp: DERP connect attempt 2 failed", PortFact{Kind: FactRelayRetry, Peer: -1, HeapFree: -1, Attempt: 2}},
		{"W (9000) ml_derp: DERP reconnect retry 3/3 in 500ms...", PortFact{Kind: FactRelayRetry, Peer: -1, HeapFree: -1, Attempt: 3}},
		{"W (9000) ml_derp: DERP down — retrying connect (backoff 8s)", PortFact{Kind: FactRelayRetry, Peer: -1, HeapFree: -1}},
		{"W (9000) ml_derp: DERP RX silent for 185 s — relay presumed dead, reconnecting",
			PortFact{Kind: FactRelaySilent, Peer: -1, HeapFree: -1, Silent: 185}},
		{"I (9100) ml_derp: DERP connected to derp7.tailscale.com", PortFact{Kind: FactRelayUp, Peer: -1, HeapFree: -1}},
		{"I (700) ml_coord: DERP home server: derp7e.tailscale.com:443 (region 7)",
			PortFact{Kind: FactHomeDERP, Peer: -1, Host: "derp7e.tailscale.com", DERPRegion: 7, HeapFree: -1}},
		{"I (800) ml_disco: Sending DISCO PING to 203.0.113.9:41641",
			PortFact{Kind: FactDiscoPing, Peer: -1, Addr: netip.MustParseAddrPort("203.0.113.9:41641"), HeapFree: -1}},
		{"W (810) ml_disco: DISCO decrypt failed from peer 2 (stale key?)", PortFact{Kind: FactDiscoDecryptFail, Peer: -1, HeapFree: -1}},
		{"W (810) ts_disco: failed to decrypt disco packet from 203.0.113.9:41641", PortFact{Kind: FactDiscoDecryptFail, Peer: -1, Addr: netip.MustParseAddrPort("203.0.113.9:41641"), HeapFree: -1}},
		{"I (4100) microlink: VPN IP: 100.64.0.9", PortFact{Kind: FactSelfIP, Peer: -1, HeapFree: -1, Self: netip.MustParseAddr("100.64.0.9")}},
		{"I (3500) ts_netmap: netmap: 2 peers, self 100.64.0.9", PortFact{Kind: FactSelfIP, Peer: -1, HeapFree: -1, Self: netip.MustParseAddr("100.64.0.9")}},
		// WireGuard-ESP32 / esp_wireguard.
		{"D (5000) wireguardif: sending initiation packet", PortFact{Kind: FactWGInitiation, Peer: -1, HeapFree: -1}},
		{"D (5010) wireguardif: sending handshake response packet", PortFact{Kind: FactWGResponse, Peer: -1, HeapFree: -1}},
	} {
		var l Line
		ParseLine([]byte(tc.in), &l)
		got, ok := ParsePortLine(&l)
		if !ok {
			t.Errorf("ParsePortLine(%q) found nothing", tc.in)
		}
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateComparable(netip.AddrPort{}, netip.Addr{})); diff != "" {
			t.Errorf("ParsePortLine(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	var l Line
	ParseLine([]byte("I (1) ts_disco: something else"), &l)
	if _, ok := ParsePortLine(&l); ok {
		t.Error("unknown ts_disco line reported a fact")
	}
}

// TestSplitterNotAFrame: a line that starts like a binary frame but is not
// one splits at its line ends however it is chunked.
func TestSplitterNotAFrame(t *testing.T) {
	in := "\x01\nabc\n\x02\x00\x20not a frame\nlast\n"
	want := []string{"\x01\n", "abc\n", "\x02\x00\x20not a frame\n", "last\n"}
	for chunk := 1; chunk <= len(in); chunk++ {
		var s Splitter
		var got []string
		emit := func(l *Line) { got = append(got, string(l.Raw)) }
		for i := 0; i < len(in); i += chunk {
			s.Feed([]byte(in[i:min(i+chunk, len(in))]), emit)
		}
		s.Flush(emit)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("chunk %d (-want +got):\n%s", chunk, diff)
		}
	}
}
