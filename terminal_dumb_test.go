package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/tailpath/tailpath/internal/cli"
)

// TestDashboardRefusesDumbTerminal: on a terminal whose TERM=dumb says it
// cannot move the cursor, the dashboard (live, --from, the demo) says so
// and exits 2 before it writes anything: no alternate screen, no cursor
// moves, and the demo does not start its lab first.
func TestDashboardRefusesDumbTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("skipping: no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	t.Setenv("TERM", "dumb")
	for _, args := range [][]string{
		{"--from", "probes/snapshot/testdata/both-hard-nat.json"},
		{"demo"},
		{"--socket", "/nonexistent/tailscaled.sock"},
	} {
		var out, errb bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		code := dispatch(ctx, args, cli.IO{Stdin: tty, Stdout: &out, Stderr: &errb})
		cancel()
		if args[0] == "demo" && strings.Contains(errb.String(), "this build has no demo") {
			// A build without -tags demo says first that it has no demo
			// (cmd_demo_lean.go); the demo build is checked by the
			// in-place run with -tags demo (.ci/run).
			if code == cli.ExitOK || out.Len() > 0 {
				t.Errorf("%q: exit %d, wrote %q; want an error and nothing written", args, code, out.String())
			}
			continue
		}
		if code != cli.ExitUsage || !strings.Contains(errb.String(), "TERM=dumb says this terminal cannot move the cursor") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and why", args, code, errb.String())
		}
		if out.Len() > 0 {
			t.Errorf("%q wrote to the terminal: %q", args, out.String())
		}
	}
}
