package devlink

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/devlink/crash"
)

// FuzzParseLine checks the line parser never panics, keeps Raw intact, and
// only returns slices that lie inside the input.
func FuzzParseLine(f *testing.F) {
	// Every line of our own field-kind inputs (testdata/field).
	files, _ := filepath.Glob(filepath.Join("testdata", "field", "*.log"))
	for _, name := range files {
		b, _ := os.ReadFile(name)
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			f.Add(l)
		}
	}
	for _, tc := range lineCases {
		f.Add([]byte(tc.in))
	}
	f.Add([]byte("I (99999999999999999999) x: y"))
	f.Add([]byte("\x1b[0;3"))
	f.Add([]byte("E (24-13-40 99:99:99.999) t: m"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var l Line
		ParseLine(in, &l)
		if !bytes.Equal(l.Raw, in) {
			t.Fatalf("Raw changed")
		}
		for _, s := range [][]byte{l.Text, l.Tag, l.Msg, l.TimeText, l.Body()} {
			if len(s) > len(in) {
				t.Fatalf("slice longer than input")
			}
		}
		if l.Cut < 0 || l.Cut > len(l.Text) {
			t.Fatalf("Cut %d out of range", l.Cut)
		}
		c := l.Clone()
		if !bytes.Equal(c.Msg, l.Msg) || !bytes.Equal(c.Tag, l.Tag) {
			t.Fatalf("Clone differs")
		}
		_ = PCs(&l)
		ParsePortLine(&l)
		f, _ := ParseFilter("wifi:W *:I")
		f.Match(&l)
	})
}

// FuzzParseBacktrace checks the crash-line parsers never panic and that a
// parsed backtrace's frames round-trip through their text form.
func FuzzParseBacktrace(f *testing.F) {
	f.Add([]byte("Backtrace: 0x400d6b5b:0x3fc9bd60 0x400d6c27:0x3fc9bd90 |<-CORRUPTED"))
	f.Add([]byte("Backtrace:0x40081a2b:0x3ffb5a10 |<-CONTINUES"))
	f.Add([]byte("Backtrace: 0x:0x 0x1"))
	f.Add([]byte("abort() was called at PC 0x40081a2b on core 0"))
	f.Add([]byte("rst:0x15 (USB_UART_CHIP_RESET),boot:0x28 (SPI_FAST_FLASH_BOOT)"))
	f.Add([]byte("Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled."))
	f.Fuzz(func(t *testing.T, in []byte) {
		bt, err := crash.ParseBacktrace(in)
		if err == nil {
			var b bytes.Buffer
			b.WriteString("Backtrace:")
			for _, fr := range bt.Frames {
				b.WriteString(" 0x" + hex32(fr.PC) + ":0x" + hex32(fr.SP))
			}
			bt2, err := crash.ParseBacktrace(b.Bytes())
			if err != nil || len(bt2.Frames) != len(bt.Frames) {
				t.Fatalf("round trip of %q failed: %v", b.Bytes(), err)
			}
			for i := range bt.Frames {
				if bt.Frames[i] != bt2.Frames[i] {
					t.Fatalf("frame %d changed in round trip", i)
				}
			}
		}
		crash.ParseAbortPC(in)
		crash.ParseReset(in)
		crash.ParsePanic(in)
		crash.ParseRegisterPC(in)
		crash.ParseELFSHA(in)
		ParseReversedEndpoint(in)
	})
}

// FuzzSplitter checks that splitting never loses or invents bytes, however
// the stream is chunked.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("I (1) a: b\r\nplain\n\x01\x0c\x31partial"), 3)
	f.Add([]byte("\x02\x00\x10aaaaaaaaaaaaaaaaaaaa\n"), 1)
	f.Add([]byte("\x1b[5nesp> help\r\n\x1b[5"), 1)
	f.Add([]byte("I (1) a: b\x1b[5n\n\x1b[5\x1b[5nx"), 2)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		var s Splitter
		var out []byte
		var lines [][]byte
		var mon Monitor
		var monOut []byte
		mon.NoAutoColor = true
		emit := func(l *Line) {
			out = append(out, l.Raw...)
			lines = append(lines, bytes.Clone(l.Raw))
			if mon.Shows(l) {
				monOut = mon.Append(monOut, l)
			}
		}
		for i := 0; i < len(in); i += chunk {
			s.Feed(in[i:min(i+chunk, len(in))], emit)
		}
		s.Flush(emit)
		if !bytes.Equal(out, in) {
			t.Fatalf("split output %q != input %q", out, in)
		}
		if !bytes.Equal(monOut, in) {
			t.Fatalf("monitor output without auto-colour %q != input %q", monOut, in)
		}
		// Without frame-start bytes or a status query, lines are exactly
		// the "\n"-terminated pieces.
		if !bytes.ContainsAny(in, "\x01\x02\x1b") && len(in) < maxLine {
			want := bytes.SplitAfter(in, []byte("\n"))
			if len(want[len(want)-1]) == 0 {
				want = want[:len(want)-1]
			}
			if len(want) != len(lines) {
				t.Fatalf("%d lines, want %d", len(lines), len(want))
			}
			for i := range want {
				if !bytes.Equal(want[i], lines[i]) {
					t.Fatalf("line %d = %q, want %q", i, lines[i], want[i])
				}
			}
		}
	})
}

// FuzzParseFilter checks filter expressions (typed by a person or passed on
// the command line) never panic, and an accepted filter can match any line.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"", "*:V", "*:N", "hello_world", "wifi:W *:I", ":E", "a:b:c", "wifi:x", "  tag:v  *:e "} {
		f.Add(s, "W (1) wifi: low")
	}
	f.Fuzz(func(t *testing.T, expr, line string) {
		flt, err := ParseFilter(expr)
		if err != nil {
			return
		}
		var l Line
		ParseLine([]byte(line), &l)
		flt.Match(&l)
		_ = flt.ShowsAll()
	})
}

// wrapPrefixes are host time prefixes a line can arrive behind.
var wrapPrefixes = []string{"[14:04:29]", "[14:04:29.118]", "10:41:07.118 > ", "2024-06-19 10:12:51 ", "2024-06-19 10:12:51.035 "}

// FuzzWrappers checks the wrapper stripping: it never panics, its offsets
// stay inside the line, and a host time prefix changes nothing about what
// the line inside it is (kind, level, tag, message, time). An ESPHome
// logger wrapper around a timestamped ESP-IDF line gives that line's
// level, tag and message.
func FuzzWrappers(f *testing.F) {
	for _, tc := range lineCases {
		f.Add(strings.TrimRight(tc.in, "\r\n"), uint8(0))
	}
	for _, s := range []string{
		"[D][esp-idf:000]: I (676) phy_init: phGuru Meditation Error: Core  0 panic'ed (Illegal instruction).",
		"[  1736][E][WiFiClient.cpp:268] connect(): socket error", "[E][a.cpp:1] f(): x", "[VV][api:1]: y",
		"\x1b[0;33m[W][ml_derp:318]: DERP status: connected=0\x1b[0m", "MEPC    : 0x40001be4  RA      : 0x42075ee2  ",
		"3fca11b0: 0x00000000 0x3fc94d58 0x42075f1a", "uru Meditation Error: Core  0 panic'ed (Illegal instruction)",
		"[", "[1", "[14:04:29", "10:41:07.118 >", "2024-06-19 10:12:5", "[I][", "[  12][",
	} {
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, inner string, which uint8) {
		if strings.ContainsAny(inner, "\n") {
			return
		}
		var in Line
		ParseLine([]byte(inner), &in)
		if in.Inner < 0 || in.Inner > len(in.Text) || in.Cut < 0 || in.Cut > len(in.Text) || (in.Cut > 0 && in.Cut < in.Inner) {
			t.Fatalf("%q: Inner %d Cut %d of %d", inner, in.Inner, in.Cut, len(in.Text))
		}
		for _, s := range [][]byte{in.Tag, in.Msg, in.HostTime, in.TimeText, in.Body(), in.Unwrapped()} {
			if len(s) > len(in.Text) {
				t.Fatalf("%q: a slice longer than the line", inner)
			}
		}
		if in.Wrap&(WrapESPHomeTime|WrapPlatformIOTime|WrapMonitorTime) != 0 {
			return // already behind a host prefix: a second one is not stripped
		}
		prefix := wrapPrefixes[int(which)%len(wrapPrefixes)]
		var w Line
		ParseLine([]byte(prefix+inner), &w)
		if w.Inner < len(prefix) || string(w.HostTime) == "" {
			t.Fatalf("%q: prefix %q not stripped (Inner %d)", inner, prefix, w.Inner)
		}
		type view struct {
			Kind       Kind
			Level      Level
			Tag, Msg   string
			Time       TimeForm
			Up         time.Duration
			Cut, Inner int
		}
		rel := func(l *Line, off int) view {
			cut := 0
			if l.Cut > 0 {
				cut = l.Cut - off
			}
			return view{l.Kind, l.Level, string(l.Tag), string(l.Msg), l.TimeForm, l.Uptime, cut, l.Inner - off}
		}
		if a, b := rel(&in, 0), rel(&w, len(prefix)); a != b {
			t.Fatalf("prefix %q changed the line %q:\n%+v\n%+v", prefix, inner, a, b)
		}
		// ESPHome forwarding an ESP-IDF line.
		if in.Kind == KindLog && in.TimeForm != TimeNone && in.Wrap == 0 && len(in.Tag) > 0 {
			var e Line
			ParseLine([]byte("[D][esp-idf:000]: "+inner), &e)
			if e.Level != in.Level || string(e.Tag) != string(in.Tag) || string(e.Msg) != string(in.Msg) || e.Wrap != WrapESPHome {
				t.Fatalf("ESPHome around %q: %v %q %q %v", inner, e.Level, e.Tag, e.Msg, e.Wrap)
			}
		}
	})
}

// FuzzRISCVDump checks the RISC-V dump parsers on any bytes (register rows,
// stack rows, panic lines): no panic, stack rows round-trip through their
// text form, register names are names, and a State fed a crash with the
// fuzzed rows keeps its bounds.
func FuzzRISCVDump(f *testing.F) {
	for _, s := range []string{
		"MEPC    : 0x40001be4  RA      : 0x42075ee2  SP      : 0x3fca11b0  GP      : 0x3fc8e600  ",
		"S0/FP   : 0x3fc94d58  S1      : 0x00000002  A0      : 0x3fc8f078  A1      : 0x40382bb2",
		"MSTATUS : 0x00001881  MTVEC   : 0x40380001  MCAUSE  : 0x00000002  MTVAL   : 0x0000",
		"3fc8cd5c: 0xa5a5a5a5 0x3fc8ce34 0x3fc8cdbc 0x403870ce 0x00000001 0x00000004 0x3fc8aaf4 0x3fc893b0",
		"3fc8cd5c: 0xa5a5a5a5 0x3fc8", "Stack memory:", "Core  0 register dump:",
		"ore  0 panic'ed (Illegal instruction). Exception was unhandled.", "RA      : 0xffffffffff",
		": 0x1 : 0x2", "ABCDEFGHIJK: 0x1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b := []byte(in)
		for _, r := range crash.ParseRegisters(b, nil) {
			if r.Name == "" || len(r.Name) > 10 || strings.ContainsAny(r.Name, " :") {
				t.Fatalf("%q: register name %q", in, r.Name)
			}
		}
		crash.ParseRegisterPC(b)
		crash.ParseRegisterRA(b)
		crash.ParsePanic(b)
		findCrash(b)
		if addr, words, ok := crash.ParseStackRow(b, nil); ok {
			var sb strings.Builder
			fmt.Fprintf(&sb, "%08x:", addr)
			for _, w := range words {
				fmt.Fprintf(&sb, " 0x%08x", w)
			}
			a2, w2, ok2 := crash.ParseStackRow([]byte(sb.String()), nil)
			if !ok2 || a2 != addr || !slices.Equal(w2, words) {
				t.Fatalf("stack row %q did not round-trip via %q", in, sb.String())
			}
		}
		st := NewState()
		var l Line
		for _, s := range []string{"Guru Meditation Error: Core  0 panic'ed (Illegal instruction).", "Core  0 register dump:", in, "Stack memory:", in, in} {
			ParseLine([]byte(s), &l)
			st.ApplyLine(&l, time.Time{}, nil)
		}
		if c := st.LastCrash; c == nil || len(c.Stack) > MaxStackWords || len(c.Registers) > 64+32 || len(c.Lines) > 64 {
			t.Fatalf("%q: crash out of bounds: %+v", in, c)
		}
	})
}
