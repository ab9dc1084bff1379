package devlink

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestKeyTranslator(t *testing.T) {
	for _, tc := range []struct {
		enter    byte
		eol, in  string
		want     string
		wantQuit bool
	}{
		{'\r', "\r", "ls\r", "ls\r", false},
		{'\r', "\r\n", "ls\r\x1b[A", "ls\r\n\x1b[A", false},
		{'\n', "\n", "a\nb\n", "a\nb\n", false},
		{'\n', "\r", "a\nb\x1dc", "a\rb", true},
	} {
		k := &keyTranslator{eol: []byte(tc.eol), enter: tc.enter}
		out, q := k.translate(nil, []byte(tc.in))
		if string(out) != tc.want || q != tc.wantQuit {
			t.Errorf("%q: %q %v, want %q %v", tc.in, out, q, tc.want, tc.wantQuit)
		}
	}
	if _, err := EOLBytes("crlf"); err != nil {
		t.Error(err)
	}
	if _, err := EOLBytes("NUL"); err == nil {
		t.Error("--eol NUL accepted")
	}
}

// terminalAnswers are what terminals send on their own, after a query in
// the board's output reached them (through `tail --console | tee`):
// none may reach the board.
var terminalAnswers = []string{
	"\x1b[4;13R",                       // cursor position (ESC[6n)
	"\x1b[?62;22c",                     // primary device attributes (ESC[c)
	"\x1b[>1;10;0c",                    // secondary device attributes (ESC[>c)
	"\x1bP!|00000000\x1b\\",            // tertiary device attributes (DCS)
	"\x1b[0n",                          // status: OK (ESC[5n)
	"\x1b[?2026;2$y",                   // a mode report (DECRQM)
	"\x1b[8;24;80t",                    // window size (ESC[18t)
	"\x1b]11;rgb:0000/0000/0000\x1b\\", // background colour (OSC 11)
	"\x1b]10;rgb:ffff/ffff/ffff\x07",   // foreground colour, BEL-ended
	"\x1b]52;c;c2VjcmV0\x07",           // the clipboard (OSC 52 read)
	"\x1bP>|tmux 3.3a\x1b\\",           // XTVERSION: the tmux version
	"\x1bP1$r0m\x1b\\",                 // DECRQSS
	"\x1b_Gi=1;OK\x1b\\",               // a graphics protocol's answer (APC)
	"\x1b[I", "\x1b[O",                 // focus reports
	"\x1b[<0;10;5M", "\x1b[<0;10;5m", // SGR mouse reports
	"\x1b[M !!", // an X10 mouse report
	"\x1b[?1u",  // the keyboard protocol's flags
}

// TestConsoleDropsAnswerBack: keys go to the board as typed, terminal
// answers never, whether they arrive alone, between keys, or cut across
// reads anywhere.
func TestConsoleDropsAnswerBack(t *testing.T) {
	keys := []string{"help\r", "\x1b[A", "\x1bOA", "\x1b[15~", "\x1b[1;5C", "\x1b[3~", "\x1b[Z", "\x1bx", "\x1b[200~pasted\x1b[201~", "é", "free\r"}
	var in, want strings.Builder
	for i, key := range keys {
		in.WriteString(key)
		want.WriteString(key)
		in.WriteString(terminalAnswers[i%len(terminalAnswers)])
	}
	for _, a := range terminalAnswers {
		in.WriteString(a)
	}
	in.WriteString("\x1b") // Escape, last
	want.WriteString("\x1b")
	data := []byte(in.String())
	// Whole, then cut at every place into two reads.
	for cut := 0; cut <= len(data); cut++ {
		k := &keyTranslator{eol: []byte("\r"), enter: '\r'}
		out, q := k.translate(nil, data[:cut])
		out, q2 := k.translate(out, data[cut:])
		out = k.flush(out)
		if q || q2 || string(out) != want.String() {
			t.Fatalf("cut at %d: sent %q, want %q", cut, out, want.String())
		}
	}
}

// TestRunConsoleDropsAnswerBack: the same through RunConsole, reading a
// pipe: a lone Escape at the end of a read goes once no more follows;
// an answer cut between reads is still dropped.
func TestRunConsoleDropsAnswerBack(t *testing.T) {
	answerWait = time.Hour // every cut is joined; the end of input flushes
	t.Cleanup(func() { answerWait = 50 * time.Millisecond })
	pr, pw := io.Pipe()
	var mu sync.Mutex
	var sent []byte
	done := make(chan struct{})
	go func() {
		RunConsole(context.Background(), pr, true, []byte("\r"), func(b []byte) error {
			mu.Lock()
			sent = append(sent, b...)
			mu.Unlock()
			return nil
		}, func() {}, io.Discard)
		close(done)
	}()
	for _, chunk := range []string{"ls\r", "\x1b[4;1", "3R", "\x1b", "]11;rgb:0000/0000/0000", "\x1b", "\\", "\x1bP>|tmux 3.3a\x1b\\\x1b[?62;22c", "\x1b", "[A", "\x1b"} {
		pw.Write([]byte(chunk))
	}
	pw.Close()
	<-done
	if want := "ls\r\x1b[A\x1b"; string(sent) != want {
		t.Errorf("the board got %q, want %q", sent, want)
	}
}
