package paste

import (
	"cmp"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// selfFacts assembles our own facts from the netcheck reports (the CLI's
// and the daemon's) and the log: NAT facts from the daemon's newest report
// that measured anything, else the CLI's; latencies from the newest report
// with any; facts the reports disagree on are unknown and listed as a
// spread (SelfEvidence.Spread), never the last report's silently. NAT
// facts the CLI measured are marked so (NATInfo.FromCLI): they decide no
// NAT type of tailscaled's.
func (p *paste) selfFacts(f *snapshot.File) *snapshot.SelfFacts {
	self := &snapshot.SelfFacts{}
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
	// Reports disagree only within one socket's reports: tailscaled's
	// own (its log) among themselves, the CLI's among themselves. The
	// CLI measures from a socket of its own on port 0
	// (cmd/tailscale/cli/netcheck.go, netcheck.Client.Standalone), so
	// where it differs from tailscaled's reports that is two sockets,
	// not a network changing (and tailscaled's reports decide: nat).
	dSpread, cSpread := spreadOf(byTime(p.logNets)), spreadOf(byTime(p.netchecks))
	ev.Spread = mergeSpreads(dSpread, cSpread)
	natSpread := dSpread
	if nat != nil && !slices.Contains(p.logNets, nat) {
		natSpread = cSpread
	}
	if d := cliDiffers(p.logNets, p.netchecks); d != "" {
		p.inputs = append(p.inputs, snapshot.Input{Kind: "netcheck reports", Note: d})
	}
	ev.DERPConnected = p.connectedRegions()
	if nat != nil {
		self.NAT = nat.natInfo()
		// What the paste shows of the DERP map: the regions its reports
		// reached. With one, netcheck had one STUN server's replies to
		// compare (net/netcheck addNodeLatency).
		for _, r := range all {
			self.NAT.STUNRegions = max(self.NAT.STUNRegions, r.regions())
		}
		for _, s := range natSpread {
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
		p.inputs = append(p.inputs, snapshot.Input{Kind: "netcheck reports", Note: spreadNote(ev.Spread)})
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
	self.Version = safetext.New(p.version)
	if !reflect.DeepEqual(ev, probes.SelfEvidence{}) {
		self.Evidence = &ev
	}
	return self
}

// byTime is reports in time order (a copy).
func byTime(reports []*netcheckFacts) []*netcheckFacts {
	out := slices.Clone(reports)
	slices.SortStableFunc(out, func(a, b *netcheckFacts) int { return cmp.Compare(a.at.UnixNano(), b.at.UnixNano()) })
	return out
}

// mergeSpreads joins the spreads of two groups of reports by fact: a
// fact that flaps within either group flaps.
func mergeSpreads(a, b []probes.FactSpread) []probes.FactSpread {
	out := slices.Clone(a)
	for _, sb := range b {
		i := slices.IndexFunc(out, func(s probes.FactSpread) bool { return s.Fact == sb.Fact })
		if i < 0 {
			out = append(out, sb)
			continue
		}
		s := &out[i]
		s.True += sb.True
		s.False += sb.False
		s.Values = append(slices.Clone(s.Values), sb.Values...)
		slices.SortStableFunc(s.Values, func(x, y probes.TimedReport) int { return cmp.Compare(x.At.UnixNano(), y.At.UnixNano()) })
		s.Values = s.Values[max(len(s.Values)-probes.MaxSpreadValues, 0):]
	}
	return out
}

// cliDiffers says which facts the CLI's own netcheck reports differently
// from tailscaled's reports when tailscaled's agree among themselves
// ("" when none): two sockets, not a network that changes.
func cliDiffers(daemon, cli []*netcheckFacts) string {
	var diff []string
	for _, f := range []struct {
		name string
		get  func(*netcheckFacts) *bool
	}{
		{"UDP", func(n *netcheckFacts) *bool { return n.udp }},
		{"MappingVariesByDestIP", func(n *netcheckFacts) *bool { return n.mapping }},
		{"IPv6", func(n *netcheckFacts) *bool { return n.ipv6 }},
	} {
		var d *bool
		agree := true
		for _, r := range daemon {
			if b := f.get(r); b != nil && !r.nothing {
				if d != nil && *d != *b {
					agree = false
				}
				d = b
			}
		}
		if d == nil || !agree {
			continue
		}
		for _, r := range cli {
			if b := f.get(r); b != nil && !r.nothing && *b != *d {
				diff = append(diff, f.name+" "+strconv.FormatBool(*b)+" (tailscaled: "+strconv.FormatBool(*d)+")")
				break
			}
		}
	}
	if len(diff) == 0 {
		return ""
	}
	return "the CLI's netcheck differs from tailscaled's reports, which agree: " + strings.Join(diff, ", ") +
		"; the CLI measures from a socket of its own on port 0 (cmd/tailscale/cli/netcheck.go), so that is two sockets, not a changing network: tailscaled's reports decide"
}

// connectedRegions are the DERP regions tailscaled logged "derp-N
// connected" for and no failure of since (failures after a connect are
// DERPErrors, Reconnected false), in id order.
func (p *paste) connectedRegions() []int {
	var out []int
	for id := range p.derpConnAt {
		if _, failed := p.derpErrIdx[id]; !failed && id > 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
