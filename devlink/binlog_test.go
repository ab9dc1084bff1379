package devlink

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// binlogSet is one Log V2 binary capture with its ELFs and the text
// ESP-IDF monitor prints for it.
type binlogSet struct {
	capture, want, app, boot string
}

// binlogSets are our own capture (testdata/binlog, always) and ESP-IDF
// monitor's host-test capture (the shared vectors, when present).
var binlogSets = []struct {
	name string
	get  func(t testing.TB) binlogSet
}{
	{"own", func(testing.TB) binlogSet {
		d := binlogDir
		return binlogSet{filepath.Join(d, "capture.bin"), filepath.Join(d, "capture.txt"), filepath.Join(d, "app.elf"), filepath.Join(d, "bootloader.elf")}
	}},
	{"esp-idf-monitor", func(t testing.TB) binlogSet {
		return binlogSet{testdata(t, "binlog"), testdata(t, "binlog_out.txt"), testdata(t, "log.elf"), testdata(t, "bootloader.elf")}
	}},
}

// TestBinLogMatchesMonitor decodes each Log V2 binary capture with its
// ELFs and compares with the text the monitor prints, line by line after
// trimming whitespace and colour (as the monitor's own test does).
func TestBinLogMatchesMonitor(t *testing.T) {
	for _, set := range binlogSets {
		t.Run(set.name, func(t *testing.T) {
			v := set.get(t)
			data, err := os.ReadFile(v.capture)
			if err != nil {
				t.Fatal(err)
			}
			wantText, err := os.ReadFile(v.want)
			if err != nil {
				t.Fatal(err)
			}
			bl, err := LoadBinLog(v.app, v.boot)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var s Splitter
			emit := func(l *Line) {
				if l.Kind != KindBinary {
					got = append(got, strings.TrimSpace(string(l.Text)))
					return
				}
				lines, err := bl.Decode(l.Raw)
				if err != nil {
					t.Errorf("frame %x: %v", l.Raw, err)
					return
				}
				for _, x := range lines {
					got = append(got, strings.TrimSpace(x))
				}
			}
			s.Feed(data, emit)
			s.Flush(emit)
			var want []string
			sc := bufio.NewScanner(bytes.NewReader(wantText))
			for sc.Scan() {
				want = append(want, strings.TrimSpace(sgr.ReplaceAllString(sc.Text(), "")))
			}
			// Blank lines (the ROM's empty line) are not compared.
			drop := func(s []string) []string {
				var o []string
				for _, x := range s {
					if x != "" {
						o = append(o, x)
					}
				}
				return o
			}
			if diff := cmp.Diff(drop(want), drop(got)); diff != "" {
				t.Errorf("decoded binary log (-monitor +ours):\n%s", diff)
			}
		})
	}
}

func TestCFormat(t *testing.T) {
	for _, tc := range []struct {
		f    string
		args []any
		want string
	}{
		{"%d %u %x %X %o", []any{int64(-5), int64(7), int64(255), int64(255), int64(8)}, "-5 7 ff FF 10"},
		{"%5d|%-5d|%05d|%+d|%.3d", []any{int64(42), int64(42), int64(42), int64(42), int64(7)}, "   42|42   |00042|+42|007"},
		{"%#x %#o %p", []any{int64(255), int64(8), int64(0x3ffb3200)}, "0xff 010 0x3ffb3200"},
		{"%f %.2f %e", []any{1.6, -70.2, 1.6}, "1.600000 -70.20 1.600000e+00"},
		{"%s|%10s|%-4s|%.2s|%c", []any{"ab", "ab", "ab", "abc", "A"}, "ab|        ab|ab  |ab|A"},
		{"100%% %d", []any{int64(1)}, "100% 1"},
		{"%d missing", nil, "0 missing"},
	} {
		if got := cFormat(tc.f, tc.args); got != tc.want {
			t.Errorf("cFormat(%q) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func FuzzBinLogDecode(f *testing.F) {
	f.Add([]byte{0x02, 0x0c, 0x10, 0, 0, 0x19, 0x1f, 0, 0, 0x19, 0xc7, 0, 0, 0, 0x1f, 0x26})
	f.Add([]byte{0x01, 0x0c, 0x31, 0xff, 0xe2, 'v', '6'})
	// Our own capture's frames as seeds, decoded with its ELFs.
	bl, err := LoadBinLog(filepath.Join(binlogDir, "app.elf"), filepath.Join(binlogDir, "bootloader.elf"))
	if err != nil {
		f.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(binlogDir, "capture.bin")); err == nil {
		var s Splitter
		emit := func(l *Line) {
			if l.Kind == KindBinary {
				f.Add(bytes.Clone(l.Raw))
			}
		}
		s.Feed(data, emit)
		s.Flush(emit)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		bl.Decode(in) // must not panic
	})
}

func TestSourceDecodesBinaryLog(t *testing.T) {
	for _, tc := range []struct {
		set  int
		want []string // decoded lines, as tag: message
	}{
		{0, []string{"boot: chip revision: v0.2", "tp_net: 198.51.100.7:41641 unreachable (errno -113)", "app_init: Project name:     tp_demo-1.4.0"}},
		{1, []string{"example: Start", "app_init: Project name:     log"}},
	} {
		set := binlogSets[tc.set]
		t.Run(set.name, func(t *testing.T) {
			v := set.get(t)
			f, err := os.Open(v.capture)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			bl, err := LoadBinLog(v.app, v.boot)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			var last Event
			for ev := range (&Source{Replay: f, BinLog: bl, Every: 5 * time.Millisecond}).Run(context.Background()) {
				for _, l := range ev.Lines {
					if l.Kind == KindLog {
						texts = append(texts, string(l.Tag)+": "+string(l.Msg))
					}
				}
				last = ev
			}
			if last.State.BinaryLogFrames != 0 {
				t.Errorf("%d binary frames left undecoded", last.State.BinaryLogFrames)
			}
			for _, w := range tc.want {
				if !slices.Contains(texts, w) {
					t.Errorf("decoded lines lack %q; got %q", w, texts)
				}
			}
		})
	}
}
