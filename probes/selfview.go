package probes

import (
	"slices"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// SelfView is what tailpath shows of this node's own end of every path
// (the Self tab, status's self block, --json's self.view, /metrics),
// worked out from the gather by DescribeSelf: the home DERP choice
// explained, every region's latency, what each health warning means and
// how to fix it, whether UDP gets in, and the known bugs of this node's
// client version.
type SelfView struct {
	// Home is the home DERP region explained (ExplainHome).
	Home HomeChoice `json:"home"`
	// Regions are the DERP map's regions, by id.
	Regions []RegionView `json:"regions,omitempty"`
	// UDPReceive says whether direct UDP reaches this node.
	UDPReceive UDPReceive `json:"udp_receive"`
	// Health is each of tailscaled's health warnings with its meaning.
	Health []HealthMeaning `json:"health,omitempty"`
	// Bugs are the known bugs (KnownBugs) whose versions and platforms
	// hold this node's client; nil when none does or the version is
	// unknown.
	Bugs []BugMatch `json:"known_bugs,omitempty"`
	// Caveat says whose NAT facts and latencies these are when they are
	// not tailscaled's own (a pasted `tailscale netcheck`, or tailpath's
	// own measurement beside the daemon's report); "" when they are.
	Caveat safetext.Text `json:"caveat,omitempty"`
}

// RegionView is one DERP region as this node sees it.
type RegionView struct {
	ID   int           `json:"id"`
	Code safetext.Text `json:"code"`
	// Latency is the region's latency in the report (Self.NAT.DERPLatency),
	// 0 when it did not answer or was not measured; Reported is
	// tailscaled's own figure when tailpath measured Latency itself
	// (Self.NetInfoLatency), else 0. Nanoseconds in JSON.
	Latency  time.Duration `json:"latency_ns,omitempty"`
	Reported time.Duration `json:"reported_ns,omitempty"`
	// Home and Best mark this node's home and the fastest region.
	Home bool `json:"home,omitempty"`
	Best bool `json:"best,omitempty"`
	// Far: slower than the best by tailpath's far thresholds
	// (FarDERPFactor, FarDERPMargin).
	Far bool `json:"far,omitempty"`
	// Unreachable: a region netcheck measures that answered nothing
	// while others did.
	Unreachable bool `json:"unreachable,omitempty"`
	// NoHome and STUNOnly are the map's: never measured nor home, or no
	// relay.
	NoHome   bool `json:"no_home,omitempty"`
	STUNOnly bool `json:"stun_only,omitempty"`
	// Score is the map's RegionScore (0: none).
	Score float64 `json:"score,omitempty"`
	// Relayed counts the peers relayed through the region now (their
	// home: Path.DERPCode).
	Relayed int `json:"relayed,omitempty"`
}

// UDPReceive is whether direct UDP gets in: "ok" with how that is known,
// "stopped" (a receive loop stopped), "blocked" (no STUN reply came back)
// or "unknown".
type UDPReceive struct {
	State string        `json:"state"`
	Text  safetext.Text `json:"text"`
}

// HealthMeaning is one health warning and what the reason table's rows
// that judge this node make of it.
type HealthMeaning struct {
	Warning safetext.Text `json:"warning"`
	// Reason is the row that reads it ("" when none does), Summary and
	// Fix its words for this warning.
	Reason  ReasonID      `json:"reason,omitempty"`
	Summary safetext.Text `json:"summary,omitempty"`
	Fix     safetext.Text `json:"fix,omitempty"`
}

// BugMatch is a known bug whose range holds this node's client version.
type BugMatch struct {
	ID         string `json:"id"`
	Issue      string `json:"issue"`
	FixedIn    string `json:"fixed_in,omitempty"`
	Symptom    string `json:"symptom"`
	Workaround string `json:"workaround"`
	// Hit: the bug's own symptom is in this node's evidence (it is then
	// also a verdict: known-client-bug); false: only the version matches.
	Hit bool `json:"hit"`
}

// DescribeSelf works out s's SelfView with the gather's tailnet-wide facts
// tn (nil: none). Pure; Judge calls it once per gather.
func DescribeSelf(s *Snapshot, tn *Tailnet) *SelfView {
	self := &s.Self
	v := &SelfView{Home: ExplainHome(*self, s.Regions, tn.RegionUp(self.HomeDERP) != "")}
	v.Regions = regionViews(s, &v.Home)
	v.Health = HealthMeanings(*self, s.Regions, s.Time, tn)
	v.UDPReceive = udpReceive(self, v.Health, tn)
	v.Bugs = SelfBugs(*self, s.Regions, s.Time, tn)
	switch {
	case self.NAT != nil && self.NAT.FromCLI:
		v.Caveat = "these NAT facts are `tailscale netcheck`'s: the CLI measures from a socket of its own on another port, so its mapping is not tailscaled's port's (a static-port rule or several nodes contending for 41641 make them differ); tailscaled's own NetInfo decides the NAT type"
	case self.DERPLatencyFrom == "netcheck":
		v.Caveat = "latencies measured by tailpath, as `tailscale netcheck` does, from its own socket; the NAT facts are tailscaled's own (NetInfo)"
	}
	return v
}

// regionViews lists s's DERP regions with this node's latencies.
func regionViews(s *Snapshot, hc *HomeChoice) []RegionView {
	if len(s.Regions) == 0 {
		return nil
	}
	var lat map[int]time.Duration
	if s.Self.NAT != nil {
		lat = s.Self.NAT.DERPLatency
	}
	relayed := map[safetext.Text]int{}
	for i := range s.Peers {
		if p := &s.Peers[i]; p.Path.Kind == PathDERP && p.Path.DERPCode != "" {
			relayed[p.Path.DERPCode]++
		}
	}
	out := make([]RegionView, 0, len(s.Regions))
	for id, r := range s.Regions {
		rv := RegionView{ID: id, Code: r.Code, Latency: lat[id], Reported: s.Self.NetInfoLatency[id],
			Home: id == s.Self.HomeDERP, Best: id == hc.Best && hc.Best != 0,
			NoHome: r.NoHome, STUNOnly: r.STUNOnly, Score: r.Score, Relayed: relayed[r.Code]}
		if b := hc.BestLatency; rv.Latency > 0 && b > 0 {
			rv.Far = rv.Latency >= FarDERPFactor*b && rv.Latency-b >= FarDERPMargin
		}
		rv.Unreachable = rv.Latency == 0 && len(lat) > 0 && !r.NoHome
		out = append(out, rv)
	}
	slices.SortFunc(out, func(a, b RegionView) int { return a.ID - b.ID })
	return out
}

// HealthMeanings reads each of self's health warnings through the reason
// table's rows that judge this node (diagnoseSelf's walk, with that
// warning alone as the evidence): the reason it makes hold, and its
// summary and fix; a warning no row reads keeps no reason.
func HealthMeanings(self Self, regions map[int]Region, now time.Time, tn *Tailnet) []HealthMeaning {
	if len(self.Health) == 0 {
		return nil
	}
	out := make([]HealthMeaning, 0, len(self.Health))
	for _, w := range self.Health {
		alone := Self{Name: self.Name, OS: self.OS, TailscaleIPs: self.TailscaleIPs, HomeDERP: self.HomeDERP,
			HomeDERPCode: self.HomeDERPCode, DERPRegions: self.DERPRegions, Health: []safetext.Text{w}}
		hm := HealthMeaning{Warning: w}
		if v := diagnoseSelf("", alone, regions, now, tn); v != nil {
			hm.Reason, hm.Summary, hm.Fix = v.Reason, v.Summary, v.Fix
		}
		out = append(out, hm)
	}
	return out
}

// udpReceive says whether direct UDP gets in, from the health warnings
// (a stopped receive loop), a peer's path that proves it (Tailnet.UDP),
// and netcheck's STUN replies. A peer direct over a non-public address
// (Tailnet.LANUDP) proves UDP on the LAN only, and is named as that, so
// the line never says no peer is direct beside one that is.
func udpReceive(self *Self, health []HealthMeaning, tn *Tailnet) UDPReceive {
	for _, h := range health {
		if h.Reason == ReasonSelfUDPReceiveStopped {
			return UDPReceive{State: "stopped", Text: safetext.New("stopped: " + string(h.Warning))}
		}
	}
	if tn.UDPWorks() {
		return UDPReceive{State: "ok", Text: safetext.New("ok: peer " + string(tn.UDP) + " proves it (" + string(tn.UDPHow) + ")")}
	}
	lan := ""
	if tn != nil && tn.LANUDP != "" {
		lan = "peer " + string(tn.LANUDP) + " is direct over a non-public address, which proves UDP on the LAN only"
	}
	if n := self.NAT; n != nil && n.WorkingUDP != nil {
		if *n.WorkingUDP {
			if lan != "" {
				return UDPReceive{State: "ok", Text: safetext.New("ok: netcheck's STUN replies came back (" + lan + "; no peer is direct over a public address)")}
			}
			return UDPReceive{State: "ok", Text: "ok: netcheck's STUN replies came back (no peer is direct now to prove it for peers' packets)"}
		}
		if lan != "" {
			return UDPReceive{State: "blocked", Text: safetext.New("no STUN reply came back: UDP past the LAN looks blocked here (local-udp-blocked; " + lan + ")")}
		}
		return UDPReceive{State: "blocked", Text: "no STUN reply came back: UDP looks blocked here (local-udp-blocked)"}
	}
	if lan != "" {
		return UDPReceive{State: "unknown", Text: safetext.New("unknown past the LAN: no netcheck yet (" + lan + ")")}
	}
	return UDPReceive{State: "unknown", Text: "unknown: no netcheck yet and no direct peer"}
}

// SelfBugs are the known bugs whose versions and platforms hold self's
// client (Self.Version, Self.OS), each with whether its symptom shows in
// this node's own evidence; nil when the version is unknown or none
// matches. Pure.
func SelfBugs(self Self, regions map[int]Region, now time.Time, tn *Tailnet) []BugMatch {
	v := string(self.Version)
	if v == "" {
		return nil
	}
	d := newDiag(self, Peer{}, regions, now)
	defer d.free()
	d.tn, d.selfScope = tn, true
	var out []BugMatch
	for i := range knownBugs {
		b := &knownBugs[i]
		if hit, _ := b.affects(v, string(self.OS)); !hit {
			continue
		}
		out = append(out, BugMatch{ID: b.ID, Issue: b.Issue, FixedIn: b.FixedIn, Symptom: b.Symptom,
			Workaround: b.Workaround, Hit: b.symptom != nil && b.symptom(d, sideSelf)})
	}
	return out
}

// HomeRelayed is how many peers are relayed through region id now.
func (v *SelfView) HomeRelayed(id int) int {
	for _, r := range v.Regions {
		if r.ID == id {
			return r.Relayed
		}
	}
	return 0
}

// ReceiveWords is UDPReceive's state as one word for a narrow column.
func (u UDPReceive) ReceiveWords() string {
	s, _, _ := strings.Cut(string(u.Text), ":")
	return s
}
