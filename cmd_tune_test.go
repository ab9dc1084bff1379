package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sysctltest"
	"github.com/tailpath/tailpath/sysctl/tune"
)

func TestTuneCommand(t *testing.T) {
	dir := t.TempDir()
	h, _, err := sysctltest.NewSandbox(dir, sysctl.AtRoot(filepath.Join(dir, "no-such-source")))
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state.json")
	runTuneCmd := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := dispatch(context.Background(), append([]string{"tune", "--root", dir, "--state", state}, args...), cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		return code, out.String(), errb.String()
	}
	code, out, _ := runTuneCmd("--bandwidth", "400Mbit", "--rtt", "100ms")
	if code != 0 || !strings.Contains(out, "net.ipv4.tcp_wmem: 4096 16384 4194304 → 4096 16384 16777216") {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	for _, want := range []string{"400 Mbit/s = 47.7 MiB/s (flag --bandwidth)", "100ms (flag --rtt)", "buffers limit: the arithmetic: tcp_wmem max is 4 MiB, below the 9.5 MiB the target needs"} {
		if !strings.Contains(out, want) {
			t.Errorf("show: no %q (each input names its source)\n%s", want, out)
		}
	}
	if !strings.Contains(out, "TCP tuning for "+filepath.Join(dir, "proc", "sys")+" [sandbox") {
		t.Errorf("show: header does not name the sandbox's /proc/sys:\n%s", out)
	}
	code, _, stderr := runTuneCmd("--bandwidth", "400Mbit", "--rtt", "100ms", "--apply")
	if code != 2 || !strings.Contains(stderr, "not applied: no terminal to confirm on; pass --yes to apply without asking") {
		t.Fatalf("apply without a terminal or --yes: exit %d, %s; want 2 (a usage error)", code, stderr)
	}
	code, out, stderr = runTuneCmd("--bandwidth", "400Mbit", "--rtt", "100ms", "--apply", "--yes", "--persist")
	if code != 0 || !strings.Contains(out, "undo with: tailpath tune --root "+dir+" --state "+state+" --revert") {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, stderr)
	}
	if s, _ := h.Read(); s.TCPWmem.Max != 16<<20 {
		t.Fatalf("tcp_wmem after apply = %v", s.TCPWmem)
	}
	// --revert asks as --apply does: not without a terminal or --yes.
	code, out, stderr = runTuneCmd("--revert")
	if code != 2 || !strings.Contains(stderr, "not reverted: no terminal to confirm on; pass --yes to revert without asking") || !strings.Contains(out, "net.ipv4.tcp_wmem: 4096 16384 16777216 → 4096 16384 4194304") {
		t.Fatalf("revert without a terminal or --yes: exit %d\n%s\n%s", code, out, stderr)
	}
	if s, _ := h.Read(); s.TCPWmem.Max != 16<<20 {
		t.Fatalf("tcp_wmem after an unconfirmed revert = %v", s.TCPWmem)
	}
	code, out, stderr = runTuneCmd("--revert", "--yes")
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
	code = (&cli.Program{IsInput: isInputError}).Exec(context.Background(), newTuneCommand(nil), []string{"--root", dir, "--state", state, "--peer", "nas"}, cli.IO{Stdin: strings.NewReader(""), Stdout: &nout, Stderr: &nerr})
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
			code := dispatch(context.Background(), append([]string{"tune"}, tt.args...), cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			first, rest, _ := strings.Cut(errb.String(), "\n")
			if diff := cmp.Diff(tt.want, first); diff != "" {
				t.Errorf("stderr's first line (-want +got):\n%s", diff)
			}
			if rest != "run 'tailpath tune -h' for usage\n" {
				t.Errorf("after the error, want one line naming -h:\n%s", errb.String())
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
	code := dispatch(context.Background(), []string{"tune", "-h"}, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
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
	code := dispatch(context.Background(), []string{"tune", "--root", root, "--bandwidth", "400Mbit", "--rtt", "100ms", "--bbr"}, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	want := "To apply: tailpath tune --bandwidth 400Mbit --bbr --root " + root + " --rtt 100ms --apply\n"
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
	code := dispatch(context.Background(), []string{"tune", "--root", root, "--bandwidth", "400Mbit", "--rtt", "100ms", "--apply", "--yes"}, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	if code != 0 || !strings.Contains(out.String(), "previous values saved in "+state) {
		t.Fatalf("apply to the copy: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(state); err != nil {
		t.Errorf("no state file inside the copy: %v", err)
	}
	out.Reset()
	errb.Reset()
	code = dispatch(context.Background(), []string{"tune", "--root", root, "--revert", "--yes"}, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	if code != 0 || !strings.Contains(out.String(), "reverted") {
		t.Errorf("revert in the copy: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// TestTuneFlagRanges: every numeric flag refuses a value outside its own
// range with a usage error (exit 2, the usage printed) whose first line
// names the flag and the value; zero headroom and zero bulk connections
// are refused, never silently replaced by the default.
func TestTuneFlagRanges(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := sysctltest.NewSandbox(dir, sysctl.AtRoot(filepath.Join(dir, "none"))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string // substring of the first line
	}{
		{[]string{"--headroom", "0"}, "--headroom 0: want a multiplier from 1 to 100"},
		{[]string{"--headroom", "0.5"}, "--headroom 0.5: want a multiplier from 1 to 100"},
		{[]string{"--headroom", "-2"}, "--headroom -2: want"},
		{[]string{"--headroom", "101"}, "--headroom 101: want"},
		{[]string{"--headroom", "NaN"}, "--headroom NaN: want"},
		{[]string{"--headroom", "Inf"}, "--headroom +Inf: want"},
		{[]string{"--headroom", "x"}, `invalid value "x" for flag -headroom`},
		{[]string{"--bulk-conns", "0"}, "--bulk-conns 0: want a count from 1 to 10000"},
		{[]string{"--bulk-conns", "-1"}, "--bulk-conns -1: want a count"},
		{[]string{"--bulk-conns", "10001"}, "--bulk-conns 10001: want a count"},
		{[]string{"--bulk-conns", "four"}, `invalid value "four" for flag -bulk-conns`},
		{[]string{"--bandwidth", "0Mbit"}, `--bandwidth "0Mbit": want a positive number`},
		{[]string{"--bandwidth", "400"}, `--bandwidth "400": missing unit`},
		{[]string{"--bandwidth", "20Tbit"}, `--bandwidth "20Tbit": at most 10Tbit`},
		{[]string{"--bandwidth", "-5Mbit"}, `--bandwidth "-5Mbit": want a positive number`},
		{[]string{"--rtt", "0s"}, `--rtt "0s": must be positive`},
		{[]string{"--rtt", "-5ms"}, `--rtt "-5ms": must be positive`},
		{[]string{"--rtt", "20"}, `--rtt "20": missing unit`},
		{[]string{"--rtt", "2m"}, `--rtt "2m": at most 1m0s`},
		{[]string{"--floor", "512MiB"}, `--floor "512MiB": at most 256 MiB`},
		{[]string{"--floor", "-1MiB"}, `--floor "-1MiB": want a size like 16MiB`},
		{[]string{"--floor", "16Mb"}, `--floor "16Mb": unknown unit "Mb"`},
		{[]string{"--floor", "1.5"}, `--floor "1.5": not a whole number of bytes`},
		{[]string{"--mtu-probe", "nas", "--apply"}, "--mtu-probe only measures"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := dispatch(context.Background(), append([]string{"tune", "--root", dir}, tt.args...), cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
			first, rest, _ := strings.Cut(errb.String(), "\n")
			if code != 2 || !strings.Contains(first, tt.want) || !strings.HasPrefix(first, "tailpath: tune: ") {
				t.Errorf("exit %d, first line %q; want exit 2 and %q", code, first, tt.want)
			}
			if rest != "run 'tailpath tune -h' for usage\n" {
				t.Errorf("after the error, want one line naming -h:\n%s", errb.String())
			}
			if out.Len() > 0 {
				t.Errorf("stdout: %q", out.String())
			}
		})
	}
}

// TestTuneUnusualValues: an RTT over 2 s or a bandwidth over 400 Gbit/s
// runs, with one warning line on stderr suggesting the unit a thousand
// times smaller.
func TestTuneUnusualValues(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := sysctltest.NewSandbox(dir, sysctl.AtRoot(filepath.Join(dir, "none"))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--rtt", "20s", "--bandwidth", "1Mbit"}, "tailpath: tune: warning: unusual: --rtt 20s is over 2s; did you mean 20ms?\n"},
		{[]string{"--bandwidth", "500Gbit", "--rtt", "1ms"}, "tailpath: tune: warning: unusual: --bandwidth 500Gbit is over 400 Gbit/s; did you mean 500Mbit?\n"},
		{[]string{"--rtt", "2s", "--bandwidth", "400Gbit"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := dispatch(context.Background(), append([]string{"tune", "--root", dir}, tt.args...), cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
			if code != 0 || errb.String() != tt.want {
				t.Errorf("exit %d, stderr %q; want 0 and %q", code, errb.String(), tt.want)
			}
		})
	}
}

// TestTuneFloor: --floor is a choice shown as such: it raises to the
// floor even where buffers are not the limit (and says so), and 0 leaves
// the buffer max at what the target needs.
func TestTuneFloor(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := sysctltest.NewSandbox(dir, sysctl.AtRoot(filepath.Join(dir, "none"))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--bandwidth", "400Mbit", "--rtt", "20ms"}, []string{"buffers are not the limit (need 1.9 MiB, have 4 MiB)", "No changes needed."}},
		{[]string{"--bandwidth", "400Mbit", "--rtt", "20ms", "--floor", "16MiB"}, []string{"buffer max, raised to --floor 16 MiB  16 MiB",
			"raising to --floor 16 MiB as asked, although buffers are not the limit", "net.ipv4.tcp_wmem: 4096 16384 4194304 → 4096 16384 16777216"}},
		{[]string{"--bandwidth", "1Gbit", "--rtt", "50ms"}, []string{"buffer max, raised to --floor 16 MiB (the default)  16 MiB"}},
		{[]string{"--bandwidth", "1Gbit", "--rtt", "50ms", "--floor", "0"}, []string{"buffer max, rounded up to a MiB  12 MiB", "net.ipv4.tcp_wmem: 4096 16384 4194304 → 4096 16384 12582912"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := dispatch(context.Background(), append([]string{"tune", "--root", dir}, tt.args...), cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
			text := regexp.MustCompile(`  +`).ReplaceAllString(out.String(), "  ") // columns aligned by tabwriter
			for _, w := range tt.want {
				if code != 0 || !strings.Contains(text, w) {
					t.Errorf("exit %d, output lacks %q:\n%s%s", code, w, out.String(), errb.String())
				}
			}
		})
	}
}

// TestTuneSocket: --socket is the tailscaled --peer, --mtu-probe and the
// userspace-networking question go to; given with --root, it is taken as
// the root's tailscaled and asked too (without it, a root asks none).
func TestTuneSocket(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := sysctltest.NewSandbox(dir, sysctl.AtRoot(filepath.Join(dir, "none"))); err != nil {
		t.Fatal(err)
	}
	var asked []string
	d := &tuneDaemon{
		peerRTT: func(_ context.Context, socket, peer string) (time.Duration, error) {
			asked = append(asked, "rtt "+socket+" "+peer)
			return 30 * time.Millisecond, nil
		},
		probeMTU: func(_ context.Context, socket, peer string, _ tune.MTUProbeOptions) (tune.MTUProbe, error) {
			asked = append(asked, "mtu "+socket+" "+peer)
			return tune.MTUProbe{Peer: peer, Via: "203.0.113.5:41641", Verdict: "MTU fine"}, nil
		},
		tun: func(_ context.Context, socket string) (bool, error) {
			asked = append(asked, "tun "+socket)
			return false, nil
		},
	}
	exec := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := (&cli.Program{IsInput: isInputError}).Exec(context.Background(), newTuneCommand(d), args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		return code, out.String() + errb.String()
	}
	if code, out := exec("--root", dir, "--socket", "/tmp/other.sock", "--peer", "nas"); code != 0 || !strings.Contains(out, "30ms (measured: tailnet ping to nas)") {
		t.Errorf("--peer: exit %d\n%s", code, out)
	}
	if code, out := exec("--socket", "/tmp/other.sock", "--mtu-probe", "nas"); code != 0 || !strings.Contains(out, "MTU fine") {
		t.Errorf("--mtu-probe: exit %d\n%s", code, out)
	}
	if code, _ := exec("--root", dir, "--rtt", "5ms"); code != 0 {
		t.Errorf("--root without --socket: exit %d", code)
	}
	want := []string{"tun /tmp/other.sock", "rtt /tmp/other.sock nas", "mtu /tmp/other.sock nas"}
	if runtime.GOOS == "linux" {
		// This machine's own tuning: the TUN question goes to the socket too.
		code, out := exec("--socket", "/tmp/other.sock", "--bandwidth", "1Gbit", "--rtt", "2ms")
		if code != 0 || !strings.Contains(out, "\nUserspace networking: tailnet TCP runs in tailscaled's own stack") ||
			!strings.Contains(out, "evidence: tailscaled (/tmp/other.sock) reports Status.TUN false") {
			t.Errorf("this host: exit %d\n%s", code, out)
		}
		want = append(want, "tun /tmp/other.sock")
	}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
}

// TestTuneBadRoot: a --root that is no copy of a system (missing, a file,
// an empty directory) is unusable input, said as such, exit 2, without
// procfs's "is it mounted?" and without the usage.
func TestTuneBadRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ root, want string }{
		{filepath.Join(dir, "missing"), "no such directory"},
		{file, "not a directory"},
		{dir, "no proc/sys inside"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := dispatch(context.Background(), []string{"tune", "--root", tt.root}, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		if code != 2 || !strings.Contains(errb.String(), "--root "+tt.root+": "+tt.want) || strings.Contains(errb.String(), "procfs") || strings.Contains(errb.String(), "usage:") {
			t.Errorf("tune --root %s: exit %d, stderr %q; want 2 and %q alone", tt.root, code, errb.String(), tt.want)
		}
	}
}
