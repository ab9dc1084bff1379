package termcolor

import (
	"io"
	"testing"

	"github.com/muesli/termenv"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name string
		mode Mode
		tty  bool
		env  map[string]string
		want bool
	}{
		{"auto on a terminal", Auto, true, nil, true},
		{"auto piped", Auto, false, nil, false},
		{"NO_COLOR on a terminal", Auto, true, map[string]string{"NO_COLOR": "1"}, false},
		{"NO_COLOR beats CLICOLOR_FORCE", Auto, false, map[string]string{"NO_COLOR": "1", "CLICOLOR_FORCE": "1"}, false},
		{"empty NO_COLOR is unset", Auto, true, map[string]string{"NO_COLOR": ""}, true},
		{"CLICOLOR_FORCE piped", Auto, false, map[string]string{"CLICOLOR_FORCE": "1"}, true},
		{"CLICOLOR_FORCE=0 is no force", Auto, false, map[string]string{"CLICOLOR_FORCE": "0"}, false},
		{"CLICOLOR=0 on a terminal", Auto, true, map[string]string{"CLICOLOR": "0"}, false},
		{"CLICOLOR=0 with CLICOLOR_FORCE", Auto, false, map[string]string{"CLICOLOR": "0", "CLICOLOR_FORCE": "1"}, true},
		{"always beats NO_COLOR", Always, false, map[string]string{"NO_COLOR": "1"}, true},
		{"never beats CLICOLOR_FORCE", Never, true, map[string]string{"CLICOLOR_FORCE": "1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decide(tt.mode, tt.tty, func(k string) string { return tt.env[k] })
			if got != tt.want {
				t.Errorf("decide(%s, tty=%v, %v) = %v, want %v", tt.mode, tt.tty, tt.env, got, tt.want)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"auto", "always", "never"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseMode("yes"); err == nil || err.Error() != `"yes" is not auto, always or never` {
		t.Errorf("ParseMode(yes) error = %v", err)
	}
}

// mapEnv is an environment for termenv.
type mapEnv map[string]string

func (m mapEnv) Environ() []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}
func (m mapEnv) Getenv(k string) string { return m[k] }

// TestAgreesWithTermenv: the dashboard's colours are decided by lipgloss
// through termenv's EnvColorProfile; decide must say the same for every
// mix of NO_COLOR, CLICOLOR and CLICOLOR_FORCE, on a terminal or not.
func TestAgreesWithTermenv(t *testing.T) {
	vals := map[string][]string{"NO_COLOR": {"", "1"}, "CLICOLOR": {"", "0", "1"}, "CLICOLOR_FORCE": {"", "0", "1"}}
	for _, tty := range []bool{false, true} {
		for _, nc := range vals["NO_COLOR"] {
			for _, cc := range vals["CLICOLOR"] {
				for _, cf := range vals["CLICOLOR_FORCE"] {
					env := mapEnv{"TERM": "xterm-256color", "NO_COLOR": nc, "CLICOLOR": cc, "CLICOLOR_FORCE": cf}
					out := termenv.NewOutput(io.Discard, termenv.WithEnvironment(env), termenv.WithTTY(tty))
					want := out.EnvColorProfile() != termenv.Ascii
					if got := decide(Auto, tty, env.Getenv); got != want {
						t.Errorf("tty=%v NO_COLOR=%q CLICOLOR=%q CLICOLOR_FORCE=%q: decide %v, termenv %v", tty, nc, cc, cf, got, want)
					}
				}
			}
		}
	}
}
