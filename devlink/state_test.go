package devlink

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tailpath/tailpath/devlink/crash"
	"github.com/tailpath/tailpath/devlink/devlinktest"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/internal/safetext"
)

// capture is shaped like a CoreS3 running the ESP32 Tailscale port that
// crashes once and reboots, with tailpath telemetry frames (from
// docs/telemetry.md) in between.
const capture = "ESP-ROM:esp32s3-20210327\r\n" +
	"Build:Mar 27 2021\r\n" +
	"rst:0x1 (POWERON),boot:0x2b (SPI_FAST_FLASH_BOOT)\r\n" +
	"I (245) app_init: ELF file SHA256:  0f1e2d3c4...\r\n" +
	"I (3000) ts_netmap: DERP home server: derp1f.tailscale.com:443 (region 1) heap_free=81234\r\n" +
	"I (5120) ts_disco: Ping sent peer=2 to 203.0.113.7:41641 txid=9f8e7d6c\r\n" +
	"I (34012) ts_disco: Pong recv from 203.0.113.7:41641 → peer 2 direct\r\n" +
	"@TP1 S seq=41 up=34012 rst=poweron rssi=-61 wdis=0 hif=131072 hmin=127488 hlb=69632 psf=8157184 bad=0 *6656D985\r\n" +
	"@TP1 N seq=42 up=34012 ip=100.64.0.9 host=cores3 eps=1 derp=1 derpby=lowest-id derpms=182 near=7 nearms=24 *CC2F830C\r\n" +
	"@TP1 D seq=43 up=34012 pu=12 pcap=64 pdrop=0 preap=30 ping=42 pong=1 cmmi=1 cmmo=3 h2rx=48213 h2wu=32768 h2win=49407 *B9A2C5E4\r\n" +
	"@TP1 P seq=44 up=34012 peer=2 pip=100.64.0.2 path=203.0.113.7:41641 hs=derp:1 hsup=31870 lat=21 *1A814199\r\n" +
	"@TP1 F seq=45 up=45210 n=2 bytes=393216 ms=2053 kibs=187.0 status=200 via=203.0.113.7:41641 *F07AA50F\r\n" +
	"@TP1 S seq=46 up=45210 rst=poweron hif=1 *00000000\r\n" + // corrupt: bad checksum
	"D (50000) ts_disco: pending pool full (64), dropping ping peer=3\r\n" +
	"E (60000) task_wdt: Task watchdog got triggered. The following tasks/users did not reset the watchdog in time:\r\n" +
	"E (60000) task_wdt:  - IDLE0 (CPU 0)\r\n" +
	"Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\r\n" +
	"\r\n" +
	"Core  0 register dump:\r\n" +
	"PC      : 0x400d1000  PS      : 0x00060b30  A0      : 0x800d6c2a  A1      : 0x3fc9bd60  \r\n" +
	"A2      : 0x00000000  A3      : 0x3fc9bd8c  A4      : 0x00000001  A5      : 0x3fc99c40  \r\n" +
	"\r\n" +
	"Backtrace: 0x4008a000:0x3fc9bd60 0x400d1000:0x3fc9bd90 |<-CORRUPTED\r\n" +
	"\r\n" +
	"ELF file SHA256: 0f1e2d3c4b5a6978\r\n" +
	"\r\n" +
	"Rebooting...\r\n" +
	"I (120) half a li" + "ESP-ROM:esp32s3-20210327\r\n" +
	"rst:0xc (RTC_SW_CPU_RST),boot:0x2b (SPI_FAST_FLASH_BOOT)\r\n" +
	"I (6001) wireguard: good handshake from 04030201:41641\r\n" +
	"I (7000) wifi:state: run -> init (fc0)\r\n"

// TestSourceBuildsDeviceState replays capture through a Source with an
// ELF: our own Xtensa ELF (devlinktest; the capture's PCs moved to its
// functions, addr2line's frames the reference) and ESP-IDF monitor's
// log.elf (the shared vectors, when present).
func TestSourceBuildsDeviceState(t *testing.T) {
	// The capture's PCs: the PC register and the backtrace's second frame,
	// and the backtrace's first frame (inlined code).
	const capturePC, captureInlined = 0x400d1000, 0x4008a000
	t.Run("own", func(t *testing.T) {
		elfPath := devlinktest.XtensaELF(t)
		pc := devlinktest.Func(t, elfPath, "tp_timer_init") + 6
		inl, frames := devlinktest.InlinedPC(t, elfPath, "tp_pool_alloc", 3)
		at := devlinktest.Addr2Line(t, elfPath, pc)[pc]
		text := strings.NewReplacer(fmt.Sprintf("0x%08x", capturePC), fmt.Sprintf("0x%08x", pc),
			fmt.Sprintf("0x%08x", captureInlined), fmt.Sprintf("0x%08x", inl)).Replace(capture)
		var want []string
		want = append(want, devlinktest.Decoded(pc, at)...)
		want = append(want, devlinktest.Decoded(inl, frames)...)
		want = append(want, devlinktest.Decoded(pc, at)...)
		sourceBuildsDeviceState(t, elfPath, text, uint32(pc), want)
	})
	t.Run("esp-idf-monitor", func(t *testing.T) {
		sourceBuildsDeviceState(t, testdata(t, "log.elf"), capture, capturePC, []string{
			"0x400d1000: esp_timer_impl_init_system_time at /home/kostia/esp/esp-idf/components/esp_timer/src/system_time.c:29",
			"0x4008a000: align_up at /home/kostia/esp/esp-idf/components/heap/tlsf/tlsf_control_functions.h:244",
			" (inlined by) adjust_request_size at /home/kostia/esp/esp-idf/components/heap/tlsf/tlsf_control_functions.h:289",
			" (inlined by) tlsf_memalign_offs at /home/kostia/esp/esp-idf/components/heap/tlsf/tlsf.c:560",
			"0x400d1000: esp_timer_impl_init_system_time at /home/kostia/esp/esp-idf/components/esp_timer/src/system_time.c:29",
		})
	})
}

// sourceBuildsDeviceState replays capture (with its PC register at pc)
// decoding with elfPath, and wants the crash's decoded lines wantDecoded.
func sourceBuildsDeviceState(t *testing.T, elfPath, capture string, pc uint32, wantDecoded []string) {
	sym, err := crash.OpenELF(elfPath)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	src := &Source{Replay: strings.NewReader(capture), Symbols: sym, Every: 10 * time.Millisecond, Now: func() time.Time { return at }}
	var last Event
	lines := 0
	decoded := 0
	for ev := range src.Run(context.Background()) {
		lines += len(ev.Lines)
		for _, l := range ev.Lines {
			decoded += len(l.Decoded)
			if want := l.DisplayText(); l.Display != want {
				t.Errorf("line %q: Display = %q, want DisplayText() %q", l.Text, l.Display, want)
			}
		}
		last = ev
	}
	if last.Err != nil {
		t.Fatalf("source error: %v", last.Err)
	}
	if want := strings.Count(capture, "\n"); lines != want {
		t.Errorf("events carried %d lines, want %d", lines, want)
	}
	if decoded != len(wantDecoded) { // PC register (1) + backtrace (3 + 1)
		t.Errorf("lines carried %d decoded frames, want %d", decoded, len(wantDecoded))
	}
	s := last.State
	// The capture ends in a second boot: per-boot values are cleared,
	// history stays (TestStatePerBoot checks the first boot's values).
	want := bootSummary{
		Boots: 2, ResetCode: 0xc,
		// HeapSamples: the S frame's hif; the port line's heap_free of the
		// same boot (another measure) is dropped when the frame arrives.
		HeapSamples: 1, TailnetIP: "100.64.0.9", Hostname: "cores3", Endpoints: -1,
		Frames: 5, Corrupt: 1, Fetches: 1, WiFiDropLines: 1,
		Crashes: 2, TaskWDT: 1, LinkUp: false,
	}
	if diff := cmp.Diff(want, summarise(&s)); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if _, ok := s.NearestIsHome(); ok {
		t.Error("NearestIsHome known right after a reboot")
	}
	if !s.Link.Replay || s.Link.Err != ErrReplayEnded {
		t.Errorf("link = %+v, want a replay that ended", s.Link)
	}
	p := s.Peers[2]
	if p == nil {
		t.Fatalf("peer 2 missing: %+v", s.Peers)
	}
	// The second boot's wireguard line names no peer; the board has one.
	wantPeer := PeerState{ID: 2, IP: netip.MustParseAddr("100.64.0.2"),
		Handshake: telemetry.Path{Kind: telemetry.PathDirect, Addr: netip.MustParseAddrPort("1.2.3.4:41641")}, HandshakeAt: at}
	if diff := cmp.Diff(wantPeer, *p, addrComparers...); diff != "" {
		t.Errorf("peer 2 (-want +got):\n%s", diff)
	}
	c := s.LastCrash
	if c == nil {
		t.Fatal("no crash recorded")
	}
	if c.Reason != "LoadProhibited on core 0" || c.PC != pc || len(c.Backtrace.Frames) != 2 || !c.Backtrace.Corrupted || c.ELFSHA != "0f1e2d3c4b5a6978" {
		t.Errorf("crash = %+v", c)
	}
	if diff := cmp.Diff(wantDecoded, strs(c.Decoded)); diff != "" {
		t.Errorf("decoded crash (-want +got):\n%s", diff)
	}
	if n := len(c.Lines); n != 7 || c.Lines[n-1] != "Rebooting..." {
		t.Errorf("crash lines = %q", c.Lines)
	}
}

// bootSummary is the part of State that TestSourceBuildsDeviceState and
// TestStatePerBoot compare.
type bootSummary struct {
	Boots                                     int
	ResetCode                                 int
	ResetWord                                 safetext.Text
	HomeDERP, NearestDERP                     int
	HomeDERPHost, HomeDERPBy                  safetext.Text
	ProbesUsed, ProbesCap, ProbesReaped       int64
	PoolFullLines                             int
	H2                                        [4]int64 // known, received, returned, open
	HeapFree, HeapMin, HeapLargest, PSRAMFree int64
	HeapSamples                               int
	TailnetIP                                 string
	Hostname                                  safetext.Text
	Endpoints                                 int64
	BoardELFSHA                               safetext.Text
	Frames, Corrupt                           int64
	Fetches                                   int
	WiFiDropLines                             int64
	Crashes, TaskWDT                          int
	LinkUp                                    bool
}

func summarise(s *State) bootSummary {
	return bootSummary{
		Boots: s.Boots, ResetCode: s.LastReset.Code, ResetWord: s.ResetWord,
		HomeDERP: s.HomeDERP, NearestDERP: s.NearestDERP, HomeDERPHost: s.HomeDERPHost, HomeDERPBy: s.HomeDERPBy,
		ProbesUsed: s.ProbesUsed, ProbesCap: s.ProbesCap, ProbesReaped: s.ProbesReaped, PoolFullLines: s.PoolFullLines,
		H2:       [4]int64{btoi(s.H2Known), s.H2Received, s.H2WindowReturned, s.H2WindowOpen},
		HeapFree: s.HeapFree, HeapMin: s.HeapMin, HeapLargest: s.HeapLargest, PSRAMFree: s.PSRAMFree,
		HeapSamples: s.HeapHistory.Len(), TailnetIP: s.TailnetIP.String(), Hostname: s.Hostname,
		Endpoints: s.Endpoints, BoardELFSHA: s.BoardELFSHA,
		Frames: s.Frames, Corrupt: s.CorruptFrames, Fetches: len(s.Fetches), WiFiDropLines: s.WiFiDropLines,
		Crashes: s.Crashes, TaskWDT: s.TaskWatchdogHits, LinkUp: s.Link.Up,
	}
}

// strs is ts as plain strings, to compare with the strings a test wants.
func strs(ts []safetext.Text) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}

var addrComparers = []cmp.Option{cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
	cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })}

// TestStatePerBoot: a reboot clears what the board reports per boot (a
// stale "pool full" must not outlive the boot that printed it) and keeps
// what spans boots; fetches are marked with their boot.
func TestStatePerBoot(t *testing.T) {
	at := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	s := NewState()
	var sp Splitter
	var before *bootSummary
	var beforePeer PeerState
	sp.Feed([]byte(capture), func(l *Line) {
		if l.Kind == KindROM && s.Boots == 1 {
			b := summarise(s)
			before, beforePeer = &b, *s.Peers[2]
		}
		s.ApplyLine(l, at, nil)
	})
	if before == nil {
		t.Fatal("no second ROM banner in the capture")
	}
	wantBefore := bootSummary{
		Boots: 1, ResetCode: 0x1, ResetWord: "poweron",
		HomeDERP: 1, NearestDERP: 7, HomeDERPHost: "derp1f.tailscale.com", HomeDERPBy: "lowest-id",
		ProbesUsed: 12, ProbesCap: 64, ProbesReaped: 30, PoolFullLines: 1, H2: [4]int64{1, 48213, 32768, 49407},
		HeapFree: 131072, HeapMin: 127488, HeapLargest: 69632, PSRAMFree: 8157184,
		HeapSamples: 1, TailnetIP: "100.64.0.9", Hostname: "cores3", Endpoints: 1, BoardELFSHA: "0f1e2d3c4b5a6978",
		Frames: 5, Corrupt: 1, Fetches: 1, Crashes: 2, TaskWDT: 1,
	}
	if diff := cmp.Diff(wantBefore, *before); diff != "" {
		t.Errorf("first boot (-want +got):\n%s", diff)
	}
	if beforePeer.Path.Kind != telemetry.PathDirect || beforePeer.Latency != 21*time.Millisecond {
		t.Errorf("first boot's peer 2 = %+v", beforePeer)
	}
	wantAfter := bootSummary{
		Boots: 2, ResetCode: 0xc,
		HeapSamples: 1, TailnetIP: "100.64.0.9", Hostname: "cores3", Endpoints: -1,
		Frames: 5, Corrupt: 1, Fetches: 1, WiFiDropLines: 1, Crashes: 2, TaskWDT: 1,
	}
	if diff := cmp.Diff(wantAfter, summarise(s)); diff != "" {
		t.Errorf("second boot (-want +got):\n%s", diff)
	}
	if s.LastCrash == nil || s.LastCrash.Reason != "LoadProhibited on core 0" {
		t.Errorf("last crash lost at the reboot: %+v", s.LastCrash)
	}
	if s.ProbeTableFull() {
		t.Error("probe table still full after the reboot")
	}

	// A fetch in the second boot carries boot 2; the first boot's keeps 1.
	for _, in := range []string{
		"@TP1 F seq=24 up=22300 n=1 bytes=430080 ms=2245 kibs=187.0 status=200 via=203.0.113.7:41641 *73875536",
		// A `rst:` line whose ROM banner was lost is a boot too.
		"rst:0x3 (RTC_SW_SYS_RST),boot:0x8 (SPI_FAST_FLASH_BOOT)",
		"@TP1 F seq=24 up=22300 n=1 bytes=430080 ms=2245 kibs=187.0 status=200 via=203.0.113.7:41641 *73875536",
	} {
		var l Line
		ParseLine([]byte(in), &l)
		s.ApplyLine(&l, at, nil)
	}
	type fetch struct{ Boot, N int }
	var got []fetch
	for _, f := range s.Fetches {
		got = append(got, fetch{f.Boot, int(f.N)})
	}
	if diff := cmp.Diff([]fetch{{1, 2}, {2, 1}, {3, 1}}, got); diff != "" {
		t.Errorf("fetches (boot, n) (-want +got):\n%s", diff)
	}
	if s.Boots != 3 || s.LastReset.Code != 0x3 {
		t.Errorf("Boots %d, last reset 0x%x; want 3 and 0x3", s.Boots, s.LastReset.Code)
	}
}

func TestRing(t *testing.T) {
	r := NewRing(3)
	t0 := time.Unix(0, 0)
	for i := range 5 {
		r.Add(t0.Add(time.Duration(i)*time.Second), int64(i))
	}
	var got []int64
	for _, s := range r.Samples() {
		got = append(got, s.Value)
	}
	if diff := cmp.Diff([]int64{2, 3, 4}, got); diff != "" {
		t.Errorf("ring (-want +got):\n%s", diff)
	}
	if last, ok := r.Last(); !ok || last.Value != 4 {
		t.Errorf("Last = %v, %v", last, ok)
	}
	c := r.clone()
	r.Add(t0, 99)
	if l, _ := c.Last(); l.Value != 4 {
		t.Error("clone shares storage with the ring")
	}
}

func TestProbeTableFull(t *testing.T) {
	s := NewState()
	if s.ProbeTableFull() {
		t.Error("unknown table reported full")
	}
	s.ProbesUsed, s.ProbesCap = 64, 64
	if !s.ProbeTableFull() {
		t.Error("64/64 not reported full")
	}
}

func TestPortLinesWithoutTelemetry(t *testing.T) {
	s := NewState()
	for _, in := range []string{
		"I (5170) ts_disco: Pong recv from 203.0.113.5:41641 → peer 3 direct",
		"I (6000) wireguard: [WireGuard] HANDSHAKE_RESPONSE: 2803037f:7",
		"I (6100) ts_netmap: DERP home server: derp7.tailscale.com:443 (region 7)",
	} {
		var l Line
		ParseLine([]byte(in), &l)
		s.ApplyLine(&l, time.Unix(100, 0), nil)
	}
	p := s.Peers[3]
	if p == nil || p.Path.String() != "203.0.113.5:41641" || p.Handshake.String() != "derp:7" {
		t.Errorf("peer 3 = %+v", p)
	}
	if s.HomeDERP != 7 || s.HomeDERPHost != "derp7.tailscale.com" {
		t.Errorf("home DERP = %d %q", s.HomeDERP, s.HomeDERPHost)
	}
}

// TestStateSanitisesDeviceText checks that text the board printed reaches
// the model without escape sequences or control characters.
func TestStateSanitisesDeviceText(t *testing.T) {
	s := NewState()
	for _, in := range []string{
		"rst:0x1 (POWER\x1b]0;evil\x07ON),boot:0x2b (SPI_FAST_FLASH_BOOT)",
		"I (6100) ts_netmap: DERP home server: derp7\x1b[2J.example:443 (region 7)",
		"***ERROR*** A stack overflow in task wi\x1b[31mfi has been detected.",
	} {
		var l Line
		ParseLine([]byte(in), &l)
		s.ApplyLine(&l, time.Unix(100, 0), nil)
	}
	for _, got := range []safetext.Text{s.LastReset.Name, s.HomeDERPHost, s.LastCrash.Reason} {
		if strings.ContainsAny(got.String(), "\x1b\x07") {
			t.Errorf("unsanitised device text %q", got)
		}
	}
}

// TestStateBoardTextIsClean: a board that names itself or crashes with
// escape sequences reaches State as clean safetext.Text. A telemetry frame
// carrying a control byte (checksum and all) is refused whole, so the host
// name stays the last good one; a panic's reason and lines lose their
// escapes and keep their words.
func TestStateBoardTextIsClean(t *testing.T) {
	s := NewState()
	at := time.Unix(100, 0)
	apply := func(in string) {
		t.Helper()
		var l Line
		ParseLine([]byte(in), &l)
		s.ApplyLine(&l, at, nil)
	}
	frame := func(body string) string { return body + " *" + crcOf(body) }
	apply(frame("@TP2 N seq=1 up=1000 ip=100.64.0.9 host=cores3"))
	apply(frame("@TP2 N seq=2 up=2000 host=ev\x1b]0;pwned\x07il"))
	apply(frame("@TP2 R seq=3 up=3000 conn=0 err=ti\x1b[2Jmeout"))
	apply("Guru Meditation Error: Core  0 panic'ed (Load\x1b]0;pwned\x07Prohibited\x1b[2J). Exception was unhandled.")
	apply("Backtrace: 0x400d1000:0x3fc9bd60 \x1b[31m0x400d2000:0x3fc9bd90")
	if s.Hostname != "cores3" || s.CorruptFrames != 2 {
		t.Errorf("host name %q after a frame naming it with escapes, %d corrupt frames; want cores3 and both hostile frames refused", s.Hostname, s.CorruptFrames)
	}
	c := s.LastCrash
	if c == nil {
		t.Fatal("no crash recorded")
	}
	if c.Reason != "LoadProhibited on core 0" {
		t.Errorf("crash reason %q, want LoadProhibited on core 0", c.Reason)
	}
	if len(c.Lines) != 2 || c.Lines[1] != "Backtrace: 0x400d1000:0x3fc9bd60 0x400d2000:0x3fc9bd90" {
		t.Errorf("crash lines %q, want the panic and the backtrace without their escapes", c.Lines)
	}
	for _, got := range append([]safetext.Text{s.Hostname, c.Reason, s.Relay.LastErr}, c.Lines...) {
		if strings.ContainsAny(got.String(), "\x1b\x07") {
			t.Errorf("unsanitised board text %q", got)
		}
	}
}

// peerFrame is a P frame line for peer 2 written at board uptime up (ms)
// with hs=derp:1 and, when hsup ≥ 0, hsup=hsup.
func peerFrame(t *testing.T, up uint32, hsup int64) []byte {
	t.Helper()
	f := telemetry.Frame{Kind: telemetry.KindPeer, Uptime: time.Duration(up) * time.Millisecond}
	f.Peer = telemetry.Peer{ID: 2, Handshake: telemetry.Path{Kind: telemetry.PathDERP, Region: 1}}
	for _, k := range []string{"seq", "up", "peer", "hs"} {
		f.SetHas(k, true)
	}
	if hsup >= 0 {
		f.Peer.HandshakeAt = time.Duration(hsup) * time.Millisecond
		f.SetHas("hsup", true)
	}
	b, err := f.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHandshakeAgeFromFrame: P frames repeat the last handshake every
// period, so its host time must come from the frame (up - hsup), not from
// when the frame arrived.
func TestHandshakeAgeFromFrame(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	type step struct {
		after    time.Duration // host time of the frame, from t0
		up, hsup int64         // hsup -1: absent
		want     time.Duration // HandshakeAt - t0; -1: zero (unknown)
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"repeated handshake keeps its time", []step{
			{0, 34012, 31870, -2142 * time.Millisecond},
			{5 * time.Second, 39012, 31870, -2142 * time.Millisecond},
			{10 * time.Second, 44012, 31870, -2142 * time.Millisecond},
		}},
		{"new handshake moves it", []step{
			{0, 34012, 31870, -2142 * time.Millisecond},
			{5 * time.Second, 39012, 38000, 5*time.Second - 1012*time.Millisecond},
		}},
		{"across the 32-bit uptime wrap", []step{
			{0, 500, 4294967000, -796 * time.Millisecond},
		}},
		{"handshake in the same millisecond", []step{
			{0, 34012, 34012, 0},
		}},
		{"no hsup: unknown, not now", []step{
			{0, 34012, 31870, -2142 * time.Millisecond},
			{5 * time.Second, 39012, -1, -1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			var got, want []time.Duration
			for _, st := range tc.steps {
				var l Line
				ParseLine(peerFrame(t, uint32(st.up), st.hsup), &l)
				s.ApplyLine(&l, t0.Add(st.after), nil)
				p := s.Peers[2]
				if p == nil {
					t.Fatalf("frame %q not applied (corrupt %d)", l.Text, s.CorruptFrames)
				}
				g := time.Duration(-1)
				if !p.HandshakeAt.IsZero() {
					g = p.HandshakeAt.Sub(t0)
				}
				got, want = append(got, g), append(want, st.want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("HandshakeAt - t0 per frame (-want +got):\n%s", diff)
			}
		})
	}
}

// TestELFMismatch: the board's `ELF file SHA256:` (app banner or crash
// trailer) is compared with the --elf file, as tail does.
func TestELFMismatch(t *testing.T) {
	sym, err := crash.OpenELF(filepath.Join(binlogDir, "app.elf")) // any ELF: the SHA is of the file
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		sym      *crash.Symbolizer
		line     string
		mismatch bool
	}{
		{"banner matches", sym, "I (245) app_init: ELF file SHA256:  " + sym.SHA256()[:9] + "...", false},
		{"crash trailer matches", sym, "ELF file SHA256: " + strings.ToUpper(sym.SHA256()[:16]), false},
		{"other firmware", sym, "ELF file SHA256: 0f1e2d3c4b5a6978", true},
		{"no ELF given", nil, "ELF file SHA256: 0f1e2d3c4b5a6978", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			var l Line
			ParseLine([]byte(tc.line), &l)
			s.ApplyLine(&l, time.Unix(100, 0), tc.sym)
			if s.BoardELFSHA == "" || s.ELFMismatch != tc.mismatch {
				t.Errorf("BoardELFSHA %q, ELFMismatch %v; want a SHA and %v", s.BoardELFSHA, s.ELFMismatch, tc.mismatch)
			}
		})
	}
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestStateLastFrameAt: LastFrameAt is the arrival of the newest telemetry
// frame; log lines and corrupt frames leave it, a reboot keeps it.
func TestStateLastFrameAt(t *testing.T) {
	at := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	s := NewState()
	var sp Splitter
	feed := func(text string, now time.Time) {
		sp.Feed([]byte(text), func(l *Line) { s.ApplyLine(l, now, nil) })
	}
	feed("I (10) app: hello\r\n", at)
	if !s.LastFrameAt.IsZero() {
		t.Fatalf("LastFrameAt = %v before any frame", s.LastFrameAt)
	}
	feed("@TP1 D seq=43 up=34012 pu=12 pcap=64 pdrop=0 preap=30 ping=42 pong=1 cmmi=1 cmmo=3 h2rx=48213 h2wu=32768 h2win=49407 *B9A2C5E4\r\n", at.Add(time.Second))
	feed("I (20) app: later\r\n@TP1 D seq=44 up=1 pu=1 *00000000\r\nESP-ROM:esp32s3-20210327\r\n", at.Add(2*time.Second))
	if s.Boots != 1 || s.CorruptFrames != 1 {
		t.Fatalf("Boots %d, CorruptFrames %d: want the ROM banner and the bad frame seen", s.Boots, s.CorruptFrames)
	}
	if want := at.Add(time.Second); !s.LastFrameAt.Equal(want) {
		t.Errorf("LastFrameAt = %v, want %v (the good frame's arrival)", s.LastFrameAt, want)
	}
}

// TestHeapSamplesMatchMin: the heap history the Device pane draws (this
// boot's samples, HeapHistory.Since(BootAt)) and the min beside it come
// from the same measure, so no bar is ever below the board's own minimum
// since boot: over the bundled firmware's scenario, whose port lines carry
// a different heap_free= and which reboots midway (the dip and the other
// boot's bars the Device pane used to show).
func TestHeapSamplesMatchMin(t *testing.T) {
	st := NewState()
	var sp Splitter
	n, checked, boots := 0, 0, 0
	emit := func(l *Line) {
		n++
		st.ApplyLine(l, time.Unix(int64(n), 0), nil)
		if st.Boots != boots {
			boots = st.Boots
			if got := st.HeapHistory.Since(st.BootAt); len(got) != 0 {
				t.Errorf("boot %d starts with %d samples of the boot before", boots, len(got))
			}
		}
		if st.HeapMin == 0 {
			return
		}
		for _, s := range st.HeapHistory.Since(st.BootAt) {
			checked++
			if s.Value < st.HeapMin {
				t.Fatalf("line %d (%q): a sample of %d below the min %d since boot", n, l.Text, s.Value, st.HeapMin)
			}
		}
	}
	sp.Feed(scenarioCapture(t), emit)
	sp.Flush(emit)
	if boots < 2 || checked < 100 {
		t.Errorf("%d boots, %d samples checked: the scenario no longer exercises this", boots, checked)
	}
	// A board without telemetry keeps its port lines' heap_free.
	st = NewState()
	for i, line := range []string{"ESP-ROM:esp32s3-20210327\r\n", "I (4050) ts_derp: connected to region 1 heap_free=201344\r\n", "I (9050) ts_derp: connected to region 7 heap_free=198000\r\n"} {
		var l Line
		ParseLine([]byte(line), &l)
		st.ApplyLine(&l, time.Unix(int64(i), 0), nil)
	}
	if got := st.HeapHistory.Since(st.BootAt); len(got) != 2 || st.HeapFree != 198000 {
		t.Errorf("port-line heap: %d samples, free %d; want 2 and 198000", len(got), st.HeapFree)
	}
}

// scenarioCapture is the bundled firmware's scenario capture
// (firmware/testdata/scenario.log, what the demo replays through
// firmware.ScenarioLines): two boots of the CoreS3 case, as the board
// printed them.
func scenarioCapture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "firmware", "testdata", "scenario.log"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
