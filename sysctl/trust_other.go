//go:build !unix

package sysctl

import (
	"io/fs"
	"os"
)

// ownershipKnown: this system has no Unix file owners to check.
const ownershipKnown = false

// fileOwner is unknown here.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

// openNoFollow opens path for reading (no owners to check here).
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// isSymlinkRefused is false: openNoFollow follows links here.
func isSymlinkRefused(error) bool { return false }
