package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/sysctl/tune"
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
		if rtt <= 0 || rtt > time.Minute {
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

// TestTuneMTUProbeAgainstLab: tailpath tune --mtu-probe through the lab's
// real tailscaled code. lab-direct is direct over loopback, which carries
// every size probed; lab-derp is relayed, and the probe says so instead of
// inventing an MTU.
func TestTuneMTUProbeAgainstLab(t *testing.T) {
	l := startTestLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := l.WaitDirect(ctx, lab.DirectName); err != nil {
		t.Fatal(err)
	}
	r, err := mtuProbe(ctx, l.Observer(), lab.DirectName, tune.MTUProbeOptions{Progress: func(s string) { t.Log(lab.DirectName + ": " + s) }})
	if err != nil {
		t.Fatal(err)
	}
	last := tune.MTUProbeWire[len(tune.MTUProbeWire)-1]
	if r.Relayed || r.Trouble || r.LargestWire != last || !r.Capped || !strings.HasPrefix(r.Via, "127.0.0.1:") {
		t.Errorf("%s: %+v; want direct via 127.0.0.1 carrying %d bytes", lab.DirectName, r, last)
	}
	if !strings.Contains(r.Verdict, fmt.Sprintf("MTU fine: the direct path carries %d bytes (the largest size probed", last)) {
		t.Errorf("verdict %q", r.Verdict)
	}
	r, err = mtuProbe(ctx, l.Observer(), lab.DERPName, tune.MTUProbeOptions{Progress: func(s string) { t.Log(lab.DERPName + ": " + s) }})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Relayed || r.LargestWire != 0 || len(r.Tries) != 0 || !strings.Contains(r.Verdict, "relayed: even the smallest ping came back only via DERP(lab1)") {
		t.Errorf("%s: %+v; want a clear relayed result", lab.DERPName, r)
	}
	if _, err := mtuProbe(ctx, l.Observer(), "no-such-peer", tune.MTUProbeOptions{}); err == nil || !strings.Contains(err.Error(), `no peer named "no-such-peer"`) {
		t.Errorf("unknown peer: %v", err)
	}
}
