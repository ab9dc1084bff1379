//go:build !ts104

package main

import (
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
)

// daemon is the tailscaled version whose LocalAPI this build writes: the
// module's (v1.102.5).
const daemon = "1.102"

const daemonLong = "1.102.5-t1a2b3c4d5-g6e7f8a9b0c1d"

// setAdded sets what v1.102 does not have: nothing.
func setAdded(*ipnstate.Status, *tailcfg.Node) {}
