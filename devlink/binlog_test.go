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

// TestBinLogMatchesMonitor decodes ESP-IDF monitor's Log V2 binary capture
// with its ELFs and compares with the text the monitor printed, line by
// line after trimming whitespace and colour (as the monitor's own test does).
func TestBinLogMatchesMonitor(t *testing.T) {
	data, err := os.ReadFile(testdata(t, "binlog"))
	if err != nil {
		t.Fatal(err)
	}
	wantText, err := os.ReadFile(testdata(t, "binlog_out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bl, err := LoadBinLog(testdata(t, "log.elf"), testdata(t, "bootloader.elf"))
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
	bl := &BinLog{}
	if _, err := os.Stat(filepath.Join("..", "..", "shared", "testdata", "esp-idf-monitor", "log.elf")); err == nil {
		dir := filepath.Join("..", "..", "shared", "testdata", "esp-idf-monitor")
		if b, err := LoadBinLog(filepath.Join(dir, "log.elf"), filepath.Join(dir, "bootloader.elf")); err == nil {
			bl = b
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		bl.Decode(in) // must not panic
	})
}

func TestSourceDecodesBinaryLog(t *testing.T) {
	f, err := os.Open(testdata(t, "binlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bl, err := LoadBinLog(testdata(t, "log.elf"), testdata(t, "bootloader.elf"))
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
	if !slices.Contains(texts, "example: Start") || !slices.Contains(texts, "app_init: Project name:     log") {
		t.Errorf("decoded lines missing; got %d log lines", len(texts))
	}
}
