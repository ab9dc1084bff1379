package sysctl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrUntrusted is wrapped when a file tune would act on as root (the
// revert state, or the midclt it would run) could have been written by
// someone other than root: it, or a directory above it, is owned by
// another user or is writable by group or others. Nothing is read from it
// and nothing is written.
var ErrUntrusted = errors.New("not trusted")

// geteuid is os.Geteuid (tests replace it).
var geteuid = os.Geteuid

// CheckTrusted returns nil when path and every directory above it can be
// changed only by root or the user tailpath runs as: each is owned by
// uid 0 or the effective uid, and none is writable by group or others,
// except a directory with the sticky bit owned by root (/tmp), where
// others may add entries but not replace one they do not own. Symbolic
// links on the way are followed and both the link and where it leads are
// checked; the file itself must not be a link. A missing file passes if
// its directories do (it is about to be created). Errors wrap
// ErrUntrusted and name the culprit and what to do. On systems without
// Unix ownership (Windows) it checks nothing.
func CheckTrusted(path string) error {
	if !ownershipKnown {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(abs); err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a symbolic link; give the file itself", ErrUntrusted, abs)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrUntrusted, abs)
		}
		if err := trustedEntry(abs, fi); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := trustedDirs(filepath.Dir(abs)); err != nil {
		return err
	}
	// The same directories as the kernel resolves them (a link on the
	// way may lead anywhere).
	real, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if real != filepath.Dir(abs) {
		return trustedDirs(real)
	}
	return nil
}

// trustedDirs checks dir and every directory above it that exists.
func trustedDirs(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		default:
			if err := trustedEntry(d, fi); err != nil {
				return err
			}
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// trustedEntry checks one file, directory or link by its Lstat.
func trustedEntry(path string, fi fs.FileInfo) error {
	uid, ok := fileOwner(fi)
	if !ok {
		return nil
	}
	euid := geteuid()
	if uid != 0 && uid != euid {
		who := "root"
		if euid != 0 {
			who = fmt.Sprintf("root or uid %d", euid)
		}
		return fmt.Errorf("%w: %s is owned by uid %d, not %s, so its owner could change what tailpath reads there as root", ErrUntrusted, path, uid, who)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil // a link's own mode means nothing; its directory is checked
	}
	if fi.Mode().Perm()&0o022 == 0 {
		return nil
	}
	if fi.IsDir() && fi.Mode()&fs.ModeSticky != 0 && uid == 0 {
		return nil // /tmp: others may add entries, not replace ours
	}
	return fmt.Errorf("%w: %s is writable by group or others (mode %04o), so they could change what tailpath reads there as root; run `chmod go-w %s` or use another place", ErrUntrusted, path, fi.Mode().Perm(), path)
}
