package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
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

const tailUsage = `usage: tailpath tail [flags]

Follow a board's serial console without the dashboard.`

// tailShort is `tailpath tail`'s line in tailpath's usage.
const tailShort = "follow a board's serial log: filter, timestamps, save, backtrace decoding, console, JSON"

func tailCommand() *cli.Command {
	var f tailFlags
	fs := cli.NewFlagSet("tailpath tail")
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
	return &cli.Command{
		Name:  "tail",
		Short: tailShort,
		Usage: tailUsage,
		Flags: fs,
		Run:   f.run,
	}
}

func (f *tailFlags) run(ctx context.Context, args []string, stdio cli.IO) error {
	if err := cli.NoArgs(args); err != nil {
		return err
	}
	filter, err := devlink.ParseFilter(f.filter)
	if err != nil {
		return cli.UsageErrorf("--filter: %w", err)
	}
	mode, err := termcolor.ParseMode(f.color)
	if err != nil {
		return cli.UsageErrorf("--color: %w", err)
	}
	if f.port == "-" && f.reset {
		return cli.UsageErrorf("--reset needs a serial port, not stdin")
	}
	out := devlink.NewPrinter(stdio.Stdout, stdio.Stderr)
	out.Timestamps = f.timestamps
	out.Monitor = devlink.Monitor{Filter: filter, NoAutoColor: f.disableAutoColor}
	// A terminal always gets sanitised text, coloured unless the mode or
	// NO_COLOR says no; piped output gets the device's bytes unchanged
	// unless colour is forced (always, CLICOLOR_FORCE) or refused (never).
	out.Color = termcolor.Enabled(mode, stdio.Stdout)
	out.Plain = !out.Color && (mode == termcolor.Never || termcolor.IsTerminal(stdio.Stdout))
	// Piped under NO_COLOR: monitor's bytes, but no auto-colour added (the
	// board's own codes pass through, as they came).
	if mode == termcolor.Auto && termcolor.NoColor() {
		out.Monitor.NoAutoColor = true
	}
	if f.elf != "" {
		fw, err := app.OpenFirmware(f.elf)
		if err != nil {
			return fmt.Errorf("tail %w", err)
		}
		out.Sym, out.ELFName, out.BinLog = fw.Symbols, fw.App, fw.BinLog
		out.BinLog.NoColor = out.Monitor.NoAutoColor // as monitor's --disable-auto-color prints decoded lines
	}
	if f.json {
		if f.filter != "" || f.timestamps {
			return cli.UsageErrorf("--json: every line is written, with its time; drop --filter and --timestamps (filter the JSON instead)")
		}
		out.JSON = &devlink.JSONLog{W: stdio.Stdout, Sym: out.Sym}
	}
	if f.save != "" {
		sf, err := os.OpenFile(f.save, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("tail --save: %w", err)
		}
		defer sf.Close()
		out.Save = sf
	}
	eol, err := devlink.EOLBytes(f.eol)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	if f.console && f.port == "-" {
		return cli.UsageError{Err: errConsoleStdin}
	}
	if f.port == "-" {
		in := stdio.Stdin
		if in == nil {
			in = strings.NewReader("")
		}
		return out.Close(devlink.Pump(ctx, in, 0, out.Line))
	}
	link := &devlink.Link{Port: f.port, Baud: f.baud, Reset: f.reset}
	if f.console {
		if stdio.Stdin == nil {
			return cli.UsageErrorf("--console: no standard input to read keys from")
		}
		restore, raw, err := devlink.RawTerminal(stdio.Stdin)
		if err != nil {
			return err
		}
		defer restore()
		if raw && !out.Color {
			// Keys come from a terminal, and the output goes elsewhere:
			// to the same terminal through `| tee log`, most likely.
			// Cleaned, then: the board's own escape sequences (a title,
			// OSC 52 to the clipboard, queries the terminal would answer)
			// must not reach a terminal through a pipe either.
			out.Plain = true
		}
		if raw {
			// The terminal no longer turns "\n" into "\r\n".
			if termcolor.IsTerminal(stdio.Stdout) {
				out.W = devlink.NewCRLFWriter(out.W)
			}
			if termcolor.IsTerminal(stdio.Stderr) {
				out.Stderr = devlink.NewCRLFWriter(out.Stderr)
			}
			fmt.Fprintln(out.Stderr, "tailpath: console: keys go to the board; Ctrl+] quits")
		}
		// On a terminal, tail answers the console's status query for it
		// (the terminal's own answer would be dropped with the rest of
		// what it sends on its own).
		if termcolor.IsTerminal(stdio.Stdout) {
			out.Answer = link.Send
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ctx = cctx
		go devlink.RunConsole(ctx, stdio.Stdin, raw, eol, link.Send, cancel, out.Stderr)
	}
	return out.Close(link.Run(ctx, out.Line, out.Status))
}

var errConsoleStdin = errors.New("tail --console: the keys come from standard input, so --port - (a capture on stdin) cannot be used with it")
