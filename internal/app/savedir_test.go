package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/probes/localapi"
	"github.com/tailpath/tailpath/probes/probestest"
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

// TestSaveDefaultsToStateDir: with SaveDir empty the snapshot goes to
// $XDG_STATE_HOME/tailpath (created 0700), named by its full path, and
// nothing is written in the current directory.
func TestSaveDefaultsToStateDir(t *testing.T) {
	if filepath.Separator != '/' {
		t.Skip("XDG_STATE_HOME is for Unix")
	}
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	fix, err := probestest.LoadFixture(filepath.Join("..", "..", "probes", "testdata", "direct.json"))
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	t.Chdir(cwd)
	srv := probestest.New(t, fix)
	d := &Dashboard{Client: localapi.NewClient(srv.Socket), Socket: srv.Socket}
	msg := d.save(context.Background(), nil, nil, nil)
	if msg.Err != "" {
		t.Fatal(msg.Err)
	}
	dir := filepath.Join(state, "tailpath")
	if filepath.Dir(string(msg.Path)) != dir || !filepath.IsAbs(string(msg.Path)) {
		t.Errorf("saved to %q, want a full path in %s", msg.Path, dir)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir %s: %v, mode %v; want 0700", dir, err, fi.Mode())
	}
	left, _ := os.ReadDir(cwd)
	if diff := cmp.Diff(0, len(left)); diff != "" {
		t.Errorf("files written in the current directory: %v", left)
	}
}
