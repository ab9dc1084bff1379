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
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--josn"}, "tailpath: status: flag provided but not defined: -josn\ntailpath: did you mean --json?\nrun 'tailpath status -h' for usage\n"},
		// tailpath takes --version before any command: -v is its near miss.
		{[]string{"-v"}, "tailpath: flag provided but not defined: -v\ntailpath: did you mean --version?\nrun 'tailpath -h' for usage\n"},
		{[]string{"--verison"}, "tailpath: flag provided but not defined: -verison\ntailpath: did you mean --version?\nrun 'tailpath -h' for usage\n"},
	} {
		code, _, stderr := runTailpath(t, tc.args...)
		if code != cli.ExitUsage || stderr != tc.want {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant:\n%s", tc.args, code, stderr, tc.want)
		}
	}
}
