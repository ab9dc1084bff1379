package tune

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tailpath/tailpath/sysctl"
)

// The host side of the dashboard's Tuning pane and of serve's tuning
// metrics: reading the host (with its revert record) once or on a ticker,
// applying and reverting. The pane (tui/tuning) renders Readings and is
// handed a Control's Read, Apply and Revert as functions
// (internal/dashboard's TuningOptions); it does no I/O itself.

// ReadTimeout bounds one reading (sysctls, BBR, sock_diag), so a stuck
// netlink dump cannot stall the refreshes.
const ReadTimeout = 5 * time.Second

// Reading is one reading of the host's tuning: the report and the revert
// record beside it.
type Reading struct {
	Report Report
	// Err is why gathering failed (not Linux, no /proc); Report is then partial.
	Err error
	// State is the revert record; nil when there is none.
	State *sysctl.State
	// StateErr is a corrupt or unreadable state file (not a missing one).
	StateErr error
}

// Control reads and changes one host's tuning: the real one, a `--root`
// copy or the demo's sandbox. Its methods do I/O; call them from a
// command or a goroutine.
type Control struct {
	// Inputs are what to read and recommend for; Inputs.Sandbox marks a
	// copy, which anyone may change.
	Inputs Inputs
	// StatePath is the revert state file; "" means Inputs.Host.StatePath().
	StatePath string
}

// StateFile is the revert state file Apply writes and Revert reads.
func (c Control) StateFile() string {
	if c.StatePath != "" {
		return c.StatePath
	}
	return c.Inputs.Host.StatePath()
}

// Read reads the host once (Gather plus the revert state file).
func (c Control) Read(ctx context.Context) Reading {
	var m Reading
	m.Report, m.Err = Gather(ctx, c.Inputs)
	st, err := sysctl.LoadState(c.StateFile())
	switch {
	case err == nil:
		m.State = &st
	case errors.Is(err, fs.ErrNotExist):
	default:
		m.StateErr = err
	}
	return m
}

// Watch reads the host now and every interval (each reading bounded by
// ReadTimeout) and hands each Reading to sink, until ctx ends.
func (c Control) Watch(ctx context.Context, interval time.Duration, sink func(Reading)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, ReadTimeout)
		m := c.Read(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		sink(m)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Apply writes changes, recording the values they replace for Revert.
func (c Control) Apply(changes []sysctl.Change, ccAvailable func(string) bool) (sysctl.ApplyResult, error) {
	return sysctl.ApplyRecorded(c.Inputs.Host, changes, ccAvailable, c.StateFile())
}

// Revert restores the recorded values.
func (c Control) Revert() (sysctl.ApplyResult, error) {
	return sysctl.Revert(c.Inputs.Host, c.StateFile())
}

// MayChange reports whether applying is allowed: in a sandbox, or as root.
func (c Control) MayChange() bool {
	return c.Inputs.Sandbox || os.Geteuid() == 0
}

// SeedNASControl writes the seed case's NAS under dir (see SeedNAS: DSM on
// Linux 4.4, no BBR, 20 ms, recorded connections) and returns a Control
// reading and writing only there, labelled "sandbox", with the state file
// inside dir: the demo's Tuning tab.
func SeedNASControl(dir string) (Control, error) {
	in, err := SeedNAS(dir)
	if err != nil {
		return Control{}, err
	}
	return Control{Inputs: in, StatePath: sandboxState(dir)}, nil
}

// sandboxState is a sandbox's revert state file, inside it.
func sandboxState(dir string) string {
	return filepath.Join(dir, "var", "lib", "tailpath", "tune-state.json")
}
