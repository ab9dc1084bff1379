package termcolor

import (
	"io"
	"os"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/creack/pty"
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

// TestProfile: the dashboard's colour profile says colour exactly when
// decide does, for every mix of NO_COLOR, CLICOLOR and CLICOLOR_FORCE on
// a terminal (a pty) and on a pipe; without colour a terminal keeps text
// attributes (ASCII) unless it is TERM=dumb, and a pipe gets none.
func TestProfile(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()

	vals := map[string][]string{"NO_COLOR": {"", "1", "yes"}, "CLICOLOR": {"", "0", "1"}, "CLICOLOR_FORCE": {"", "0", "1"}}
	for _, out := range []*os.File{tty, w} {
		isTTY := out == tty
		for _, term := range []string{"xterm-256color", "dumb"} {
			for _, nc := range vals["NO_COLOR"] {
				for _, cc := range vals["CLICOLOR"] {
					for _, cf := range vals["CLICOLOR_FORCE"] {
						env := map[string]string{"TERM": term, "NO_COLOR": nc, "CLICOLOR": cc, "CLICOLOR_FORCE": cf}
						var environ []string
						for k, v := range env {
							if v != "" {
								environ = append(environ, k+"="+v)
							}
						}
						getenv := func(k string) string { return env[k] }
						got := Profile(Auto, out, environ)
						colour := decide(Auto, isTTY, getenv)
						want := "colour"
						switch {
						case colour && term == "dumb" && !forced(getenv):
							want = "nothing" // a dumb terminal shows no escapes
						case colour:
						case isTTY && term != "dumb":
							want = "attributes"
						default:
							want = "nothing"
						}
						var have string
						switch {
						case got >= colorprofile.ANSI:
							have = "colour"
						case got == colorprofile.ASCII:
							have = "attributes"
						default:
							have = "nothing"
						}
						if have != want {
							t.Errorf("tty=%v %v: profile %v (%s), want %s", isTTY, env, got, have, want)
						}
					}
				}
			}
		}
	}
	// The modes: always colours a pipe (16 colours at least), never keeps
	// a terminal's attributes only.
	if p := Profile(Always, w, []string{"TERM=dumb", "NO_COLOR=1"}); p < colorprofile.ANSI {
		t.Errorf("always on a pipe: %v", p)
	}
	if p := Profile(Always, w, []string{"TERM=xterm-256color"}); p != colorprofile.ANSI256 {
		t.Errorf("always on a pipe, TERM=xterm-256color: %v, want ANSI256", p)
	}
	if p := Profile(Never, tty, []string{"TERM=xterm-256color", "CLICOLOR_FORCE=1"}); p != colorprofile.ASCII {
		t.Errorf("never on a terminal: %v, want ASCII", p)
	}
	if p := Profile(Auto, io.Discard, []string{"TERM=xterm-256color"}); p != colorprofile.NoTTY {
		t.Errorf("auto to a writer that is no file: %v, want NoTTY", p)
	}
}

// TestBackground: COLORFGBG's last field is the background's colour
// index; anything else leaves the background to the terminal's answer.
func TestBackground(t *testing.T) {
	for _, tc := range []struct {
		env         []string
		dark, known bool
	}{
		{nil, false, false},
		{[]string{"COLORFGBG=15;0"}, true, true},
		{[]string{"COLORFGBG=0;15"}, false, true},
		{[]string{"COLORFGBG=12;8"}, true, true},
		{[]string{"COLORFGBG=0;7"}, false, true},
		{[]string{"COLORFGBG=15;default;0"}, true, true},
		{[]string{"COLORFGBG=15;default"}, false, false},
		{[]string{"COLORFGBG=15;255"}, false, false},
		{[]string{"COLORFGBG=0"}, false, false},
		{[]string{"COLORFGBG="}, false, false},
		{[]string{"COLORFGBG=0;15", "COLORFGBG=15;0"}, true, true}, // the last one counts
	} {
		dark, known := Background(tc.env)
		if dark != tc.dark || known != tc.known {
			t.Errorf("Background(%q) = %v, %v; want %v, %v", tc.env, dark, known, tc.dark, tc.known)
		}
	}
}
