package probes

import (
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestJudgeAgainSameSource: a peer whose endpoints only its own side lists
// (a peer's snapshot, the control API) is judged the same the second time
// (a poll, a relink): judging must not leave those endpoints on the peer
// as if WhoIs had given them.
func TestJudgeAgainSameSource(t *testing.T) {
	p := relayedPeer()
	p.EndpointsKnown = false
	p.PeerSide = &PeerSide{Source: SourcePeerSnapshot, At: time.Unix(1, 0),
		Endpoints: []netip.AddrPort{netip.MustParseAddrPort("203.0.113.77:61234")}, MappingVariesByDestIP: boolp(true), HavePortMap: boolp(false)}
	s := &Snapshot{Self: easySelf(), Peers: []Peer{p}, Regions: testRegions}
	Judge(s, nil)
	first := s.Peers[0].Verdict
	if s.Peers[0].EndpointsKnown {
		t.Errorf("judging marked the peer's endpoints known (WhoIs's) from its side")
	}
	Judge(s, nil)
	if diff := cmp.Diff(first, s.Peers[0].Verdict); diff != "" {
		t.Errorf("the second judgement differs (-first +second):\n%s", diff)
	}
	found := false
	for _, c := range first.Checks {
		found = found || c.Field == "PeerSnapshot.Endpoints" && c.Source == SourcePeerSnapshot
	}
	if !found {
		t.Errorf("no PeerSnapshot.Endpoints check in %v", first.Checks)
	}
}
