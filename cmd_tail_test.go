package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
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
