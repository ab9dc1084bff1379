package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/devlink"
)

// TestDashboardBadELF: a bad --elf fails with a message naming the flag and
// the file before the dashboard starts (nothing drawn, stdin not read, no
// terminal needed).
func TestDashboardBadELF(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.elf")
	if err := os.WriteFile(bad, []byte("not an ELF, just text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.elf")
	good := filepath.Join(monitorVectors(t), "log.elf")
	for _, tc := range []struct {
		name, elf string
		want      []string // in stderr
	}{
		{"not an ELF", bad, []string{"tailpath: --elf: ", bad + " is not an ELF file", "build/<project>.elf"}},
		{"missing", missing, []string{"tailpath: --elf: ", missing, "no such file"}},
		{"bad bootloader after a good app", good + "," + filepath.Join(dir, "bootloader.elf"), []string{"tailpath: --elf: ", "bootloader.elf", "no such file"}},
		{"only commas", ",", []string{"tailpath: --elf \",\": give the app ELF"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			stdin := strings.NewReader("I (1) app: a capture the dashboard must not read\n")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			code := run(ctx, []string{"--port", "-", "--elf", tc.elf}, IO{Stdin: stdin, Stdout: &out, Stderr: &errb})
			if code != 1 {
				t.Errorf("exit %d, want 1; stderr %q", code, errb.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr %q lacks %q", errb.String(), w)
				}
			}
			if out.Len() != 0 {
				t.Errorf("dashboard drew before failing: stdout %q", out.String())
			}
			if stdin.Len() == 0 {
				t.Error("stdin was read before the --elf check")
			}
		})
	}
}

// TestOpenFirmwareAsTail: --elf takes app.elf[,bootloader.elf] in either
// order, as tail does, and the Source it feeds decodes Log V2 binary frames
// into the same text ESP-IDF monitor printed.
func TestOpenFirmwareAsTail(t *testing.T) {
	dir := monitorVectors(t)
	app, boot := filepath.Join(dir, "log.elf"), filepath.Join(dir, "bootloader.elf")
	want, err := os.ReadFile(filepath.Join(dir, "binlog_out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{app + "," + boot, boot + "," + app, " " + app + " , " + boot + " "} {
		t.Run(spec, func(t *testing.T) {
			fw, err := openFirmware(spec)
			if err != nil {
				t.Fatal(err)
			}
			if fw.app != app || fw.sym == nil || fw.binlog == nil {
				t.Fatalf("openFirmware(%q) = app %q, symbols %v, binlog %v", spec, fw.app, fw.sym != nil, fw.binlog != nil)
			}
			capture, err := os.Open(filepath.Join(dir, "binlog"))
			if err != nil {
				t.Fatal(err)
			}
			defer capture.Close()
			src := &devlink.Source{Replay: capture, Symbols: fw.sym, BinLog: fw.binlog, Every: 5 * time.Millisecond}
			var got []string
			var st devlink.State
			for ev := range src.Run(context.Background()) {
				for _, l := range ev.Lines {
					got = append(got, string(l.Text))
				}
				st = ev.State
			}
			if st.BinaryLogFrames != 0 {
				t.Errorf("%d binary frames left undecoded", st.BinaryLogFrames)
			}
			wantLines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(want), "\r\n", "\n"), "\n"), "\n")
			if diff := cmp.Diff(wantLines, got); diff != "" {
				t.Errorf("decoded lines (-want +got):\n%s", diff)
			}
		})
	}
}
