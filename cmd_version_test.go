package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/cli"
)

// TestWriteVersion: what build information says, line by line, and
// "unknown" (never a guess) for what it does not.
func TestWriteVersion(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/tailpath/tailpath", Version: "v0.4.0"},
		Deps:      []*debug.Module{{Path: "github.com/x/y", Version: "v1.0.0"}, {Path: "tailscale.com", Version: "v1.102.5"}},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "4684212c0ffee"},
			{Key: "vcs.time", Value: "2026-12-01T15:00:00Z"}, {Key: "vcs.modified", Value: "true"}},
	}
	replaced := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
		Deps: []*debug.Module{{Path: "tailscale.com", Version: "v1.102.5", Replace: &debug.Module{Path: "../tailscale"}}}}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"stamped", stamped, true, "tailpath  v0.4.0\nrevision  4684212c0ffee (with uncommitted changes)\ncommitted 2026-12-01T15:00:00Z\n" +
			"go        go1.26.8 " + platform + "\ntailscale tailscale.com v1.102.5 (the Tailscale client tailpath is built with)\n"},
		{"checkout, replaced client, no VCS stamp", replaced, true, "tailpath  (devel): built from a checkout, not a released module\n" +
			"revision  unknown (no VCS stamp: built with go run, go test or -buildvcs=false)\ncommitted unknown\n" +
			"go        go1.26.8 " + platform + "\ntailscale tailscale.com v1.102.5 => ../tailscale (the Tailscale client tailpath is built with)\n"},
		{"no build information", nil, false, "tailpath  unknown (no build information)\n" +
			"revision  unknown (no VCS stamp: built with go run, go test or -buildvcs=false)\ncommitted unknown\n" +
			"go        " + runtime.Version() + " " + platform + "\ntailscale unknown (not in the build information) (the Tailscale client tailpath is built with)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			writeVersion(&b, readVersion(tc.bi, tc.ok))
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// The command and --version print this binary's own, the Tailscale
	// client among it (a test binary carries its dependencies).
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, stderr := runTailpath(t, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "\ntailscale tailscale.com v1.102.5 ") || !strings.Contains(stdout, "\ngo        "+runtime.Version()) {
			t.Errorf("%v: exit %d, stdout:\n%s\nstderr: %s", args, code, stdout, stderr)
		}
	}
	code, stdout, _ := runTailpath(t, "version", "--json")
	var v versionInfo
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
