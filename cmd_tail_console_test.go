//go:build !windows

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	xterm "github.com/charmbracelet/x/term"
	"github.com/creack/pty"

	"github.com/tailpath/tailpath/internal/cli"
)

// ptyReader collects what is read from f (a pty master) in the background.
// It reads with deadlines, so that stop can end it before f is closed: a
// read in flight keeps the descriptor open, and the far side would never
// see the hang-up.
type ptyReader struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	quit chan struct{}
	done chan struct{}
}

// pollable returns f (a pty master, which creack/pty opens blocking) as a
// non-blocking descriptor Go's poller handles, so reads take deadlines
// and Close ends a read in flight. f itself is closed.
func pollable(t *testing.T, f *os.File) *os.File {
	t.Helper()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), f.Name())
}

func readAll(t *testing.T, f *os.File) *ptyReader {
	r := &ptyReader{quit: make(chan struct{}), done: make(chan struct{})}
	if err := f.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Skipf("pty without read deadlines: %v", err)
	}
	go func() {
		defer close(r.done)
		b := make([]byte, 1024)
		for {
			select {
			case <-r.quit:
				return
			default:
			}
			f.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			n, err := f.Read(b)
			r.mu.Lock()
			r.buf.Write(b[:n])
			r.mu.Unlock()
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
		}
	}()
	return r
}

// stop ends the reader (before its pty is closed).
func (r *ptyReader) stop() {
	close(r.quit)
	<-r.done
}

func (r *ptyReader) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// TestTailConsole runs tail --console between two pseudo-terminals: one is
// the board's serial port (behind a symlink, so it can be unplugged and
// plugged back at the same path), the other is the user's terminal, put in
// raw mode by tail. Typed keys reach the board with Enter sent as CR; the
// board's console status query reaches the terminal, whose answer reaches
// the board; keys typed while the board is unplugged arrive when it is
// back; Ctrl+] ends tail, which restores the terminal.
func TestTailConsole(t *testing.T) {
	dir := t.TempDir()
	port := filepath.Join(dir, "ttyBOARD")
	board, boardTTY, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	board = pollable(t, board)
	defer board.Close()
	if err := os.Symlink(boardTTY.Name(), port); err != nil {
		t.Fatal(err)
	}
	term, termTTY, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	term = pollable(t, term)
	defer term.Close()
	defer termTTY.Close()

	before, err := xterm.GetState(termTTY.Fd())
	if err != nil {
		t.Fatal(err)
	}
	fromBoard := readAll(t, board)
	screen := readAll(t, term)
	defer screen.stop()
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"tail", "--port", port, "--console", "--color", "never"},
			cli.IO{Stdin: termTTY, Stdout: termTTY, Stderr: &errb})
	}()
	waitFor(t, "link up", func() bool { return strings.Contains(errb.String(), "link up") })

	// The board prints a line and its console prompt, probing the terminal.
	board.Write([]byte("I (100) app: console ready\r\n\x1b[5n"))
	waitFor(t, "the status query on the terminal", func() bool { return strings.Contains(screen.String(), "\x1b[5n") })
	if !strings.Contains(screen.String(), "I (100) app: console ready\r\n") {
		t.Errorf("screen %q lacks the board's line with CR LF (raw mode)", screen.String())
	}
	term.Write([]byte("\x1b[0n")) // the terminal's answer
	waitFor(t, "the answer at the board", func() bool { return strings.Contains(fromBoard.String(), "\x1b[0n") })

	// Keys typed: Enter is sent as CR (--eol's default, as idf.py monitor).
	term.Write([]byte("help\r"))
	waitFor(t, "typed keys at the board", func() bool { return strings.HasSuffix(fromBoard.String(), "help\r") })

	// Unplug: keys typed meanwhile are kept and sent once the board is back.
	fromBoard.stop()
	board.Close()
	boardTTY.Close()
	waitFor(t, "link down", func() bool { return strings.Contains(errb.String(), "link down") })
	term.Write([]byte("free\r"))
	time.Sleep(50 * time.Millisecond)
	board2, board2TTY, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	board2 = pollable(t, board2)
	defer board2.Close()
	defer board2TTY.Close()
	fromBoard2 := readAll(t, board2)
	defer fromBoard2.stop()
	os.Symlink(board2TTY.Name(), port+".new")
	os.Rename(port+".new", port)
	waitFor(t, "the kept keys at the board", func() bool { return fromBoard2.String() == "free\r" })

	term.Write([]byte{0x1d}) // Ctrl+]
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("Ctrl+] did not end tail --console")
	}
	if after, err := xterm.GetState(termTTY.Fd()); err != nil || !reflect.DeepEqual(before, after) {
		t.Errorf("the terminal was not restored from raw mode (%v)", err)
	}
	if got := fromBoard2.String(); got != "free\r" {
		t.Errorf("the board got %q after the unplug, want exactly the kept keys", got)
	}
}
