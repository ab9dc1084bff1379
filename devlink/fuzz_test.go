package devlink

import (
	"bytes"
	"testing"
)

// FuzzParseLine checks the line parser never panics, keeps Raw intact, and
// only returns slices that lie inside the input.
func FuzzParseLine(f *testing.F) {
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
		bt, err := ParseBacktrace(in)
		if err == nil {
			var b bytes.Buffer
			b.WriteString("Backtrace:")
			for _, fr := range bt.Frames {
				b.WriteString(" 0x" + hex32(fr.PC) + ":0x" + hex32(fr.SP))
			}
			bt2, err := ParseBacktrace(b.Bytes())
			if err != nil || len(bt2.Frames) != len(bt.Frames) {
				t.Fatalf("round trip of %q failed: %v", b.Bytes(), err)
			}
			for i := range bt.Frames {
				if bt.Frames[i] != bt2.Frames[i] {
					t.Fatalf("frame %d changed in round trip", i)
				}
			}
		}
		ParseAbortPC(in)
		ParseReset(in)
		ParsePanic(in)
		ParseRegisterPC(in)
		ParseELFSHA(in)
		ParseReversedEndpoint(in)
	})
}

// FuzzSplitter checks that splitting never loses or invents bytes, however
// the stream is chunked.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("I (1) a: b\r\nplain\n\x01\x0c\x31partial"), 3)
	f.Add([]byte("\x02\x00\x10aaaaaaaaaaaaaaaaaaaa\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		var s Splitter
		var out []byte
		var lines [][]byte
		emit := func(l *Line) {
			out = append(out, l.Raw...)
			lines = append(lines, bytes.Clone(l.Raw))
		}
		for i := 0; i < len(in); i += chunk {
			s.Feed(in[i:min(i+chunk, len(in))], emit)
		}
		s.Flush(emit)
		if !bytes.Equal(out, in) {
			t.Fatalf("split output %q != input %q", out, in)
		}
		// Without frame-start bytes, lines are exactly the "\n"-terminated pieces.
		if !bytes.ContainsAny(in, "\x01\x02") && len(in) < maxLine {
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
