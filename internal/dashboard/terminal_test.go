package dashboard

import "testing"

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
