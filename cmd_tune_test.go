package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
	if !strings.Contains(out, "TCP tuning for "+filepath.Join(dir, "proc", "sys")+" [sandbox") {
		t.Errorf("show: header does not name the sandbox's /proc/sys:\n%s", out)
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
	for _, bad := range [][]string{{"--bandwidth", "fast"}, {"--rtt", "-5ms"}, {"extra"}, {"--rtt", "20ms", "--peer", "nas"}, {"--mtu-probe", "nas", "--apply"}, {"--bulk-conns", "-1"}} {
		if code, _, stderr := runTuneCmd(bad...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", bad, code, stderr)
		}
	}
	var nout, nerr bytes.Buffer
	code = newTuneCommand(nil).exec(context.Background(), []string{"--root", dir, "--state", state, "--peer", "nas"}, IO{Stdin: strings.NewReader(""), Stdout: &nout, Stderr: &nerr})
	if code != 1 || !strings.Contains(nerr.String(), "needs tailscaled") {
		t.Errorf("--peer without tailscaled wiring: exit %d, %s", code, nerr.String())
	}
}

// TestTuneBadFlags: a bad value is one clear line on stderr, then the usage,
// and exit 2; a number without a unit is refused, not guessed.
func TestTuneBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--rtt", "20"}, `tailpath: tune: --rtt "20": missing unit (e.g. 20ms)`},
		{[]string{"--rtt", "soon"}, `tailpath: tune: --rtt "soon": not a duration (e.g. 20ms or 1.5s)`},
		{[]string{"--rtt", "-5ms"}, `tailpath: tune: --rtt "-5ms": must be positive (e.g. 20ms)`},
		{[]string{"--bandwidth", "400"}, `tailpath: tune: --bandwidth "400": missing unit (e.g. 400Mbit; units bit, kbit, Mbit, Gbit, Tbit, or MB/s for bytes)`},
		{[]string{"--bandwidth", "fast"}, `tailpath: tune: --bandwidth "fast": want a positive number with a unit, like 400Mbit or 1Gbit`},
		{[]string{"--nope"}, "tailpath: tune: flag provided but not defined: -nope"},
		{[]string{"--headroom", "x"}, `tailpath: tune: invalid value "x" for flag -headroom: parse error`},
		{[]string{"--rtt", "20ms", "--peer", "nas"}, `tailpath: tune: pass --rtt or --peer, not both`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"tune"}, tt.args...), IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			first, rest, _ := strings.Cut(errb.String(), "\n")
			if diff := cmp.Diff(tt.want, first); diff != "" {
				t.Errorf("stderr's first line (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(rest, "\nusage: tailpath tune [flags]\n") {
				t.Errorf("no usage after the error:\n%s", errb.String())
			}
			if out.Len() > 0 {
				t.Errorf("stdout: %q", out.String())
			}
		})
	}
}

// TestTuneHelp: -h prints the usage line, a description and the flags, like
// the other commands, and exits 0.
func TestTuneHelp(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"tune", "-h"}, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	got := out.String()
	if code != 0 || !strings.HasPrefix(got, "usage: tailpath tune [flags]\n\nShow this host's TCP buffer sysctls") || errb.Len() > 0 {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, got, errb.String())
	}
	for _, want := range []string{"\nflags:\n", "-bandwidth string", "-rtt string", "e.g. 20ms", "-revert"} {
		if !strings.Contains(got, want) {
			t.Errorf("help lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Usage of") {
		t.Errorf("Go's default usage header:\n%s", got)
	}
}

// TestTuneHints: the command lines tune prints keep the flags it was given
// (a hint without --root would write the real host's sysctls).
func TestTuneHints(t *testing.T) {
	root := filepath.Join("sysctl", "testdata", "roots", "dsm-7.2-5.10")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"tune", "--root", root, "--bandwidth", "400Mbit", "--bbr"}, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	want := "To apply: tailpath tune --bandwidth 400Mbit --bbr --root " + root + " --apply\n"
	if code != 0 || !strings.HasSuffix(out.String(), want) {
		t.Errorf("exit %d; output ends %q, want %q\nstderr: %s", code, lastLine(out.String()), want, errb.String())
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// TestTuneRootKeepsStateInside: applying to a --root copy without --state
// keeps the revert record inside the copy, never in this machine's
// /var/lib, and --revert finds it there.
func TestTuneRootKeepsStateInside(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("sysctl", "testdata", "roots", "dsm-7.2-5.10"))); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "var", "lib", "tailpath", "tune-state.json")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"tune", "--root", root, "--bandwidth", "400Mbit", "--apply", "--yes"}, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	if code != 0 || !strings.Contains(out.String(), "previous values saved in "+state) {
		t.Fatalf("apply to the copy: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(state); err != nil {
		t.Errorf("no state file inside the copy: %v", err)
	}
	out.Reset()
	errb.Reset()
	code = run(context.Background(), []string{"tune", "--root", root, "--revert"}, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	if code != 0 || !strings.Contains(out.String(), "reverted") {
		t.Errorf("revert in the copy: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
