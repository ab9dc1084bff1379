//go:build !windows

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
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
	deadline := time.Now().Add(5 * time.Second)
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
		done <- run(ctx, []string{"tail", "--port", port, "--save", save, "--color", "never"}, IO{Stdout: &out, Stderr: &errb})
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
