package app

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestUserSaveDir: S saves into the user's state directory on each
// system, never the current directory.
func TestUserSaveDir(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name, goos, home string
		getenv           func(string) string
		want, err        string
	}{
		{"linux XDG", "linux", "/home/ana", env("XDG_STATE_HOME", "/var/state/ana"), "/var/state/ana/tailpath", ""},
		{"linux default", "linux", "/home/ana", env(), "/home/ana/.local/state/tailpath", ""},
		{"linux relative XDG is ignored", "linux", "/home/ana", env("XDG_STATE_HOME", "state"), "/home/ana/.local/state/tailpath", ""},
		{"freebsd", "freebsd", "/home/ana", env(), "/home/ana/.local/state/tailpath", ""},
		{"macOS", "darwin", "/Users/ana", env("XDG_STATE_HOME", "/x"), "/Users/ana/Library/Application Support/tailpath", ""},
		{"windows", "windows", `C:\Users\ana`, env("LocalAppData", `C:\Users\ana\AppData\Local`), filepath.Join(`C:\Users\ana\AppData\Local`, "tailpath"), ""},
		{"windows without LocalAppData", "windows", `C:\Users\ana`, env(), "", "LocalAppData"},
		{"no home", "linux", "", env(), "", "no home directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UserSaveDir(tc.getenv, tc.goos, tc.home)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("= %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
