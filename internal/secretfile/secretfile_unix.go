//go:build unix

package secretfile

import (
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens path read-only without following a final symbolic
// link and without blocking (a FIFO swapped in after the check).
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// owner returns the uid owning fi's file.
func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
