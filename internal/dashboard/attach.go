package dashboard

import (
	"fmt"
	"io"
	"os"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/app"
)

// DeviceOptions say where a board's output comes from and what to do with
// it (the dashboard's --port, --baud, --elf, --log-file and --reset).
type DeviceOptions struct {
	// Port is "auto", a device path, or "-" for a capture on stdin.
	Port string
	// Baud is the serial speed in bits per second.
	Baud int
	// ELF is --elf's "app.elf[,bootloader.elf]"; "" decodes nothing.
	ELF string
	// LogFile, when set, receives every device line as it arrives.
	LogFile string
	// Reset asks for one deliberate hard reset after opening the port.
	Reset bool
	// EOL is what the Log pane's console (key i) sends for Enter (CR, LF
	// or CRLF as bytes); nil means CR, as idf.py monitor sends.
	EOL []byte
}

// AttachDevice sets d.Device from opts: a serial link, or with Port "-" a
// replay of stdin (keys then come from the terminal). A bad --elf or
// --log-file fails here, before the terminal or port is touched.
func (d *Dashboard) AttachDevice(opts DeviceOptions, stdin io.Reader) error {
	src := &devlink.Source{}
	if opts.ELF != "" {
		fw, err := app.OpenFirmware(opts.ELF)
		if err != nil {
			return err
		}
		src.Symbols, src.BinLog = fw.Symbols, fw.BinLog
	}
	switch opts.Port {
	case "-":
		// The capture arrives on stdin, so keys must come from the terminal.
		if err := CheckTTY(); err != nil {
			return fmt.Errorf("--port -: the dashboard reads keys from the terminal, but %w; to just print a capture use 'tailpath tail --port -'", err)
		}
		src.Replay = stdin
		d.InputTTY = true
	default:
		src.Link = &devlink.Link{Port: opts.Port, Baud: opts.Baud, Reset: opts.Reset}
	}
	if opts.LogFile != "" {
		lf, err := os.OpenFile(opts.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--log-file: %w", err)
		}
		// Written on the reading goroutine as each line arrives; the OS
		// keeps it on unplug or exit. Closed when the feed ends.
		src.OnLine = func(l *devlink.Line) { lf.Write(l.Raw) }
		d.Closers = append(d.Closers, lf.Close)
	}
	d.Device = src
	d.EOL = opts.EOL
	return nil
}
