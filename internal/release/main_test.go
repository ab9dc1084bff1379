package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTargets: every platform the README promises a binary for is built,
// once each.
func TestTargets(t *testing.T) {
	var got []string
	for _, tg := range Targets {
		got = append(got, tg.String())
	}
	want := []string{"linux/amd64", "linux/arm64", "linux/armv7", "linux/386", "darwin/arm64", "darwin/amd64", "windows/amd64"}
	if !slices.Equal(got, want) {
		t.Errorf("targets %v, want %v", got, want)
	}
	if base, ext := (Target{"linux", "arm", "7"}).Archive("v0.5.0"); base+ext != "tailpath_v0.5.0_linux_armv7.tar.gz" {
		t.Errorf("ARMv7 archive %s%s", base, ext)
	}
	if base, ext := (Target{"windows", "amd64", ""}).Archive("v0.5.0"); base+ext != "tailpath_v0.5.0_windows_amd64.zip" {
		t.Errorf("Windows archive %s%s", base, ext)
	}
	if ts, err := pick("linux/arm64,linux/armv7"); err != nil || len(ts) != 2 || ts[1].GOARM != "7" {
		t.Errorf("pick: %v, %v", ts, err)
	}
	if _, err := pick("linux/mips"); err == nil || !strings.Contains(err.Error(), "known: linux/amd64") {
		t.Errorf("pick of an unknown target: %v", err)
	}
	for v, ok := range map[string]bool{"v0.5.0": true, "dev-d961b81-dirty": true, "v1.0.0+build.1": true, "": false, "v1 0": false, "v1;rm": false, "../x": false} {
		if validVersion(v) != ok {
			t.Errorf("validVersion(%q) = %v", v, !ok)
		}
	}
}

// TestArchives: a tar.gz and a zip hold the files in order with their
// modes, read back byte for byte, and the same inputs give the same bytes
// (so SHA256SUMS says whether two builds match); the sum line is
// sha256sum's.
func TestArchives(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	files := []file{{"tailpath_v1_linux_arm64/tailpath", 0o755, []byte("\x7fELF binary")}, {"tailpath_v1_linux_arm64/README.md", 0o644, []byte("# tailpath\n")}}

	tgz, err := tarGzOf(files, at)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := tarGzOf(files, at)
	if !bytes.Equal(tgz, again) {
		t.Error("the same files gave different tar.gz bytes")
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for _, f := range files {
		h, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if h.Name != f.Name || h.Mode != f.Mode || !h.ModTime.Equal(at) || h.Uid != 0 || !bytes.Equal(data, f.Data) {
			t.Errorf("tar entry %s mode %o time %v uid %d data %q; want %s %o", h.Name, h.Mode, h.ModTime, h.Uid, data, f.Name, f.Mode)
		}
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("after the files: %v, want EOF", err)
	}

	z, err := zipOf(files, at)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := zipOf(files, at); !bytes.Equal(z, again) {
		t.Error("the same files gave different zip bytes")
	}
	r, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.File) != len(files) {
		t.Fatalf("%d zip entries, want %d", len(r.File), len(files))
	}
	for i, zf := range r.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if zf.Name != files[i].Name || zf.Mode().Perm() != os.FileMode(files[i].Mode) || !bytes.Equal(data, files[i].Data) || !zf.Modified.Equal(at) {
			t.Errorf("zip entry %s mode %v time %v data %q; want %s %o", zf.Name, zf.Mode(), zf.Modified, data, files[i].Name, files[i].Mode)
		}
	}

	h := sha256.Sum256(tgz)
	if got, want := sumLine(tgz, "a.tar.gz"), hex.EncodeToString(h[:])+"  a.tar.gz\n"; got != want {
		t.Errorf("sum line %q, want %q", got, want)
	}
}

// TestVersionVariable: the -X flag names a string variable that exists in
// internal/buildinfo (the joiner ignores a wrong name without a word), and
// Own reads it. .ci/run also runs the built binaries' version command.
func TestVersionVariable(t *testing.T) {
	pkg, name, _ := strings.Cut(buildinfoRelease, ".release")
	if name != "" || pkg != "github.com/tailpath/tailpath/internal/buildinfo" {
		t.Fatalf("-X target %q is not internal/buildinfo.release", buildinfoRelease)
	}
	dir := filepath.Join("..", "buildinfo")
	fset := token.NewFileSet()
	found := false
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for _, n := range vs.Names {
					if id, ok := vs.Type.(*ast.Ident); n.Name == "release" && ok && id.Name == "string" && len(vs.Values) == 0 {
						found = true
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("internal/buildinfo has no uninitialised `var release string` for -X %s=…", buildinfoRelease)
	}
}
