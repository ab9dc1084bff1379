//go:build linux

package main

// The dashboard's first frame (docs/perf.md, "As fast as the CLI", issue
// 31): `tailpath --socket S` started on a pseudo-terminal against a real
// tailscaled (built from the pinned module by internal/prebuilt, joined to
// the lab), timed from its start until a peer's name is on the screen,
// interleaved with `tailscale --socket S status` (the CLI's text status)
// against the same daemon. A test that skips unless TAILPATH_BENCH=1 and
// asserts nothing about time: it logs the medians.
//
//	TAILPATH_BENCH=1 go test -run 'TestFirstFrameBench$' -v -count=1 .
//
// TAILPATH_BENCH_N sets the rounds (default 30); TAILPATH_BENCH_ALSO=bin1,bin2
// times other tailpath builds in the same rounds.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/tailpath/tailpath/internal/labtest"
	"github.com/tailpath/tailpath/probes/lab"
)

func TestFirstFrameBench(t *testing.T) {
	if os.Getenv("TAILPATH_BENCH") == "" {
		t.Skip("skipping: a benchmark; set TAILPATH_BENCH=1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	tailscaled, tailscale := buildTailscale(t)
	tailpath := buildTailpath(ctx, t)
	l := startTestLab(t)
	sockDir, err := os.MkdirTemp("", "tp-frame-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "ts.sock")
	env := labtest.DaemonEnv(l)
	d := startTailscaled(t, tailscaled, t.TempDir(), sock, env)
	up := exec.CommandContext(ctx, tailscale, "--socket", sock, "up", "--login-server", l.ControlURL, "--hostname", "frame-ts", "--reset")
	up.Env = append(os.Environ(), env...)
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("tailscale up: %v\n%s\ntailscaled log tail:\n%s", err, out, d.tail(30))
	}
	// Every lab peer in the daemon's Status before timing anything.
	for {
		out, err := exec.CommandContext(ctx, tailscale, "--socket", sock, "status").Output()
		if err == nil && bytes.Contains(out, []byte(lab.DirectName)) && bytes.Contains(out, []byte(lab.OfflineName)) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the real tailscaled never listed the lab's peers:\n%s\ntailscaled log tail:\n%s", out, d.tail(30))
		case <-time.After(250 * time.Millisecond):
		}
	}

	bins := installed(t, append([]string{tailscale, tailpath}, benchAlso()...)...)
	tailscale, bins = bins[0], bins[1:]
	cli := func() time.Duration {
		cmd := exec.CommandContext(ctx, tailscale, "--socket", sock, "status")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tailscale status: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	// One warm-up each: the page cache holds the binaries after it.
	for _, b := range bins {
		firstFrame(ctx, t, b, sock)
	}
	cli()
	n := benchRuns()
	frames := make([][]time.Duration, len(bins))
	var clis []time.Duration
	for range n {
		for i, b := range bins {
			frames[i] = append(frames[i], firstFrame(ctx, t, b, sock))
		}
		clis = append(clis, cli())
	}
	ref := median(clis)
	for i, b := range bins {
		m := median(frames[i])
		t.Logf("BENCH first frame n=%d load %s: %s: median %v (%.2fx the CLI), min %v, max %v",
			n, loadAvg(), b, m.Round(100*time.Microsecond), float64(m)/float64(ref),
			minOf(frames[i]).Round(100*time.Microsecond), maxOf(frames[i]).Round(100*time.Microsecond))
	}
	t.Logf("BENCH first frame n=%d load %s: tailscale status: median %v, min %v, max %v",
		n, loadAvg(), ref.Round(100*time.Microsecond), minOf(clis).Round(100*time.Microsecond), maxOf(clis).Round(100*time.Microsecond))
}

func minOf(xs []time.Duration) time.Duration {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []time.Duration) time.Duration {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// firstFrame starts bin --socket sock on a 120x40 pseudo-terminal and
// returns the time from its start until the lab's direct peer's name is
// on the screen (what it wrote, its escape sequences removed). The
// terminal answers the background-colour query (OSC 11: dark) and
// synchronized output's (DECRQM 2026: known, off) as a terminal
// emulator does, at once.
func firstFrame(ctx context.Context, t *testing.T, bin, sock string) time.Duration {
	t.Helper()
	return firstFrameName(ctx, t, bin, sock, lab.DirectName)
}

// firstFrameName is firstFrame until name is on the screen.
func firstFrameName(ctx context.Context, t *testing.T, bin, sock, name string) time.Duration {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("skipping: no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120})
	cmd := exec.CommandContext(ctx, bin, "--socket", sock)
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "SSH_TTY", "SSH_CONNECTION", "TERM_PROGRAM", "WT_SESSION", "TERM", "TMUX", "COLORTERM", "COLORFGBG", "NO_COLOR":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	seen := make(chan time.Duration, 1)
	go func() {
		buf := make([]byte, 32<<10)
		var out []byte
		found, bg, sync := false, false, false
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				out = append(out, buf[:n]...)
				if !bg && bytes.Contains(out, []byte("\x1b]11;?")) {
					bg = true
					ptmx.Write([]byte("\x1b]11;rgb:0000/0000/0000\x1b\\"))
				}
				if !sync && bytes.Contains(out, []byte("\x1b[?2026$p")) {
					sync = true
					ptmx.Write([]byte("\x1b[?2026;2$y"))
				}
				if !found && strings.Contains(ansi.Strip(string(out)), name) {
					found = true
					seen <- time.Since(start)
				}
			}
			if err != nil {
				if !found {
					close(seen)
				}
				return
			}
		}
	}()
	var took time.Duration
	select {
	case d, ok := <-seen:
		if !ok {
			t.Fatalf("%s: exited before showing %s", bin, name)
		}
		took = d
	case <-time.After(time.Minute):
		t.Fatalf("%s: no peer on the screen after a minute", bin)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	return took
}
