package tune

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
)

// TestSeedNAS: the demo's NAS reads as the seed case (DSM on 4.4, no BBR,
// 20 ms), its upload is buffer limited and its second connection has MTU
// trouble; applying raises tcp_wmem and the upload is then the sample
// recorded with that value, faster and no longer buffer limited.
func TestSeedNAS(t *testing.T) {
	dir := t.TempDir()
	in, err := SeedNAS(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := Gather(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Platform.Kind != sysctl.PlatformDSM || r.BBR.State != sysctl.BBRImpossible || r.BBR.Kernel != "4.4.302+" || r.Rec.Target.RTT != SeedRTT {
		t.Fatalf("seed NAS: %+v, BBR %s, kernel %s, RTT %v", r.Platform, r.BBR.State, r.BBR.Kernel, r.Rec.Target.RTT)
	}
	kinds := func(r Report) (up, hole sockdiag.Conn) {
		if len(r.Conns) != 2 {
			t.Fatalf("%d connections, want 2", len(r.Conns))
		}
		for _, c := range r.Conns {
			if c.Verdict.Kind == sockdiag.VerdictMTU {
				hole = c
			} else {
				up = c
			}
		}
		return up, hole
	}
	up, hole := kinds(r)
	if up.Verdict.Kind != sockdiag.VerdictSndbuf || hole.Verdict.Kind != sockdiag.VerdictMTU || up.Info.DeliveryRate == nil {
		t.Fatalf("before: upload %+v, other %+v", up.Verdict, hole.Verdict)
	}
	before := float64(*up.Info.DeliveryRate) * 8
	// Something says the buffers limit (the arithmetic, and the upload
	// measured send-buffer limited): the raise stays, with tcp_mtu_probing
	// for the other connection.
	if !r.Rec.BuffersLimit || r.Tunnel.Mode != TunnelKernel || len(r.Rec.Changes) != 5 || r.Rec.TCPWmem.Max != 16<<20 {
		t.Fatalf("before: limit %v (%s), tunnel %s, changes %v", r.Rec.BuffersLimit, r.Rec.LimitWhy, r.Tunnel.Mode, r.Rec.Changes)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	for _, want := range []string{"Synology DSM 7.1.1-42962 Update 6", "kernel 4.4.302+", "verdict: 1 buffer limited (applying raises tcp_wmem max); 1 with MTU trouble",
		"send queue full (19.2 KiB queued of a 16 KiB buffer, tcp_wmem's max)", "net.ipv4.tcp_wmem                   4096 16384 16384    4096 16384 16777216"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
	state := filepath.Join(dir, "state.json")
	var out bytes.Buffer
	if err := Run(ctx, in, Action{Apply: true, Yes: true, StatePath: state}, nil, &out); err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	r, err = Gather(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	up, _ = kinds(r)
	after := float64(*up.Info.DeliveryRate) * 8
	// The demo's story, as recorded: 9.4 Mbit/s before, 192.8 after.
	if up.Verdict.Kind == sockdiag.VerdictSndbuf || sysctl.FormatBandwidth(before) != "9.4 Mbit/s" || sysctl.FormatBandwidth(after) != "192.8 Mbit/s" {
		t.Errorf("after applying: %s at %s, before %s", up.Verdict.Kind, sysctl.FormatBandwidth(after), sysctl.FormatBandwidth(before))
	}
	t.Logf("seed NAS upload: %s before, %s after applying", sysctl.FormatBandwidth(before), sysctl.FormatBandwidth(after))
	if err := Run(ctx, in, Action{Revert: true, Yes: true, StatePath: state}, nil, &out); err != nil {
		t.Fatal(err)
	}
	if r, _ = Gather(ctx, in); func() bool { u, _ := kinds(r); return u.Verdict.Kind != sockdiag.VerdictSndbuf }() {
		t.Error("after revert the upload is not buffer limited again")
	}
}
