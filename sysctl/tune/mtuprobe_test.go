package tune

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// pathPing fakes tailscaled's sized DISCO ping over a path that carries
// packets up to maxWire bytes directly; bigger ones only come back through
// DERP. derpFirst makes DERP win the race once per size, as it can when
// tailscaled sends a big ping both ways. It stands in for a path-MTU
// black hole, which the lab's loopback tailnet cannot have.
func pathPing(maxWire int, derpFirst bool) SizedPing {
	raced := map[int]bool{}
	return func(ctx context.Context, size int) (Pong, error) {
		wire := size + 28
		if size == 0 || wire <= maxWire {
			if derpFirst && size > 0 && !raced[size] {
				raced[size] = true
				return Pong{Path: PongDERP, Via: "DERP(fra)", Latency: 30 * time.Millisecond}, nil
			}
			return Pong{Path: PongDirect, Via: "203.0.113.5:41641", Latency: 20 * time.Millisecond}, nil
		}
		return Pong{Path: PongDERP, Via: "DERP(fra)", Latency: 30 * time.Millisecond}, nil
	}
}

func TestProbeMTU(t *testing.T) {
	tests := []struct {
		name      string
		ping      SizedPing
		tun       int // tailscale0's MTU; 0 is the default
		largest   int
		trouble   bool
		relayed   bool
		verdict   string
		fix       string
		clamp     int // the MSS over IPv4 the clamp sets; 0 for none
		maxPings  int
		lastTried int
	}{
		{name: "jumbo path", ping: pathPing(9000, false), largest: 9000, verdict: "MTU fine: the direct path carries 9000 bytes (the largest size probed", lastTried: 9000},
		{name: "ethernet", ping: pathPing(1500, true), largest: 1500, verdict: "MTU fine: the direct path carries 1500 bytes (not 8000), enough for tailscale0's 1280-byte packets (1360 on the wire)"},
		{name: "the field's WAN: 1324", ping: pathPing(1324, false), largest: 1324, trouble: true,
			verdict: "MTU trouble: the direct path carries 1324 bytes, below what Tailscale supports: its smallest tunnel packets need 1360 bytes on the wire (tunnel MTU 1280, IPv6's minimum, + 80)",
			fix:     "correct the WAN MTU of the router on this path to what its link really carries (a WAN MTU of 1324 matches what this path carries)", clamp: 1284,
			maxPings: 40}, // a size that fails takes 6 tries
		{name: "PPPoE inside a VPN: 1320", ping: pathPing(1320, false), largest: 1320, trouble: true,
			verdict: "carries 1320 bytes, below what Tailscale supports", fix: "set net.ipv4.tcp_mtu_probing=1 on this host", clamp: 1280, maxPings: 40},
		{name: "drops everything big", ping: pathPing(500, false), trouble: true, verdict: "does not carry even 576 bytes (small pings go direct), below what Tailscale supports",
			fix: "correct the WAN MTU of the router on this path to what its link really carries: ", lastTried: 576},
		{name: "TS_DEBUG_MTU 1500 over PPPoE: back toward the default, never below 1280", ping: pathPing(1492, false), tun: 1500, largest: 1492, trouble: true,
			verdict: "MTU trouble: the direct path carries 1492 bytes but tailscale0's 1500-byte packets need 1580 on the wire",
			fix:     "lower it to 1412 or less, or unset TS_DEBUG_MTU for the default 1280 (1360 bytes on the wire, which this path carries)"},
		{name: "relayed", ping: func(ctx context.Context, size int) (Pong, error) {
			return Pong{Path: PongDERP, Via: "DERP(lab1)"}, nil
		}, relayed: true, verdict: "relayed: even the smallest ping came back only via DERP(lab1)", fix: "see why the path is relayed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pings := 0
			ping := func(ctx context.Context, size int) (Pong, error) { pings++; return tt.ping(ctx, size) }
			var lines []string
			r, err := ProbeMTU(context.Background(), "nas", ping, MTUProbeOptions{TunMTU: tt.tun, Progress: func(s string) { lines = append(lines, s) }})
			if err != nil {
				t.Fatal(err)
			}
			if r.LargestWire != tt.largest || r.Trouble != tt.trouble || r.Relayed != tt.relayed {
				t.Errorf("largest %d trouble %v relayed %v; want %d %v %v\n%+v", r.LargestWire, r.Trouble, r.Relayed, tt.largest, tt.trouble, tt.relayed, r)
			}
			if !strings.Contains(r.Verdict, tt.verdict) || !strings.Contains(r.Fix, tt.fix) {
				t.Errorf("verdict %q fix %q; want %q and %q", r.Verdict, r.Fix, tt.verdict, tt.fix)
			}
			switch {
			case tt.clamp == 0 && r.Clamp != nil:
				t.Errorf("clamp %+v, want none", r.Clamp)
			case tt.clamp > 0 && (r.Clamp == nil || r.Clamp.MSS4 != tt.clamp || r.Clamp.MSS6 != tt.clamp-20 || r.Clamp.Wire != tt.largest):
				t.Errorf("clamp %+v, want MSS %d over IPv4 for %d bytes", r.Clamp, tt.clamp, tt.largest)
			}
			if tt.maxPings > 0 && pings > tt.maxPings {
				t.Errorf("%d pings, want at most %d", pings, tt.maxPings)
			}
			if len(lines) != pings {
				t.Errorf("%d progress lines for %d pings", len(lines), pings)
			}
			if tt.lastTried > 0 && r.Tries[len(r.Tries)-1].Wire != tt.lastTried {
				t.Errorf("last size tried %d, want %d", r.Tries[len(r.Tries)-1].Wire, tt.lastTried)
			}
			var b bytes.Buffer
			r.WriteText(&b)
			if !strings.Contains(b.String(), tt.verdict) {
				t.Errorf("text lacks the verdict:\n%s", b.String())
			}
			if r.Clamp != nil && !strings.Contains(b.String(), fmt.Sprintf("TCPMSS --set-mss %d\n", tt.clamp)) {
				t.Errorf("text lacks the iptables rule:\n%s", b.String())
			}
		})
	}
}

func TestProbeMTUNoAnswer(t *testing.T) {
	ping := func(ctx context.Context, size int) (Pong, error) {
		<-ctx.Done()
		return Pong{}, ctx.Err()
	}
	_, err := ProbeMTU(context.Background(), "gone", ping, MTUProbeOptions{TryTimeout: 10 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no pong from gone at all") {
		t.Fatalf("err = %v", err)
	}
}
