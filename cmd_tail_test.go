package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/safetext"
)

// monitorVectors returns the ESP-IDF monitor test vector folder, skipping
// when the shared folder is absent.
func monitorVectors(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "shared", "testdata", "esp-idf-monitor")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared test vectors not present (%v); they live at ../shared/testdata beside the repository", err)
	}
	return dir
}

// TestTailMatchesMonitor replays ESP-IDF monitor's own host-test input and
// checks tailpath tail prints exactly what the monitor printed for each filter.
func TestTailMatchesMonitor(t *testing.T) {
	dir := monitorVectors(t)
	for _, tc := range []struct{ filter, want string }{
		{"", "in1f1.txt"},
		{"*:V", "in1f1.txt"},
		{"hello_world", "in1f2.txt"},
		{"*:N", "in1f3.txt"},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			in, err := os.Open(filepath.Join(dir, "in1.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			want, err := os.ReadFile(filepath.Join(dir, tc.want))
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"tail", "--port", "-", "--filter", tc.filter}, IO{Stdin: in, Stdout: &out, Stderr: &errb})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("output differs from ESP-IDF monitor's %s: %s", tc.want, firstDiff(out.Bytes(), want))
			}
		})
	}
}

func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-40)
	return fmt.Sprintf("at byte %d: got …%q… want …%q…", i, a[lo:min(len(a), i+40)], b[lo:min(len(b), i+40)])
}

// TestTailBinaryLogSaysSo replays a Log V2 binary-mode capture: the text ROM
// banner prints, binary frames do not, and one line says what to do.
func TestTailBinaryLogSaysSo(t *testing.T) {
	dir := monitorVectors(t)
	in, err := os.Open(filepath.Join(dir, "binlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"tail", "--port", "-"}, IO{Stdin: in, Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "binary logging is on: pass the ELF to decode it") || strings.Count(errb.String(), "binary logging") != 1 {
		t.Errorf("stderr = %q, want one binary-logging notice", errb.String())
	}
	if !strings.HasPrefix(out.String(), "ets Jul 29 2019 12:21:46\r\n") {
		t.Errorf("stdout starts %q, want the ROM banner", out.String()[:min(40, out.Len())])
	}
	if bytes.ContainsAny(out.Bytes(), "\x00\x01\x02") {
		t.Errorf("binary frame bytes printed: %q", out.String())
	}
}

// TestTailDecodesBacktrace decodes PCs with --elf and leaves other hex alone.
func TestTailDecodesBacktrace(t *testing.T) {
	dir := monitorVectors(t)
	elfPath := filepath.Join(dir, "log.elf")
	in := "I (361) app: Register 0x400d1000\r\n" +
		"Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\r\n" +
		"Backtrace: 0x4008a000:0x3ffb5a10 0x400d1000:0x3ffb5a30 |<-CORRUPTED\r\n" +
		"ELF file SHA256: 0000000000000000\r\n"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"tail", "--port", "-", "--elf", elfPath}, IO{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// As monitor prints it: the uncoloured I line gets its auto-colour.
	want := "\x1b[0;32mI (361) app: Register 0x400d1000\x1b[0m\r\n" + in[strings.Index(in, "Guru"):strings.Index(in, "ELF file")] +
		"0x4008a000: align_up at /home/kostia/esp/esp-idf/components/heap/tlsf/tlsf_control_functions.h:244\n" +
		" (inlined by) adjust_request_size at /home/kostia/esp/esp-idf/components/heap/tlsf/tlsf_control_functions.h:289\n" +
		" (inlined by) tlsf_memalign_offs at /home/kostia/esp/esp-idf/components/heap/tlsf/tlsf.c:560\n" +
		"0x400d1000: esp_timer_impl_init_system_time at /home/kostia/esp/esp-idf/components/esp_timer/src/system_time.c:29\n" +
		"ELF file SHA256: 0000000000000000\r\n"
	if out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want)
	}
	if !strings.Contains(errb.String(), "decoded backtraces may be wrong") {
		t.Errorf("no SHA mismatch warning; stderr = %q", errb.String())
	}
}

func TestTailSaveTimestampsAndErrors(t *testing.T) {
	save := filepath.Join(t.TempDir(), "board.log")
	in := "I (1) wifi: up\r\nW (2) app: low heap\r\npartial"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"tail", "--port", "-", "--filter", "app:W", "--save", save, "--timestamps"},
		IO{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	saved, _ := os.ReadFile(save)
	if string(saved) != in {
		t.Errorf("save file = %q, want every byte %q", saved, in)
	}
	// Only the app warning passes app:W (other tags and plain lines are hidden).
	got := out.String()
	if len(got) < 24 || got[24:] != "\x1b[0;33mW (2) app: low heap\x1b[0m\r\n" || got[4] != '-' || got[19] != '.' {
		t.Errorf("stdout = %q, want one timestamped app line", got)
	}
	for _, args := range [][]string{{"--filter", "wifi:X"}, {"--color", "sometimes"}, {"extra"}} {
		errb.Reset()
		code := run(context.Background(), append([]string{"tail", "--port", "-"}, args...), IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		if code != 2 || errb.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 with a message", args, code, errb.String())
		}
	}
}

// TestTailDecodesBinaryLog decodes a Log V2 binary capture with --elf and
// compares with ESP-IDF monitor's output line by line after trimming
// whitespace (how the monitor's own test compares it).
func TestTailDecodesBinaryLog(t *testing.T) {
	dir := monitorVectors(t)
	in, err := os.Open(filepath.Join(dir, "binlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	want, err := os.ReadFile(filepath.Join(dir, "binlog_out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	elfs := filepath.Join(dir, "log.elf") + "," + filepath.Join(dir, "bootloader.elf")
	if code := run(context.Background(), []string{"tail", "--port", "-", "--elf", elfs}, IO{Stdin: in, Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	trim := func(b []byte) []string {
		var o []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				o = append(o, l)
			}
		}
		return o
	}
	g, w := trim(out.Bytes()), trim(want)
	if len(g) != len(w) {
		t.Errorf("%d lines, want %d", len(g), len(w))
	}
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, g[i], w[i])
			break
		}
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb.String())
	}
}

// TestTailColorNeverStripsDeviceColour: --color never removes the board's
// own escape codes (ESP-IDF colours its log lines), leaving each line's
// text; the default piped output keeps them byte for byte (TestTailMatchesMonitor).
func TestTailColorNeverStripsDeviceColour(t *testing.T) {
	dir := monitorVectors(t)
	raw, err := os.ReadFile(filepath.Join(dir, "in1f1.txt")) // the monitor's unfiltered output
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(raw, []byte("\x1b[")); n == 0 {
		t.Fatal("in1f1.txt has no escape codes: the test would prove nothing")
	}
	var want []string
	for _, l := range strings.SplitAfter(string(raw), "\n") {
		if l != "" {
			want = append(want, safetext.Clean(l))
		}
	}
	for _, color := range []string{"never", "always"} {
		t.Run(color, func(t *testing.T) {
			in, err := os.Open(filepath.Join(dir, "in1.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var out, errb bytes.Buffer
			if code := run(context.Background(), []string{"tail", "--port", "-", "--color", color}, IO{Stdin: in, Stdout: &out, Stderr: &errb}); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if color == "always" {
				// Our own level colours only: stripping them gives the text.
				if !strings.Contains(out.String(), "\x1b[0;32m") {
					t.Error("--color always wrote no level colour")
				}
				for i := range got {
					got[i] = ansi.Strip(got[i])
				}
			} else if i := strings.IndexByte(out.String(), 0x1b); i >= 0 {
				t.Errorf("--color never wrote an escape at byte %d: %q", i, out.String()[max(0, i-20):min(out.Len(), i+20)])
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTailMatchesMonitorProbe replays the field report's small log (a line
// starting with the ESP-IDF console's status query, uncoloured I/W/E
// lines) and compares with the bytes ESP-IDF monitor 1.10 printed for each
// print filter: the query passes whatever the filter, the rest of its line
// is judged on its own, and uncoloured I/W/E lines get monitor's colours.
// The input also arrives one byte at a time (the query then waits in the
// splitter for its last byte) with the same result.
func TestTailMatchesMonitorProbe(t *testing.T) {
	dir := filepath.Join("..", "shared", "testdata", "field", "esp")
	in, err := os.ReadFile(filepath.Join(dir, "monitor-probe.txt"))
	if err != nil {
		t.Skipf("shared field inputs not present (%v); they live at ../shared/testdata beside the repository", err)
	}
	for _, tc := range []struct{ filter, want string }{
		{"", "monitor-probe.nofilter.out"},
		{"mesh:E vfs:I", "monitor-probe.mesh_E-vfs_I.out"},
		{"*:W", "monitor-probe.all_W.out"},
	} {
		want, err := os.ReadFile(filepath.Join(dir, tc.want))
		if err != nil {
			t.Fatal(err)
		}
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/chunked=%v", tc.want, chunked), func(t *testing.T) {
				var r io.Reader = bytes.NewReader(in)
				if chunked {
					r = iotest.OneByteReader(r)
				}
				var out, errb bytes.Buffer
				code := run(context.Background(), []string{"tail", "--port", "-", "--filter", tc.filter}, IO{Stdin: r, Stdout: &out, Stderr: &errb})
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				if !bytes.Equal(out.Bytes(), want) {
					t.Errorf("output differs from ESP-IDF monitor's %s: %s", tc.want, firstDiff(out.Bytes(), want))
				}
			})
		}
	}
	// --disable-auto-color: the board's bytes as they came (the query too).
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"tail", "--port", "-", "--disable-auto-color"}, IO{Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Errorf("--disable-auto-color changed the bytes: %s", firstDiff(out.Bytes(), in))
	}
}

// TestTailAutoColorMatchesMonitor replays ESP-IDF monitor's own
// auto-colour host-test input (color.txt) against its output
// (color_out.txt).
func TestTailAutoColorMatchesMonitor(t *testing.T) {
	dir := monitorVectors(t)
	in, err := os.ReadFile(filepath.Join(dir, "color.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "color_out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"tail", "--port", "-"}, IO{Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("output differs from ESP-IDF monitor's color_out.txt: %s", firstDiff(out.Bytes(), want))
	}
}

// TestTailJSON: --json writes one JSON object per line and event, nothing
// else on stdout, and refuses --filter.
func TestTailJSON(t *testing.T) {
	in := "W (53640000) ml_derp: DERP status: connected=0 fd=-1 rx=74096 tx=245596 loops=1164446\r\n" +
		"uru Meditation Error: Core  0 panic'ed (Illegal instruction). Exception was unhandled.\r\n" +
		"MEPC    : 0x40001be4  RA      : 0x42075ee2  SP      : 0x3fca11b0  GP      : 0x3fc8e600  \r\n"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"tail", "--port", "-", "--json"}, IO{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		types = append(types, m["type"].(string))
		if m["type"] == "panic" && (m["pc"] != "0x40001be4" || m["pc_in_rom"] != true || m["ended"] != false) {
			t.Errorf("panic %v", m)
		}
	}
	if diff := cmp.Diff([]string{"line", "port", "line", "line", "panic"}, types); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	errb.Reset()
	if code := run(context.Background(), []string{"tail", "--port", "-", "--json", "--filter", "x:E"}, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}); code != 2 || !strings.Contains(errb.String(), "--json") {
		t.Errorf("--json --filter: exit %d, %q", code, errb.String())
	}
}
