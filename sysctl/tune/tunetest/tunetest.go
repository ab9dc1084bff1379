// Package tunetest is test support for the tests of tune's callers (the
// Tuning pane, the dashboard's and serve's sources, the tune command): a
// Control over a sandbox copy of this host (Sandbox) and a crypto measure
// that does not depend on the machine (FixedCrypto).
package tunetest

import (
	"context"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sysctltest"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// DemoSource labels the inputs Sandbox was given without a source: they are
// settings chosen for the sandbox, not flags the person passed or
// measurements.
const DemoSource = "demo setting"

// Sandbox copies the real host's tuning keys into dir
// (sysctltest.NewSandbox) and returns a Control reading and writing only
// there, labelled "sandbox", with the revert state file inside dir (the
// demo's Tuning tab is tune.SeedNASControl's). sample is true when the
// real /proc was unreadable and stock values were used. A non-zero
// in.Bandwidth or in.RTT without a source is labelled DemoSource.
func Sandbox(dir string, in tune.Inputs) (c tune.Control, sample bool, err error) {
	h, sample, err := sysctltest.NewSandbox(dir, sysctl.Host{})
	if err != nil {
		return tune.Control{}, false, err
	}
	if in.Bandwidth != 0 && in.BandwidthSource == "" {
		in.BandwidthSource = DemoSource
	}
	if in.RTT != 0 && in.RTTSource == "" {
		in.RTTSource = DemoSource
	}
	in.Host, in.Sandbox = h, true
	return tune.Control{Inputs: in, StatePath: h.StatePath()}, sample, nil
}

// FixedCrypto returns a Crypto input that answers m (marked Fixed) without
// measuring: for tests and goldens, whose output must not depend on this
// machine's speed.
func FixedCrypto(m tune.CryptoMeasure) func(context.Context) (tune.CryptoMeasure, error) {
	m.Fixed = true
	return func(context.Context) (tune.CryptoMeasure, error) { return m, nil }
}
