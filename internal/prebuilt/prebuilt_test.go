package prebuilt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGetBuildsOncePerInputs: an item is built into a directory named by
// the hash of its inputs, once; the same inputs (in this process, or the
// next run) find it there without building, new inputs build anew, a
// failed build leaves nothing behind, and a missing tool is
// ErrMissingTool, naming what to install.
func TestGetBuildsOncePerInputs(t *testing.T) {
	t.Setenv(Env, t.TempDir())
	builds := 0
	version := "1"
	item := func(name string) Item {
		return Item{
			Name:   name,
			Inputs: func() ([]byte, error) { return []byte("source v" + version), nil },
			Build: func(dir string) error {
				builds++
				return os.WriteFile(filepath.Join(dir, "out"), []byte("built from v"+version), 0o644)
			},
		}
	}
	read := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	if _, ok, err := Path(item("a")); ok || err != nil {
		t.Fatalf("Path before a build: ok %v, %v", ok, err)
	}
	dir, err := get(item("a"))
	if err != nil || builds != 1 || read(dir) != "built from v1" {
		t.Fatalf("first get: %s, %v, %d builds", dir, err, builds)
	}
	if again, err := get(item("a")); err != nil || again != dir || builds != 1 {
		t.Errorf("second get: %s, %v, %d builds; want %s from the cache", again, err, builds, dir)
	}
	if p, ok, err := Path(item("a")); !ok || p != dir || err != nil {
		t.Errorf("Path after the build: %s %v %v", p, ok, err)
	}
	version = "2"
	dir2, err := get(item("a"))
	if err != nil || dir2 == dir || builds != 2 || read(dir2) != "built from v2" {
		t.Errorf("new inputs: %s (was %s), %v, %d builds", dir2, dir, err, builds)
	}

	bad := item("bad")
	bad.Build = func(dir string) error {
		os.WriteFile(filepath.Join(dir, "half"), nil, 0o644)
		return errors.New("compiler crashed")
	}
	if _, err := get(bad); err == nil || !strings.Contains(err.Error(), "compiler crashed") {
		t.Errorf("failed build: %v", err)
	}
	if _, ok, _ := Path(bad); ok {
		t.Error("a failed build left its directory")
	}
	ents, _ := os.ReadDir(os.Getenv(Env))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".building-") {
			t.Errorf("staging directory %s left behind", e.Name())
		}
	}

	missing := item("tool")
	missing.Tools, missing.Install = []string{"no-such-tool-tailpath"}, "apt-get install no-such-tool"
	if _, err := Get(missing); !errors.Is(err, ErrMissingTool) || !strings.Contains(err.Error(), "apt-get install no-such-tool") {
		t.Errorf("missing tool: %v", err)
	}
}

// TestModuleRoot: found upwards from a package's directory.
func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil || filepath.Base(filepath.Dir(root)) == "internal" {
		t.Errorf("module root %s: %v", root, err)
	}
}
