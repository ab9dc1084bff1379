package devlink

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tailpath/tailpath/devlink/crash"
	"github.com/tailpath/tailpath/internal/safetext"
)

// Printer writes a board's lines the way `tailpath tail` shows them.
// With neither Color nor Plain (piped, --color auto) it writes what
// ESP-IDF monitor prints, byte for byte (Monitor: its filter, its
// auto-colour, the console's status query); with Color it writes
// sanitised text coloured by level (LineColor's palette); with Plain,
// sanitised text without colour (the board's own escape codes removed);
// with JSON, JSON Lines (JSONLog). Create with NewPrinter, set the fields,
// then feed it Line and Status from one goroutine (Link.Run, Pump) and end
// with Close.
type Printer struct {
	// W gets the lines, Stderr what tailpath says about them.
	W, Stderr io.Writer
	// Monitor filters and lays out lines as ESP-IDF monitor does.
	Monitor Monitor
	// Color sanitises and colours by level; Plain sanitises without
	// colour (--color never, or NO_COLOR on a terminal).
	Color, Plain bool
	// Answer, when set, answers the console's status query for the
	// terminal (an interactive console on a terminal): it gets
	// StatusAnswer to send to the board, as the Log pane does. The query
	// itself is never passed to the terminal, whose own answer would be
	// dropped (RunConsole types nothing a terminal sends on its own).
	Answer func([]byte) error
	// JSON, when set, gets every line instead (--json).
	JSON *JSONLog
	// Timestamps prefixes each line with Now's wall-clock time.
	Timestamps bool
	// Save, when set, gets every line as received (unfiltered, raw).
	Save *os.File
	// Sym decodes backtraces (its ELF named ELFName); BinLog decodes
	// binary log frames. Either may be nil.
	Sym     *crash.Symbolizer
	ELFName string
	BinLog  *BinLog
	// Now is the clock for timestamps and JSON lines.
	Now func() time.Time

	buf       []byte
	atStart   bool // the last byte written to W ended a line
	binFrames int
	shaWarned map[string]bool
	saveErr   error
}

// NewPrinter returns a Printer writing to w, with its messages on stderr
// and the wall clock; its other fields are zero.
func NewPrinter(w, stderr io.Writer) *Printer {
	return &Printer{W: w, Stderr: stderr, Now: time.Now, atStart: true, shaWarned: map[string]bool{}}
}

// Line handles one line from the link (called on the reading goroutine).
func (o *Printer) Line(l *Line) {
	if o.Save != nil && o.saveErr == nil {
		if _, err := o.Save.Write(l.Raw); err != nil {
			o.saveErr = err
			fmt.Fprintf(o.Stderr, "tailpath: writing %s failed, no longer saving: %v\n", o.Save.Name(), err)
		}
	}
	if o.JSON != nil {
		if l.Kind == KindBinary && o.BinLog != nil {
			o.BinLog.Expand(l, func(d *Line) { o.JSON.Line(d, o.Now()) })
			return
		}
		o.JSON.Line(l, o.Now())
		return
	}
	if l.Kind == KindBinary {
		o.binFrames++
		if o.BinLog != nil {
			if err := o.BinLog.Expand(l, o.show); err != nil && o.binFrames == 1 {
				fmt.Fprintf(o.Stderr, "tailpath: binary log frame not decoded: %v\n", err)
			}
			return
		}
		if o.binFrames == 1 {
			fmt.Fprintln(o.Stderr, "tailpath: binary logging is on: pass the ELF to decode it (--elf build/app.elf,build/bootloader/bootloader.elf); binary frames are not printed")
		}
		return
	}
	o.show(l)
}

// show filters and prints one text line (received, or decoded from a binary frame).
func (o *Printer) show(l *Line) {
	if l.Kind == KindELFSHA && o.Sym != nil {
		if sha, ok := crash.ParseELFSHA(l.Body()); ok && !o.Sym.MatchesBoard(sha) && !o.shaWarned[sha] {
			o.shaWarned[sha] = true
			fmt.Fprintf(o.Stderr, "tailpath: warning: the board runs an ELF with SHA256 %s…, but %s is %s…: decoded backtraces may be wrong\n",
				sha, o.ELFName, o.Sym.SHA256()[:16])
		}
	}
	if !o.Monitor.Shows(l) {
		return
	}
	switch {
	case l.Kind == KindStatusQuery && o.Answer != nil:
		// An interactive console on a terminal: answered here, off the
		// reading goroutine (a port write may wait on the board).
		go o.Answer([]byte(StatusAnswer))
	case l.Kind == KindStatusQuery && (o.Color || o.Plain):
		// Sanitised output drops it.
	case o.Color || o.Plain:
		o.writeClean(l)
	default:
		o.stamp()
		o.buf = o.Monitor.Append(o.buf[:0], l)
		o.W.Write(o.buf)
		o.atStart = len(l.Raw) > 0 && l.Raw[len(l.Raw)-1] == '\n'
	}
	if o.Sym != nil {
		if dec := DecodeLine(o.Sym, l); len(dec) > 0 {
			if !o.atStart {
				io.WriteString(o.W, "\n")
			}
			for _, d := range dec {
				o.stamp()
				if o.Color {
					io.WriteString(o.W, ColorWarn+safetext.Clean(d)+ColorReset+"\n")
				} else if o.Plain {
					io.WriteString(o.W, safetext.Clean(d)+"\n")
				} else {
					io.WriteString(o.W, d+"\n")
				}
			}
			o.atStart = true
		}
	}
}

func (o *Printer) stamp() {
	if o.Timestamps && o.atStart {
		io.WriteString(o.W, o.Now().Format("2006-01-02 15:04:05.000 "))
	}
}

// writeClean writes l sanitised (escape sequences and control characters
// removed), coloured by level when o.Color is set.
func (o *Printer) writeClean(l *Line) {
	o.stamp()
	text := safetext.Clean(string(l.Text))
	if c := LineColor(l); o.Color && c != "" && text != "" {
		text = c + text + ColorReset
	}
	if !l.Partial {
		text += "\n"
	}
	io.WriteString(o.W, text)
	o.atStart = !l.Partial
}

// Status reports a change of the link (up, down) on Stderr, and in the
// JSON Lines.
func (o *Printer) Status(s LinkStatus) {
	if o.JSON != nil {
		o.JSON.Link(s)
	}
	if s.Up {
		how := "open"
		if s.Reset {
			how = "open, board reset"
		}
		fmt.Fprintf(o.Stderr, "tailpath: link up: %s (%s)\n", s.Port, how)
		return
	}
	fmt.Fprintf(o.Stderr, "tailpath: link down: %s: %s; waiting for it to come back\n", s.Port, s.ErrText())
}

// Close ends the output after the feed stopped with err: a crash report
// cut short by the end is written (--json), and a write error is reported.
func (o *Printer) Close(err error) error {
	if o.JSON != nil {
		if jerr := o.JSON.Close(); err == nil && jerr != nil {
			err = fmt.Errorf("tail --json: %w", jerr)
		}
	}
	return err
}
