package main

import (
	"context"
	"encoding/json"

	"github.com/tailpath/tailpath/internal/buildinfo"
	"github.com/tailpath/tailpath/internal/cli"
)

const versionUsage = `usage: tailpath version [--json]   (or tailpath --version)

Print what this binary is: tailpath's module version, the VCS revision
and commit time the Go toolchain stamped into it (runtime/debug.ReadBuildInfo;
"go run" and "go test" stamp none), the Go version and platform, and the
Tailscale client module (tailscale.com) it is built with. --json prints
the same as one JSON object ("" where unknown).`

// versionShort is `tailpath version`'s line in tailpath's usage.
const versionShort = "print tailpath's version, revision, Go and Tailscale client versions"

// versionCommand is `tailpath version`.
func versionCommand() *cli.Command {
	fs := cli.NewFlagSet("version")
	asJSON := fs.Bool("json", false, `print one JSON object: {"version", "revision", "modified", "committed", "go", "platform", "tailscale"}`)
	return &cli.Command{
		Name:  "version",
		Short: versionShort,
		Usage: versionUsage,
		Flags: fs,
		Run: func(_ context.Context, args []string, stdio cli.IO) error {
			if err := cli.NoArgs(args); err != nil {
				return err
			}
			v := buildinfo.Own()
			if *asJSON {
				enc := json.NewEncoder(stdio.Stdout)
				return enc.Encode(v)
			}
			v.WriteText(stdio.Stdout)
			return nil
		},
	}
}
