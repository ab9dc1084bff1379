package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/internal/termcolor"
)

// newProgram is the dashboard's program (live or replay) on input and
// stdout. Signals end ctx, which ends the program: Bubble Tea's own
// handler would race it (it blocks sending QuitMsg to a program whose ctx
// already stopped, and Run waits for it for ever, in the alternate
// screen). The alternate screen, mouse mode and cursor are the model's
// View's.
func newProgram(ctx context.Context, model tea.Model, input tea.ProgramOption, stdout io.Writer, env []string) *tea.Program {
	p := tea.NewProgram(model,
		tea.WithContext(ctx),
		tea.WithoutSignalHandler(),
		input,
		tea.WithOutput(stdout),
		tea.WithFPS(FPS),
		// NO_COLOR, CLICOLOR and CLICOLOR_FORCE as the headless commands
		// read them (styles render full colour; this brings it down).
		tea.WithColorProfile(termcolor.Profile(termcolor.Auto, stdout, env)),
	)
	if syncOverSSH(env) {
		go p.Send(tea.ModeReportMsg{Mode: ansi.ModeSynchronizedOutput, Value: ansi.ModeReset})
	}
	return p
}

// syncOverSSH reports whether the dashboard turns synchronized output
// (mode 2026: each frame shown whole) on without asking the terminal: in
// an SSH session (SSH_TTY), where Bubble Tea does not ask
// (shouldQuerySynchronizedOutput in its tea.go: replies through SSH
// gateways may be unreliable) unless WT_SESSION is set or TERM names a
// terminal it trusts. That is where a redraw tears most, over a slow link
// to a NAS; a terminal that does not know the mode ignores it, as it does
// any DEC private mode it does not know. Not for TERM=dumb, which gets no
// escapes.
func syncOverSSH(env []string) bool {
	var ssh, wt bool
	term := ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "SSH_TTY":
			ssh = true
		case "WT_SESSION":
			wt = true
		case "TERM":
			term = v
		}
	}
	if !ssh || wt || term == "dumb" {
		return false
	}
	for _, asked := range []string{"ghostty", "wezterm", "alacritty", "kitty", "rio"} {
		if strings.Contains(term, asked) {
			return false // Bubble Tea asks, and the answer decides
		}
	}
	return true
}

// ErrNoTerminal matches (errors.Is) the errors of NeedTerminal and
// CheckTTY: the dashboard has no terminal to read keys from, or one that
// cannot draw it (TERM=dumb). Commands exit 2 on it.
var ErrNoTerminal = errors.New("no terminal to read keys from")

// terminalError is an ErrNoTerminal worded for the case at hand.
type terminalError struct{ msg string }

func (e terminalError) Error() string        { return e.msg }
func (e terminalError) Is(target error) bool { return target == ErrNoTerminal }

// NeedTerminal returns an actionable error matching ErrNoTerminal when keys
// would come from input, an *os.File that is not a terminal; other readers
// (tests' pipes) pass.
func NeedTerminal(input io.Reader) error {
	if f, ok := input.(*os.File); ok {
		if !termcolor.IsTerminal(f) {
			return terminalError{"the dashboard needs a terminal to read keys from, and standard input is not one; for scripts use 'tailpath status --json' (or 'tailpath demo --status --json')"}
		}
		return needCapableTerminal()
	}
	return nil
}

// needCapableTerminal refuses TERM=dumb: a terminal that says it cannot
// move the cursor (Emacs' shell, an IDE's output pane) would get the
// alternate screen and cursor moves anyway, which Bubble Tea's renderer
// always writes, as garbage.
func needCapableTerminal() error {
	if os.Getenv("TERM") == "dumb" {
		return terminalError{"the dashboard draws a full screen, and TERM=dumb says this terminal cannot move the cursor; run it in a terminal that can (e.g. TERM=xterm-256color), or use 'tailpath status' (or 'tailpath demo --status')"}
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
	f.Close()
	return needCapableTerminal()
}
