package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/sysctl"
)

func TestTuneCommand(t *testing.T) {
	dir := t.TempDir()
	h, _, err := sysctl.NewSandbox(dir, sysctl.AtRoot(filepath.Join(dir, "no-such-source")))
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state.json")
	runTuneCmd := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"tune", "--root", dir, "--state", state}, args...), IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		return code, out.String(), errb.String()
	}
	code, out, _ := runTuneCmd("--bandwidth", "400Mbit", "--rtt", "20ms")
	if code != 0 || !strings.Contains(out, "net.ipv4.tcp_wmem: 4096 16384 4194304 → 4096 16384 16777216") {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	for _, want := range []string{"400 Mbit/s = 47.7 MiB/s (flag --bandwidth)", "20ms (flag --rtt)"} {
		if !strings.Contains(out, want) {
			t.Errorf("show: no %q (each input names its source)\n%s", want, out)
		}
	}
	code, _, stderr := runTuneCmd("--bandwidth", "400Mbit", "--rtt", "20ms", "--apply")
	if code != 1 || !strings.Contains(stderr, "pass --yes") {
		t.Fatalf("apply without a terminal or --yes: exit %d, %s", code, stderr)
	}
	code, out, stderr = runTuneCmd("--bandwidth", "400Mbit", "--rtt", "20ms", "--apply", "--yes", "--persist")
	if code != 0 || !strings.Contains(out, "undo with: tailpath tune --root "+dir+" --state "+state+" --revert") {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, stderr)
	}
	if s, _ := h.Read(); s.TCPWmem.Max != 16<<20 {
		t.Fatalf("tcp_wmem after apply = %v", s.TCPWmem)
	}
	code, out, stderr = runTuneCmd("--revert")
	if code != 0 || !strings.Contains(out, "reverted 4 key(s)") {
		t.Fatalf("revert: exit %d\n%s\n%s", code, out, stderr)
	}
	if s, _ := h.Read(); s.TCPWmem.Max != 4194304 {
		t.Fatalf("tcp_wmem after revert = %v", s.TCPWmem)
	}
	for _, bad := range [][]string{{"--bandwidth", "fast"}, {"--rtt", "-5ms"}, {"extra"}, {"--rtt", "20ms", "--peer", "nas"}} {
		if code, _, stderr := runTuneCmd(bad...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", bad, code, stderr)
		}
	}
	saved := tunePeerRTT
	tunePeerRTT = nil
	defer func() { tunePeerRTT = saved }()
	if code, _, stderr := runTuneCmd("--peer", "nas"); code != 1 || !strings.Contains(stderr, "needs tailscaled") {
		t.Errorf("--peer without tailscaled wiring: exit %d, %s", code, stderr)
	}
}
