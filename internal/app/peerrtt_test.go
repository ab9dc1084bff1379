package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes/lab"
)

// TestPeerRTTAgainstLab: tailpath tune --peer NAME takes its RTT from
// TSMP pings through tailscaled (here the lab's observer) to that peer, by
// host name or Tailscale IP, and says clearly when no peer has that name.
func TestPeerRTTAgainstLab(t *testing.T) {
	l := startTestLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, name := range []string{lab.DirectName, lab.DERPName} {
		rtt, err := PeerRTT(ctx, l.Observer(), name)
		if err != nil {
			t.Fatalf("PeerRTT(%s): %v", name, err)
		}
		if rtt <= 0 || rtt > 5*time.Second {
			t.Errorf("PeerRTT(%s) = %v, want a positive loopback round trip", name, rtt)
		}
		t.Logf("%s: TSMP RTT %v", name, rtt)
	}
	var directIP string
	for _, p := range l.Peers() {
		if p.Name == lab.DirectName {
			directIP = p.TailscaleIP.String()
		}
	}
	if rtt, err := PeerRTT(ctx, l.Observer(), directIP); err != nil || rtt <= 0 {
		t.Errorf("peerRTT by IP %s = %v, %v", directIP, rtt, err)
	}
	_, err := PeerRTT(ctx, l.Observer(), "no-such-peer")
	if err == nil || !strings.Contains(err.Error(), `no peer named "no-such-peer"`) {
		t.Errorf("unknown peer: err = %v", err)
	}
}
