package app

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes/tailscaled"
)

// TestDaemonTUNNotRunning: with nothing on the socket the answer is
// ErrNotRunning, from one dial rather than the LocalAPI client's two
// seconds of waiting for a tailscaled that might be starting: how soon is
// BenchmarkDaemonTUNNotRunning's (docs/perf.md), since no test asserts a
// time. (A real tailscaled's answer is TestRealTailscaled's.)
func TestDaemonTUNNotRunning(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("the one-shot dial is Linux's; on %s the LocalAPI client's own applies", runtime.GOOS)
	}
	sock := filepath.Join(t.TempDir(), "none.sock")
	start := time.Now()
	_, err := DaemonTUN(sock)(context.Background())
	if !errors.Is(err, tailscaled.ErrNotRunning) {
		t.Fatalf("DaemonTUN(%s) = %v; want ErrNotRunning", sock, err)
	}
	t.Logf("ErrNotRunning after %v", time.Since(start))
}

// BenchmarkDaemonTUNNotRunning is how long tune waits to learn that no
// tailscaled answers on the socket (docs/perf.md): one dial, not the
// LocalAPI client's two seconds of retrying.
//
//	go test ./internal/app -run '^$' -bench DaemonTUNNotRunning -benchtime 20x
func BenchmarkDaemonTUNNotRunning(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skipf("the one-shot dial is Linux's")
	}
	probe := DaemonTUN(filepath.Join(b.TempDir(), "none.sock"))
	for b.Loop() {
		if _, err := probe(context.Background()); !errors.Is(err, tailscaled.ErrNotRunning) {
			b.Fatal(err)
		}
	}
}
