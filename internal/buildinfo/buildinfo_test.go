package buildinfo

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteText: what build information says, line by line, and
// "unknown" (never a guess) for what it does not.
func TestWriteText(t *testing.T) {
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
	release := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/tailpath/tailpath", Version: "(devel)"},
		Deps: []*debug.Module{{Path: "tailscale.com", Version: "v1.102.5"}},
		Settings: []debug.BuildSetting{{Key: "-tags", Value: "netgo,demo"}, {Key: "CGO_ENABLED", Value: "0"}, {Key: "vcs.revision", Value: "4684212c0ffee"},
			{Key: "vcs.time", Value: "2026-12-01T15:00:00Z"}, {Key: "vcs.modified", Value: "false"}}}
	for _, tc := range []struct {
		name    string
		bi      *debug.BuildInfo
		ok      bool
		release string
		want    string
	}{
		{"stamped", stamped, true, "", "tailpath  v0.4.0\nrevision  4684212c0ffee (with uncommitted changes)\ncommitted 2026-12-01T15:00:00Z\n" +
			"go        go1.26.8 " + platform + "\ntailscale tailscale.com v1.102.5 (the Tailscale client tailpath is built with)\n" +
			"demo      no: built without -tags demo (go run -tags demo . demo, from a checkout)\n"},
		{"checkout, replaced client, no VCS stamp", replaced, true, "", "tailpath  (devel): built from a checkout, not a released module\n" +
			"revision  unknown (no VCS stamp: built with go run, go test or -buildvcs=false)\ncommitted unknown\n" +
			"go        go1.26.8 " + platform + "\ntailscale tailscale.com v1.102.5 => ../tailscale (the Tailscale client tailpath is built with)\n" +
			"demo      no: built without -tags demo (go run -tags demo . demo, from a checkout)\n"},
		{"no build information", nil, false, "", "tailpath  unknown (no build information)\n" +
			"revision  unknown (no VCS stamp: built with go run, go test or -buildvcs=false)\ncommitted unknown\n" +
			"go        " + runtime.Version() + " " + platform + "\ntailscale unknown (not in the build information) (the Tailscale client tailpath is built with)\n" +
			"demo      no: built without -tags demo (go run -tags demo . demo, from a checkout)\n"},
		{"release build with the demo", release, true, "v0.5.0", "tailpath  v0.5.0\nrevision  4684212c0ffee\ncommitted 2026-12-01T15:00:00Z\n" +
			"go        go1.26.8 " + platform + "\ntailscale tailscale.com v1.102.5 (the Tailscale client tailpath is built with)\n" +
			"demo      yes: built with -tags demo (tailpath demo runs the lab tailnet)\n"},
		{"a tag that only contains demo", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-tags", Value: "nodemo"}}}, true, "", "tailpath  unknown (no build information)\n" +
			"revision  unknown (no VCS stamp: built with go run, go test or -buildvcs=false)\ncommitted unknown\n" +
			"go        " + runtime.Version() + " " + platform + "\ntailscale unknown (not in the build information) (the Tailscale client tailpath is built with)\n" +
			"demo      no: built without -tags demo (go run -tags demo . demo, from a checkout)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			Read(tc.bi, tc.ok).Release(tc.release).WriteText(&b)
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
