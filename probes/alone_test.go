package probes

import "time"

// The rule table judged piece by piece, as Judge's walk does for one peer,
// one board or this node, but alone: no other peer's facts (a nil
// Tailnet). For this package's tests, which hold each rule to its
// evidence; everything tailpath shows comes from Judge, and tests of
// other packages judge a snapshot with it.

// Diagnose is p's verdict judged alone, as if the tailnet held no other
// peer (diagnoseIn with no Tailnet, its Settle worked out).
func Diagnose(self Self, p Peer, regions map[int]Region, now time.Time) Verdict {
	return diagnose(self, p, regions, now, nil)
}

// diagnose is Diagnose with the gather's tailnet-wide facts (nil: none),
// on copies of self and p.
func diagnose(self Self, p Peer, regions map[int]Region, now time.Time, tn *Tailnet) Verdict {
	d := newDiag(self, p, regions, now)
	d.tn = tn
	v := d.run()
	v.Settle = d.settle(&v)
	d.free()
	markProse(v.Checks, self.Prose)
	return v
}

// DiagnoseDevice is diagnoseDevice with no Tailnet: v (p's Diagnose
// verdict) with the board's evidence added.
func DiagnoseDevice(v Verdict, self Self, p Peer, dev DeviceEvidence, regions map[int]Region, now time.Time) Verdict {
	return diagnoseDevice(v, self, p, dev, regions, now, nil)
}

// DiagnoseSelf is this node's own verdict judged with no Tailnet (nil
// when no cause holds).
func DiagnoseSelf(state string, self Self, regions map[int]Region, now time.Time) *Verdict {
	return diagnoseSelf(state, self, regions, now, nil)
}
