// Command release builds tailpath's release archives in one command:
//
//	go run ./internal/release [-version v0.5.0] [-o dist] [-targets linux/arm64,...]
//
// For every target (Targets: Linux on amd64, arm64, 32-bit ARMv7 and 386,
// macOS on arm64 and amd64, Windows on amd64) it builds the everyday
// binary (no demo tag) statically (CGO_ENABLED=0, -trimpath, symbols
// stripped) with the version linked in (internal/buildinfo's release) and
// the VCS revision stamped (Go stamps it from a clone, not from a git
// worktree, and the tool says so), packs it with README.md into a tar.gz (a zip
// for Windows) whose bytes depend only on the inputs (entries sorted, owner
// root, times the commit's), and writes SHA256SUMS beside them, the form
// `sha256sum -c SHA256SUMS` checks.
//
// GoReleaser would do this, but its current version needs Go 1.27.1 and
// tailpath builds with Go 1.26 (docs/perf.md, "Release builds").
// It is run from the module's root.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Target is one platform a release is built for.
type Target struct {
	GOOS, GOARCH string
	// GOARM is the ARM version for GOARCH arm ("7": ARMv7 with VFPv3,
	// most ARM NAS boxes and older Synology models); "" otherwise.
	GOARM string
}

// Targets are the platforms a release is built for.
var Targets = []Target{
	{"linux", "amd64", ""},
	{"linux", "arm64", ""},
	{"linux", "arm", "7"},
	{"linux", "386", ""},
	{"darwin", "arm64", ""},
	{"darwin", "amd64", ""},
	{"windows", "amd64", ""},
}

// String is the target as GOOS/GOARCH, with the ARM version ("linux/armv7").
func (t Target) String() string {
	if t.GOARM != "" {
		return t.GOOS + "/" + t.GOARCH + "v" + t.GOARM
	}
	return t.GOOS + "/" + t.GOARCH
}

// exe is the binary's name on the target.
func (t Target) exe() string {
	if t.GOOS == "windows" {
		return "tailpath.exe"
	}
	return "tailpath"
}

// Archive is the archive's base name for version ("tailpath_v0.5.0_linux_armv7")
// and its extension.
func (t Target) Archive(version string) (base, ext string) {
	arch := t.GOARCH
	if t.GOARM != "" {
		arch += "v" + t.GOARM
	}
	base = "tailpath_" + version + "_" + t.GOOS + "_" + arch
	if t.GOOS == "windows" {
		return base, ".zip"
	}
	return base, ".tar.gz"
}

// buildinfoRelease is the variable a release build's version is linked into.
const buildinfoRelease = "github.com/tailpath/tailpath/internal/buildinfo.release"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	version := fs.String("version", "", "the release's version, e.g. v0.5.0 (default: git describe --tags --always --dirty)")
	dir := fs.String("o", "dist", "directory for the archives and SHA256SUMS (emptied of earlier archives first)")
	only := fs.String("targets", "", "comma-separated targets to build (e.g. linux/arm64,linux/armv7); default: all of them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if _, err := os.Stat("go.mod"); err != nil {
		return errors.New("run it from the module's root: go run ./internal/release")
	}
	targets, err := pick(*only)
	if err != nil {
		return err
	}
	vcs := isGitCheckout()
	if *version == "" {
		*version = describe(vcs)
	}
	if !validVersion(*version) {
		return fmt.Errorf("-version %q: want letters, digits and . _ + - only (e.g. v0.5.0)", *version)
	}
	modTime := commitTime(vcs)
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	if err := clean(*dir); err != nil {
		return err
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "tailpath-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	fmt.Fprintf(out, "tailpath %s: %d targets into %s\n", *version, len(targets), *dir)
	var sums []string
	warned := false
	for _, t := range targets {
		start := time.Now()
		bin := filepath.Join(tmp, t.GOOS+"_"+t.GOARCH+t.GOARM, t.exe())
		if err := build(t, *version, vcs, bin); err != nil {
			return err
		}
		exe, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		if vcs && !stamped(bin) {
			warned = true
		}
		base, ext := t.Archive(*version)
		files := []file{{Name: base + "/" + t.exe(), Mode: 0o755, Data: exe}, {Name: base + "/README.md", Mode: 0o644, Data: readme}}
		var archive []byte
		if ext == ".zip" {
			archive, err = zipOf(files, modTime)
		} else {
			archive, err = tarGzOf(files, modTime)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		if err := os.WriteFile(filepath.Join(*dir, base+ext), archive, 0o644); err != nil {
			return err
		}
		sums = append(sums, sumLine(archive, base+ext))
		fmt.Fprintf(out, "  %-14s %-44s %5.1f MB (binary %.1f MB)  %v\n", t, base+ext, mb(len(archive)), mb(len(exe)), time.Since(start).Round(time.Second))
	}
	slices.Sort(sums)
	if err := os.WriteFile(filepath.Join(*dir, "SHA256SUMS"), []byte(strings.Join(sums, "")), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "  SHA256SUMS (check with: cd %s && sha256sum -c SHA256SUMS)\n", *dir)
	if warned {
		fmt.Fprintln(out, "  warning: the binaries carry no VCS revision: Go stamps none in a git worktree (its .git is a file); release from a clone")
	}
	return nil
}

// stamped reports whether the binary at path carries its VCS revision.
func stamped(path string) bool {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			return true
		}
	}
	return false
}

// pick is the targets named in list ("" for all of them).
func pick(list string) ([]Target, error) {
	if list == "" {
		return Targets, nil
	}
	var out []Target
	for _, name := range strings.Split(list, ",") {
		i := slices.IndexFunc(Targets, func(t Target) bool { return t.String() == name || (t.GOOS+"/"+t.GOARCH) == name })
		if i < 0 {
			var known []string
			for _, t := range Targets {
				known = append(known, t.String())
			}
			return nil, fmt.Errorf("-targets: unknown target %q (known: %s)", name, strings.Join(known, ", "))
		}
		out = append(out, Targets[i])
	}
	return out, nil
}

// build builds the everyday binary for t into bin.
func build(t Target, version string, vcs bool, bin string) error {
	args := []string{"build", "-trimpath", "-buildvcs=" + strconv.FormatBool(vcs),
		"-ldflags", "-s -w -X " + buildinfoRelease + "=" + version, "-o", bin, "."}
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.GOOS, "GOARCH="+t.GOARCH, "GOARM="+t.GOARM, "GOFLAGS=-mod=readonly")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: go %s: %w", t, strings.Join(args, " "), err)
	}
	return nil
}

// file is one entry of an archive.
type file struct {
	Name string
	Mode int64
	Data []byte
}

// tarGzOf packs files (in order) into a gzip-compressed tar whose bytes
// depend only on them and modTime.
func tarGzOf(files []file, modTime time.Time) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.ModTime = modTime
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: f.Name, Mode: f.Mode, Size: int64(len(f.Data)), ModTime: modTime, Typeflag: tar.TypeReg,
			Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// zipOf packs files (in order) into a zip whose bytes depend only on
// them and modTime.
func zipOf(files []file, modTime time.Time) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: modTime.UTC()}
		h.SetMode(os.FileMode(f.Mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sumLine is name's line in SHA256SUMS, as sha256sum writes it.
func sumLine(data []byte, name string) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:]) + "  " + name + "\n"
}

// clean removes earlier archives and SHA256SUMS from dir, nothing else.
func clean(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if n == "SHA256SUMS" || (strings.HasPrefix(n, "tailpath_") && (strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".zip"))) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// isGitCheckout reports whether the working directory is a git checkout
// that git can read (else no revision is stamped).
func isGitCheckout() bool {
	return exec.Command("git", "rev-parse", "--git-dir").Run() == nil
}

// describe is the default version: git describe's, "dev-" before it when
// no tag names it (no release tag yet), "dev" outside a checkout.
func describe(vcs bool) string {
	if !vcs {
		return "dev"
	}
	out, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output()
	v := strings.TrimSpace(string(out))
	if err != nil || v == "" {
		return "dev"
	}
	if !strings.HasPrefix(v, "v") {
		v = "dev-" + v
	}
	return v
}

// commitTime is HEAD's commit time (the archives' file times), or the
// start of 1980 (the zip format's earliest) outside a checkout: never the
// build's time, so the same inputs give the same bytes.
func commitTime(vcs bool) time.Time {
	if vcs {
		out, err := exec.Command("git", "log", "-1", "--format=%ct").Output()
		if sec, perr := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && perr == nil {
			return time.Unix(sec, 0).UTC()
		}
	}
	return time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
}

// validVersion reports whether v can go into a file name and a -X flag.
func validVersion(v string) bool {
	if v == "" {
		return false
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r)) {
			return false
		}
	}
	return true
}

func mb(n int) float64 { return float64(n) / 1e6 }
