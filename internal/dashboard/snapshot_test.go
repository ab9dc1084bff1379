package dashboard

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/probestest"
	"github.com/tailpath/tailpath/probes/snapshot"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// TestDashboardSave: S's command takes a snapshot that carries the
// dashboard's history (a ping run, path changes) and diagnoses the same.
func TestDashboardSave(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fixture LocalAPI listens on a unix socket")
	}
	fix, err := probestest.LoadFixture(filepath.Join("..", "..", "probes", "testdata", "unexplained.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := probestest.New(t, fix)
	c := tailscaled.NewClient(srv.Socket)
	ctx := context.Background()
	prev, err := tailscaled.Gather(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	prev.Peers[0].PingRun = &probes.PingRun{At: time.Now(), Tries: 10, Pongs: 10, Via: "DERP(nyc)"}
	var l join.Joiner
	ls := l.SetSnapshot(prev)

	dir := t.TempDir()
	d := &Dashboard{Sources: app.Sources{Client: c, Socket: srv.Socket}, SaveDir: dir}
	msg := d.save(ctx, ls, nil, nil)
	if msg.Err != "" {
		t.Fatal(msg.Err)
	}
	if filepath.Dir(string(msg.Path)) != dir || !strings.HasPrefix(filepath.Base(string(msg.Path)), "tailpath-snapshot-") {
		t.Errorf("saved to %q", msg.Path)
	}
	b, err := os.ReadFile(string(msg.Path))
	if err != nil {
		t.Fatal(err)
	}
	f, err := snapshot.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := got.Peers[0]
	if p.PingRun == nil || p.Verdict.Reason != probes.ReasonDiscoUnanswered {
		t.Errorf("saved peer: ping run %+v, reason %s; want the dashboard's run and disco-unanswered", p.PingRun, p.Verdict.Reason)
	}
	if len(got.Changes(p.ID)) == 0 {
		t.Error("no path changes saved")
	}

	srv.Stop()
	if msg := d.save(ctx, ls, nil, nil); msg.Err == "" || !strings.Contains(string(msg.Err), "tailscaled") {
		t.Errorf("save with tailscaled gone: %+v", msg)
	}
}

// TestDashboardReplay runs the dashboard over a saved snapshot on a
// pseudo-terminal: it shows the snapshot's peers and verdicts under the
// "snapshot taken" notice, and quits on q.
func TestDashboardReplay(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pty.Setsize(tty, &pty.Winsize{Rows: 30, Cols: 120})
	b, err := os.ReadFile(filepath.Join("..", "..", "probes", "snapshot", "testdata", "both-hard-nat.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := snapshot.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	// The host's tuning report, as saved on Linux: shown read-only, and
	// first of all that the NAS it was taken on runs tailscaled in
	// userspace networking (the repo's DSM 7.2 root stands for it).
	rep, err := tune.Gather(context.Background(), tune.Inputs{Host: sysctl.AtRoot(filepath.Join("..", "..", "sysctl", "testdata", "roots", "dsm-7.2-userspace")),
		Sandbox: true, Bandwidth: 350e6, RTT: 100 * time.Millisecond,
		Conns: func(context.Context) ([]sockdiag.Conn, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	rep.Sandbox = false
	f.Tuning = &rep
	d := &Dashboard{Title: "tailpath", Replay: f}
	go func() { done <- d.Run(context.Background(), tty, tty) }()
	waitFor := func(want ...string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			mu.Lock()
			text := ansi.Strip(screen.String())
			mu.Unlock()
			missing := ""
			for _, w := range want {
				if !strings.Contains(text, w) {
					missing = w
				}
			}
			if missing == "" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q:\n%s", missing, text)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("snapshot taken 2026-11-30 12:00:00Z", "read-only", "office-pc", "both-hard-nat", "5 Tuning") // Tuning keeps its number with no Device or Log
	ptmx.Write([]byte("5"))
	waitFor("[snapshot taken 2026-11-30 12:00:00Z: not this machine]", "Userspace networking: tailnet TCP runs in tailscaled's own stack", "Synology DSM 7.2")
	ptmx.Write([]byte("a"))
	waitFor("read-only: this is the snapshot's report")
	ptmx.Write([]byte("S"))
	waitFor("nothing to save: this is a saved snapshot already")
	ptmx.Write([]byte("q"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("q did not quit")
	}
}

// TestSaveDefaultsToStateDir: with SaveDir empty the snapshot goes to
// $XDG_STATE_HOME/tailpath (created 0700), named by its full path, and
// nothing is written in the current directory.
func TestSaveDefaultsToStateDir(t *testing.T) {
	if filepath.Separator != '/' {
		t.Skip("XDG_STATE_HOME is for Unix")
	}
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	fix, err := probestest.LoadFixture(filepath.Join("..", "..", "probes", "testdata", "direct.json"))
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	t.Chdir(cwd)
	srv := probestest.New(t, fix)
	d := &Dashboard{Sources: app.Sources{Client: tailscaled.NewClient(srv.Socket), Socket: srv.Socket}}
	msg := d.save(context.Background(), nil, nil, nil)
	if msg.Err != "" {
		t.Fatal(msg.Err)
	}
	dir := filepath.Join(state, "tailpath")
	if filepath.Dir(string(msg.Path)) != dir || !filepath.IsAbs(string(msg.Path)) {
		t.Errorf("saved to %q, want a full path in %s", msg.Path, dir)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir %s: %v, mode %v; want 0700", dir, err, fi.Mode())
	}
	left, _ := os.ReadDir(cwd)
	if diff := cmp.Diff(0, len(left)); diff != "" {
		t.Errorf("files written in the current directory: %v", left)
	}
}
