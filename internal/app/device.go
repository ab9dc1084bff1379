package app

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/devlink/crash"
)

// ReadBoard returns the board's state as a headless command sees it once:
// with port "-", everything the capture on stdin holds; otherwise what a
// live port (a path or "auto") said within wait (its N and D telemetry
// frames come every few seconds). An unusable port is not an error here:
// the state then says the link is down and why (State.Link.Err).
func ReadBoard(ctx context.Context, port string, baud int, wait time.Duration, stdin io.Reader) *devlink.State {
	src := &devlink.Source{}
	if port == "-" {
		src.Replay = stdin
	} else {
		src.Link = &devlink.Link{Port: port, Baud: baud}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	st := devlink.NewState()
	for ev := range src.Run(ctx) {
		s := ev.State
		st = &s
	}
	return st
}

// Firmware is what --elf loads.
type Firmware struct {
	// App is the application ELF's path (the first not named *bootloader*).
	App string
	// Symbols decodes crash PCs with the app ELF.
	Symbols *crash.Symbolizer
	// BinLog decodes Log V2 binary frames with the app and bootloader ELFs.
	BinLog *devlink.BinLog
}

// InputError is input the user gave that cannot be used (an --elf file
// that is missing or is not an ELF, a peer name the tailnet does not
// have); commands exit 2 for it, as for a bad flag.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// OpenFirmware loads --elf's "app.elf[,bootloader.elf]" (either order; the
// bootloader is told by "bootloader" in its file name), for the dashboard
// and tail alike: the app ELF for backtraces, both for binary logs. Errors
// (InputError) name the flag and the file: missing, unreadable, or not an ELF.
func OpenFirmware(spec string) (Firmware, error) {
	var paths []string
	for _, p := range strings.Split(spec, ",") {
		if p = strings.TrimSpace(p); p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return Firmware{}, InputError{fmt.Errorf("--elf %q: give the app ELF, optionally followed by a comma and the bootloader ELF (build/app.elf,build/bootloader/bootloader.elf)", spec)}
	}
	fw := Firmware{App: paths[0]}
	for _, p := range paths {
		if !strings.Contains(filepath.Base(p), "bootloader") {
			fw.App = p
			break
		}
	}
	var err error
	if fw.Symbols, err = crash.OpenELF(fw.App); err != nil {
		return Firmware{}, InputError{fmt.Errorf("--elf: %w (pass the firmware's build/<project>.elf)", err)}
	}
	if fw.BinLog, err = devlink.LoadBinLog(paths...); err != nil {
		return Firmware{}, InputError{fmt.Errorf("--elf: %w", err)}
	}
	return fw, nil
}
