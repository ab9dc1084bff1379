package probes

import (
	"net/netip"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes/probestest"
)

// syntheticPeers builds n peers: 40% direct, 20% idle, 5% offline, 10% peer
// relay and 25% DERP-relayed with a mix of evidence (no endpoints, private
// only, public, hard NAT, far region).
func syntheticPeers(n int) []Peer {
	peers := make([]Peer, n)
	for i := range peers {
		ip := netip.AddrFrom4([4]byte{100, 64, byte(i >> 8), byte(i)})
		p := Peer{ID: safetext.New("n" + ip.String()), Name: "peer", TailscaleIPs: []netip.Addr{ip}, HomeDERP: 1 + i%3, EndpointsKnown: true,
			Endpoints: []netip.AddrPort{netip.AddrPortFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}), 41641),
				netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 41641)}}
		switch m := i % 20; {
		case m < 8:
			p.Path = Path{Kind: PathDirect, Addr: p.Endpoints[0]}
		case m < 12:
			p.Path = Path{Kind: PathIdle}
		case m < 13:
			p.Path = Path{Kind: PathOffline}
			p.Online = boolp(false)
		case m < 15:
			p.Path = Path{Kind: PathPeerRelay, PeerRelay: "198.51.100.7:7777:vni:1"}
		default:
			p.Path = Path{Kind: PathDERP, DERPCode: "nyc"}
			switch m {
			case 15:
				p.Endpoints = nil
			case 16:
				p.Endpoints = p.Endpoints[1:]
			case 17:
				p.NAT = &NATInfo{MappingVariesByDestIP: boolp(true)}
			}
		}
		peers[i] = p
	}
	return peers
}

// BenchmarkDiagnose10k diagnoses 10,000 synthetic peers per op (target ≤ 10 ms/op).
func BenchmarkDiagnose10k(b *testing.B) {
	self := easySelf()
	self.NAT.MappingVariesByDestIP = boolp(true)
	self.NAT.DERPLatency[3] = 160 * time.Millisecond
	peers := syntheticPeers(10000)
	b.ReportAllocs()
	cpu0 := probestest.CPUTime()
	for b.Loop() {
		for i := range peers {
			_ = Diagnose(self, peers[i], testRegions, time.Time{})
		}
	}
	b.ReportMetric(float64(probestest.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkJudge10k judges a 10,000-peer gather per op, as the joiner
// does: the tailnet-wide facts once, then every verdict with them, and
// this node's own (compare BenchmarkDiagnose10k, the peers alone).
func BenchmarkJudge10k(b *testing.B) { benchJudge10k(b, Judge) }

// BenchmarkJudgePoll10k is BenchmarkJudge10k as a poll judges it
// (JudgePoll: the dashboard's and serve's, every verdict and no peer's
// Settle, which the Detail works out for the one peer it shows).
func BenchmarkJudgePoll10k(b *testing.B) { benchJudge10k(b, JudgePoll) }

// benchJudge10k judges the synthetic 10,000-peer gather with judge per
// op, with its CPU time.
func benchJudge10k(b *testing.B, judge func(*Snapshot, *DeviceEvidence) int) {
	self := easySelf()
	self.NAT.MappingVariesByDestIP = boolp(true)
	self.NAT.DERPLatency[3] = 160 * time.Millisecond
	s := &Snapshot{Self: self, Peers: syntheticPeers(10000), Regions: testRegions, BackendState: "Running"}
	b.ReportAllocs()
	cpu0 := probestest.CPUTime()
	for b.Loop() {
		judge(s, nil)
	}
	b.ReportMetric(float64(probestest.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
