//go:build !windows

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/internal/cli"
)

// syncBuffer is a bytes.Buffer safe to read while tail writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTailSavesAcrossUnplug runs tailpath tail on a pseudo-terminal behind a
// symlink, unplugs it mid-line and plugs a new one in at the same path: the
// save file and stdout hold every byte, in order, and stderr reports the
// link going down and coming back.
func TestTailSavesAcrossUnplug(t *testing.T) {
	dir := t.TempDir()
	port := filepath.Join(dir, "ttyBOARD")
	save := filepath.Join(dir, "board.log")
	m1, s1, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := os.Symlink(s1.Name(), port); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- dispatch(ctx, []string{"tail", "--port", port, "--save", save, "--color", "never"}, cli.IO{Stdout: &out, Stderr: &errb})
	}()
	waitFor(t, "link up", func() bool { return strings.Count(errb.String(), "link up") == 1 })
	var sent strings.Builder
	for i := range 20 {
		s := fmt.Sprintf("I (%d) app: before %02d\r\n", i, i)
		sent.WriteString(s)
		m1.Write([]byte(s))
	}
	waitFor(t, "first lines", func() bool { return strings.Contains(out.String(), "before 19") })
	m1.Write([]byte("I (99) app: cut"))
	sent.WriteString("I (99) app: cut")
	time.Sleep(50 * time.Millisecond)
	m1.Close()
	s1.Close()
	waitFor(t, "link down", func() bool { return strings.Contains(errb.String(), "link down") })

	m2, s2, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	defer s2.Close()
	os.Symlink(s2.Name(), port+".new")
	os.Rename(port+".new", port)
	waitFor(t, "link up again", func() bool { return strings.Count(errb.String(), "link up") == 2 })
	for i := range 20 {
		s := fmt.Sprintf("I (%d) app: after %02d\r\n", i, i)
		sent.WriteString(s)
		m2.Write([]byte(s))
	}
	waitFor(t, "second lines", func() bool { return strings.Contains(out.String(), "after 19") })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	saved, _ := os.ReadFile(save)
	if string(saved) != sent.String() {
		t.Errorf("save file:\n%q\nwant:\n%q", saved, sent.String())
	}
	// --color never prints sanitised text: the board's CRs are dropped.
	if want := strings.ReplaceAll(sent.String(), "\r\n", "\n"); out.String() != want {
		t.Errorf("stdout:\n%q\nwant:\n%q", out.String(), want)
	}
}

// TestTailNoColor runs tailpath tail --color auto with its stdout on a
// terminal: coloured by level by default, and with NO_COLOR set, sanitised
// text without a single escape code of its own (the board's ESP-IDF colour
// codes are stripped too). CLICOLOR_FORCE colours piped output.
func TestTailNoColor(t *testing.T) {
	in := "\x1b[0;32mI (1) wifi: up\x1b[0m\r\nE (2) app: bad\r\nW (3) app: low heap\r\n"
	onTerminal := func(t *testing.T) string {
		t.Helper()
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Skipf("no pseudo-terminals here: %v", err)
		}
		defer ptmx.Close()
		read := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(ptmx)
			read <- b
		}()
		var errb bytes.Buffer
		code := dispatch(context.Background(), []string{"tail", "--port", "-"}, cli.IO{Stdin: strings.NewReader(in), Stdout: tty, Stderr: &errb})
		tty.Close()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		select {
		case b := <-read:
			return string(b)
		case <-time.After(time.Minute):
			t.Fatal("terminal output never ended")
		}
		return ""
	}
	t.Run("default", func(t *testing.T) {
		if got := onTerminal(t); !strings.Contains(got, "\x1b[1;31mE (2) app: bad\x1b[0m") {
			t.Errorf("no level colour on a terminal: %q", got)
		}
	})
	t.Run("NO_COLOR", func(t *testing.T) {
		t.Setenv("NO_COLOR", "1")
		t.Setenv("CLICOLOR_FORCE", "1") // NO_COLOR wins
		got := onTerminal(t)
		if strings.Contains(got, "\x1b") {
			t.Errorf("escape codes with NO_COLOR set: %q", got)
		}
		// The pty turns each \n into \r\n.
		if want := "I (1) wifi: up\r\nE (2) app: bad\r\nW (3) app: low heap\r\n"; got != want {
			t.Errorf("terminal got %q, want %q", got, want)
		}
	})
	t.Run("NO_COLOR piped", func(t *testing.T) {
		// No colour added (monitor's auto-colour off); the board's own
		// codes pass through as they came.
		t.Setenv("NO_COLOR", "1")
		var out, errb bytes.Buffer
		if code := dispatch(context.Background(), []string{"tail", "--port", "-"}, cli.IO{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if out.String() != in {
			t.Errorf("piped with NO_COLOR: %q, want the bytes as they came %q", out.String(), in)
		}
		// Decoded binary-log lines get no colour either.
		out.Reset()
		capture, err := os.Open(filepath.Join(ownBinlog, "capture.bin"))
		if err != nil {
			t.Fatal(err)
		}
		defer capture.Close()
		elfs := filepath.Join(ownBinlog, "app.elf") + "," + filepath.Join(ownBinlog, "bootloader.elf")
		if code := dispatch(context.Background(), []string{"tail", "--port", "-", "--elf", elfs}, cli.IO{Stdin: capture, Stdout: &out, Stderr: &errb}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if !strings.Contains(out.String(), "I (27) boot: ESP-IDF v5.5 2nd stage bootloader\n") || strings.Contains(out.String(), "\x1b") {
			t.Errorf("decoded binary log with NO_COLOR has colour or lacks its lines:\n%q", out.String())
		}
	})
	t.Run("CLICOLOR_FORCE piped", func(t *testing.T) {
		t.Setenv("CLICOLOR_FORCE", "1")
		var out, errb bytes.Buffer
		if code := dispatch(context.Background(), []string{"tail", "--port", "-"}, cli.IO{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errb}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if want := "\x1b[0;32mI (1) wifi: up\x1b[0m\n\x1b[1;31mE (2) app: bad\x1b[0m\n\x1b[0;33mW (3) app: low heap\x1b[0m\n"; out.String() != want {
			t.Errorf("piped with CLICOLOR_FORCE: %q, want %q", out.String(), want)
		}
	})
}

// TestStatusLinksLiveBoard: status --port PATH listens to a live board (a
// pseudo-terminal here) for --board-wait and links what it said to its
// peer, as status --port - does with a capture.
func TestStatusLinksLiveBoard(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	srv := statusFixture(t, "no-endpoints")
	net := telemetry.Frame{Kind: telemetry.KindNet, Seq: 5, Uptime: 5400 * time.Millisecond, Net: telemetry.Net{
		IP: netip.MustParseAddr("100.64.0.2"), Host: "cores3", Endpoints: 0}}
	for _, k := range []string{"seq", "up", "ip", "host", "eps"} {
		net.SetHas(k, true)
	}
	frame, err := net.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		// The board prints its frame every 200 ms, as long as status listens.
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				ptmx.Write(append(frame, '\r', '\n'))
			}
		}
	}()
	var out, errb bytes.Buffer
	code := dispatch(context.Background(), []string{"status", "--socket", srv.Socket, "--port", tty.Name(), "--board-wait", "2s", "--json"},
		cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if !strings.Contains(out.String(), `"peer_id": "n2CNTRL"`) || !strings.Contains(out.String(), `"reason": "device-no-public-endpoint"`) {
		t.Errorf("the live board is not linked to cores3:\n%s", out.String())
	}
}
