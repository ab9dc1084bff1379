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
// board's console status query is answered by tail (ESC[0n), never passed
// to the terminal, and what the terminal sends on its own (answers to
// queries, reports) never reaches the board; keys typed while the board
// is unplugged arrive when it is back; Ctrl+] ends tail, which restores
// the terminal.
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
		done <- dispatch(context.Background(), []string{"tail", "--port", port, "--console", "--color", "never"},
			cli.IO{Stdin: termTTY, Stdout: termTTY, Stderr: &errb})
	}()
	waitFor(t, "link up", func() bool { return strings.Contains(errb.String(), "link up") })

	// The board prints a line and its console prompt, probing the terminal:
	// tail answers for it.
	board.Write([]byte("I (100) app: console ready\r\n\x1b[5n"))
	waitFor(t, "tail's answer at the board", func() bool { return fromBoard.String() == "\x1b[0n" })
	waitFor(t, "the board's line", func() bool { return strings.Contains(screen.String(), "I (100) app: console ready\r\n") })
	if strings.Contains(screen.String(), "\x1b[5n") {
		t.Errorf("the status query reached the terminal: %q", screen.String())
	}

	// What a terminal answers (a cursor position, its attributes, its
	// version, a colour), among typed keys: only the keys reach the
	// board, Enter as CR (--eol's default, as idf.py monitor).
	term.Write([]byte("\x1b[4;13R\x1b[?62;22c" + "he" + "\x1bP>|tmux 3.3a\x1b\\" + "lp\x1b]11;rgb:0000/0000/0000\x07\r"))
	waitFor(t, "typed keys at the board", func() bool { return strings.HasSuffix(fromBoard.String(), "help\r") })
	if got := fromBoard.String(); got != "\x1b[0n"+"help\r" {
		t.Errorf("the board got %q, want tail's answer and the typed keys only", got)
	}

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

// TestTailConsolePiped is `tail --console | tee log`: keys come from the
// terminal, the output goes to a pipe, and through tee to the same
// terminal. What the board prints reaches the pipe cleaned (no title, no
// OSC 52 to the clipboard, no query the terminal would answer), the
// status query is not answered for a terminal tail cannot see, and what
// the terminal sends on its own still never reaches the board.
func TestTailConsolePiped(t *testing.T) {
	dir := t.TempDir()
	port := filepath.Join(dir, "ttyBOARD")
	board, boardTTY, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	board = pollable(t, board)
	defer board.Close()
	defer boardTTY.Close()
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
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	fromBoard := readAll(t, board)
	defer fromBoard.stop()
	piped := readAll(t, pollable(t, pr))
	defer piped.stop()
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- dispatch(context.Background(), []string{"tail", "--port", port, "--console"}, cli.IO{Stdin: termTTY, Stdout: pw, Stderr: &errb})
	}()
	waitFor(t, "link up", func() bool { return strings.Contains(errb.String(), "link up") })

	board.Write([]byte("I (100) app: \x1b]0;pwned\x07hello \x1b]52;c;ZXZpbA==\x07there\x1b[c\x1b[6n\x1b[>q\r\n\x1b[5n"))
	waitFor(t, "the board's line in the pipe", func() bool { return strings.Contains(piped.String(), "I (100) app: hello there") })
	term.Write([]byte("\x1b[?62;22c\x1b[4;13R\x1bP>|tmux 3.3a\x1b\\ls\r"))
	waitFor(t, "typed keys at the board", func() bool { return strings.HasSuffix(fromBoard.String(), "ls\r") })
	if got := fromBoard.String(); got != "ls\r" {
		t.Errorf("the board got %q, want the typed keys only", got)
	}
	if got := piped.String(); strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("escape sequences reached the pipe (and the terminal behind it): %q", got)
	}
	term.Write([]byte{0x1d}) // Ctrl+]
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ctrl+] did not end tail --console")
	}
	pw.Close()
}
