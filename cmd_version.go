package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/tailpath/tailpath/internal/cli"
)

const versionUsage = `usage: tailpath version [--json]   (or tailpath --version)

Print what this binary is: tailpath's module version, the VCS revision
and commit time the Go toolchain stamped into it (runtime/debug.ReadBuildInfo;
"go run" and "go test" stamp none), the Go version and platform, and the
Tailscale client module (tailscale.com) it is built with. --json prints
the same as one JSON object ("" where unknown).`

// versionCommand is `tailpath version`.
func versionCommand() *cli.Command {
	fs := cli.NewFlagSet("version")
	asJSON := fs.Bool("json", false, `print one JSON object: {"version", "revision", "modified", "committed", "go", "platform", "tailscale"}`)
	return &cli.Command{
		Name:  "version",
		Short: "print tailpath's version, revision, Go and Tailscale client versions",
		Usage: versionUsage,
		Flags: fs,
		Run: func(_ context.Context, args []string, stdio cli.IO) error {
			if err := cli.NoArgs(args); err != nil {
				return err
			}
			bi, ok := debug.ReadBuildInfo()
			v := readVersion(bi, ok)
			if *asJSON {
				enc := json.NewEncoder(stdio.Stdout)
				return enc.Encode(v)
			}
			writeVersion(stdio.Stdout, v)
			return nil
		},
	}
}

// tailscaleModule is the Tailscale client's Go module.
const tailscaleModule = "tailscale.com"

// versionInfo is what a binary says about itself; "" is unknown.
type versionInfo struct {
	Version   string `json:"version"`   // the main module's version; "(devel)" for a checkout build
	Revision  string `json:"revision"`  // vcs.revision
	Modified  bool   `json:"modified"`  // vcs.modified: built with uncommitted changes
	Committed string `json:"committed"` // vcs.time, the revision's commit time (Go stamps no build time)
	Go        string `json:"go"`        // the Go version it was built with
	Platform  string `json:"platform"`  // GOOS/GOARCH
	Tailscale string `json:"tailscale"` // the tailscale.com module's version ("v1.102.5"), with "=> replacement" if replaced
}

// readVersion reads v from bi (ok false: the binary carries no build
// information).
func readVersion(bi *debug.BuildInfo, ok bool) versionInfo {
	if !ok || bi == nil {
		bi = &debug.BuildInfo{}
	}
	v := versionInfo{Version: bi.Main.Version, Go: bi.GoVersion, Platform: runtime.GOOS + "/" + runtime.GOARCH}
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

// writeVersion writes v as lines; unknown facts say so, never a guess.
func writeVersion(w io.Writer, v versionInfo) {
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
