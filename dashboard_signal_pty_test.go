//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestDashboardExitsOnSignal runs the dashboard in a pseudo-terminal and
// sends it SIGTERM, then SIGINT, 20 times each (a saved snapshot and the
// live dashboard with no tailscaled, alternately): every run must exit
// after the signal (within a minute: a guard against the hang, not a
// measure of speed; the slowest exit is logged), leave the alternate
// screen and give the terminal its modes back. Bubble Tea's own signal
// handler used to race the context and hang 1 run in 3, in the alternate
// screen.
func TestDashboardExitsOnSignal(t *testing.T) {
	snap, err := filepath.Abs("probes/snapshot/testdata/both-hard-nat.json")
	if err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(t.TempDir(), "no-tailscaled.sock")
	var slowest time.Duration
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		for i := range 20 {
			args := []string{"--from", snap}
			if i%2 == 1 {
				args = []string{"--socket", none}
			}
			took := signalRun(t, sig, args)
			slowest = max(slowest, took)
		}
	}
	t.Logf("slowest exit after a signal: %v", slowest)
}

// signalRun starts tailpath args on a new pseudo-terminal, waits for its
// first screen, sends sig and checks the exit; it returns how long the
// exit took.
func signalRun(t *testing.T, sig syscall.Signal, args []string) time.Duration {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("skipping: no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80})
	before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	go answerTerminal(ptmx, &out)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill()

	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "\x1b[?1049h") || !strings.Contains(out.String(), "Peers") {
		if time.Now().After(deadline) {
			t.Fatalf("%v: no screen after a minute:\n%q", args, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	drawn := len(out.String())
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatalf("%v: still running a minute after %v (the alternate screen left: %v)", args, sig, strings.Contains(out.String()[drawn:], "\x1b[?1049l"))
	}
	took := time.Since(start)
	// The reader may still be draining what was written before exit.
	for end := time.Now().Add(10 * time.Second); !strings.Contains(out.String()[drawn:], "\x1b[?1049l") && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(out.String()[drawn:], "\x1b[?1049l") {
		t.Errorf("%v: exited after %v without leaving the alternate screen:\n%q", args, sig, out.String()[drawn:])
	}
	after, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	const modes = unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
	if before.Lflag&modes != after.Lflag&modes || before.Iflag != after.Iflag || before.Oflag != after.Oflag {
		t.Errorf("%v: terminal modes not restored after %v: lflag %#x → %#x, iflag %#x → %#x, oflag %#x → %#x",
			args, sig, before.Lflag, after.Lflag, before.Iflag, after.Iflag, before.Oflag, after.Oflag)
	}
	return took
}

// answerTerminal copies what tailpath writes to the terminal into out and
// answers cursor position queries (ESC [6n) as a terminal does. (Lip Gloss
// v1 asked for the background colour that way and waited up to 5 s for an
// answer before the first screen; Bubble Tea v2 asks with OSC 11 and never
// waits, which this terminal leaves unanswered, like one that does not
// know the query.)
func answerTerminal(ptmx *os.File, out *syncBuffer) {
	buf := make([]byte, 32<<10)
	var tail []byte // a query may be split across reads
	for {
		n, err := ptmx.Read(buf)
		if n > 0 {
			out.Write(buf[:n])
			tail = append(tail, buf[:n]...)
			for {
				i := bytes.Index(tail, []byte("\x1b[6n"))
				if i < 0 {
					break
				}
				ptmx.Write([]byte("\x1b[1;1R"))
				tail = tail[i+4:]
			}
			if len(tail) > 8 {
				tail = tail[len(tail)-8:]
			}
		}
		if err != nil {
			return
		}
	}
}

// TestDashboardSynchronizedOutput: Bubble Tea v2 asks the terminal whether
// it knows synchronized output (DECRQM for mode 2026) and, when it answers
// "known, off", wraps every frame in mode 2026 so the terminal shows it
// whole: a redraw over a slow link does not tear. A terminal that does not
// answer gets frames as before. Bubble Tea asks only outside SSH (no
// SSH_TTY) unless TERM names a terminal it knows (kitty, ghostty, wezterm,
// alacritty, rio) or WT_SESSION is set (shouldQuerySynchronizedOutput in
// tea.go); in an SSH session it does not ask, the dashboard turns the mode
// on itself (app.syncOverSSH), and every frame is wrapped.
func TestDashboardSynchronizedOutput(t *testing.T) {
	snap, err := filepath.Abs("probes/snapshot/testdata/both-hard-nat.json")
	if err != nil {
		t.Fatal(err)
	}
	const query, begin, end = "\x1b[?2026$p", "\x1b[?2026h", "\x1b[?2026l"
	for _, tc := range []struct {
		name     string
		env      []string
		answer   bool
		wantAsk  bool
		wantSync bool
	}{
		{"answers", nil, true, true, true},
		{"silent", nil, false, true, false},
		{"ssh", []string{"SSH_TTY=/dev/pts/9"}, false, false, true},
		{"ssh-kitty", []string{"SSH_TTY=/dev/pts/9", "TERM=xterm-kitty"}, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ptyScreen(t, []string{"--from", snap}, tc.env, func(ptmx *os.File, seen []byte) {
				if tc.answer && bytes.Contains(seen, []byte(query)) {
					ptmx.Write([]byte("\x1b[?2026;2$y")) // known, reset
				}
			})
			asked := strings.Contains(out, query)
			if asked != tc.wantAsk {
				t.Errorf("asked for mode 2026: %v, want %v", asked, tc.wantAsk)
			}
			synced := strings.Count(out, begin) > 0 && strings.Count(out, begin) == strings.Count(out, end)
			if synced != tc.wantSync {
				t.Errorf("frames in mode 2026: %v (%d begin, %d end), want %v", synced,
					strings.Count(out, begin), strings.Count(out, end), tc.wantSync)
			}
		})
	}
}

// ptyScreen runs tailpath args on an 80x24 pseudo-terminal with env added
// to a bare environment (TERM=xterm-256color, no SSH_TTY, TERM_PROGRAM or
// WT_SESSION), lets answer reply to what it has written so far, presses
// tab twice after the first screen (so frames follow the query's answer),
// then q, and returns all it wrote.
func ptyScreen(t *testing.T, args, env []string, answer func(ptmx *os.File, seen []byte)) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("skipping: no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80})
	cmd := exec.Command(os.Args[0], args...)
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "SSH_TTY", "SSH_CONNECTION", "TERM_PROGRAM", "WT_SESSION", "TERM":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, runMainEnv+"=1", "TERM=xterm-256color")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Only the child holds the terminal now: when it exits, reading the
	// master ends, and what it wrote last has been read.
	tty.Close()
	var out syncBuffer
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32<<10)
		var seen []byte
		answered := false
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				out.Write(buf[:n])
				seen = append(seen, buf[:n]...)
				if !answered && bytes.Contains(seen, []byte("\x1b[?2026$p")) {
					answered = true
					answer(ptmx, seen)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "Peers") {
		if time.Now().After(deadline) {
			t.Fatalf("%v: no screen after a minute:\n%q", args, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, k := range []string{"\t", "\t", "q"} {
		time.Sleep(200 * time.Millisecond)
		ptmx.Write([]byte(k))
	}
	for _, wait := range []<-chan struct{}{waitErr(exited), drained} {
		select {
		case <-wait:
		case <-time.After(time.Minute):
			t.Fatalf("%v: still running a minute after q", args)
		}
	}
	return out.String()
}

// waitErr is a channel closed when ch delivers.
func waitErr(ch <-chan error) <-chan struct{} {
	done := make(chan struct{})
	go func() { <-ch; close(done) }()
	return done
}
