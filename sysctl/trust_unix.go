//go:build unix

package sysctl

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ownershipKnown: file owners are Unix uids here.
const ownershipKnown = true

// fileOwner returns the uid owning fi's file.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// openNoFollow opens path for reading without following a symbolic link
// as its last element, and without blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// isSymlinkRefused reports openNoFollow's error for a link: ELOOP (Linux,
// macOS), EMLINK (FreeBSD).
func isSymlinkRefused(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}
