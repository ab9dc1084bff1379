// Package buildinfo is what a tailpath binary says about itself (`tailpath
// version`): its version (a release build's, set at link time, else the
// module's), the VCS revision and commit time the Go toolchain stamped
// into it, the Go version and platform, the Tailscale client module it is
// built with and whether it has the demo, read from
// runtime/debug.ReadBuildInfo. It is a leaf: it imports nothing of
// tailpath's.
package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// tailscaleModule is the Tailscale client's Go module.
const tailscaleModule = "tailscale.com"

// release is a release build's version, set when it is linked:
//
//	go build -ldflags "-X github.com/tailpath/tailpath/internal/buildinfo.release=v0.5.0"
//
// (internal/release does); "" in any other build, whose version is its
// module's.
var release string

// Info is what a binary says about itself; "" is unknown.
type Info struct {
	Version   string `json:"version"`   // the main module's version; "(devel)" for a checkout build
	Revision  string `json:"revision"`  // vcs.revision
	Modified  bool   `json:"modified"`  // vcs.modified: built with uncommitted changes
	Committed string `json:"committed"` // vcs.time, the revision's commit time (Go stamps no build time)
	Go        string `json:"go"`        // the Go version it was built with
	Platform  string `json:"platform"`  // GOOS/GOARCH
	Tailscale string `json:"tailscale"` // the tailscale.com module's version ("v1.102.5"), with "=> replacement" if replaced
	Demo      bool   `json:"demo"`      // built with -tags demo: it has the demo's lab tailnet
}

// Own is this binary's Info (runtime/debug.ReadBuildInfo), with a release
// build's version.
func Own() Info { return Read(debug.ReadBuildInfo()).Release(release) }

// Release is v with version as its version, when version is not "" (a
// release build's, set at link time).
func (v Info) Release(version string) Info {
	if version != "" {
		v.Version = version
	}
	return v
}

// Read reads an Info from bi (ok false: the binary carries no build
// information).
func Read(bi *debug.BuildInfo, ok bool) Info {
	if !ok || bi == nil {
		bi = &debug.BuildInfo{}
	}
	v := Info{Version: bi.Main.Version, Go: bi.GoVersion, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if v.Go == "" {
		v.Go = runtime.Version()
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "vcs.time":
			v.Committed = s.Value
		case "-tags":
			v.Demo = slices.Contains(strings.Split(s.Value, ","), "demo")
		}
	}
	for _, d := range bi.Deps {
		if d.Path != tailscaleModule {
			continue
		}
		v.Tailscale = d.Version
		if r := d.Replace; r != nil {
			v.Tailscale += " => " + strings.TrimSpace(r.Path+" "+r.Version)
		}
	}
	return v
}

// WriteText writes v as lines; unknown facts say so, never a guess.
func (v Info) WriteText(w io.Writer) {
	version := v.Version
	switch version {
	case "":
		version = "unknown (no build information)"
	case "(devel)":
		version = "(devel): built from a checkout, not a released module"
	}
	revision := v.Revision
	switch {
	case revision == "":
		revision = "unknown (no VCS stamp: built with go run, go test or -buildvcs=false)"
	case v.Modified:
		revision += " (with uncommitted changes)"
	}
	committed := v.Committed
	if committed == "" {
		committed = "unknown"
	}
	ts := "unknown (not in the build information)"
	if v.Tailscale != "" {
		ts = tailscaleModule + " " + v.Tailscale
	}
	fmt.Fprintf(w, "tailpath  %s\n", version)
	fmt.Fprintf(w, "revision  %s\n", revision)
	fmt.Fprintf(w, "committed %s\n", committed)
	fmt.Fprintf(w, "go        %s %s\n", v.Go, v.Platform)
	fmt.Fprintf(w, "tailscale %s (the Tailscale client tailpath is built with)\n", ts)
	if v.Demo {
		fmt.Fprintf(w, "demo      yes: built with -tags demo (tailpath demo runs the lab tailnet)\n")
	} else {
		fmt.Fprintf(w, "demo      no: built without -tags demo (go run -tags demo . demo, from a checkout)\n")
	}
}
