package cli

import "testing"

// TestSuggest: a typo of a command or flag gets the one it was meant to
// be; a word that is not close gets nothing.
func TestSuggest(t *testing.T) {
	cmds := []string{"", "demo", "status", "tail", "tune", "serve", "version", "help"}
	for _, tc := range []struct{ typed, want string }{
		{"stauts", "status"}, {"statsu", "status"}, {"stats", "status"}, {"Status", "status"},
		{"tial", "tail"}, {"tun", "tune"}, {"serv", "serve"}, {"sevre", "serve"},
		{"dmeo", "demo"}, {"versoin", "version"}, {"hlep", "help"},
		{"ver", "version"}, // a prefix of one command
		{"s", ""},          // a prefix of two
		{"xyzzy", ""}, {"monitor", ""}, {"", ""},
	} {
		if got := suggest(tc.typed, cmds); got != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
}
