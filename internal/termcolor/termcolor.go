// Package termcolor decides, in one place, whether tailpath writes colour:
// from a --color mode, the NO_COLOR and CLICOLOR_FORCE conventions
// (https://no-color.org, https://bixense.com/clicolors) and whether the
// output is a terminal. Headless commands ask Enabled; the dashboard runs
// with Profile's colour profile (tea.WithColorProfile), so both follow the
// same rules. (Lip Gloss v2 has no global renderer: styles render full
// colour and the writer's profile brings it down. colorprofile.Detect's
// own rules differ from these: it ignores CLICOLOR=0, lets CLICOLOR_FORCE
// beat NO_COLOR on a pipe and reads NO_COLOR=yes as unset.)
package termcolor

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/colorprofile"
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

// Profile is the colour profile for a screen written to out under mode and
// env (os.Environ's form): the terminal's own profile (colorprofile.Detect
// from TERM, COLORTERM, terminfo and tmux) when Enabled's rules give
// colour, at least 16 colours when colour is forced (always,
// CLICOLOR_FORCE); without colour, colorprofile.ASCII on a terminal that is
// not TERM=dumb (bold, reverse video and underline still show, which
// no-color.org allows: a search match and the selected row stay visible)
// and colorprofile.NoTTY otherwise (no escape sequence at all).
func Profile(mode Mode, out any, env []string) colorprofile.Profile {
	getenv := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	// What the terminal can show, the conventions left out.
	var bare []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != "NO_COLOR" && k != "CLICOLOR" && k != "CLICOLOR_FORCE" {
			bare = append(bare, kv)
		}
	}
	tty := IsTerminal(out)
	can := colorprofile.NoTTY // TERM=dumb or unset, or not a terminal
	if tty {
		can = colorprofile.Detect(out.(*os.File), bare)
	}
	switch {
	case !decide(mode, tty, getenv):
		if can > colorprofile.NoTTY {
			return colorprofile.ASCII
		}
		return colorprofile.NoTTY
	case mode == Always || forced(getenv):
		return max(can, colorprofile.ANSI, colorprofile.Env(bare))
	}
	return can
}

// forced reports CLICOLOR_FORCE: set, and not "0".
func forced(getenv func(string) string) bool {
	f := getenv("CLICOLOR_FORCE")
	return f != "" && f != "0"
}

// decide is Enabled with the terminal test and the environment given. In
// Auto mode: NO_COLOR (any non-empty value) turns colour off, whatever else
// is set; else CLICOLOR_FORCE (non-empty, not "0") turns it on; else
// CLICOLOR=0 turns it off; else a terminal gets colour. These are
// termenv's rules (which Lip Gloss v1 applied to the dashboard); Profile
// gives the dashboard the same answer.
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
	if forced(getenv) {
		return true
	}
	if getenv("CLICOLOR") == "0" {
		return false
	}
	return tty
}

// Background is the terminal's background as the environment (env,
// os.Environ's form) already tells it, so that the dashboard need not ask
// the terminal (OSC 11) and redraw when it answers: COLORFGBG, which rxvt,
// Konsole, iTerm2 and others set to "fg;bg" (or "fg;default;bg"), its last
// field the background's colour index; 0-6 and 8 (black, the dark colours,
// dark grey) are dark, 7 and 9-15 light. known is false when COLORFGBG is
// unset, "default" or not an index 0-15: then only the terminal can say.
func Background(env []string) (dark, known bool) {
	v := ""
	for i := len(env) - 1; i >= 0; i-- {
		if s, ok := strings.CutPrefix(env[i], "COLORFGBG="); ok {
			v = s
			break
		}
	}
	i := strings.LastIndexByte(v, ';')
	if i < 0 {
		return false, false
	}
	bg, err := strconv.Atoi(v[i+1:])
	if err != nil || bg < 0 || bg > 15 {
		return false, false
	}
	return bg <= 6 || bg == 8, true
}
