package devlink

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

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
// the console. Everything else, escape sequences included (a terminal's
// answer to the status query, arrow keys), goes as typed.
type keyTranslator struct {
	eol   []byte
	enter byte // the byte Enter arrives as
}

// translate appends the bytes to send for in to dst; quit is true when
// Ctrl+] was typed (bytes after it are dropped).
func (k keyTranslator) translate(dst, in []byte) (out []byte, quit bool) {
	for _, c := range in {
		switch c {
		case ConsoleQuit:
			return dst, true
		case k.enter:
			dst = append(dst, k.eol...)
		default:
			dst = append(dst, c)
		}
	}
	return dst, false
}

// RunConsole copies keys from in to send until in ends, ctx is done or
// Ctrl+] is typed (then it calls quit). fromTerminal says in is a
// terminal in raw mode (Enter arrives as CR).
func RunConsole(ctx context.Context, in io.Reader, fromTerminal bool, eol []byte, send func([]byte) error, quit func(), stderr io.Writer) {
	k := keyTranslator{eol: eol, enter: '\n'}
	if fromTerminal {
		k.enter = '\r'
	}
	buf := make([]byte, 256)
	var out []byte
	warned := false
	for ctx.Err() == nil {
		n, err := in.Read(buf)
		if n > 0 {
			var q bool
			out, q = k.translate(out[:0], buf[:n])
			if len(out) > 0 {
				if err := send(out); err != nil && !warned {
					warned = true
					fmt.Fprintf(stderr, "tailpath: %v\n", err)
				}
			}
			if q {
				quit()
				return
			}
		}
		if err != nil {
			return
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
