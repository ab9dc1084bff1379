package lab

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// The DERP-only node re-executes this test binary.
	MaybeRunNode()
	os.Exit(m.Run())
}

// startLab starts a lab for t, logging to a file under the test's temp dir
// (kept and named on failure), and closes it at cleanup.
func startLab(t *testing.T) *Lab {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping lab tailnet (starts control, DERP and five tsnet nodes) under -short")
	}
	logFile := filepath.Join(t.TempDir(), "lab.log")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	l, err := Start(ctx, Options{
		LogFile: logFile,
		Progress: func(step string) {
			t.Logf("%6.2fs %s", time.Since(start).Seconds(), step)
		},
	})
	if err != nil {
		t.Fatalf("Start: %v (logs in %s)", err, logFile)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

func TestLabRawStatus(t *testing.T) {
	l := startLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := l.Observer().Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Peers() {
		ps := FindPeer(st, p.Name)
		if ps == nil {
			t.Fatalf("observer does not list %s", p.Name)
		}
		t.Logf("%s: active=%v curaddr=%q relay=%q online=%v lastseen=%v", p.Name, ps.Active, ps.CurAddr, ps.Relay, ps.Online, ps.LastSeen)
		switch p.Role {
		case RoleDirect:
			ap, err := netip.ParseAddrPort(ps.CurAddr)
			if err != nil || ap.Addr() != netip.MustParseAddr("127.0.0.1") || ap.Port() == 0 {
				t.Errorf("%s CurAddr = %q, want 127.0.0.1:port", p.Name, ps.CurAddr)
			}
		}
	}
}
