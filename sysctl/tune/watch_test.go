package tune

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/sysctltest"
)

// sandboxControl is a Control over a sandbox copy in a temporary
// directory, with no connections and no tailscale0.
func sandboxControl(t *testing.T) Control {
	t.Helper()
	h, _, err := sysctltest.NewSandbox(t.TempDir(), sysctl.Host{})
	if err != nil {
		t.Fatal(err)
	}
	c := Control{Inputs: Inputs{Host: h, Sandbox: true, Bandwidth: 1e9, RTT: 50 * time.Millisecond}, StatePath: h.StatePath()}
	c.Inputs.Conns = func(context.Context) ([]sockdiag.Conn, error) { return nil, nil }
	c.Inputs.Link = func(string) (sockdiag.Link, error) { return sockdiag.Link{}, sockdiag.ErrNoLink }
	return c
}

// TestControlApplyRevert: what the Tuning pane's a and r do, end to end
// in a sandbox: Read sees no revert record, Apply writes the key and
// records the old value, Read then sees the record, Revert writes the old
// value back.
func TestControlApplyRevert(t *testing.T) {
	c := sandboxControl(t)
	if !c.MayChange() {
		t.Error("a sandbox may always be changed")
	}
	if d := filepath.Dir(filepath.Dir(c.Inputs.Host.Proc)); !strings.HasPrefix(c.StateFile(), d) {
		t.Errorf("state file %s outside the sandbox %s", c.StateFile(), d)
	}
	m := c.Read(context.Background())
	if m.Err != nil || m.State != nil || m.StateErr != nil || !m.Report.Sandbox {
		t.Fatalf("first read: err %v, state %v (%v), sandbox %v", m.Err, m.State, m.StateErr, m.Report.Sandbox)
	}
	const key = "net.ipv4.tcp_mtu_probing"
	old, err := c.Inputs.Host.ReadRaw(key)
	if err != nil {
		t.Fatal(err)
	}
	want := "1"
	if strings.TrimSpace(old) == "1" {
		want = "2"
	}
	if _, err := c.Apply([]sysctl.Change{{Key: key, Old: strings.TrimSpace(old), New: want}}, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Inputs.Host.ReadRaw(key); strings.TrimSpace(got) != want {
		t.Errorf("after apply %s = %q, want %q", key, got, want)
	}
	if m := c.Read(context.Background()); m.State == nil {
		t.Errorf("after apply no revert record at %s (%v)", c.StateFile(), m.StateErr)
	}
	if _, err := c.Revert(); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Inputs.Host.ReadRaw(key); strings.TrimSpace(got) != strings.TrimSpace(old) {
		t.Errorf("after revert %s = %q, want %q", key, got, old)
	}
}

// TestControlWatch: Watch reads at once and then on every tick, and
// returns when ctx ends.
func TestControlWatch(t *testing.T) {
	c := sandboxControl(t)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan Reading, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Watch(ctx, 10*time.Millisecond, func(r Reading) {
			select {
			case got <- r:
			default:
			}
		})
	}()
	for i := range 2 {
		select {
		case r := <-got:
			if r.Err != nil {
				t.Errorf("reading %d: %v", i, r.Err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %d never came", i)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after ctx ended")
	}
}
