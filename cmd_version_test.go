package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/internal/buildinfo"
	"github.com/tailpath/tailpath/internal/cli"
)

// TestVersionCommand: the command and --version print this binary's
// own, the Tailscale client among it (a test binary carries its
// dependencies); internal/buildinfo's TestWriteText has the wording.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, stderr := runTailpath(t, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "\ntailscale tailscale.com v1.102.5 ") || !strings.Contains(stdout, "\ngo        "+runtime.Version()) {
			t.Errorf("%v: exit %d, stdout:\n%s\nstderr: %s", args, code, stdout, stderr)
		}
	}
	code, stdout, _ := runTailpath(t, "version", "--json")
	var v buildinfo.Info
	if err := json.Unmarshal([]byte(stdout), &v); code != 0 || err != nil || v.Tailscale != "v1.102.5" || v.Go != runtime.Version() {
		t.Errorf("version --json: exit %d, %v: %+v", code, err, v)
	}
}

// TestSuggestFlag: a mistyped flag names the one it was meant to be,
// after the error (internal/cli's TestSuggest has the typos).
func TestSuggestFlag(t *testing.T) {
	code, _, stderr := runTailpath(t, "status", "--josn")
	if code != cli.ExitUsage || !strings.HasPrefix(stderr, "tailpath: status: flag provided but not defined: -josn\ntailpath: did you mean --json?\n\nusage: tailpath status") {
		t.Errorf("status --josn: exit %d, stderr:\n%s", code, stderr)
	}
}
