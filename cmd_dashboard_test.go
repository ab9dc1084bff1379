package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/cli"
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
	good := filepath.Join(ownBinlog, "app.elf") // any good ELF: our own
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
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			code := run(ctx, []string{"--port", "-", "--elf", tc.elf}, cli.IO{Stdin: stdin, Stdout: &out, Stderr: &errb})
			if code != cli.ExitUsage { // unusable input
				t.Errorf("exit %d, want 2; stderr %q", code, errb.String())
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
