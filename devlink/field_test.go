package devlink

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tailpath/tailpath/devlink/crash"
	"github.com/tailpath/tailpath/internal/safetext"
)

// fieldDir is the shared folder of logs users posted publicly
// (../shared/testdata/field/esp, see its README for the right answers).
func fieldFile(t *testing.T, name string) []byte {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "testdata", "field", "esp", name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Skipf("shared field input not present (%v); it lives at ../shared/testdata beside the repository", err)
	}
	return b
}

// replay feeds b through a Splitter into a fresh State and returns the
// state and the parsed lines (cloned).
func replay(b []byte, sym *crash.Symbolizer) (*State, []Line) {
	st := NewState()
	var lines []Line
	var sp Splitter
	emit := func(l *Line) {
		st.ApplyLine(l, time.Unix(0, 0), sym)
		lines = append(lines, l.Clone())
	}
	sp.Feed(b, emit)
	sp.Flush(emit)
	return st, lines
}

// crashView is the comparable summary of a crash.
type crashView struct {
	Reason     safetext.Text
	Core       int
	Arch       string
	PC, RA, SP uint32
	PCInROM    bool
	Ended      bool
	Stack      int
	Lines      int
}

func viewCrash(s *State) crashView {
	c := s.LastCrash
	if c == nil {
		return crashView{}
	}
	v := crashView{Reason: c.Reason, Core: c.Core, Arch: c.Arch, PC: c.PC, Ended: c.Ended, Stack: len(c.Stack), Lines: len(c.Lines)}
	v.RA, _ = crash.RegisterValue(c.Registers, "RA")
	v.SP, _ = crash.RegisterValue(c.Registers, "SP")
	if v.SP == 0 {
		v.SP, _ = crash.RegisterValue(c.Registers, "A1") // Xtensa's stack pointer
	}
	v.PCInROM = crash.InROM(s.Chip, c.PC)
	return v
}

// ownFieldFile reads one of our own inputs of the field reports' kinds
// (testdata/field, see its README).
func ownFieldFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "field", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFieldESPHomeC3PanicGlued is the field report's kind: an ESP32-C3
// under ESPHome crashing at Wi-Fi start, "Guru Meditation Error" glued
// onto an unfinished phy_init line, the dump rows carrying only the time
// prefix, the copy ending after the T3–T6 row. Our own input always, the
// field's when the shared folder is present.
func TestFieldESPHomeC3PanicGlued(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input func(t *testing.T) []byte
		crash crashView
		tags  []string
		cut   string // the glued line's stale text, before the marker
	}{
		{"own", func(t *testing.T) []byte { return ownFieldFile(t, "esphome-c3-glued-cut.log") },
			crashView{Reason: "Illegal instruction on core 0", Core: 0, Arch: "riscv", PC: 0x40001c52, RA: 0x4201a3f4, SP: 0x3fc9e2a0, PCInROM: true, Lines: 10},
			[]string{"wifi_init", "wifi_init", "wifi_init", "phy_init", "phy_init"}, "[21:37:05][D][esp-idf:000]: I (738) phy_init: loa"},
		{"field", func(t *testing.T) []byte { return fieldFile(t, "esphome-c3-panic-glued.log") },
			crashView{Reason: "Illegal instruction on core 0", Core: 0, Arch: "riscv", PC: 0x40001be4, RA: 0x42075ee2, SP: 0x3fca11b0, PCInROM: true, Lines: 10},
			[]string{"wifi_init", "wifi_init", "wifi_init", "wifi_init", "phy_init"}, "[14:04:29][D][esp-idf:000]: I (676) phy_init: ph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, lines := replay(tc.input(t), nil)
			if st.Crashes != 1 {
				t.Fatalf("%d crashes, want 1", st.Crashes)
			}
			if diff := cmp.Diff(tc.crash, viewCrash(st)); diff != "" {
				t.Errorf("crash (-want +got):\n%s", diff)
			}
			if len(st.LastCrash.Registers) != 32 {
				t.Errorf("%d registers, want the 32 of the eight rows that arrived", len(st.LastCrash.Registers))
			}
			if crash.InROM("", tc.crash.RA) {
				t.Errorf("RA 0x%x is flash, not ROM", tc.crash.RA)
			}
			// The inner ESP-IDF lines are level I; the bare time-only
			// lines are empty lines.
			var tags []string
			empty := 0
			for _, l := range lines {
				if l.Wrap&WrapESPHomeTime == 0 {
					t.Errorf("line %q: no ESPHome time prefix recognised", l.Text)
				}
				if l.Level != 0 {
					if l.Level != LevelInfo {
						t.Errorf("line %q: level %v, want I", l.Text, l.Level)
					}
					tags = append(tags, string(l.Tag))
				}
				if len(l.Unwrapped()) == 0 {
					empty++
					if l.Kind != KindPlain || len(l.Body()) != 0 {
						t.Errorf("time-only line %q: kind %v body %q, want an empty plain line", l.Text, l.Kind, l.Body())
					}
				}
			}
			if !cmp.Equal(tags, tc.tags) {
				t.Errorf("tags %q, want %q", tags, tc.tags)
			}
			if empty != 5 {
				t.Errorf("%d empty lines, want 5", empty)
			}
			glued := lines[8]
			if glued.Kind != KindPanic || glued.Tag == nil || string(glued.Tag) != "phy_init" ||
				!strings.HasPrefix(string(glued.Unwrapped()), "Guru Meditation Error:") || string(glued.Text[:glued.Cut]) != tc.cut {
				t.Errorf("glued line: kind %v tag %q cut %q", glued.Kind, glued.Tag, glued.Text[:glued.Cut])
			}
		})
	}
}

// TestFieldWrappedRegisters is the field report's kind: a serial monitor
// wrapped an Xtensa register dump between a register's name and its value
// (`… A1   ` then `   : 0x3ffce570`), which lost A1 (the stack pointer),
// A5, A9 and A13. Every register comes through, in the order printed. Our
// own input (a wrap after the third name, the value line carrying more
// pairs) always; the field's when the shared folder is present.
func TestFieldWrappedRegisters(t *testing.T) {
	xtensaOrder := []string{"PC", "PS", "A0", "A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9", "A10", "A11", "A12", "A13", "A14", "A15",
		"SAR", "EXCCAUSE", "EXCVADDR", "LBEG", "LEND", "LCOUNT"}
	for _, tc := range []struct {
		name     string
		input    func(t *testing.T) []byte
		crash    crashView
		excvaddr uint32
		frames   int
		regs     map[string]uint32 // the ones the wrap used to lose
	}{
		{"own", func(t *testing.T) []byte { return ownFieldFile(t, "xtensa-arduino-wrapped.log") },
			crashView{Reason: "StoreProhibited on core 1", Core: 1, Arch: "xtensa", PC: 0x400d8a31, SP: 0x3ffb2f40, Ended: true, Lines: 23},
			0x00000008, 6, map[string]uint32{"A0": 0x800d8c6e, "A4": 0x00000008, "A8": 0x800d8a2c, "A12": 0x3ffb2fa0, "SAR": 0x0000000a, "LEND": 0x4000c2f6}},
		{"field", func(t *testing.T) []byte { return fieldFile(t, "wireguard-arduino-loadprohibited-wrapped.log") },
			crashView{Reason: "LoadProhibited on core 0", Core: 0, Arch: "xtensa", PC: 0x40157cf1, SP: 0x3ffce570, Lines: 18},
			0x00000014, 7, map[string]uint32{"A1": 0x3ffce570, "A5": 0x00000000, "A9": 0x3ffbfa20, "A13": 0x00000001}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := replay(tc.input(t), nil)
			if st.Crashes != 1 {
				t.Fatalf("%d crashes, want 1", st.Crashes)
			}
			if diff := cmp.Diff(tc.crash, viewCrash(st)); diff != "" {
				t.Errorf("crash (-want +got):\n%s", diff)
			}
			c := st.LastCrash
			var order []string
			for _, r := range c.Registers {
				order = append(order, r.Name)
			}
			if diff := cmp.Diff(xtensaOrder, order); diff != "" {
				t.Errorf("registers (-want +got):\n%s", diff)
			}
			for name, want := range tc.regs {
				if v, ok := crash.RegisterValue(c.Registers, name); !ok || v != want {
					t.Errorf("%s = 0x%08x (%v), want 0x%08x", name, v, ok, want)
				}
			}
			if v, _ := crash.RegisterValue(c.Registers, "EXCVADDR"); v != tc.excvaddr {
				t.Errorf("EXCVADDR 0x%08x, want 0x%08x", v, tc.excvaddr)
			}
			if len(c.Backtrace.Frames) != tc.frames {
				t.Errorf("%d backtrace frames, want %d", len(c.Backtrace.Frames), tc.frames)
			}
		})
	}
}

// TestRegisterWrapEdges: what a wrap continues and what it does not.
func TestRegisterWrapEdges(t *testing.T) {
	for _, tc := range []struct {
		rows []string
		want []crash.Register
	}{
		// The value on the next line, and more pairs after it.
		{[]string{"PC      : 0x400d8a31  A0      ", "   : 0x800d8c6e  A1      : 0x3ffb2f40"},
			[]crash.Register{{Name: "PC", Value: 0x400d8a31}, {Name: "A0", Value: 0x800d8c6e}, {Name: "A1", Value: 0x3ffb2f40}}},
		// A line between the row and the value: no continuation.
		{[]string{"PC      : 0x400d8a31  A0      ", "I (1) app: hello", "   : 0x800d8c6e"},
			[]crash.Register{{Name: "PC", Value: 0x400d8a31}}},
		// A row that ends in a value: a stray value line adds nothing.
		{[]string{"PC      : 0x400d8a31  A0      : 0x800d8c6e  ", "   : 0x3ffb2f40"},
			[]crash.Register{{Name: "PC", Value: 0x400d8a31}, {Name: "A0", Value: 0x800d8c6e}}},
		// A trailing word that is no register name is not one.
		{[]string{"PC      : 0x400d8a31  hello   ", "   : 0x3ffb2f40"},
			[]crash.Register{{Name: "PC", Value: 0x400d8a31}}},
	} {
		in := "Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\r\nCore  0 register dump:\r\n" +
			strings.Join(tc.rows, "\r\n") + "\r\n"
		st, _ := replay([]byte(in), nil)
		if diff := cmp.Diff(tc.want, st.LastCrash.Registers); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.rows, diff)
		}
	}
}

// TestCrashKinds covers the kind: other RISC-V chips (C3 twice with the
// marker's first letter lost, C6, H2, P4), an Xtensa S3, and each wrapper
// (ESPHome, Arduino behind PlatformIO's time filter, idf.py monitor's
// --timestamps, none), whole and truncated dumps, a CR inside the marker.
func TestCrashKinds(t *testing.T) {
	for _, tc := range []struct {
		file    string
		crashes int
		chip    string
		want    crashView
		wrap    Wrap
	}{
		{"esphome-c3-panic-twice.log", 2, "esp32c3",
			crashView{Reason: "Illegal instruction on core 0", Core: 0, Arch: "riscv", PC: 0x40001be4, RA: 0x42075ee2, SP: 0x3fca11b0, PCInROM: true, Lines: 3},
			WrapESPHomeTime | WrapESPHome},
		{"platformio-c6-arduino-load-fault.log", 1, "",
			crashView{Reason: "Load access fault on core 0", Core: 0, Arch: "riscv", PC: 0x42008a2e, RA: 0x420089f0, SP: 0x4080f1c0, Ended: true, Stack: 12, Lines: 12},
			WrapPlatformIOTime | WrapArduino},
		{"monitor-h2-truncated.log", 1, "",
			crashView{Reason: "Store access fault on core 0", Core: 0, Arch: "riscv", PC: 0x4200c6b4, RA: 0x4200c690, SP: 0x40816d30, Lines: 3},
			WrapMonitorTime},
		{"plain-p4-cr-in-marker.log", 1, "esp32p4",
			crashView{Reason: "Instruction access fault on core 1", Core: 1, Arch: "riscv", PC: 0x4fc0a1b2, RA: 0x40012f3e, SP: 0x4ff2c8a0, PCInROM: true, Lines: 3},
			0},
		{"esphome-s3-panic-glued.log", 1, "",
			crashView{Reason: "LoadProhibited on core 1", Core: 1, Arch: "xtensa", PC: 0x4201f3a6, SP: 0x3fcebc10, Ended: true, Lines: 7},
			WrapESPHomeTime | WrapESPHome},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "crash", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			st, lines := replay(b, nil)
			if st.Crashes != tc.crashes {
				t.Errorf("%d crashes, want %d", st.Crashes, tc.crashes)
			}
			if st.Chip != tc.chip {
				t.Errorf("chip %q, want %q", st.Chip, tc.chip)
			}
			if diff := cmp.Diff(tc.want, viewCrash(st)); diff != "" {
				t.Errorf("last crash (-want +got):\n%s", diff)
			}
			var seen Wrap
			for _, l := range lines {
				seen |= l.Wrap
			}
			if seen != tc.wrap {
				t.Errorf("wrappers %v, want %v", seen, tc.wrap)
			}
		})
	}
}

// TestCrashMarkerDamage checks each way a marker arrives damaged.
func TestCrashMarkerDamage(t *testing.T) {
	for _, tc := range []struct {
		in     string
		kind   Kind
		cut    string // the stale text before the marker
		reason string
		core   int
	}{
		{"Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.", KindPanic, "", "LoadProhibited", 0},
		{"uru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.", KindPanic, "", "LoadProhibited", 0},
		{"tion Error: Core  1 panic'ed (IntegerDivideByZero). Exception was unhandled.", KindPanic, "", "IntegerDivideByZero", 1},
		{"ore  0 panic'ed (Illegal instruction). Exception was unhandled.", KindPanic, "", "Illegal instruction", 0},
		{"I (676) phy_init: phGuru Meditation Error: Core  0 panic'ed (Illegal instruction). Exception was unhandled.", KindPanic, "I (676) phy_init: ph", "Illegal instruction", 0},
		{"\x1b[0;32mI (5) wifi: x\x1b[0mGuru Meditation Error: Core  0 panic'ed (Cache disabled but cached memory region accessed).", KindPanic, "\x1b[0;32mI (5) wifi: x\x1b[0m", "Cache disabled but cached memory region accessed", 0},
		{"Guru Medi\rtation Error: Core  0 panic'ed (Load access fault).", KindPanic, "", "Load access fault", 0},
		{"Guru Meditation Error: Core  0 pan\ric'ed (Load access fault).", KindPanic, "", "Load access fault", 0},
		{"waiting...\rGuru Meditation Error: Core  0 panic'ed (Breakpoint).", KindPanic, "waiting...\r", "Breakpoint", 0},
		{"Guru Meditation Error of type LoadProhibited occurred on core  0. Exception was unhandled.", KindPanic, "", "LoadProhibited", 0},
		{"half a lineabort() was called at PC 0x42008d3a on core 0", KindAbort, "half a line", "", -1},
		{"bort() was called at PC 0x42008d3a on core 0", KindAbort, "", "", -1},
		{"xx***ERROR*** A stack overflow in task wifi has been detected.", KindStackOverflow, "xx", "", -1},
		{"I (9) app: doneacktrace: 0x400d6b5b:0x3fc9bd60", KindBacktrace, "I (9) app: done", "", -1},
		{"I (9) app: backtrace: disabled in menuconfig", KindLog, "", "", -1},
		{"I (9) app: Meditation is good for you", KindLog, "", "", -1},
	} {
		var l Line
		ParseLine([]byte(tc.in), &l)
		if l.Kind != tc.kind || string(l.Text[:l.Cut]) != tc.cut {
			t.Errorf("%q: kind %v cut %q, want %v cut %q", tc.in, l.Kind, l.Text[:l.Cut], tc.kind, tc.cut)
			continue
		}
		if tc.kind == KindPanic {
			p, err := crash.ParsePanic(l.Body())
			if err != nil || p.Reason != tc.reason || p.Core != tc.core {
				t.Errorf("%q: panic %+v, %v; want reason %q core %d", tc.in, p, err, tc.reason, tc.core)
			}
		}
	}
}

// TestWrappers covers each wrapper's shapes and what stays unwrapped.
func TestWrappers(t *testing.T) {
	type view struct {
		Wrap               Wrap
		Inner              string
		Level              Level
		Tag, Msg, HostTime string
		Time               TimeForm
		Uptime             time.Duration
		Kind               Kind
	}
	for _, tc := range []struct {
		in   string
		want view
	}{
		{"[14:04:29][D][esp-idf:000]: I (645) wifi_init: tcp rx win: 5744",
			view{WrapESPHomeTime | WrapESPHome, "I (645) wifi_init: tcp rx win: 5744", 'I', "wifi_init", "tcp rx win: 5744", "14:04:29", TimeUptime, 645 * time.Millisecond, KindLog}},
		{"[14:04:29]", view{Wrap: WrapESPHomeTime, HostTime: "14:04:29"}},
		{"[14:04:29.118][I][wifi:617]: WiFi Connected!",
			view{WrapESPHomeTime | WrapESPHome, "WiFi Connected!", 'I', "wifi", "WiFi Connected!", "14:04:29.118", TimeNone, 0, KindLog}},
		{"[C][logger:185]: Logger:", view{WrapESPHome, "Logger:", 'I', "logger", "Logger:", "", TimeNone, 0, KindLog}},
		{"[VV][api.service:042]: send", view{WrapESPHome, "send", 'V', "api.service", "send", "", TimeNone, 0, KindLog}},
		{"\x1b[0;33m[W][ml_derp:318]: DERP status: connected=0\x1b[0m",
			view{WrapESPHome, "DERP status: connected=0\x1b[0m", 'W', "ml_derp", "DERP status: connected=0", "", TimeNone, 0, KindLog}},
		{"[  1736][E][WiFiClient.cpp:268] connect(): socket error on fd 48",
			view{WrapArduino, "connect(): socket error on fd 48", 'E', "WiFiClient.cpp", "connect(): socket error on fd 48", "", TimeUptime, 1736 * time.Millisecond, KindLog}},
		{"[E][WiFiGeneric.cpp:739] _eventCallback(): Reason: 201", view{WrapArduino, "_eventCallback(): Reason: 201", 'E', "WiFiGeneric.cpp", "_eventCallback(): Reason: 201", "", TimeNone, 0, KindLog}},
		{"10:41:07.118 > W (3001) app: retrying", view{WrapPlatformIOTime, "W (3001) app: retrying", 'W', "app", "retrying", "10:41:07.118", TimeUptime, 3001 * time.Millisecond, KindLog}},
		{"2024-06-19 10:12:51 hello", view{WrapMonitorTime, "hello", 0, "", "", "2024-06-19 10:12:51", TimeNone, 0, KindPlain}},
		{"2024-06-19 10:12:51.035 E (1) x: y", view{WrapMonitorTime, "E (1) x: y", 'E', "x", "y", "2024-06-19 10:12:51.035", TimeUptime, time.Millisecond, KindLog}},
		// Not wrappers: ESP-IDF lines, hexdumps, stack rows, brackets in prose.
		{"0x3ffb5bc0   54 68 65 20 77 61 79 20  74 6f 20 67 65 74 20 73  |The way to get s|", view{Inner: "0x3ffb5bc0   54 68 65 20 77 61 79 20  74 6f 20 67 65 74 20 73  |The way to get s|", Kind: KindHexdump}},
		{"3fc8cdec: 0xa5a5a5a5 0x42012ea6", view{Inner: "3fc8cdec: 0xa5a5a5a5 0x42012ea6", Kind: KindStackDump}},
		{"[WireGuard] HANDSHAKE_RESPONSE: 2803037f:1", view{Inner: "[WireGuard] HANDSHAKE_RESPONSE: 2803037f:1"}},
		{"[1][2][3]: no", view{Inner: "[1][2][3]: no"}},
		{"12:00:00 noon", view{Inner: "12:00:00 noon"}},
	} {
		var l Line
		ParseLine([]byte(tc.in), &l)
		got := view{l.Wrap, string(l.Text[l.Inner:]), l.Level, string(l.Tag), string(l.Msg), string(l.HostTime), l.TimeForm, l.Uptime, l.Kind}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestFieldMicrolinkDERPDown is the field report's kind: one microlink
// status line saying the board's DERP relay is down, plain and coloured.
// The counters show it was up earlier in this boot. Our own lines always,
// the field's when the shared folder is present.
func TestFieldMicrolinkDERPDown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		input  func(t *testing.T) []byte
		rx, tx int64
		loops  string
	}{
		{"own", func(t *testing.T) []byte { return ownFieldFile(t, "microlink-relay-down.log") }, 1288, 5120, "loops=402117"},
		{"own-color", func(t *testing.T) []byte { return ownFieldFile(t, "microlink-relay-down-color.log") }, 1288, 5120, "loops=402117"},
		{"field", func(t *testing.T) []byte { return fieldFile(t, "microlink-derp-down.log") }, 74096, 245596, "loops=1164446"},
		{"field-color", func(t *testing.T) []byte { return fieldFile(t, "microlink-derp-down-color.log") }, 74096, 245596, "loops=1164446"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, lines := replay(tc.input(t), nil)
			if len(lines) != 1 || lines[0].Level != LevelWarn || string(lines[0].Tag) != "ml_derp" {
				t.Fatalf("lines %+v, want one W ml_derp line", lines)
			}
			f, ok := ParsePortLine(&lines[0])
			want := PortFact{Kind: FactRelayStatus, Peer: -1, HeapFree: -1, Connected: 0, RelayRx: tc.rx, RelayTx: tc.tx}
			if diff := cmp.Diff(want, f, cmpopts.EquateComparable(netip.AddrPort{}, netip.Addr{})); !ok || diff != "" {
				t.Errorf("fact (-want +got):\n%s", diff)
			}
			r := st.Relay
			if !r.Known || r.Connected || !r.WasUp || r.RxFrames != tc.rx || r.TxFrames != tc.tx || r.Source != "microlink" {
				t.Errorf("relay %+v, want known, down, up earlier this boot, counters kept", r)
			}
			if !strings.Contains(string(lines[0].Msg), tc.loops) {
				t.Errorf("msg %q", lines[0].Msg)
			}
		})
	}
}

// TestStateRelayFromScenario follows the bundled firmware's scenario
// capture through its DERP relay outage (boot 2): R frames say connected,
// then connected but silent, then down with reconnect attempts, then
// connected again.
func TestStateRelayFromScenario(t *testing.T) {
	st := NewState()
	var sp Splitter
	var seen []string
	emit := func(l *Line) {
		st.ApplyLine(l, time.Unix(0, 0), nil)
		if l.Kind != KindTelemetry || !strings.HasPrefix(string(l.Text), "@TP2 R ") {
			return
		}
		r := st.Relay
		state := "up"
		switch {
		case !r.Connected:
			state = fmt.Sprintf("down att=%d drop=%d err=%s", r.Attempts, r.Drops, r.LastErr)
		case r.RxAge > 75*time.Second:
			state = "silent"
		}
		if len(seen) == 0 || seen[len(seen)-1] != state {
			seen = append(seen, state)
		}
	}
	sp.Feed(scenarioCapture(t), emit)
	sp.Flush(emit)
	want := []string{"up", "silent", "down att=1 drop=1 err=timeout", "down att=2 drop=1 err=timeout", "up"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("relay states (-want +got):\n%s", diff)
	}
	if r := st.Relay; !r.Known || !r.Connected || !r.WasUp || r.Source != "telemetry" {
		t.Errorf("final relay %+v", r)
	}
}

// TestCrashNullAccessAndDecodedInLog: a load or store fault near address
// 0 is named a NULL-pointer access, with its register; a report whose log
// already holds decoded frames says so (the Device pane then asks for no
// --elf).
func TestCrashNullAccessAndDecodedInLog(t *testing.T) {
	const farLoad = "Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\r\n" +
		"Core  0 register dump:\r\n" +
		"PC      : 0x400d1234  PS      : 0x00060530  A0      : 0x800d1234  A1      : 0x3ffb1230  \r\n" +
		"EXCVADDR: 0x3ffb0000  LBEG    : 0x4000c2e0  LEND    : 0x4000c2f6  LCOUNT  : 0xffffffff  \r\n" +
		"EXCCAUSE: 0x0000001c  \r\n" +
		"Backtrace: 0x400d1234:0x3ffb1230\r\n" +
		"--- 0x400d1234: app_main at /src/main/main.c:10\r\n" +
		"Rebooting...\r\n"
	for _, tc := range []struct {
		name    string
		input   []byte
		reg     string // "" no NULL access
		addr    uint32
		access  string
		decoded bool
	}{
		{"xtensa store at 8, #N frames decoded", ownFieldFile(t, "xtensa-arduino-wrapped.log"), "EXCVADDR", 8, "write", true},
		{"riscv load access fault at 0x10", readCrash(t, "platformio-c6-arduino-load-fault.log"), "MTVAL", 0x10, "read", false},
		{"riscv illegal instruction", ownFieldFile(t, "esphome-c3-glued-cut.log"), "", 0, "", false},
		{"xtensa load far from 0, monitor-decoded", []byte(farLoad), "", 0, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := replay(tc.input, nil)
			c := st.LastCrash
			if c == nil {
				t.Fatal("no crash")
			}
			reg, addr, access, ok := c.NullAccess()
			if ok != (tc.reg != "") || reg != tc.reg || addr != tc.addr || access != tc.access {
				t.Errorf("NullAccess = %q 0x%x %q %v, want %q 0x%x %q", reg, addr, access, ok, tc.reg, tc.addr, tc.access)
			}
			if got := c.DecodedInLog(); got != tc.decoded {
				t.Errorf("DecodedInLog = %v, want %v; lines:\n%s", got, tc.decoded, joinText(c.Lines))
			}
		})
	}
}

func readCrash(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "crash", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func joinText(ts []safetext.Text) string {
	var b strings.Builder
	for _, s := range ts {
		b.WriteString(s.String() + "\n")
	}
	return b.String()
}
