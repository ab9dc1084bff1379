package devlink

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
)

// This file is an interactive console to the board (`tailpath tail
// --console`), as idf.py monitor has one: typed keys go to the board
// (Link.Send), Enter as the board wants it, Ctrl+] quits.

// ConsoleQuit is the key that ends the console: Ctrl+], as in idf.py
// monitor and miniterm.
const ConsoleQuit = 0x1d

// EOLBytes returns what Enter sends for eol: "CR", "LF" or "CRLF" (any
// case). Its error names --eol, the flag that takes it.
func EOLBytes(eol string) ([]byte, error) {
	switch strings.ToUpper(eol) {
	case "CR":
		return []byte("\r"), nil
	case "LF":
		return []byte("\n"), nil
	case "CRLF":
		return []byte("\r\n"), nil
	}
	return nil, fmt.Errorf("--eol %q: want CR, LF or CRLF", eol)
}

// keyTranslator turns typed bytes into what goes to the board: Enter (CR
// from a terminal in raw mode, LF from a pipe) becomes eol, Ctrl+] ends
// the console, and what the terminal sends on its own is dropped
// (answerBack). Keys, escape sequences of keys included (arrows, function
// keys, Alt+key), go as typed. It keeps an unfinished sequence across
// calls; flush ends it.
type keyTranslator struct {
	eol   []byte
	enter byte // the byte Enter arrives as

	st   seqState
	held []byte // the unfinished sequence: ESC and what followed
	skip int    // X10 mouse report bytes still to drop
}

// seqState is where keyTranslator is in an escape sequence.
type seqState int

const (
	seqNone   seqState = iota
	seqEsc             // ESC
	seqCSI             // ESC [ and parameters
	seqSS3             // ESC O
	seqString          // inside OSC, DCS, APC, PM or SOS: dropped up to ST or BEL
	seqStrEsc          // ESC inside a string: ST if "\" follows
)

// maxCSI bounds a CSI sequence held; a longer one is no key and is dropped.
const maxCSI = 64

// answerBack reports whether the CSI sequence seq (ESC [ … final) is a
// terminal's answer rather than a key: anything but a key's shape. A key
// is ESC [ with digits and ";" only, then A-H (arrows, Home, End, keypad
// 5), P, Q, S (F1-F4 with modifiers), Z (Shift+Tab), "~" (Insert,
// Delete, PageUp/Down, F5-F12, bracketed paste's markers) or "u" (CSI u
// keys). Answers: cursor position (R: ESC[4;13R, the answer to ESC[6n;
// also the rare F3 with modifiers, which looks the same), device
// attributes (c, with ? > or =), status (n: ESC[0n), mode reports ($y),
// window reports (t), focus (I, O), mouse reports (M, m, ESC[<…), the
// keyboard protocol's flags (ESC[?…u).
func answerBack(seq []byte) bool {
	body := seq[2 : len(seq)-1]
	final := seq[len(seq)-1]
	for _, c := range body {
		if !(c >= '0' && c <= '9' || c == ';') {
			return true
		}
	}
	return !strings.ContainsRune("ABCDEFGHPQSZ~u", rune(final))
}

// translate appends the bytes to send for in to dst; quit is true when
// Ctrl+] was typed (bytes after it are dropped).
func (k *keyTranslator) translate(dst, in []byte) (out []byte, quit bool) {
	for i := 0; i < len(in); i++ {
		c := in[i]
		if k.skip > 0 {
			k.skip--
			continue
		}
		switch k.st {
		case seqEsc:
			switch c {
			case '[':
				k.held, k.st = append(k.held, c), seqCSI
				continue
			case 'O':
				k.held, k.st = append(k.held, c), seqSS3
				continue
			case ']', 'P', '_', '^', 'X':
				// OSC, DCS, APC, PM, SOS: typed keys never start one; the
				// terminal's answers do (colours, XTVERSION, DECRQSS).
				k.held, k.st = k.held[:0], seqString
				continue
			case 0x1b:
				dst = append(dst, k.held...) // Escape, then maybe more
				k.held = k.held[:1]
				continue
			}
			// Alt+key: ESC and the key.
			dst = append(dst, k.held...)
			k.held, k.st = k.held[:0], seqNone
		case seqSS3:
			dst = append(append(dst, k.held...), c)
			k.held, k.st = k.held[:0], seqNone
			continue
		case seqCSI:
			switch {
			case c >= 0x20 && c <= 0x3f && len(k.held) < maxCSI:
				k.held = append(k.held, c)
				continue
			case c >= 0x40 && c <= 0x7e && len(k.held) < maxCSI:
				k.held = append(k.held, c)
				if !answerBack(k.held) {
					dst = append(dst, k.held...)
				} else if len(k.held) == 3 && c == 'M' {
					k.skip = 3 // an X10 mouse report: three bytes follow
				}
				k.held, k.st = k.held[:0], seqNone
				continue
			}
			// Not a sequence a terminal or a key sends: dropped, and the
			// byte read afresh.
			k.held, k.st = k.held[:0], seqNone
		case seqString:
			switch c {
			case 0x07, 0x18, 0x1a: // BEL ends an OSC; CAN and SUB cancel
				k.st = seqNone
			case 0x1b:
				k.st = seqStrEsc
			}
			continue
		case seqStrEsc:
			if c == '\\' {
				k.st = seqNone
				continue
			}
			// An ESC that ends the string and starts a sequence of its
			// own: c is read again after it.
			k.held, k.st = append(k.held[:0], 0x1b), seqEsc
			i--
			continue
		}
		switch c {
		case ConsoleQuit:
			return dst, true
		case 0x1b:
			k.held, k.st = append(k.held[:0], c), seqEsc
		case k.enter:
			dst = append(dst, k.eol...)
		default:
			dst = append(dst, c)
		}
	}
	return dst, false
}

// pending reports whether an unfinished sequence is held.
func (k *keyTranslator) pending() bool { return k.st != seqNone || k.skip > 0 }

// flush ends what is held once no more arrives: a lone ESC (the Escape
// key) or ESC O (Alt+O) goes to dst; an unfinished CSI sequence or string,
// a terminal's answer cut short, is dropped.
func (k *keyTranslator) flush(dst []byte) []byte {
	switch k.st {
	case seqEsc, seqSS3:
		dst = append(dst, k.held...)
	}
	k.held, k.st, k.skip = k.held[:0], seqNone, 0
	return dst
}

// answerWait is how long RunConsole waits for the rest of a sequence cut
// between two reads before it ends it (flush). A terminal writes its
// answer at once; the rest of one cut by a read is already waiting.
var answerWait = 50 * time.Millisecond

// RunConsole copies keys from in to send until in ends, ctx is done or
// Ctrl+] is typed (then it calls quit). fromTerminal says in is a
// terminal in raw mode (Enter arrives as CR). What the terminal sends on
// its own is never sent: the answers to queries the board's output made
// (cursor position, device attributes, status, colours, its version),
// mouse and focus reports (keyTranslator).
func RunConsole(ctx context.Context, in io.Reader, fromTerminal bool, eol []byte, send func([]byte) error, quit func(), stderr io.Writer) {
	k := &keyTranslator{eol: eol, enter: '\n'}
	if fromTerminal {
		k.enter = '\r'
	}
	chunks := make(chan []byte)
	go func() {
		defer close(chunks)
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				select {
				case chunks <- append([]byte(nil), buf[:n]...):
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var out []byte
	warned := false
	emit := func() {
		if len(out) > 0 {
			if err := send(out); err != nil && !warned {
				warned = true
				fmt.Fprintf(stderr, "tailpath: %v\n", err)
			}
		}
	}
	var wait <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-wait:
			out = k.flush(out[:0])
			emit()
			wait = nil
		case b, ok := <-chunks:
			if !ok {
				out = k.flush(out[:0])
				emit()
				return
			}
			var q bool
			out, q = k.translate(out[:0], b)
			emit()
			if q {
				quit()
				return
			}
			wait = nil
			if k.pending() {
				wait = time.After(answerWait)
			}
		}
	}
}

// RawTerminal puts r in raw mode when it is a terminal and returns a
// function that restores it (a no-op otherwise), and whether it did.
func RawTerminal(r io.Reader) (restore func(), raw bool, err error) {
	f, ok := r.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return func() {}, false, nil
	}
	st, err := term.MakeRaw(f.Fd())
	if err != nil {
		return func() {}, false, fmt.Errorf("tail --console: raw mode for the terminal: %w", err)
	}
	return func() { term.Restore(f.Fd(), st) }, true, nil
}

// NewCRLFWriter returns a writer to w that turns a lone "\n" into
// "\r\n", for a terminal in raw mode (which no longer does it).
func NewCRLFWriter(w io.Writer) io.Writer { return &crlfWriter{w: w} }

// crlfWriter is NewCRLFWriter's writer.
type crlfWriter struct {
	w    io.Writer
	last byte
}

func (c *crlfWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	out := make([]byte, 0, len(p)+8)
	prev := c.last
	for _, b := range p {
		if b == '\n' && prev != '\r' {
			out = append(out, '\r')
		}
		out = append(out, b)
		prev = b
	}
	c.last = prev
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
