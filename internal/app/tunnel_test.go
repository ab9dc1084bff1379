package app

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes/localapi"
)

// TestDaemonTUNNotRunning: with nothing on the socket the answer is
// ErrNotRunning at once, not after the LocalAPI client's two seconds of
// waiting for a tailscaled that might be starting. (A real tailscaled's
// answer is TestRealTailscaled's.)
func TestDaemonTUNNotRunning(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("the one-shot dial is Linux's; on %s the LocalAPI client's own applies", runtime.GOOS)
	}
	sock := filepath.Join(t.TempDir(), "none.sock")
	start := time.Now()
	_, err := DaemonTUN(sock)(context.Background())
	if took := time.Since(start); !errors.Is(err, localapi.ErrNotRunning) || took > time.Second {
		t.Fatalf("DaemonTUN(%s) = %v after %v; want ErrNotRunning at once", sock, err, took)
	}
}
