package main

import (
	"context"
	"flag"
)

// deviceFlags are the serial-device flags the dashboard shares with tail.
type deviceFlags struct {
	// port is "" (no device), "auto", a device path, or "-" for a capture on stdin.
	port string
	// baud is the serial speed in bits per second.
	baud int
	// elf is a firmware ELF for decoding backtraces.
	elf string
	// logFile, when set, receives every device line as it arrives.
	logFile string
	// reset asks for one deliberate hard reset of the board after opening
	// the port (opening never resets it otherwise).
	reset bool
	// eol is what the Log pane's console sends for Enter: CR, LF or CRLF.
	eol string
}

func (f *deviceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.port, "port", "", `CoreS3 serial port: "auto", a path, or "-" to replay a capture from stdin (default: no device)`)
	fs.IntVar(&f.baud, "baud", 115200, "serial speed in bits per second")
	fs.StringVar(&f.elf, "elf", "", "firmware ELF to decode backtraces and binary logs with (app.elf[,bootloader.elf])")
	fs.StringVar(&f.logFile, "log-file", "", "append every device line to this file")
	fs.BoolVar(&f.reset, "reset", false, "hard-reset the board once after opening the port (opening alone never resets it)")
	fs.StringVar(&f.eol, "eol", "CR", `line ending the Log pane's console (key i) sends: "CR", "LF" or "CRLF"`)
}

// attach adds the device source and panes to d when a port was given.
func (f *deviceFlags) attach(ctx context.Context, d *dashboard, stdio IO) error {
	if f.port == "" {
		return nil
	}
	return attachDevice(ctx, d, f, stdio)
}
