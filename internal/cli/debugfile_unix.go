//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// openDebugFile is OpenDebugFile's creation: the directory opened and
// checked (owned by root), then the file made in it, new, not through a
// link.
func openDebugFile(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstat(dfd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	if st.Uid != 0 {
		return nil, fmt.Errorf("%w: as root, %s is written only in a directory of root's, and %s is owned by uid %d", ErrDebugFile, path, dir, st.Uid)
	}
	fd, err := unix.Openat(dfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, syscall.EEXIST) {
		return nil, fmt.Errorf("%w: as root, %s is created new, and it exists (or is a link); remove it or name another", ErrDebugFile, path)
	}
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
