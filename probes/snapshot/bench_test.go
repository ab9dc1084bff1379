package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/tscompat"
)

// bigFile is a snapshot of a tailnet with n peers, each with a WhoIs node
// (a public and a private endpoint, NetInfo), a DERP map of two regions.
func bigFile(n int) *File {
	st := &ipnstate.Status{BackendState: "Running", Peer: map[key.NodePublic]*ipnstate.PeerStatus{},
		CurrentTailnet: &ipnstate.TailnetStatus{Name: "example.com", MagicDNSSuffix: "tail1234.ts.net"}, TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.1")},
		Self: &ipnstate.PeerStatus{ID: "nSELF", HostName: "laptop", DNSName: "laptop.tail1234.ts.net.", OS: "linux",
			TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.1")}, Addrs: []string{"198.51.100.10:41641", "192.168.1.20:41641"}, Relay: "nyc"}}
	f := &File{Format: Format, Version: Version, Taken: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Origin: OriginLocalAPI, Status: st,
		DERPMap: &tailcfg.DERPMap{Regions: map[tscompat.RegionID]*tailcfg.DERPRegion{
			1: {RegionID: 1, RegionCode: "nyc", RegionName: "New York City", Nodes: []*tailcfg.DERPNode{{Name: "1a", RegionID: 1, HostName: "derp1.tailscale.com", IPv4: "192.0.2.1"}}},
			4: {RegionID: 4, RegionCode: "fra", RegionName: "Frankfurt", Nodes: []*tailcfg.DERPNode{{Name: "4a", RegionID: 4, HostName: "derp4.tailscale.com", IPv4: "192.0.2.4"}}}}}}
	self := &tailcfg.Node{ID: 1, StableID: "nSELF", Name: "laptop.tail1234.ts.net.",
		Hostinfo: (&tailcfg.Hostinfo{OS: "linux", NetInfo: &tailcfg.NetInfo{WorkingUDP: "true", MappingVariesByDestIP: "false", PreferredDERP: 1,
			DERPLatency: map[string]float64{"1-v4": 0.012, "4-v4": 0.085}}}).View()}
	f.WhoIs = append(f.WhoIs, WhoIs{Addr: "100.64.0.1", Node: self})
	for i := 0; i < n; i++ {
		ip := netip.AddrFrom4([4]byte{100, 64, byte(1 + i/250), byte(2 + i%250)})
		var k key.NodePublic
		k.UnmarshalText(fmt.Appendf(nil, "nodekey:%064x", i+1000))
		name := fmt.Sprintf("node%d", i)
		st.Peer[k] = &ipnstate.PeerStatus{ID: tailcfg.StableNodeID(fmt.Sprintf("n%dCNTRL", i)), PublicKey: k, HostName: name,
			DNSName: name + ".tail1234.ts.net.", OS: "linux", TailscaleIPs: []netip.Addr{ip}, Relay: "fra", Active: i%3 == 0,
			Online: true, LastHandshake: f.Taken.Add(-30 * time.Second), TxBytes: 1 << 20, RxBytes: 2 << 20}
		f.WhoIs = append(f.WhoIs, WhoIs{Addr: ip.String(), Node: &tailcfg.Node{ID: tailcfg.NodeID(i + 10), StableID: tailcfg.StableNodeID(fmt.Sprintf("n%dCNTRL", i)),
			Name: name + ".tail1234.ts.net.", Key: k, HomeDERP: 4,
			Endpoints: []netip.AddrPort{netip.AddrPortFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}), 41641), netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i / 250), byte(i % 250)}), 41641)},
			Hostinfo:  (&tailcfg.Hostinfo{OS: "linux", Hostname: name}).View()}})
	}
	return f
}

// BenchmarkSnapshot measures, for tailnets of 10 and 300 peers, writing
// and reading a snapshot, diagnosing it (File.Diagnose: the replayed
// Gather, every peer's Diagnose, linking) and redacting it.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{10, 300} {
		f := bigFile(n)
		var buf bytes.Buffer
		Write(&buf, f)
		b.Run(fmt.Sprintf("peers=%d/write+read", n), func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				var w bytes.Buffer
				Write(&w, f)
				if _, err := Decode(w.Bytes()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("peers=%d/diagnose", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := f.Diagnose(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("peers=%d/redact", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Redact(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkServeCapture is serve's /snapshot.json capture of a 1,500-peer
// tailnet after a poll: asking WhoIs of every peer (as before) or reusing
// the poll's answers (Options.ReuseWhoIs), then Scrub. The client answers
// from memory, so the time leaves out the LocalAPI round trips the WhoIs
// calls cost on a real socket; whois/op counts them.
func BenchmarkServeCapture(b *testing.B) {
	f := bigFile(1500)
	c := &countingClient{LocalClient: f.Client()}
	ctx := context.Background()
	_, first, err := Capture(ctx, c, Options{Gather: probesGather(f)})
	if err != nil {
		b.Fatal(err)
	}
	for _, reuse := range []bool{false, true} {
		b.Run(fmt.Sprintf("reuse=%v", reuse), func(b *testing.B) {
			c.whois.Store(0)
			for b.Loop() {
				f2, _, err := Capture(ctx, c, Options{Gather: probesGather(f), Prev: first.Snapshot, Joined: first, ReuseWhoIs: reuse})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Scrub(f2); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.whois.Load())/float64(b.N), "whois/op")
		})
	}
}
