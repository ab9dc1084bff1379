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

	"github.com/tailpath/tailpath/devlink/devlinktest"
	"github.com/tailpath/tailpath/internal/cli"
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

// fieldESP returns the shared field reports' ESP folder, skipping when it
// is absent.
func fieldESP(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "shared", "testdata", "field", "esp")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared field inputs not present (%v); they live at ../shared/testdata beside the repository", err)
	}
	return dir
}

// Our own ESP-IDF monitor vectors (devlink/testdata/monitor, README
// there) and Log V2 binary capture (devlink/testdata/binlog).
var (
	ownMonitor = filepath.Join("devlink", "testdata", "monitor")
	ownBinlog  = filepath.Join("devlink", "testdata", "binlog")
)

func own(*testing.T) string { return ownMonitor }

// TestTailMatchesMonitor replays a boot log and checks tailpath tail
// prints exactly what ESP-IDF monitor prints for each filter: our own
// vectors always, monitor's own host-test input when the shared folder is
// present.
func TestTailMatchesMonitor(t *testing.T) {
	for _, tc := range []struct {
		set              string
		dir              func(*testing.T) string
		in, filter, want string
	}{
		{"own", own, "boot.log", "", "boot.all.want"},
		{"own", own, "boot.log", "*:V", "boot.all.want"},
		{"own", own, "boot.log", "tp_demo", "boot.tp_demo.want"},
		{"own", own, "boot.log", "*:N", "boot.none.want"},
		{"own", own, "boot.log", "*:W tp_demo:I wifi:E", "boot.mixed.want"},
		{"esp-idf-monitor", monitorVectors, "in1.txt", "", "in1f1.txt"},
		{"esp-idf-monitor", monitorVectors, "in1.txt", "*:V", "in1f1.txt"},
		{"esp-idf-monitor", monitorVectors, "in1.txt", "hello_world", "in1f2.txt"},
		{"esp-idf-monitor", monitorVectors, "in1.txt", "*:N", "in1f3.txt"},
	} {
		t.Run(tc.set+"/"+tc.filter, func(t *testing.T) {
			dir := tc.dir(t)
			in, err := os.Open(filepath.Join(dir, tc.in))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			want, err := os.ReadFile(filepath.Join(dir, tc.want))
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			code := dispatch(context.Background(), []string{"tail", "--port", "-", "--filter", tc.filter}, cli.IO{Stdin: in, Stdout: &out, Stderr: &errb})
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

// binlogCase is a Log V2 binary capture, its ELFs and monitor's text.
type binlogCase struct {
	set    string
	get    func(t *testing.T) (capture, want, app, boot string)
	banner string // the capture's first text line
}

var binlogCases = []binlogCase{
	{"own", func(*testing.T) (string, string, string, string) {
		d := ownBinlog
		return filepath.Join(d, "capture.bin"), filepath.Join(d, "capture.txt"), filepath.Join(d, "app.elf"), filepath.Join(d, "bootloader.elf")
	}, "ESP-ROM:esp32s3-20210327\r\n"},
	{"esp-idf-monitor", func(t *testing.T) (string, string, string, string) {
		d := monitorVectors(t)
		return filepath.Join(d, "binlog"), filepath.Join(d, "binlog_out.txt"), filepath.Join(d, "log.elf"), filepath.Join(d, "bootloader.elf")
	}, "ets Jul 29 2019 12:21:46\r\n"},
}

// TestTailBinaryLogSaysSo replays a Log V2 binary-mode capture: the text ROM
// banner prints, binary frames do not, and one line says what to do.
func TestTailBinaryLogSaysSo(t *testing.T) {
	for _, tc := range binlogCases {
		t.Run(tc.set, func(t *testing.T) {
			capture, _, _, _ := tc.get(t)
			in, err := os.Open(capture)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var out, errb bytes.Buffer
			if code := dispatch(context.Background(), []string{"tail", "--port", "-"}, cli.IO{Stdin: in, Stdout: &out, Stderr: &errb}); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !strings.Contains(errb.String(), "binary logging is on: pass the ELF to decode it") || strings.Count(errb.String(), "binary logging") != 1 {
				t.Errorf("stderr = %q, want one binary-logging notice", errb.String())
			}
			if !strings.HasPrefix(out.String(), tc.banner) {
				t.Errorf("stdout starts %q, want the ROM banner", out.String()[:min(40, out.Len())])
			}
			if bytes.ContainsAny(out.Bytes(), "\x00\x01\x02") {
				t.Errorf("binary frame bytes printed: %q", out.String())
			}
		})
	}
}

// TestTailDecodesBacktrace decodes PCs with --elf and leaves other hex
// alone: with our own Xtensa ELF (devlinktest, its frames from GNU
// addr2line) and with ESP-IDF monitor's log.elf when the shared folder is
// present.
func TestTailDecodesBacktrace(t *testing.T) {
	tmpl := "I (361) app: Register 0x%08x\r\n" +
		"Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.\r\n" +
		"Backtrace: 0x%08x:0x3ffb5a10 0x%08x:0x3ffb5a30 |<-CORRUPTED\r\n" +
		"ELF file SHA256: 0000000000000000\r\n"
	check := func(t *testing.T, elfPath string, inl, pc uint64, decoded []string) {
		in := fmt.Sprintf(tmpl, pc, inl, pc)
		var out, errb bytes.Buffer
		if code := dispatch(context.Background(), []string{"tail", "--port", "-", "--elf", elfPath}, cli.IO{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		// As monitor prints it: the uncoloured I line gets its auto-colour.
		want := "\x1b[0;32m" + in[:strings.Index(in, "\r\n")] + "\x1b[0m\r\n" + in[strings.Index(in, "Guru"):strings.Index(in, "ELF file")] +
			strings.Join(decoded, "\n") + "\n" +
			"ELF file SHA256: 0000000000000000\r\n"
		if out.String() != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want)
		}
		if !strings.Contains(errb.String(), "decoded backtraces may be wrong") {
			t.Errorf("no SHA mismatch warning; stderr = %q", errb.String())
		}
	}
	t.Run("own", func(t *testing.T) {
		elfPath := devlinktest.XtensaELF(t)
		inl, frames := devlinktest.InlinedPC(t, elfPath, "tp_pool_alloc", 3)
		pc := devlinktest.Func(t, elfPath, "tp_timer_init") + 6
		decoded := append(devlinktest.Decoded(inl, frames), devlinktest.Decoded(pc, devlinktest.Addr2Line(t, elfPath, pc)[pc])...)
		check(t, elfPath, inl, pc, decoded)
	})
	t.Run("esp-idf-monitor", func(t *testing.T) {
		check(t, filepath.Join(monitorVectors(t), "log.elf"), 0x4008a000, 0x400d1000, []string{
			"0x4008a000: align_up at /home/kostia/esp/esp-idf/components/heap/tlsf/tlsf_control_functions.h:244",
			" (inlined by) adjust_request_size at /home/kostia/esp/esp-idf/components/heap/tlsf/tlsf_control_functions.h:289",
			" (inlined by) tlsf_memalign_offs at /home/kostia/esp/esp-idf/components/heap/tlsf/tlsf.c:560",
			"0x400d1000: esp_timer_impl_init_system_time at /home/kostia/esp/esp-idf/components/esp_timer/src/system_time.c:29",
		})
	})
}

func TestTailSaveTimestampsAndErrors(t *testing.T) {
	save := filepath.Join(t.TempDir(), "board.log")
	in := "I (1) wifi: up\r\nW (2) app: low heap\r\npartial"
	var out, errb bytes.Buffer
	if code := dispatch(context.Background(), []string{"tail", "--port", "-", "--filter", "app:W", "--save", save, "--timestamps"},
		cli.IO{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
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
		code := dispatch(context.Background(), append([]string{"tail", "--port", "-"}, args...), cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		if code != 2 || errb.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 with a message", args, code, errb.String())
		}
	}
}

// TestTailDecodesBinaryLog decodes a Log V2 binary capture with --elf and
// compares with ESP-IDF monitor's output line by line after trimming
// whitespace (how the monitor's own test compares it).
func TestTailDecodesBinaryLog(t *testing.T) {
	for _, tc := range binlogCases {
		t.Run(tc.set, func(t *testing.T) {
			capture, wantPath, app, boot := tc.get(t)
			in, err := os.Open(capture)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if code := dispatch(context.Background(), []string{"tail", "--port", "-", "--elf", app + "," + boot}, cli.IO{Stdin: in, Stdout: &out, Stderr: &errb}); code != 0 {
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
			if diff := cmp.Diff(trim(want), trim(out.Bytes())); diff != "" {
				t.Errorf("lines (-monitor +tail):\n%s", diff)
			}
			if errb.Len() != 0 {
				t.Errorf("stderr: %s", errb.String())
			}
		})
	}
}

// TestTailColorNeverStripsDeviceColour: --color never removes the board's
// own escape codes (ESP-IDF colours its log lines), leaving each line's
// text; the default piped output keeps them byte for byte (TestTailMatchesMonitor).
func TestTailColorNeverStripsDeviceColour(t *testing.T) {
	for _, tc := range []struct {
		set     string
		dir     func(*testing.T) string
		in, out string // the input, and the monitor's unfiltered output
	}{
		{"own", own, "boot.log", "boot.all.want"},
		{"esp-idf-monitor", monitorVectors, "in1.txt", "in1f1.txt"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			dir := tc.dir(t)
			raw, err := os.ReadFile(filepath.Join(dir, tc.out))
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(raw, []byte("\x1b[")); n == 0 {
				t.Fatalf("%s has no escape codes: the test would prove nothing", tc.out)
			}
			var want []string
			for _, l := range strings.SplitAfter(string(raw), "\n") {
				if l != "" {
					want = append(want, safetext.Clean(l))
				}
			}
			for _, color := range []string{"never", "always"} {
				t.Run(color, func(t *testing.T) {
					in, err := os.Open(filepath.Join(dir, tc.in))
					if err != nil {
						t.Fatal(err)
					}
					defer in.Close()
					var out, errb bytes.Buffer
					if code := dispatch(context.Background(), []string{"tail", "--port", "-", "--color", color}, cli.IO{Stdin: in, Stdout: &out, Stderr: &errb}); code != 0 {
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
		})
	}
}

// TestTailMatchesMonitorProbe replays a small log whose second line starts
// with the ESP-IDF console's status query, plus uncoloured I/W/E lines, and
// compares with the bytes ESP-IDF monitor prints for each print filter:
// the query passes whatever the filter, the rest of its line is judged on
// its own, and uncoloured I/W/E lines get monitor's colours. The input also
// arrives one byte at a time (the query then waits in the splitter for its
// last byte) with the same result. Our own log always; the field report's
// (printed by ESP-IDF monitor 1.10) when the shared folder is present.
func TestTailMatchesMonitorProbe(t *testing.T) {
	for _, set := range []struct {
		name  string
		dir   func(*testing.T) string
		in    string
		cases []struct{ filter, want string }
	}{
		{"own", own, "probe.log", []struct{ filter, want string }{
			{"", "probe.all.want"}, {"tp_net:E", "probe.tp_net_E.want"}, {"*:E tp_cli:W", "probe.errors.want"}}},
		{"field", fieldESP, "monitor-probe.txt", []struct{ filter, want string }{
			{"", "monitor-probe.nofilter.out"}, {"mesh:E vfs:I", "monitor-probe.mesh_E-vfs_I.out"}, {"*:W", "monitor-probe.all_W.out"}}},
	} {
		t.Run(set.name, func(t *testing.T) {
			dir := set.dir(t)
			in, err := os.ReadFile(filepath.Join(dir, set.in))
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range set.cases {
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
						code := dispatch(context.Background(), []string{"tail", "--port", "-", "--filter", tc.filter}, cli.IO{Stdin: r, Stdout: &out, Stderr: &errb})
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
			if code := dispatch(context.Background(), []string{"tail", "--port", "-", "--disable-auto-color"}, cli.IO{Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !bytes.Equal(out.Bytes(), in) {
				t.Errorf("--disable-auto-color changed the bytes: %s", firstDiff(out.Bytes(), in))
			}
		})
	}
}

// TestTailAutoColorMatchesMonitor replays an input without colour codes
// against what ESP-IDF monitor's auto-colour makes of it: our own
// (color.log) always, monitor's host-test input (color.txt) when the shared
// folder is present.
func TestTailAutoColorMatchesMonitor(t *testing.T) {
	for _, tc := range []struct {
		set      string
		dir      func(*testing.T) string
		in, want string
	}{
		{"own", own, "color.log", "color.want"},
		{"esp-idf-monitor", monitorVectors, "color.txt", "color_out.txt"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			dir := tc.dir(t)
			in, err := os.ReadFile(filepath.Join(dir, tc.in))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, tc.want))
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if code := dispatch(context.Background(), []string{"tail", "--port", "-"}, cli.IO{Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("output differs from ESP-IDF monitor's %s: %s", tc.want, firstDiff(out.Bytes(), want))
			}
		})
	}
}

// TestTailJSON: --json writes one JSON object per line and event, nothing
// else on stdout, and refuses --filter.
func TestTailJSON(t *testing.T) {
	in := "W (53640000) ml_derp: DERP status: connected=0 fd=-1 rx=74096 tx=245596 loops=1164446\r\n" +
		"uru Meditation Error: Core  0 panic'ed (Illegal instruction). Exception was unhandled.\r\n" +
		"MEPC    : 0x40001be4  RA      : 0x42075ee2  SP      : 0x3fca11b0  GP      : 0x3fc8e600  \r\n"
	var out, errb bytes.Buffer
	if code := dispatch(context.Background(), []string{"tail", "--port", "-", "--json"}, cli.IO{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
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
	if code := dispatch(context.Background(), []string{"tail", "--port", "-", "--json", "--filter", "x:E"}, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}); code != 2 || !strings.Contains(errb.String(), "--json") {
		t.Errorf("--json --filter: exit %d, %q", code, errb.String())
	}
}
