package tune

import (
	"bytes"
	"context"
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
		largest   int
		trouble   bool
		relayed   bool
		verdict   string
		fix       string
		maxPings  int
		lastTried int
	}{
		{"jumbo path", pathPing(9000, false), 9000, false, false, "MTU fine: the direct path carries 9000 bytes (the largest size probed", "", 0, 9000},
		{"ethernet", pathPing(1500, true), 1500, false, false, "MTU fine: the direct path carries 1500 bytes (not 8000), enough for tailscale0's 1280-byte packets (1360 on the wire)", "", 0, 0},
		{"PPPoE inside a VPN: 1320", pathPing(1320, false), 1320, true, false,
			"MTU trouble: the direct path carries 1320 bytes but full-size tunnel packets need 1360", "TS_DEBUG_MTU=1240", 30, 0}, // a size that fails takes 6 tries
		{"drops everything big", pathPing(500, false), 0, true, false, "not even a 576-byte packet", "fix the path's MTU", 0, 576},
		{"relayed", func(ctx context.Context, size int) (Pong, error) {
			return Pong{Path: PongDERP, Via: "DERP(lab1)"}, nil
		}, 0, false, true, "relayed: even the smallest ping came back only via DERP(lab1)", "see why the path is relayed", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pings := 0
			ping := func(ctx context.Context, size int) (Pong, error) { pings++; return tt.ping(ctx, size) }
			var lines []string
			r, err := ProbeMTU(context.Background(), "nas", ping, MTUProbeOptions{Progress: func(s string) { lines = append(lines, s) }})
			if err != nil {
				t.Fatal(err)
			}
			if r.LargestWire != tt.largest || r.Trouble != tt.trouble || r.Relayed != tt.relayed {
				t.Errorf("largest %d trouble %v relayed %v; want %d %v %v\n%+v", r.LargestWire, r.Trouble, r.Relayed, tt.largest, tt.trouble, tt.relayed, r)
			}
			if !strings.Contains(r.Verdict, tt.verdict) || !strings.Contains(r.Fix, tt.fix) {
				t.Errorf("verdict %q fix %q; want %q and %q", r.Verdict, r.Fix, tt.verdict, tt.fix)
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
