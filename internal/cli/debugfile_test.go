//go:build unix

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenDebugFile: what root writes because a variable said so is a new
// .prof or .pprof file, in a directory of root's, never through a link
// and never over an existing file.
func TestOpenDebugFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: planting another user's directory needs root (chown)")
	}
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(dir, "users")
	if err := os.Mkdir(users, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "link.prof")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(users, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(dir, "cpu.prof"), true},
		{filepath.Join(dir, "cpu.pprof"), true},
		{filepath.Join(dir, "cpu.prof"), false},  // exists now
		{filepath.Join(dir, "link.prof"), false}, // a link
		{filepath.Join(users, "cpu.prof"), false},
		{filepath.Join(dir, "nologin"), false},
		{victim, false},
	} {
		f, err := OpenDebugFile(tt.path)
		if tt.ok {
			if err != nil {
				t.Errorf("OpenDebugFile(%s) = %v", tt.path, err)
				continue
			}
			fi, _ := f.Stat()
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", tt.path, fi.Mode())
			}
			f.Close()
			continue
		}
		if err == nil {
			f.Close()
			t.Errorf("OpenDebugFile(%s) opened it", tt.path)
		} else if !errors.Is(err, ErrDebugFile) {
			t.Errorf("OpenDebugFile(%s) = %v, want ErrDebugFile", tt.path, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "root's" {
		t.Errorf("the victim changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(users, "cpu.prof")); err == nil {
		t.Errorf("a file was created in another user's directory")
	}
}
