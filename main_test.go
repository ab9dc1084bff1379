package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCommandsUsageErrors: every command answers a bad flag, and a stray
// argument, the same way: the error once on stderr, prefixed with the
// command's name, then the command's usage, nothing on stdout, exit 2; and
// -h with the usage on stderr and exit 0.
func TestCommandsUsageErrors(t *testing.T) {
	for _, c := range commands() {
		name := c.name
		if name == "" {
			name = "(dashboard)"
		}
		var prefix []string
		if c.name != "" {
			prefix = []string{c.name}
		}
		synopsis, _, _ := strings.Cut(c.usage, "\n")
		t.Run(name+"/bad flag", func(t *testing.T) {
			code, stdout, stderr := runTailpath(t, append(prefix, "--no-such-flag")...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			first, rest, _ := strings.Cut(stderr, "\n")
			if want := c.errPrefix() + "flag provided but not defined: -no-such-flag"; first != want {
				t.Errorf("first line %q, want %q", first, want)
			}
			if n := strings.Count(stderr, "no-such-flag"); n != 1 {
				t.Errorf("the error is said %d times:\n%s", n, stderr)
			}
			if !strings.Contains(rest, "\n"+synopsis+"\n") || !strings.Contains(rest, "\nflags:\n") {
				t.Errorf("no usage (%q, flags) after the error:\n%s", synopsis, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout: %q", stdout)
			}
		})
		t.Run(name+"/stray argument", func(t *testing.T) {
			code, _, stderr := runTailpath(t, append(prefix, "--", "stray")...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != exitUsage || first != c.errPrefix()+`unexpected argument "stray"; flags only` {
				t.Errorf("exit %d, stderr:\n%s", code, stderr)
			}
		})
		t.Run(name+"/-h", func(t *testing.T) {
			code, stdout, stderr := runTailpath(t, append(prefix, "-h")...)
			if code != exitOK {
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

// TestUnknownCommand: an unknown command is exit 2 with tailpath's usage;
// help (and help CMD) is exit 0 on stdout.
func TestUnknownCommand(t *testing.T) {
	code, _, stderr := runTailpath(t, "stauts")
	if code != exitUsage || !strings.HasPrefix(stderr, "tailpath: unknown command \"stauts\"\n\nusage: tailpath [command] [flags]\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	code, stdout, _ := runTailpath(t, "help")
	for _, c := range commands() {
		if c.name != "" && !strings.Contains(stdout, "\n  "+c.name+" ") {
			t.Errorf("help does not list %s:\n%s", c.name, stdout)
		}
	}
	if code != exitOK {
		t.Errorf("help: exit %d", code)
	}
	code, stdout, _ = runTailpath(t, "help", "tune")
	if code != exitOK || !strings.HasPrefix(stdout, "usage: tailpath tune [flags]\n") {
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
	code := run(ctx, args, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

// TestOneShotGC: only status runs without collecting, and GOGC or
// GOMEMLIMIT given by the user stand.
func TestOneShotGC(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{[]string{"status", "--json"}, nil, true},
		{[]string{"status"}, nil, true},
		{nil, nil, false},
		{[]string{"--socket", "x"}, nil, false},
		{[]string{"serve"}, nil, false},
		{[]string{"tail"}, nil, false},
		{[]string{"status"}, map[string]string{"GOGC": "100"}, false},
		{[]string{"status"}, map[string]string{"GOMEMLIMIT": "1GiB"}, false},
	} {
		gc, ok := oneShotGC(tc.args, func(k string) string { return tc.env[k] })
		if ok != tc.want {
			t.Errorf("oneShotGC(%q, %v) ok = %v, want %v", tc.args, tc.env, ok, tc.want)
		}
		if ok && (gc.percent != -1 || gc.limit != oneShotMemLimit) {
			t.Errorf("oneShotGC(%q) = %+v, want the collector off up to %d bytes", tc.args, gc, oneShotMemLimit)
		}
	}
}
