// Package buildinfo is what a tailpath binary says about itself (`tailpath
// version`): its module version, the VCS revision and commit time the Go
// toolchain stamped into it, the Go version and platform, and the
// Tailscale client module it is built with, read from
// runtime/debug.ReadBuildInfo. It is a leaf: it imports nothing of
// tailpath's.
package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// tailscaleModule is the Tailscale client's Go module.
const tailscaleModule = "tailscale.com"

// Info is what a binary says about itself; "" is unknown.
type Info struct {
	Version   string `json:"version"`   // the main module's version; "(devel)" for a checkout build
	Revision  string `json:"revision"`  // vcs.revision
	Modified  bool   `json:"modified"`  // vcs.modified: built with uncommitted changes
	Committed string `json:"committed"` // vcs.time, the revision's commit time (Go stamps no build time)
	Go        string `json:"go"`        // the Go version it was built with
	Platform  string `json:"platform"`  // GOOS/GOARCH
	Tailscale string `json:"tailscale"` // the tailscale.com module's version ("v1.102.5"), with "=> replacement" if replaced
}

// Own is this binary's Info (runtime/debug.ReadBuildInfo).
func Own() Info { return Read(debug.ReadBuildInfo()) }

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
}
