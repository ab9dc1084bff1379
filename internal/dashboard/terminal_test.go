package dashboard

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/tailpath/tailpath/tui/common"
)

// TestSyncOverSSH: the dashboard turns synchronized output on itself only
// where Bubble Tea will not ask the terminal (an SSH session on a terminal
// it does not name), and never for TERM=dumb.
func TestSyncOverSSH(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{[]string{"TERM=xterm-256color"}, false},                                       // local: Bubble Tea asks
		{[]string{"TERM=xterm-256color", "SSH_TTY=/dev/pts/3"}, true},                  // SSH: it does not
		{[]string{"TERM=xterm-kitty", "SSH_TTY=/dev/pts/3"}, false},                    // SSH on kitty: it asks
		{[]string{"TERM=xterm-256color", "SSH_TTY=/dev/pts/3", "WT_SESSION=x"}, false}, // Windows Terminal: it asks
		{[]string{"TERM=dumb", "SSH_TTY=/dev/pts/3"}, false},                           // no escapes at all
		{[]string{"SSH_TTY=/dev/pts/3"}, true},
	} {
		if got := syncOverSSH(tc.env); got != tc.want {
			t.Errorf("syncOverSSH(%q) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// TestTermStyles: the dashboard asks the terminal for its background only
// when the environment does not settle the palette: no colour at all, or
// a COLORFGBG that names the background.
func TestTermStyles(t *testing.T) {
	var out bytes.Buffer // not a terminal: colour only when forced
	t.Setenv("NO_COLOR", "1")
	if st := termStyles(&out, nil); st == nil {
		t.Errorf("NO_COLOR: the background is asked for, though no colour is drawn")
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("CLICOLOR_FORCE", "1")
	if st := termStyles(&out, []string{"TERM=xterm-256color"}); st != nil {
		t.Errorf("colour and no COLORFGBG: styles chosen without asking the terminal")
	}
	for _, tc := range []struct {
		colorfgbg string
		dark      bool
	}{{"0;15", false}, {"15;0", true}} {
		st := termStyles(&out, []string{"COLORFGBG=" + tc.colorfgbg})
		if st == nil {
			t.Errorf("COLORFGBG=%s: the terminal is asked anyway", tc.colorfgbg)
		} else if !reflect.DeepEqual(*st, common.StylesFor(tc.dark)) {
			t.Errorf("COLORFGBG=%s: not the dark=%v palette", tc.colorfgbg, tc.dark)
		}
	}
}
