package paste

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes/snapshot"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"
)

// pasteIP is the n-th peer's address in generated pastes.
func pasteIP(n int) string {
	return fmt.Sprintf("100.%d.%d.%d", 64+n>>16%64, n>>8&255, n&255)
}

// pasteOf writes lines made by line(i), i = 0, 1, …, until size bytes.
func pasteOf(size int, line func(i int) string) []byte {
	var b bytes.Buffer
	b.Grow(size + 256)
	for i := 0; b.Len() < size; i++ {
		b.WriteString(line(i))
	}
	return b.Bytes()
}

// pasteShapes are pastes of each shape that a bound stops, by size.
var pasteShapes = []struct {
	name string
	gen  func(size int) []byte
	says string // in the error: the bound that stopped it
}{
	{"tailscale status", func(size int) []byte {
		return pasteOf(size, func(i int) string {
			if i == 0 {
				return "100.64.0.1  laptop  alice@  linux  -\n"
			}
			return fmt.Sprintf("%s  node%d  alice@  linux  active; relay \"fra\", tx 2048 rx 4096\n", pasteIP(i), i)
		})
	}, "more than 20001 lines of tailscale status; tailpath reads at most 20000 peers"},
	{"tailscale ping", func(size int) []byte {
		return pasteOf(size, func(i int) string {
			return fmt.Sprintf("$ tailscale ping node%d\npong from node%d (%s) via DERP(fra) in 20ms\n", i, i, pasteIP(i))
		})
	}, "tailscale ping of more than 20000 targets"},
	{"tailscaled log", func(size int) []byte {
		return pasteOf(size, func(i int) string {
			return fmt.Sprintf("Nov 30 11:%02d:%02d nas tailscaled[1160]: magicsock: derp-2 connected; connGen=%d\n", i/60%60, i%60, i)
		})
	}, "more than 100000 lines of text"},
	{"words", func(size int) []byte {
		return pasteOf(size, func(i int) string {
			return "some words that mean nothing at all to the reader, line " + fmt.Sprint(i) + "\n"
		})
	}, "more than 100000 lines of text"},
	{"blank lines", func(size int) []byte {
		return bytes.Repeat([]byte("\n"), size)
	}, "more than 100000 lines of text"},
	{"one long line", func(size int) []byte {
		return append(bytes.Repeat([]byte("x "), size/2), '\n')
	}, "a line of"},
	{"JSON that never ends", func(size int) []byte {
		return pasteOf(size, func(int) string { return "{\"a\": [1,\n" })
	}, "JSON that never ends"},
}

// TestPasteCaps: pasted text is bounded as a snapshot file is, by
// peers, lines and bytes: past a bound, Parse fails with ErrTooLarge and
// an error naming it. Before the bounds, a 64 MiB paste of
// `tailscale status` took 735 s and 3.7 GB, and lines opening with "{"
// took time growing with their square (512 KiB: 48 s).
func TestPasteCaps(t *testing.T) {
	// Each a little past its bound; the log and words shapes, which cost
	// most per line, are left to BenchmarkPasteCapped64MiB.
	sizes := map[string]int{"tailscale status": 2 << 20, "tailscale ping": 3 << 20, "blank lines": MaxPastedLines + 10, "one long line": 1 << 20, "JSON that never ends": 256 << 10}
	for _, sh := range pasteShapes {
		if sizes[sh.name] == 0 {
			continue
		}
		t.Run(sh.name, func(t *testing.T) {
			_, err := Parse([]Raw{{Name: "big.txt", Data: sh.gen(sizes[sh.name])}}, time.Now())
			if !errors.Is(err, snapshot.ErrTooLarge) || !strings.Contains(err.Error(), sh.says) || !strings.Contains(err.Error(), "big.txt") {
				t.Errorf("Parse = %v; want ErrTooLarge naming the input and saying %q", err, sh.says)
			}
		})
	}
	t.Run("tailscale status --json", func(t *testing.T) {
		st := &ipnstate.Status{BackendState: "Running", Self: &ipnstate.PeerStatus{HostName: "laptop"}, Peer: map[key.NodePublic]*ipnstate.PeerStatus{}}
		for i := range snapshot.MaxPeers + 1 {
			var k key.NodePublic
			k.UnmarshalText(fmt.Appendf(nil, "nodekey:%064x", i+1))
			st.Peer[k] = &ipnstate.PeerStatus{ID: tailcfg.StableNodeID(fmt.Sprint("n", i)), PublicKey: k, HostName: fmt.Sprint("node", i), TailscaleIPs: []netip.Addr{netip.MustParseAddr(pasteIP(i + 1))}}
		}
		b, _ := json.Marshal(st)
		_, err := Parse([]Raw{{Name: "st.json", Data: b}}, time.Now())
		if !errors.Is(err, snapshot.ErrTooLarge) || !strings.Contains(err.Error(), "tailscale status --json of 20001 peers; tailpath reads at most 20000") {
			t.Errorf("Parse = %v; want ErrTooLarge naming the peers bound", err)
		}
	})
	// Within the bounds, as much reads: the largest status and log.
	t.Run("within", func(t *testing.T) {
		var b bytes.Buffer
		b.WriteString("100.64.0.1  laptop  alice@  linux  -\n")
		for i := 1; i <= snapshot.MaxPeers; i++ {
			fmt.Fprintf(&b, "%s  node%d  alice@  linux  idle\n", pasteIP(i), i)
		}
		f, err := Parse([]Raw{{Name: "st.txt", Data: b.Bytes()}}, time.Now())
		if err != nil || len(f.Status.Peer) != snapshot.MaxPeers {
			t.Fatalf("a status of %d peers: %v", snapshot.MaxPeers, err)
		}
	})
}

// BenchmarkPasteCapped64MiB: a 64 MiB paste of each shape, refused at its
// bound (docs/perf.md).
func BenchmarkPasteCapped64MiB(b *testing.B) {
	for _, sh := range pasteShapes {
		data := sh.gen(64 << 20)
		if len(data) > snapshot.MaxSize {
			data = data[:snapshot.MaxSize]
		}
		b.Run(strings.ReplaceAll(sh.name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse([]Raw{{Name: "big.txt", Data: data}}, time.Now()); !errors.Is(err, snapshot.ErrTooLarge) {
					b.Fatalf("Parse = %v, want ErrTooLarge", err)
				}
			}
		})
	}
}
