package tailscaled

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestNewClientDialsOnce: with no tailscaled behind the socket (missing,
// or a socket file nobody listens on), a request dials once and fails with
// the actionable "not running" error, where local.Client's default dialer
// retried every 250 ms for the first 2 s of the process.
func TestNewClientDialsOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: Windows dials a named pipe with local.Client's own dialer")
	}
	var dials atomic.Int32
	orig := dialSocket
	dialSocket = func(ctx context.Context, path string) (net.Conn, error) {
		dials.Add(1)
		return orig(ctx, path)
	}
	t.Cleanup(func() { dialSocket = orig })

	dir := t.TempDir()
	refused := filepath.Join(dir, "refused.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: refused, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false) // the socket file stays; connecting is refused
	ln.Close()
	for _, sock := range []string{filepath.Join(dir, "missing.sock"), refused} {
		dials.Store(0)
		_, err := NewClient(sock).Status(context.Background())
		if err := ConnectError(err, sock); !errors.Is(err, ErrNotRunning) {
			t.Errorf("%s: %v, want ErrNotRunning", filepath.Base(sock), err)
		}
		if n := dials.Load(); n != 1 {
			t.Errorf("%s: dialed %d times, want once", filepath.Base(sock), n)
		}
	}
}
