//go:build !demo

package main

import (
	"strings"
	"testing"

	"github.com/tailpath/tailpath/internal/cli"
)

// TestDemoLeanSaysHow: a build without the demo tag says, in its error,
// the command that runs the demo; its flags are checked as in a demo build
// (a usage error stays one), and no lab starts.
func TestDemoLeanSaysHow(t *testing.T) {
	for _, args := range [][]string{{"demo"}, {"demo", "--status", "--json"}, {"demo", "--lab-only"}} {
		code, out, errOut := runTailpath(t, args...)
		if code != cli.ExitError || out != "" || !strings.Contains(errOut, "this build has no demo") || !strings.Contains(errOut, "go run -tags demo . demo") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 naming go run -tags demo . demo", args, code, out, errOut)
		}
	}
	if code, _, errOut := runTailpath(t, "demo", "--json"); code != cli.ExitUsage {
		t.Errorf("demo --json: exit %d (%q), want the usage error", code, errOut)
	}
	if code, out, _ := runTailpath(t, "demo", "-h"); code != cli.ExitOK || !strings.Contains(out, "-tags demo") {
		t.Errorf("demo -h: exit %d, usage %q; want it to say how to get the demo", code, out)
	}
}
