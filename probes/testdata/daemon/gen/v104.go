//go:build ts104

package main

import (
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
)

// daemon is the tailscaled version whose LocalAPI this build writes: the
// module's (v1.104.7, built with -tags ts104 against that module).
const daemon = "1.104"

const daemonLong = "1.104.7-t2b3c4d5e6-g7f8a9b0c1d2e"

// setAdded sets the fields v1.104 adds to what tailpath reads: the
// tailnet's StableID in Status (ipnstate.TailnetStatus) and on the self
// node (tailcfg.Node.StableTailnetID, capability version 148).
func setAdded(st *ipnstate.Status, self *tailcfg.Node) {
	st.CurrentTailnet.StableID = "T5nFj7XmPx11CNTRL"
	self.StableTailnetID = "T5nFj7XmPx11CNTRL"
}
