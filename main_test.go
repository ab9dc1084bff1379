package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/cli"
)

// TestCommandsUsageErrors: every command answers a bad flag, and a stray
// argument, the same way: the error once on stderr, prefixed with the
// command's name, then the command's usage, nothing on stdout, exit 2; and
// -h with the usage on stderr and exit 0.
func TestCommandsUsageErrors(t *testing.T) {
	for _, c := range commands() {
		c.Load()
		name := c.Name
		if name == "" {
			name = "(dashboard)"
		}
		var prefix []string
		if c.Name != "" {
			prefix = []string{c.Name}
		}
		synopsis, _, _ := strings.Cut(c.Usage, "\n")
		t.Run(name+"/bad flag", func(t *testing.T) {
			code, stdout, stderr := runTailpath(t, append(prefix, "--no-such-flag")...)
			if code != cli.ExitUsage {
				t.Errorf("exit %d, want %d", code, cli.ExitUsage)
			}
			first, rest, _ := strings.Cut(stderr, "\n")
			if want := c.ErrPrefix() + "flag provided but not defined: -no-such-flag"; first != want {
				t.Errorf("first line %q, want %q", first, want)
			}
			if n := strings.Count(stderr, "no-such-flag"); n != 1 {
				t.Errorf("the error is said %d times:\n%s", n, stderr)
			}
			// The error, then one line naming -h: not the usage, which
			// would scroll the error away.
			if want := "run '" + c.Invocation() + " -h' for usage\n"; rest != want {
				t.Errorf("after the error %q, want %q", rest, want)
			}
			if strings.Contains(stderr, synopsis) || strings.Contains(stderr, "flags:") {
				t.Errorf("a usage error printed the usage:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout: %q", stdout)
			}
		})
		t.Run(name+"/stray argument", func(t *testing.T) {
			code, _, stderr := runTailpath(t, append(prefix, "--", "stray")...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != cli.ExitUsage || first != c.ErrPrefix()+`unexpected argument "stray"; flags only` {
				t.Errorf("exit %d, stderr:\n%s", code, stderr)
			}
		})
		t.Run(name+"/-h", func(t *testing.T) {
			code, stdout, stderr := runTailpath(t, append(prefix, "-h")...)
			if code != cli.ExitOK {
				t.Errorf("exit %d, want 0", code)
			}
			// Asked for, the usage goes to stdout (to page it).
			if !strings.Contains(stdout, synopsis+"\n") || !strings.Contains(stdout, "\nflags:\n  -") {
				t.Errorf("-h printed no usage with flags:\n%s", stdout)
			}
			if strings.Contains(stdout, "Usage of") || strings.Contains(stdout, "tailpath: ") {
				t.Errorf("-h printed an error or Go's default header:\n%s", stdout)
			}
			if stderr != "" {
				t.Errorf("stderr: %q", stderr)
			}
		})
	}
}

// TestUnknownCommand: an unknown command is exit 2 with a "did you mean"
// and where the commands are listed;
// help (and help CMD) is exit 0 on stdout.
func TestUnknownCommand(t *testing.T) {
	code, _, stderr := runTailpath(t, "stauts")
	if want := "tailpath: unknown command \"stauts\"\ntailpath: did you mean status?\nrun 'tailpath help' for the commands\n"; code != cli.ExitUsage || stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, stderr, want)
	}
	code, stdout, _ := runTailpath(t, "help")
	for _, c := range commands() {
		c.Load()
		if c.Name != "" && !strings.Contains(stdout, "\n  "+c.Name+" ") {
			t.Errorf("help does not list %s:\n%s", c.Name, stdout)
		}
	}
	if code != cli.ExitOK {
		t.Errorf("help: exit %d", code)
	}
	code, stdout, _ = runTailpath(t, "help", "tune")
	if code != cli.ExitOK || !strings.HasPrefix(stdout, "usage: tailpath tune [flags]\n") {
		t.Errorf("help tune: exit %d, stdout:\n%s", code, stdout)
	}
}

// runTailpath runs tailpath with args in process and returns the exit
// status, stdout and stderr.
func runTailpath(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runTailpathCtx(context.Background(), t, args...)
}

// runTailpathCtx is runTailpath bounded by ctx.
func runTailpathCtx(ctx context.Context, t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := dispatch(ctx, args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

// TestExitCodes is the one exit-status scheme (README, "Exit status") over
// every command: 0 ok, 1 a runtime failure, 2 a usage error or unusable
// input. Each command has a case for each status it can give here.
func TestExitCodes(t *testing.T) {
	busy, err := net.Listen("tcp4", "127.0.0.1:0") // an address serve cannot take
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	notELF := filepath.Join(dir, "app.elf")
	if err := os.WriteFile(notELF, []byte("text, not an ELF\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("sysctl", "testdata", "roots", "dsm-7.2-5.10"))); err != nil {
		t.Fatal(err)
	}
	noSocket := filepath.Join(dir, "tailscaled.sock")
	noPort := filepath.Join(dir, "ttyACM9")
	snap := filepath.Join("probes", "snapshot", "testdata", "both-hard-nat.json")
	fixture := statusFixture(t, "direct") // a tailscaled answering from a fixture
	cases := []struct {
		name string // starts with the command's name
		args []string
		want int
		lab  bool // starts the lab tailnet (skipped under -short)
	}{
		{"dashboard -h", []string{"-h"}, cli.ExitOK, false},
		{"dashboard bad flag", []string{"--no-such-flag"}, cli.ExitUsage, false},
		{"dashboard --elf not an ELF", []string{"--port", noPort, "--elf", notELF}, cli.ExitUsage, false},
		{"dashboard not on a terminal", []string{"--socket", noSocket, "--stdin-devnull"}, cli.ExitUsage, false},
		{"dashboard --log-file cannot be written", []string{"--port", noPort, "--log-file", filepath.Join(dir, "no", "dir", "board.log")}, cli.ExitError, false},

		{"demo -h", []string{"demo", "-h"}, cli.ExitOK, false},
		{"demo --json without --status", []string{"demo", "--json"}, cli.ExitUsage, false},
		{"demo --serve on a taken address", []string{"demo", "--serve", busy.Addr().String()}, cli.ExitError, true},

		{"status --from a snapshot", []string{"status", "--from", snap}, cli.ExitOK, false},
		{"status no tailscaled", []string{"status", "--socket", noSocket}, cli.ExitError, false},
		{"status bad flag value", []string{"status", "--timeout", "0s"}, cli.ExitUsage, false},
		{"status --from a missing file", []string{"status", "--from", filepath.Join(dir, "missing.json")}, cli.ExitUsage, false},
		{"status --from not a snapshot", []string{"status", "--from", "go.mod"}, cli.ExitUsage, false},
		{"status --peer-snapshot not a snapshot", []string{"status", "--from", snap, "--peer-snapshot", "go.mod"}, cli.ExitUsage, false},

		{"tail a capture", []string{"tail", "--port", "-"}, cli.ExitOK, false},
		{"tail no board", []string{"tail", "--port", noPort}, cli.ExitError, false},
		{"tail bad filter", []string{"tail", "--port", "-", "--filter", "wifi:X"}, cli.ExitUsage, false},
		{"tail --elf not an ELF", []string{"tail", "--port", "-", "--elf", notELF}, cli.ExitUsage, false},

		{"tune over a root", []string{"tune", "--root", root, "--bandwidth", "400Mbit"}, cli.ExitOK, false},
		{"tune nothing to revert", []string{"tune", "--root", root, "--revert"}, cli.ExitError, false},
		{"tune bad bandwidth", []string{"tune", "--bandwidth", "fast"}, cli.ExitUsage, false},
		{"tune --apply without a terminal or --yes", []string{"tune", "--root", root, "--bandwidth", "400Mbit", "--rtt", "100ms", "--apply"}, cli.ExitUsage, false},
		{"tune --apply --yes", []string{"tune", "--root", root, "--bandwidth", "400Mbit", "--rtt", "100ms", "--apply", "--yes"}, cli.ExitOK, false},
		{"tune --revert without a terminal or --yes", []string{"tune", "--root", root, "--revert"}, cli.ExitUsage, false}, // after the apply: a state to revert
		{"tune --mtu-probe no such peer", []string{"tune", "--socket", fixture.Socket, "--mtu-probe", "nosuchpeer"}, cli.ExitUsage, false},
		{"tune --mtu-probe no tailscaled", []string{"tune", "--socket", noSocket, "--mtu-probe", "nas"}, cli.ExitError, false},

		{"serve -h", []string{"serve", "-h"}, cli.ExitOK, false},
		{"serve on a taken address", []string{"serve", "--socket", noSocket, "--listen", busy.Addr().String()}, cli.ExitError, false},
		{"serve bad interval", []string{"serve", "--interval", "0s"}, cli.ExitUsage, false},
		{"serve port out of range", []string{"serve", "--socket", noSocket, "--listen", "127.0.0.1:99999"}, cli.ExitUsage, false},

		{"version", []string{"version"}, cli.ExitOK, false},
		{"--version", []string{"--version"}, cli.ExitOK, false},
		{"version stray argument", []string{"version", "extra"}, cli.ExitUsage, false},

		{"help", []string{"help"}, cli.ExitOK, false},
		{"unknown command", []string{"stauts"}, cli.ExitUsage, false},
	}
	for _, c := range commands() {
		c.Load()
		name := c.Name
		if name == "" {
			name = "dashboard"
		}
		n := 0
		for _, tc := range cases {
			if strings.HasPrefix(tc.name, name+" ") || tc.name == name {
				n++
			}
		}
		if n < 2 {
			t.Errorf("command %s has %d exit-code cases, want at least one success and one failure", name, n)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.lab && testing.Short() {
				t.Skip("skipping: starts the lab tailnet; run without -short")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := tc.args
			var code int
			var stderr string
			if n := len(args); n > 0 && args[n-1] == "--stdin-devnull" {
				// Input from /dev/null, a file that is no terminal.
				null, err := os.Open(os.DevNull)
				if err != nil {
					t.Fatal(err)
				}
				defer null.Close()
				var out, errb bytes.Buffer
				args = args[:n-1]
				code, stderr = dispatch(ctx, args, cli.IO{Stdin: null, Stdout: &out, Stderr: &errb}), errb.String()
			} else {
				code, _, stderr = runTailpathCtx(ctx, t, args...)
			}
			if code != tc.want {
				t.Errorf("tailpath %q: exit %d, want %d; stderr:\n%s", tc.args, code, tc.want, stderr)
			}
			if code != cli.ExitOK && stderr == "" {
				t.Errorf("tailpath %q: exit %d with nothing on stderr", tc.args, code)
			}
		})
	}
}

// TestCommandsBuildTheirEntry: each command tailpath's usage lists builds
// (Load) the command of that name and line, with its usage and flags;
// and running one command builds no other.
func TestCommandsBuildTheirEntry(t *testing.T) {
	for _, e := range commands() {
		if e.Make == nil || e.Flags != nil {
			t.Errorf("%q: built before it is needed", e.Name)
			continue
		}
		m := e.Make()
		if m.Name != e.Name || m.Short != e.Short || m.Usage == "" || m.Flags == nil || m.Run == nil {
			t.Errorf("%q (%q) builds %q (%q), usage %d bytes, flags %v, run %v", e.Name, e.Short, m.Name, m.Short, len(m.Usage), m.Flags != nil, m.Run != nil)
		}
	}
	cmds := commands()
	p := cli.Program{Commands: cmds}
	if code := p.Run(context.Background(), []string{"version"}, cli.IO{Stdout: io.Discard, Stderr: io.Discard}); code != cli.ExitOK {
		t.Fatalf("version: exit %d", code)
	}
	for _, c := range cmds {
		if built := c.Flags != nil; built != (c.Name == "version") {
			t.Errorf("after running version, %q built: %v", c.Name, built)
		}
	}
}
