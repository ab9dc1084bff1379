// Package boardtest is test support shared by the joiner's and the panes'
// tests: a board's state built from the frames it printed (BoardState) and a
// gather with that board relayed (RelayedSnapshot).
package boardtest

import (
	"net/netip"
	"testing"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/probes"
)

// BoardState is the devlink.State a Source would hold after the board
// printed frames at time at: each parsed as a console line
// (devlink.ParseLine) and folded into the state (State.ApplyLine). A frame
// that does not parse as telemetry fails the test.
func BoardState(t testing.TB, at time.Time, frames ...string) *devlink.State {
	t.Helper()
	st := devlink.NewState()
	for _, f := range frames {
		var l devlink.Line
		devlink.ParseLine([]byte(f+"\n"), &l)
		if l.Kind != devlink.KindTelemetry {
			t.Fatalf("%q parsed as %v, not telemetry", f, l.Kind)
		}
		st.ApplyLine(&l, at, nil)
	}
	return st
}

// RelayedSnapshot is a gather at time at over regions (which hold region 1,
// nyc): one relayed peer, the board esp32-s3 at 100.64.0.9 with no
// endpoints, and one direct peer, nas; judged by the real probes.Judge
// (no board linked).
func RelayedSnapshot(at time.Time, regions map[int]probes.Region) probes.Snapshot {
	self := probes.Self{Name: "workstation", HomeDERP: 1, HomeDERPCode: "nyc",
		NAT: &probes.NATInfo{WorkingUDP: new(true), MappingVariesByDestIP: new(false)}}
	board := probes.Peer{ID: "nBOARD", Name: "esp32-s3", OS: "freertos",
		TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.9")}, Active: true,
		Path:     probes.Path{Kind: probes.PathDERP, DERPCode: "nyc", Text: `active; relay "nyc"`},
		HomeDERP: 1, HomeDERPCode: "nyc", EndpointsKnown: true}
	nas := probes.Peer{ID: "nNAS", Name: "nas", OS: "linux",
		TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.2")}, Active: true,
		Path: probes.Path{Kind: probes.PathDirect, Addr: netip.MustParseAddrPort("203.0.113.10:41641"),
			Text: "active; direct 203.0.113.10:41641"}}
	s := probes.Snapshot{Time: at, BackendState: "Running", Self: self,
		Regions: regions, Peers: []probes.Peer{board, nas}}
	probes.Judge(&s, nil)
	return s
}
