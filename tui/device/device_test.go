package device

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/tuitest"
)

var at = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// boardLog is shaped like a CoreS3 running the ESP32 Tailscale port with
// tailpath telemetry: frames from docs/telemetry.md, one crash.
const boardLog = "ESP-ROM:esp32s3-20210327\r\n" +
	"rst:0xc (RTC_SW_CPU_RST),boot:0x2b (SPI_FAST_FLASH_BOOT)\r\n" +
	"I (3000) ts_netmap: DERP home server: derp1f.tailscale.com:443 (region 1) heap_free=81234\r\n" +
	"@TP1 S seq=41 up=34012 rst=poweron rssi=-61 wdis=0 hif=131072 hmin=127488 hlb=69632 psf=8157184 bad=0 *6656D985\r\n" +
	"@TP1 N seq=42 up=34012 ip=100.64.0.9 host=cores3 eps=1 derp=1 derpby=lowest-id derpms=182 near=7 nearms=24 *CC2F830C\r\n" +
	"@TP1 D seq=43 up=34012 pu=12 pcap=64 pdrop=0 preap=30 ping=42 pong=1 cmmi=1 cmmo=3 h2rx=48213 h2wu=32768 h2win=49407 *B9A2C5E4\r\n" +
	"@TP1 P seq=44 up=34012 peer=2 pip=100.64.0.2 path=203.0.113.7:41641 hs=derp:1 hsup=31870 lat=21 *1A814199\r\n" +
	"@TP1 F seq=45 up=45210 n=2 bytes=393216 ms=2053 kibs=187.0 status=200 via=203.0.113.7:41641 *F07AA50F\r\n" +
	"Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\r\n" +
	"Backtrace: 0x400d1000:0x3fc9bd60 0x400d2000:0x3fc9bd90 |<-CORRUPTED\r\n"

// event builds the devlink.Event a Source would send for text.
func event(text string, up bool) devlink.Event {
	st := devlink.NewState()
	st.ApplyLink(devlink.LinkStatus{Up: up, Port: "/dev/ttyACM0", At: at})
	var sp devlink.Splitter
	var lines []devlink.Line
	emit := func(l *devlink.Line) {
		st.ApplyLine(l, at.Add(-90*time.Second), nil)
		lines = append(lines, l.Clone())
	}
	sp.Feed([]byte(text), emit)
	sp.Flush(emit)
	return devlink.Event{Lines: lines, State: st.Clone()}
}

func TestDevicePaneUpdate(t *testing.T) {
	p := New(common.DefaultStyles(), func() time.Time { return at })
	p.SetSize(140, 30)
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "no board yet") {
		t.Errorf("empty pane:\n%s", v)
	}
	ev0 := event(boardLog, true)
	p.Update(ev0)
	v := tuitest.Unstyled(p.View())
	for _, want := range []string{
		"link up /dev/ttyACM0  cores3 100.64.0.9",
		"last reset software CPU reset (panic or esp_restart) · RTC_SW_CPU_RST 0xc · firmware says poweron",
		"LoadProhibited on core 0 · 1m ago",
		"pass the firmware ELF (--elf) to decode the backtrace",
		"region 1 (derp1f.tailscale.com) 182ms, chosen by lowest region id (not by latency)",
		"not the nearest: region 7 answers in 24ms",
		"12/64 used, 0 dropped, 30 reaped",
		"internal 128KiB free (min 125KiB since boot, largest 68.0KiB)",
		"Control stream  HTTP/2 49407 B open, 48213 B received, 32768 B window credit returned",
		// The handshake was 2.142 s (up - hsup) before the frame arrived.
		"peer 2 100.64.0.2  path direct 203.0.113.7:41641 21ms  handshake via DERP region 1 · 1m ago",
		"#2 384KiB in 2053ms = 187KiB/s, HTTP 200 via direct 203.0.113.7:41641",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if n := strings.Count(v, "\n") + 1; n != 30 {
		t.Errorf("view has %d rows, want exactly 30", n)
	}
	// Selecting the board's own node, or one of its peers, in Peers marks it.
	p.Update(common.PeerSelectedMsg{Peer: probes.Peer{Name: "nas", TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.2")}}})
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "handshake via DERP region 1 · 1m ago  ◀ nas") {
		t.Errorf("selected peer not marked:\n%s", v)
	}
	// The board's own node, as the joiner matched it.
	board := probes.Peer{ID: "nCORES3", Name: "cores3", TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.9")}}
	var joiner join.Joiner
	joiner.SetDevice(&ev0.State)
	p.Update(joiner.SetSnapshot(&probes.Snapshot{Peers: []probes.Peer{board}}))
	p.Update(common.PeerSelectedMsg{Peer: board})
	if v = tuitest.Unstyled(p.View()); !strings.Contains(v, "cores3 100.64.0.9  selected in Peers") {
		t.Errorf("board not marked as selected:\n%s", v)
	}
	// A full probe table raises the alarm in words.
	ev := event(boardLog+"@TP1 D seq=46 up=50000 pu=64 pcap=64 pdrop=9 *00000000\r\n", false)
	ev.State.ProbesUsed, ev.State.ProbesCap = 64, 64
	p.Update(ev)
	v = tuitest.Unstyled(p.View())
	if !strings.Contains(v, "FULL: new pings are dropped") || !strings.Contains(v, "link down") {
		t.Errorf("full table / link down not shown:\n%s", v)
	}
}

// TestDevicePaneBoardTextClean: escape sequences in what the board prints
// and in the link's errors (a port's name, the system's words) never reach
// the screen; their words do. The pane cleans nothing itself: devlink
// hands it safetext.Text.
func TestDevicePaneBoardTextClean(t *testing.T) {
	ev := event("Guru Meditation Error: Core  0 panic'ed (Load\x1b]0;pwned\x07Prohibited\x1b[2J). Exception was unhandled.\r\n"+
		"I (3000) ts_netmap: DERP home server: derp1f\x1b[5m.example:443 (region 1)\r\n", false)
	ev.State.Link.Err = errors.New("read /dev/ttyACM0: \x1b]0;pwned\x07gone")
	ev.Err = errors.New("open /dev/ttyACM0: \x1b[2Jbusy")
	p := New(common.DefaultStyles(), func() time.Time { return at })
	p.SetSize(140, 30)
	p.Update(ev)
	raw := p.View()
	for _, bad := range []string{"\x07", "\x1b]", "\x1b[2J", "\x1b[5m", "pwned"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the view carries %q from the board:\n%q", bad, raw)
		}
	}
	v := tuitest.Unstyled(raw)
	for _, want := range []string{
		"device source stopped: open /dev/ttyACM0: busy",
		"last error: read /dev/ttyACM0: gone",
		"Last crash  LoadProhibited on core 0",
		"region 1 (derp1f.example)",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

func TestDeviceGolden(t *testing.T) {
	p := New(common.DefaultStyles(), func() time.Time { return at })
	tm := teatest.NewTestModel(t, tuitest.Host{Pane: p}, teatest.WithInitialTermSize(100, 26))
	tm.Send(event(boardLog, true))
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(tuitest.Host)
	teatest.RequireEqualOutput(t, []byte(tuitest.Unstyled(final.View().Content)))
}

// TestDevicePaneELFMismatch: the pane says when --elf is not the board's firmware.
func TestDevicePaneELFMismatch(t *testing.T) {
	p := New(common.DefaultStyles(), func() time.Time { return at })
	p.SetSize(160, 30)
	ev := event(boardLog, true)
	p.Update(ev)
	if v := tuitest.Unstyled(p.View()); strings.Contains(v, "not the --elf file") {
		t.Errorf("mismatch shown without one:\n%s", v)
	}
	ev.State.BoardELFSHA, ev.State.ELFMismatch = "0f1e2d3c4b5a6978", true
	p.Update(ev)
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "the board runs firmware with ELF SHA256 0f1e2d3c4b5a6978…, not the --elf file: decoded backtraces may be wrong") {
		t.Errorf("no mismatch warning:\n%s", v)
	}
}

// TestDevicePaneAgesWhileSilent: "ago" texts keep counting without new
// events (the pane ticks once a second after its first event).
func TestDevicePaneAgesWhileSilent(t *testing.T) {
	now := at
	p := New(common.DefaultStyles(), func() time.Time { return now })
	p.SetSize(160, 30)
	cmd := p.Update(event(boardLog, true))
	if cmd == nil {
		t.Fatal("no tick started by the first event")
	}
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "LoadProhibited on core 0 · 1m ago") {
		t.Fatalf("crash age:\n%s", v)
	}
	if p.Update(event(boardLog, true)) != nil {
		t.Error("a second event started a second tick")
	}
	now = now.Add(time.Minute)
	msg := cmd() // waits one tick
	if _, ok := msg.(ageTickMsg); !ok {
		t.Fatalf("tick sent %T", msg)
	}
	if p.Update(msg) == nil {
		t.Error("tick not re-armed")
	}
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "LoadProhibited on core 0 · 2m ago") || !strings.Contains(v, "handshake via DERP region 1 · 2m ago") {
		t.Errorf("ages not refreshed by the tick:\n%s", v)
	}
	other := New(common.DefaultStyles(), nil)
	if other.Update(msg) != nil {
		t.Error("another Device pane took this pane's tick")
	}
}

// TestDevicePaneH2Stalled: a control stream that received data but never
// returned window credit, with no window left, is called stalled.
func TestDevicePaneH2Stalled(t *testing.T) {
	p := New(common.DefaultStyles(), func() time.Time { return at })
	p.SetSize(200, 30)
	ev := event(boardLog, true)
	p.Update(ev)
	if v := tuitest.Unstyled(p.View()); strings.Contains(v, "STALLED") {
		t.Errorf("healthy window called stalled:\n%s", v)
	}
	ev.State.H2Received, ev.State.H2WindowReturned, ev.State.H2WindowOpen = 65535, 0, 0
	p.Update(ev)
	if v := trimLines(tuitest.Unstyled(p.View())); !strings.Contains(v, "Control stream  STALLED: the server can send nothing more\n  HTTP/2 0 B open, 65535 B received, 0 B window credit returned") {
		t.Errorf("stalled window not flagged:\n%s", v)
	}
}

// TestDevicePaneResetKey: R asks first (it reboots the board); y then
// asks the link for a reset through a command (never inside Update), only
// when a live port was wired with SetReset; n or any other key does not
// reset; the outcome shows from the link status.
func TestDevicePaneResetKey(t *testing.T) {
	R := tea.KeyPressMsg{Code: 'R', Text: "R"}
	p := New(common.DefaultStyles(), func() time.Time { return at })
	p.SetSize(100, 30)
	if cmd := p.Update(R); cmd != nil {
		t.Error("R did something without a port to reset (replay)")
	}
	for _, b := range p.KeyMap().ShortHelp() {
		if b.Help().Key == "R" && b.Enabled() {
			t.Error("reset key advertised without a port")
		}
	}
	asked := 0
	p.SetReset(func() bool { asked++; return true })
	// No board on the port yet: R says so and asks nothing.
	if cmd := p.Update(R); cmd != nil || !strings.Contains(tuitest.Unstyled(p.View()), "no board connected") {
		t.Fatalf("R with no board connected: command %v, pane:\n%s", cmd != nil, tuitest.Unstyled(p.View()))
	}
	p.Update(event("", false))
	if cmd := p.Update(R); cmd != nil || !strings.Contains(tuitest.Unstyled(p.View()), "no board connected") {
		t.Fatalf("R with the link down: command %v, pane:\n%s", cmd != nil, tuitest.Unstyled(p.View()))
	}
	p.Update(event("I (1) boot: up", true))
	if strings.Contains(tuitest.Unstyled(p.View()), "no board connected") {
		t.Errorf("the notice outlived the board's arrival:\n%s", tuitest.Unstyled(p.View()))
	}
	// R asks; the question takes every key (the root routes them here
	// first), and anything but y leaves the board alone.
	for _, no := range []tea.KeyPressMsg{{Code: 'n', Text: "n"}, {Code: tea.KeyEscape}, {Code: 'q', Text: "q"}} {
		if cmd := p.Update(R); cmd != nil || !p.Capturing() || !strings.Contains(tuitest.Unstyled(p.View()), "Reset the board now?") {
			t.Fatalf("R did not ask first: command %v, capturing %v, pane:\n%s", cmd != nil, p.Capturing(), tuitest.Unstyled(p.View()))
		}
		if cmd := p.Update(no); cmd != nil || p.Capturing() || !strings.Contains(tuitest.Unstyled(p.View()), "not reset") {
			t.Fatalf("%s to the question: command %v, capturing %v, pane:\n%s", no, cmd != nil, p.Capturing(), tuitest.Unstyled(p.View()))
		}
	}
	p.Update(R)
	cmd := p.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if asked != 0 {
		t.Fatal("Update asked for the reset itself; that belongs in the command")
	}
	if cmd == nil {
		t.Fatal("y to R's question returned no command with a port wired")
	}
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "reset requested") || p.Capturing() {
		t.Errorf("after y: capturing %v, pane:\n%s", p.Capturing(), v)
	}
	cmd()
	if asked != 1 {
		t.Fatalf("reset asked %d times, want 1", asked)
	}

	ev := event("I (10) boot: hi", true)
	ev.State.Link.ResetErr = errors.New("reset /dev/pts/3: the port has no modem lines; press the board's RST button instead")
	p.Update(ev)
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "reset failed:") || !strings.Contains(v, "RST button") {
		t.Errorf("failed reset not shown:\n%s", v)
	}
	ev.State.Link.ResetErr, ev.State.Link.Reset, ev.State.Link.At = nil, true, at
	p.Update(ev)
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "reset by tailpath at "+at.Format("15:04:05")) {
		t.Errorf("reset not shown:\n%s", v)
	}
}

// TestDevicePaneRelayDown: microlink's status line saying the relay is
// down (the field report's shape) shows as the board's DERP relay down,
// with the evidence that it was up earlier; the decrypt failures and
// esp_wireguard handshakes show beside it.
func TestDevicePaneRelayDown(t *testing.T) {
	p := New(common.DefaultStyles(), func() time.Time { return at })
	p.SetSize(200, 40)
	p.Update(event("\x1b[0;33mW (53640000) ml_derp: DERP status: connected=1 fd=54 rx=74000 tx=245000 loops=1164000\x1b[0m\r\n"+
		"W (53650000) ml_derp: DERP status: connected=0 fd=-1 rx=74096 tx=245596 loops=1164446\r\n"+
		"W (53660000) ml_derp: DERP down — retrying connect (backoff 8s)\r\n"+
		"W (53661000) ml_disco: DISCO decrypt failed from peer 2\r\n"+
		"D (53662000) wireguardif: sending initiation packet\r\n", true))
	v := tuitest.Unstyled(p.View())
	for _, want := range []string{
		"DERP relay  DOWN: nothing relayed reaches the board · was up earlier this boot, down 1m30s, 1 reconnect attempt",
		"DISCO decrypt  1 packet failed: stale disco key",
		"WireGuard  handshakes: 1 started, 0 answered",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("pane lacks %q:\n%s", want, v)
		}
	}
	p.Update(event("I (1) ml_derp: DERP status: connected=1 fd=54 rx=1 tx=1 loops=1\r\n", true))
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "DERP relay  connected") {
		t.Errorf("relay back up not shown:\n%s", v)
	}
}

// TestDevicePaneRISCVCrash: an ESP32-C3 crash under ESPHome (the field
// report's kind) shows its reason, MEPC in ROM, RA and SP, and that the
// copy ended mid-dump: our own input always, the field's when the shared
// folder is present.
func TestDevicePaneRISCVCrash(t *testing.T) {
	for _, tc := range []struct {
		name, path, want string
	}{
		{"own", "../../devlink/testdata/field/esphome-c3-glued-cut.log", "MEPC 0x40001c52 (in ROM) · RA 0x4201a3f4 · SP 0x3fc9e2a0 · riscv · report cut short"},
		{"field", "../../../shared/testdata/field/esp/esphome-c3-panic-glued.log", "MEPC 0x40001be4 (in ROM) · RA 0x42075ee2 · SP 0x3fca11b0 · riscv · report cut short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(tc.path)
			if err != nil {
				if tc.name == "own" {
					t.Fatal(err)
				}
				t.Skipf("shared field input not present (%v); it lives at ../shared/testdata beside the repository", err)
			}
			p := New(common.DefaultStyles(), func() time.Time { return at })
			p.SetSize(200, 40)
			p.Update(event(string(b), true))
			v := tuitest.Unstyled(p.View())
			for _, want := range []string{"Last crash  Illegal instruction on core 0", tc.want} {
				if !strings.Contains(v, want) {
					t.Errorf("pane lacks %q:\n%s", want, v)
				}
			}
		})
	}
}

// trimLines drops the blanks the viewport pads each line with.
func trimLines(v string) string {
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// TestDevicePaneShowsExtraFields: telemetry fields State has no named field
// for (a field just added to the table) are listed as the board wrote them,
// board-wide, on their peer's row and on their fetch's row.
func TestDevicePaneShowsExtraFields(t *testing.T) {
	p := New(common.DefaultStyles(), func() time.Time { return at })
	p.SetSize(200, 40)
	ev := event(boardLog, true)
	p.Update(ev)
	if v := tuitest.Unstyled(p.View()); strings.Contains(v, "More telemetry") {
		t.Errorf("extra fields shown when there are none:\n%s", v)
	}
	ev.State.Extra = map[telemetry.Kind][]telemetry.Field{
		telemetry.KindRelay:  {{Key: "tls", Value: "1.3"}},
		telemetry.KindStatus: {{Key: "temp", Value: "41"}, {Key: "vbat", Value: "3712"}},
	}
	ev.State.Peers[2].Extra = []telemetry.Field{{Key: "mtu", Value: "1280"}}
	ev.State.Fetches[0].Extra = []telemetry.Field{{Key: "retries", Value: "2"}}
	p.Update(ev)
	v := trimLines(tuitest.Unstyled(p.View()))
	for _, want := range []string{
		"More telemetry  S: temp=41 vbat=3712 · R: tls=1.3",
		"handshake via DERP region 1 · 1m ago  mtu=1280",
		"via direct 203.0.113.7:41641  retries=2",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("pane lacks %q:\n%s", want, v)
		}
	}
}

// TestDevicePaneShowsOnlyWhatItKnows: a board that never spoke of Wi-Fi
// or its heap (an LTE board running the ESP32 Tailscale port, without
// telemetry) gets no "Wi-Fi 0 disconnects" and no "Heap internal ? free";
// a crash near address 0 is named a NULL-pointer access; a log that holds
// the backtrace decoded already asks for no --elf, and a RISC-V crash
// (no Backtrace: line) is told what --elf would do for it.
func TestDevicePaneShowsOnlyWhatItKnows(t *testing.T) {
	const lte = "I (1200) modem: PPP up over LTE, ip 10.64.12.7\r\n" +
		"I (3000) ts_netmap: DERP home server: derp1f.tailscale.com:443 (region 1)\r\n" +
		"Guru Meditation Error: Core  1 panic'ed (StoreProhibited). Exception was unhandled.\r\n" +
		"Core  1 register dump:\r\n" +
		"PC      : 0x400d8a31  PS      : 0x00060a30  A0      : 0x800d8c6e  A1      : 0x3ffb2f40  \r\n" +
		"EXCVADDR: 0x00000008  LBEG    : 0x4000c2e0  LEND    : 0x4000c2f6  LCOUNT  : 0xffffffff  \r\n" +
		"Backtrace: 0x400d8a2e:0x3ffb2f40 0x400d8c6b:0x3ffb2f70\r\n" +
		"  #0  0x400d8a2e:0x3ffb2f40 in tp_udp_send at src/tp_udp.c:141\r\n" +
		"  #1  0x400d8c6b:0x3ffb2f70 in tp_wg_output at src/tp_wg.c:377\r\n" +
		"Rebooting...\r\n"
	const riscv = "Guru Meditation Error: Core  0 panic'ed (Load access fault). Exception was unhandled.\r\n" +
		"Core  0 register dump:\r\n" +
		"MEPC    : 0x42008a2e  RA      : 0x420089f0  SP      : 0x4080f1c0  GP      : 0x40811e54  \r\n" +
		"MSTATUS : 0x00001881  MTVEC   : 0x40800001  MCAUSE  : 0x00000005  MTVAL   : 0x00000000  \r\n" +
		"\r\n" +
		"Stack memory:\r\n" +
		"4080f1c0: 0x00000000 0x00000000 0x4080f1fc 0x42008d3a 0x00000000 0x00000000 0x00000000 0x4080f2c0\r\n" +
		"Rebooting...\r\n"
	for _, tc := range []struct {
		name      string
		log       string
		want, not []string
	}{
		{"lte, decoded in the log", lte,
			[]string{"EXCVADDR 0x00000008: a NULL-pointer write (a field 8 bytes into a struct reached through a NULL pointer)",
				"the log holds this backtrace decoded already"},
			[]string{"Wi-Fi", "Heap", "?", "--elf"}},
		{"riscv", riscv,
			[]string{"MTVAL 0x00000000: a NULL-pointer read (address 0 itself)",
				"pass the firmware ELF (--elf) to decode MEPC and recover the backtrace from the stack dump"},
			[]string{"Wi-Fi", "Heap"}},
		{"telemetry", boardLog,
			[]string{"Wi-Fi  0 disconnects, RSSI -61 dBm", "Heap  internal 128KiB free (min 125KiB since boot, largest 68.0KiB)",
				"pass the firmware ELF (--elf) to decode the backtrace"},
			[]string{"NULL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(common.DefaultStyles(), func() time.Time { return at })
			p.SetSize(160, 40)
			p.Update(event(tc.log, true))
			v := tuitest.Unstyled(p.View())
			for _, w := range tc.want {
				if !strings.Contains(v, w) {
					t.Errorf("lacks %q:\n%s", w, v)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(v, n) {
					t.Errorf("shows %q:\n%s", n, v)
				}
			}
		})
	}
}

// TestDevicePaneReplaySaysAddressesAreRecorded: the demo's board is a
// recording; its addresses are said to be the recording's, not the lab's.
func TestDevicePaneReplaySaysAddressesAreRecorded(t *testing.T) {
	p := New(common.DefaultStyles(), func() time.Time { return at })
	p.SetSize(120, 30)
	ev := event(boardLog, true)
	ev.State.Link.Replay = true
	p.Update(ev)
	if v := tuitest.Unstyled(p.View()); !strings.Contains(v, "addresses below are the recording's, not this tailnet's") {
		t.Errorf("replay without the note:\n%s", v)
	}
	p.Update(event(boardLog, true))
	if v := tuitest.Unstyled(p.View()); strings.Contains(v, "recording's") {
		t.Errorf("a live board with the replay's note:\n%s", v)
	}
}
