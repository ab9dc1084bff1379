package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/termcolor"
)

// tailFlags are tailpath tail's flags.
type tailFlags struct {
	port       string // "auto", a device path, or "-" to replay stdin
	baud       int    // line speed in bit/s
	filter     string // ESP-IDF monitor print filter, e.g. "wifi:W *:I"
	timestamps bool   // prefix each line with the host's wall-clock time
	save       string // file every line is appended to as it arrives (unfiltered, raw bytes)
	elf        string // firmware ELF(s), comma-separated: app (backtraces, binary logs) and bootloader (its binary logs)
	reset      bool   // hard-reset the board once after opening the port
	// color is "auto" (sanitised on a terminal, coloured by level unless
	// NO_COLOR is set; piped, the bytes ESP-IDF monitor would print, unless
	// CLICOLOR_FORCE is set, without its auto-colour when NO_COLOR is), "always" (sanitised and coloured) or "never"
	// (sanitised: the board's own colour codes and control characters
	// stripped, no colour added). internal/termcolor decides.
	color string
	// disableAutoColor: piped output keeps uncoloured I/W/E lines
	// uncoloured (ESP-IDF monitor's --disable-auto-color).
	disableAutoColor bool
	// json writes JSON Lines instead of text (docs/device.md).
	json bool
	// console sends typed keys to the board (an interactive console, as
	// idf.py monitor does); eol is what Enter sends: "CR", "LF" or "CRLF".
	console bool
	eol     string
}

// tailOut writes lines the way tailpath tail shows them. Piped with
// --color auto, it writes what ESP-IDF monitor prints, byte for byte
// (devlink.Monitor: its filter, its auto-colour, the console's status
// query); on a terminal, or with --color always, it writes sanitised text
// coloured by level (devlink's palette); with --color never, or on a
// terminal with NO_COLOR set, sanitised text without colour (the board's
// own escape codes removed); with --json, JSON Lines (devlink.JSONLog).
type tailOut struct {
	w          io.Writer
	stderr     io.Writer
	mon        devlink.Monitor
	color      bool // sanitise and colour by level
	plain      bool // sanitise, no colour (--color never, or NO_COLOR on a terminal)
	query      bool // pass the console's status query to the terminal (interactive console on a terminal)
	json       *devlink.JSONLog
	buf        []byte
	timestamps bool
	save       *os.File
	sym        *devlink.Symbolizer
	elfName    string
	binlog     *devlink.BinLog

	atStart   bool // the last byte written to w ended a line
	binFrames int
	shaWarned map[string]bool
	saveErr   error
	now       func() time.Time
}

// line handles one line from the link (called on the reading goroutine).
func (o *tailOut) line(l *devlink.Line) {
	if o.save != nil && o.saveErr == nil {
		if _, err := o.save.Write(l.Raw); err != nil {
			o.saveErr = err
			fmt.Fprintf(o.stderr, "tailpath: writing %s failed, no longer saving: %v\n", o.save.Name(), err)
		}
	}
	if o.json != nil {
		if l.Kind == devlink.KindBinary && o.binlog != nil {
			o.binlog.Expand(l, func(d *devlink.Line) { o.json.Line(d, o.now()) })
			return
		}
		o.json.Line(l, o.now())
		return
	}
	if l.Kind == devlink.KindBinary {
		o.binFrames++
		if o.binlog != nil {
			if err := o.binlog.Expand(l, o.show); err != nil && o.binFrames == 1 {
				fmt.Fprintf(o.stderr, "tailpath: binary log frame not decoded: %v\n", err)
			}
			return
		}
		if o.binFrames == 1 {
			fmt.Fprintln(o.stderr, "tailpath: binary logging is on: pass the ELF to decode it (--elf build/app.elf,build/bootloader/bootloader.elf); binary frames are not printed")
		}
		return
	}
	o.show(l)
}

// show filters and prints one text line (received, or decoded from a binary frame).
func (o *tailOut) show(l *devlink.Line) {
	if l.Kind == devlink.KindELFSHA && o.sym != nil {
		if sha, ok := devlink.ParseELFSHA(l.Body()); ok && !o.sym.MatchesBoard(sha) && !o.shaWarned[sha] {
			o.shaWarned[sha] = true
			fmt.Fprintf(o.stderr, "tailpath: warning: the board runs an ELF with SHA256 %s…, but %s is %s…: decoded backtraces may be wrong\n",
				sha, o.elfName, o.sym.SHA256()[:16])
		}
	}
	if !o.mon.Shows(l) {
		return
	}
	switch {
	case l.Kind == devlink.KindStatusQuery && (o.color || o.plain):
		// Sanitised output drops it, except for an interactive console
		// on a terminal: the terminal answers, and its answer is typed
		// through to the board, as with idf.py monitor.
		if o.query {
			io.WriteString(o.w, devlink.StatusQuery)
		}
	case o.color || o.plain:
		o.writeClean(l)
	default:
		o.stamp()
		o.buf = o.mon.Append(o.buf[:0], l)
		o.w.Write(o.buf)
		o.atStart = len(l.Raw) > 0 && l.Raw[len(l.Raw)-1] == '\n'
	}
	if o.sym != nil {
		if dec := o.sym.DecodeLine(l); len(dec) > 0 {
			if !o.atStart {
				io.WriteString(o.w, "\n")
			}
			for _, d := range dec {
				o.stamp()
				if o.color {
					io.WriteString(o.w, devlink.ColorWarn+safetext.Clean(d)+devlink.ColorReset+"\n")
				} else if o.plain {
					io.WriteString(o.w, safetext.Clean(d)+"\n")
				} else {
					io.WriteString(o.w, d+"\n")
				}
			}
			o.atStart = true
		}
	}
}

func (o *tailOut) stamp() {
	if o.timestamps && o.atStart {
		io.WriteString(o.w, o.now().Format("2006-01-02 15:04:05.000 "))
	}
}

// writeClean writes l sanitised (escape sequences and control characters
// removed), coloured by level when o.color is set.
func (o *tailOut) writeClean(l *devlink.Line) {
	o.stamp()
	text := safetext.Clean(string(l.Text))
	if c := devlink.LineColor(l); o.color && c != "" && text != "" {
		text = c + text + devlink.ColorReset
	}
	if !l.Partial {
		text += "\n"
	}
	io.WriteString(o.w, text)
	o.atStart = !l.Partial
}

func (o *tailOut) status(s devlink.LinkStatus) {
	if o.json != nil {
		o.json.Link(s)
	}
	if s.Up {
		how := "open"
		if s.Reset {
			how = "open, board reset"
		}
		fmt.Fprintf(o.stderr, "tailpath: link up: %s (%s)\n", s.Port, how)
		return
	}
	fmt.Fprintf(o.stderr, "tailpath: link down: %s: %v; waiting for it to come back\n", s.Port, s.Err)
}

const tailUsage = `usage: tailpath tail [flags]

Follow a board's serial console without the dashboard.`

func tailCommand() *command {
	var f tailFlags
	fs := newFlagSet("tailpath tail")
	fs.StringVar(&f.port, "port", "auto", `serial port: "auto" (find an ESP32 board), a path like /dev/ttyACM0, or "-" to replay stdin`)
	fs.IntVar(&f.baud, "baud", 115200, "baud rate (ignored by the ESP32-S3's own USB port)")
	fs.StringVar(&f.filter, "filter", "", `ESP-IDF monitor print filter: "tag:L" items, L in N E W I D V *, e.g. "wifi:W *:I"`)
	fs.BoolVar(&f.timestamps, "timestamps", false, "prefix each line with the host's time")
	fs.StringVar(&f.save, "save", "", "append every line (unfiltered, as received) to this file")
	fs.StringVar(&f.elf, "elf", "", "firmware ELF to decode backtraces and binary logs with; add the bootloader ELF after a comma for its binary logs")
	fs.BoolVar(&f.reset, "reset", false, "hard-reset the board once after opening the port (never done otherwise)")
	fs.StringVar(&f.color, "color", "auto", `"auto" (colour on a terminal unless NO_COLOR is set, or when CLICOLOR_FORCE is; piped, exactly what idf.py monitor prints, without its auto-colour when NO_COLOR is set), "always", or "never" (the board's own colour codes stripped)`)
	fs.BoolVar(&f.disableAutoColor, "disable-auto-color", false, "piped output: leave uncoloured I/W/E lines uncoloured (idf.py monitor's --disable-auto-color)")
	fs.BoolVar(&f.json, "json", false, "write JSON Lines: one object per line and per event (boot, panic, telemetry, port, link; see docs/device.md)")
	fs.BoolVar(&f.console, "console", false, "interactive console: send typed keys to the board (Ctrl+] quits), as idf.py monitor does")
	fs.StringVar(&f.eol, "eol", "CR", `what Enter sends to the board with --console: "CR", "LF" or "CRLF"`)
	return &command{
		name:  "tail",
		short: "follow a board's serial log: filter, timestamps, save, backtrace decoding, console, JSON",
		usage: tailUsage,
		flags: fs,
		run:   f.run,
	}
}

func (f *tailFlags) run(ctx context.Context, args []string, stdio IO) error {
	if err := noArgs(args); err != nil {
		return err
	}
	filter, err := devlink.ParseFilter(f.filter)
	if err != nil {
		return usageErrorf("--filter: %w", err)
	}
	mode, err := termcolor.ParseMode(f.color)
	if err != nil {
		return usageErrorf("--color: %w", err)
	}
	if f.port == "-" && f.reset {
		return usageErrorf("--reset needs a serial port, not stdin")
	}
	out := &tailOut{
		w: stdio.Stdout, stderr: stdio.Stderr, timestamps: f.timestamps,
		mon:     devlink.Monitor{Filter: filter, NoAutoColor: f.disableAutoColor},
		atStart: true, shaWarned: map[string]bool{}, now: time.Now,
	}
	// A terminal always gets sanitised text, coloured unless the mode or
	// NO_COLOR says no; piped output gets the device's bytes unchanged
	// unless colour is forced (always, CLICOLOR_FORCE) or refused (never).
	out.color = termcolor.Enabled(mode, stdio.Stdout)
	out.plain = !out.color && (mode == termcolor.Never || termcolor.IsTerminal(stdio.Stdout))
	// Piped under NO_COLOR: monitor's bytes, but no auto-colour added (the
	// board's own codes pass through, as they came).
	if mode == termcolor.Auto && termcolor.NoColor() {
		out.mon.NoAutoColor = true
	}
	if f.elf != "" {
		fw, err := app.OpenFirmware(f.elf)
		if err != nil {
			return fmt.Errorf("tail %w", err)
		}
		out.sym, out.elfName, out.binlog = fw.Symbols, fw.App, fw.BinLog
		out.binlog.NoColor = out.mon.NoAutoColor // as monitor's --disable-auto-color prints decoded lines
	}
	if f.json {
		if f.filter != "" || f.timestamps {
			return usageErrorf("--json: every line is written, with its time; drop --filter and --timestamps (filter the JSON instead)")
		}
		out.json = &devlink.JSONLog{W: stdio.Stdout, Sym: out.sym}
	}
	if f.save != "" {
		sf, err := os.OpenFile(f.save, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("tail --save: %w", err)
		}
		defer sf.Close()
		out.save = sf
	}
	eol, err := eolBytes(f.eol)
	if err != nil {
		return usageError{err}
	}
	if f.console && f.port == "-" {
		return usageError{errConsoleStdin}
	}
	if f.port == "-" {
		in := stdio.Stdin
		if in == nil {
			in = strings.NewReader("")
		}
		return out.close(devlink.Pump(ctx, in, 0, out.line))
	}
	link := &devlink.Link{Port: f.port, Baud: f.baud, Reset: f.reset}
	if f.console {
		if stdio.Stdin == nil {
			return usageErrorf("--console: no standard input to read keys from")
		}
		restore, raw, err := rawTerminal(stdio.Stdin)
		if err != nil {
			return err
		}
		defer restore()
		if raw {
			// The terminal no longer turns "\n" into "\r\n".
			if termcolor.IsTerminal(stdio.Stdout) {
				out.w = &crlfWriter{w: out.w}
			}
			if termcolor.IsTerminal(stdio.Stderr) {
				out.stderr = &crlfWriter{w: out.stderr}
			}
			fmt.Fprintln(out.stderr, "tailpath: console: keys go to the board; Ctrl+] quits")
		}
		// The terminal answers the console's status query itself.
		out.query = termcolor.IsTerminal(stdio.Stdout)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ctx = cctx
		go runConsole(ctx, stdio.Stdin, raw, eol, link.Send, cancel, out.stderr)
	}
	return out.close(link.Run(ctx, out.line, out.status))
}

// close ends the output after the feed stopped with err: a crash report
// cut short by the end is written (--json), and a write error is reported.
func (o *tailOut) close(err error) error {
	if o.json != nil {
		if jerr := o.json.Close(); err == nil && jerr != nil {
			err = fmt.Errorf("tail --json: %w", jerr)
		}
	}
	return err
}
