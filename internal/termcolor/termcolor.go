// Package termcolor decides, in one place, whether tailpath writes colour:
// from a --color mode, the NO_COLOR and CLICOLOR_FORCE conventions
// (https://no-color.org, https://bixense.com/clicolors) and whether the
// output is a terminal. The dashboard's styles follow the same rules
// (lipgloss reads them through termenv's EnvColorProfile); headless
// commands ask here.
package termcolor

import (
	"fmt"
	"os"

	"github.com/charmbracelet/x/term"
)

// Mode is a --color flag's value.
type Mode string

// The --color modes.
const (
	Auto   Mode = "auto"   // colour on a terminal unless NO_COLOR; CLICOLOR_FORCE forces it
	Always Mode = "always" // colour whatever the output and environment say
	Never  Mode = "never"  // no colour
)

// ParseMode parses a --color value; the error names the three modes.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, Always, Never:
		return m, nil
	}
	return "", fmt.Errorf("%q is not auto, always or never", s)
}

// IsTerminal reports whether v is an *os.File that is an interactive
// terminal (not a file, pipe or /dev/null, which is a character device too).
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// Width returns the columns of the terminal v is, or 0 when v is not a
// terminal (a file or pipe: tables print whole there) or its size is
// unknown.
func Width(v any) int {
	f, ok := v.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0
	}
	w, _, err := term.GetSize(f.Fd())
	if err != nil || w <= 0 {
		return 0
	}
	return w
}

// NoColor reports whether NO_COLOR is set (any non-empty value): no
// colour may be added, whatever the output (https://no-color.org). Text
// attributes (bold, reverse, underline) are not colour, and bytes the
// program passes through unchanged (a board's own escape codes) are not
// added by it.
func NoColor() bool { return os.Getenv("NO_COLOR") != "" }

// Enabled reports whether output to out gets colour under mode and this
// process's environment.
func Enabled(mode Mode, out any) bool {
	return decide(mode, IsTerminal(out), os.Getenv)
}

// decide is Enabled with the terminal test and the environment given. In
// Auto mode: NO_COLOR (any non-empty value) turns colour off, whatever else
// is set; else CLICOLOR_FORCE (non-empty, not "0") turns it on; else
// CLICOLOR=0 turns it off; else a terminal gets colour. These are
// termenv's rules, so headless output and the dashboard agree.
func decide(mode Mode, tty bool, getenv func(string) string) bool {
	switch mode {
	case Always:
		return true
	case Never:
		return false
	}
	if getenv("NO_COLOR") != "" {
		return false
	}
	if f := getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return true
	}
	if getenv("CLICOLOR") == "0" {
		return false
	}
	return tty
}
