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
			code := dispatch(ctx, []string{"--port", "-", "--elf", tc.elf}, cli.IO{Stdin: stdin, Stdout: &out, Stderr: &errb})
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

// TestInputErrorsInWords: a directory or a file that is not what a flag
// wants is said in words, not as the read's or debug/elf's error ("adir:
// read adir: is a directory", "bad magic number '[114 111 111 116]'").
func TestInputErrorsInWords(t *testing.T) {
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	if err := os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // all of stderr
	}{
		{[]string{"status", "--from", dir}, "tailpath: --from: " + dir + " is a directory; pass a file (a snapshot, or pasted tailscale output), or - for stdin\n"},
		{[]string{"status", "--from", "probes/snapshot/testdata/both-hard-nat.json", "--peer-snapshot", dir}, "is a directory; pass a file (a snapshot, or pasted tailscale output)\n"},
		{[]string{"tail", "--port", "-", "--elf", dir}, "tailpath: tail --elf: " + dir + " is a directory, not an ELF file (pass the firmware's build/<project>.elf)\n"},
		{[]string{"tail", "--port", "-", "--elf", passwd}, "tailpath: tail --elf: " + passwd + " is not an ELF file: it does not start with ELF's magic bytes (0x7f 'E' 'L' 'F') (pass the firmware's build/<project>.elf)\n"},
		{[]string{"tail", "--port", "-", "--elf", short}, "tailpath: tail --elf: " + short + " is not an ELF file: it is too short to be one (pass the firmware's build/<project>.elf)\n"},
	} {
		code, _, stderr := runTailpath(t, tc.args...)
		if code != cli.ExitUsage || !strings.HasSuffix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 2 and one line ending:\n%s", tc.args, code, stderr, tc.want)
		}
	}
}
