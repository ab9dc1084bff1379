package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/tailpath/tailpath/internal/termcolor"
)

// ErrNoTerminal matches (errors.Is) the errors of NeedTerminal and
// CheckTTY: the dashboard has no terminal to read keys from. Commands exit
// 2 on it.
var ErrNoTerminal = errors.New("no terminal to read keys from")

// terminalError is an ErrNoTerminal worded for the case at hand.
type terminalError struct{ msg string }

func (e terminalError) Error() string        { return e.msg }
func (e terminalError) Is(target error) bool { return target == ErrNoTerminal }

// NeedTerminal returns an actionable error matching ErrNoTerminal when keys
// would come from input, an *os.File that is not a terminal; other readers
// (tests' pipes) pass.
func NeedTerminal(input io.Reader) error {
	if f, ok := input.(*os.File); ok && !termcolor.IsTerminal(f) {
		return terminalError{"the dashboard needs a terminal to read keys from, and standard input is not one; for scripts use 'tailpath status --json' (or 'tailpath demo --status --json')"}
	}
	return nil
}

// CheckTTY reports, before the program starts, whether the controlling
// terminal that tea.OpenTTY opens (/dev/tty; CONIN$ on Windows) can be
// opened; its error matches ErrNoTerminal.
func CheckTTY() error {
	name := "/dev/tty"
	if runtime.GOOS == "windows" {
		name = "CONIN$"
	}
	f, err := os.Open(name)
	if err != nil {
		return terminalError{fmt.Sprintf("%v (%v)", ErrNoTerminal, err)}
	}
	return f.Close()
}
