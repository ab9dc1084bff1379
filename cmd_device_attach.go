package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
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
	src := &devlink.Source{}
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
		src.Link = &devlink.Link{Port: f.port, Baud: f.baud}
	}
	if f.elf != "" {
		sym, err := devlink.OpenELF(f.elf)
		if err != nil {
			return fmt.Errorf("--elf: %w", err)
		}
		src.Symbols = sym
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
	addDevicePanes(d, src)
	return nil
}

// addDevicePanes adds the Device and Log panes and a feed relaying src.
func addDevicePanes(d *dashboard, src *devlink.Source) {
	st := common.DefaultStyles()
	d.panes = append(d.panes, device.New(st, nil), logpane.New(st, logKeep))
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
