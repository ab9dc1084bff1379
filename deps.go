//go:build tools

// This file keeps in go.mod and go.sum the modules of two programs tailpath
// does not import but its tests build from the pinned Tailscale module:
// status_integration_test.go runs `go build tailscale.com/cmd/tailscaled
// tailscale.com/cmd/tailscale` to compare tailpath with a real tailscaled
// and `tailscale status`. Without this, go mod tidy would drop their
// dependencies and that build would fail.
package main

import (
	_ "tailscale.com/cmd/tailscale"
	_ "tailscale.com/cmd/tailscaled"
)
