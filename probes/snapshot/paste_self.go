package snapshot

import (
	"cmp"
	"reflect"
	"slices"

	"github.com/tailpath/tailpath/probes"
)

// selfFacts assembles our own facts from the netcheck reports (the CLI's
// and the daemon's) and the log: NAT facts from the daemon's newest report
// that measured anything, else the CLI's; latencies from the newest report
// with any; facts the reports disagree on are unknown and listed as a
// spread (SelfEvidence.Spread), never the last report's silently. NAT
// facts the CLI measured are marked so (NATInfo.FromCLI): they decide no
// NAT type of tailscaled's.
func (p *paste) selfFacts(f *File) *SelfFacts {
	self := &SelfFacts{}
	measured := func(rs []*netcheckFacts) *netcheckFacts {
		var out *netcheckFacts
		for _, r := range rs {
			if r.nothing {
				continue
			}
			if out == nil || !r.at.Before(out.at) {
				out = r
			}
		}
		return out
	}
	all := append(slices.Clone(p.logNets), p.netchecks...)
	for _, nf := range all {
		for code, d := range nf.codeLatency {
			if id, ok := p.codes[code]; ok {
				nf.setLatency(id, d)
			}
		}
	}
	nat := measured(p.logNets)
	if nat == nil {
		nat = measured(p.netchecks)
	}
	var lat *netcheckFacts
	for _, r := range all {
		if len(r.latency) > 0 && (lat == nil || r.at.After(lat.at)) {
			lat = r
		}
	}
	ev := p.ev
	if len(all) > 0 && nat == nil {
		// Every report measured nothing.
		last := all[len(all)-1]
		ev.NetcheckEmpty, ev.NetcheckEmptyFrom = true, last.from
	}
	byTime := slices.Clone(all)
	slices.SortStableFunc(byTime, func(a, b *netcheckFacts) int { return cmp.Compare(a.at.UnixNano(), b.at.UnixNano()) })
	ev.Spread = spreadOf(byTime)
	if nat != nil {
		self.NAT = nat.natInfo()
		// What the paste shows of the DERP map: the regions its reports
		// reached. With one, netcheck had one STUN server's replies to
		// compare (net/netcheck addNodeLatency).
		for _, r := range all {
			self.NAT.STUNRegions = max(self.NAT.STUNRegions, r.regions())
		}
		for _, s := range ev.Spread {
			switch s.Fact {
			case "UDP":
				self.NAT.WorkingUDP = nil
			case "MappingVariesByDestIP":
				self.NAT.MappingVariesByDestIP = nil
			case "IPv6":
				self.NAT.WorkingIPv6 = nil
			}
		}
		// tailscaled's own report's preferred region is its home
		// (magicsock sets its home DERP from report.PreferredDERP); the
		// CLI's standalone netcheck keeps no history, so its "Nearest DERP"
		// skips the daemon's stickiness (net/netcheck
		// addReportHistoryAndSetPreferredDERP keeps the old home unless a
		// new one is much better) and is no home.
		if !self.NAT.FromCLI {
			self.HomeDERP = nat.preferred
			if nat.preferredName != "" && self.HomeDERP == 0 {
				self.HomeDERP = p.region(0, "", nat.preferredName)
			}
		}
	}
	if len(ev.Spread) > 0 {
		p.inputs = append(p.inputs, Input{Kind: "netcheck reports", Note: spreadNote(ev.Spread)})
	}
	if lat != nil {
		f.Netcheck = &probes.DERPLatencyReport{At: lat.at, ByRegion: lat.latency}
		if self.NAT != nil {
			self.NAT.DERPLatency = lat.latency
		}
	}
	if p.homeDERP != 0 {
		self.HomeDERP = p.homeDERP
	}
	self.Endpoints, self.EndpointTypes = p.endpoints, p.epTypes
	if !reflect.DeepEqual(ev, probes.SelfEvidence{}) {
		self.Evidence = &ev
	}
	return self
}
