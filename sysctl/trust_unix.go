//go:build unix

package sysctl

import (
	"io/fs"
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
