//go:build !demo

package main

// The everyday build has no demo: its lab tailnet links Tailscale's own
// node (tsnet, gVisor's network stack), which a NAS reading `tune` or
// `status` has no use for (cmd_demo_lab.go, built with -tags demo).

import (
	"context"
	"errors"

	"github.com/tailpath/tailpath/internal/cli"
)

// errNoDemo is what `tailpath demo` says in a build without the demo.
var errNoDemo = errors.New("this build has no demo: the lab tailnet links Tailscale's own node, which everyday builds leave out. " +
	"From a checkout of tailpath: go run -tags demo . demo (or go build -tags demo)")

// maybeRunLabNode does nothing: no lab node runs in this build.
func maybeRunLabNode() {}

// start says this build has no demo.
func (f *demoFlags) start(context.Context, cli.IO) error { return errNoDemo }
