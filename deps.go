//go:build tools

// This file pins modules that packages and tests of tailpath use, so that
// go mod tidy keeps them while the code that imports them is being written.
package main

import (
	_ "github.com/charmbracelet/bubbles/table"
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/charmbracelet/x/ansi"
	_ "github.com/charmbracelet/x/exp/teatest"
	_ "github.com/creack/pty"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/jsimonetti/rtnetlink/v2"
	_ "github.com/mdlayher/netlink"
	_ "go.bug.st/serial"
	_ "go.bug.st/serial/enumerator"
	_ "golang.org/x/sys/unix"
	_ "tailscale.com/client/local"
	_ "tailscale.com/cmd/tailscale"
	_ "tailscale.com/cmd/tailscaled"
	_ "tailscale.com/derp/derpserver"
	_ "tailscale.com/net/stun"
	_ "tailscale.com/tsnet"
	_ "tailscale.com/tstest/integration"
	_ "tailscale.com/tstest/integration/testcontrol"
)
