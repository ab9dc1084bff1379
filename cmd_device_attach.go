package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/firmware"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/device"
	"github.com/tailpath/tailpath/tui/logpane"
)

// logKeep is how many device lines the Log pane keeps.
const logKeep = 20000

// attachDevice wires a serial device (or a replayed capture) into the
// dashboard: a devlink.Source feeding the Device and Log panes.
func attachDevice(ctx context.Context, d *dashboard, f *deviceFlags, stdio IO) error {
	eol, err := eolBytes(f.eol)
	if err != nil {
		return err
	}
	src := &devlink.Source{}
	// The ELFs first: a bad one fails before the terminal or port is touched.
	if f.elf != "" {
		fw, err := openFirmware(f.elf)
		if err != nil {
			return err
		}
		src.Symbols, src.BinLog = fw.sym, fw.binlog
	}
	switch f.port {
	case "-":
		// The capture arrives on stdin, so keys must come from the terminal.
		tty, err := openTTY()
		if err != nil {
			return fmt.Errorf("--port -: the dashboard reads keys from the terminal, but %v; to just print a capture use 'tailpath tail --port -'", err)
		}
		src.Replay = stdio.Stdin
		d.input = tty
		d.closers = append(d.closers, tty.Close)
	default:
		src.Link = &devlink.Link{Port: f.port, Baud: f.baud, Reset: f.reset}
	}
	if f.logFile != "" {
		lf, err := os.OpenFile(f.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--log-file: %w", err)
		}
		// Written on the reading goroutine as each line arrives; the OS
		// keeps it on unplug or exit. Closed when the feed ends.
		src.OnLine = func(l *devlink.Line) { lf.Write(l.Raw) }
		d.closers = append(d.closers, lf.Close)
	}
	addDevicePanes(d, src, eol)
	return nil
}

// firmwareELFs is what --elf loads.
type firmwareELFs struct {
	// app is the application ELF's path (the first not named *bootloader*).
	app string
	// sym decodes crash PCs with the app ELF.
	sym *devlink.Symbolizer
	// binlog decodes Log V2 binary frames with the app and bootloader ELFs.
	binlog *devlink.BinLog
}

// openFirmware loads --elf's "app.elf[,bootloader.elf]" (either order; the
// bootloader is told by "bootloader" in its file name), as tail does: the
// app ELF for backtraces, both for binary logs. Errors name the flag and
// the file: missing, unreadable, or not an ELF.
func openFirmware(spec string) (firmwareELFs, error) {
	var paths []string
	for _, p := range strings.Split(spec, ",") {
		if p = strings.TrimSpace(p); p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return firmwareELFs{}, fmt.Errorf("--elf %q: give the app ELF, optionally followed by a comma and the bootloader ELF (build/app.elf,build/bootloader/bootloader.elf)", spec)
	}
	fw := firmwareELFs{app: paths[0]}
	for _, p := range paths {
		if !strings.Contains(filepath.Base(p), "bootloader") {
			fw.app = p
			break
		}
	}
	var err error
	if fw.sym, err = devlink.OpenELF(fw.app); err != nil {
		return firmwareELFs{}, fmt.Errorf("--elf: %w (pass the firmware's build/<project>.elf)", err)
	}
	if fw.binlog, err = devlink.LoadBinLog(paths...); err != nil {
		return firmwareELFs{}, fmt.Errorf("--elf: %w", err)
	}
	return fw, nil
}

// addDevicePanes adds the Device and Log panes and a feed relaying src.
// With a live port, the Log pane's `i` opens a console whose lines end in
// eol (a replay stays read-only).
func addDevicePanes(d *dashboard, src *devlink.Source, eol []byte) {
	st := common.DefaultStyles()
	dev := device.New(st, nil)
	lp := logpane.New(st, logKeep)
	if src.Link != nil {
		// R in the Device pane: one deliberate hard reset of a live board.
		dev.SetReset(src.Link.RequestReset)
		lp.SetConsole(src.Link.Send, eol)
	}
	d.panes = append(d.panes, dev, lp)
	d.feeds = append(d.feeds, func(ctx context.Context, send func(tea.Msg)) {
		for ev := range src.Run(ctx) {
			send(ev)
		}
	})
}

// openTTY opens the controlling terminal for key input.
func openTTY() (*os.File, error) {
	name := "/dev/tty"
	if runtime.GOOS == "windows" {
		name = "CONIN$"
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("no terminal to read keys from (%w)", err)
	}
	return f, nil
}

// pacedReplay returns a reader that yields lines at the pace their At times
// give, sped up by speed, so a replayed board looks live. It ends when the
// lines do or ctx ends.
func pacedReplay(ctx context.Context, lines []firmware.ScenarioLine, speed float64) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		defer pw.Close()
		start := time.Now()
		for _, l := range lines {
			due := start.Add(time.Duration(float64(l.At) / speed))
			if wait := time.Until(due); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
			if _, err := io.WriteString(pw, l.Text+"\n"); err != nil {
				return
			}
		}
	}()
	return pr
}
