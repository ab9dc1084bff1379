// Package secretfile reads a secret (an API key, a bearer token) from a
// file named on the command line, trusting the file no more than its
// name: it must be a regular file, owned by the user tailpath runs as or
// by root, and readable by nobody else. The checks run on the path's
// Lstat before the file is opened, so a FIFO, a device or /dev/null is
// refused without blocking and without advice to chmod it; the file is
// then opened without following links and without blocking, and the
// opened file must be the one checked.
//
// Errors name the file and what to do, never its content. Callers can
// test ErrTooOpen, ErrNotRegular, ErrOwner and ErrEmpty with errors.Is.
package secretfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Errors Read wraps.
var (
	// ErrTooOpen: group or others may read the file.
	ErrTooOpen = errors.New("readable by group or others")
	// ErrNotRegular: the path is a link, FIFO, device, socket or directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrOwner: the file belongs to another user than this one or root.
	ErrOwner = errors.New("owned by another user")
	// ErrEmpty: the file has no secret on its first line.
	ErrEmpty = errors.New("the file is empty")
	// ErrChanged: the file opened is not the one checked (replaced
	// between the check and the open).
	ErrChanged = errors.New("the file changed while being opened")
)

// MaxSize is how much of the file is read; the secret is its first line.
const MaxSize = 4096

// Read returns the first line of the file at path, surrounding white
// space removed, after the checks in the package documentation. flag
// names the option in errors ("--api-key-file").
func Read(path, flag string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	if err := check(path, flag, fi); err != nil {
		return "", err
	}
	f, err := openNoFollow(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, path, err)
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if !os.SameFile(fi, got) {
		return "", fmt.Errorf("%s %s: %w; try again", flag, path, ErrChanged)
	}
	// The opened file is checked again: a chmod between Lstat and open
	// is caught too.
	if err := check(path, flag, got); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSize))
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, path, err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	s := strings.TrimSpace(string(line))
	if s == "" {
		return "", fmt.Errorf("%s %s: %w: put the secret on its first line", flag, path, ErrEmpty)
	}
	return s, nil
}

// check applies the rules to one Lstat (or Stat of the opened file).
func check(path, flag string, fi fs.FileInfo) error {
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		target, _ := filepath.EvalSymlinks(path)
		hint := ""
		if target != "" {
			hint = fmt.Sprintf(" (it points to %s; give that)", target)
		}
		return fmt.Errorf("%s %s: %w: it is a symbolic link%s", flag, path, ErrNotRegular, hint)
	case !m.IsRegular():
		return fmt.Errorf("%s %s: %w (%s): a secret must be a plain file only you can read", flag, path, ErrNotRegular, kind(m))
	}
	if uid, ok := owner(fi); ok {
		if me := os.Geteuid(); uid != me && uid != 0 {
			return fmt.Errorf("%s %s: %w (uid %d): a secret must be yours (uid %d) or root's", flag, path, ErrOwner, uid, me)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("%s %s: %w (mode %04o): a secret must be readable by its owner only; run `chmod 600 %s`", flag, path, ErrTooOpen, fi.Mode().Perm(), path)
		}
	}
	return nil
}

// kind names a non-regular file's type.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}
