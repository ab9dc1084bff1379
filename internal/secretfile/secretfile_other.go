//go:build !unix

package secretfile

import (
	"io/fs"
	"os"
)

// openNoFollow opens path read-only; the Lstat check before it refused
// links and anything but a regular file.
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// owner is unknown here: Windows keeps access in ACLs, not modes.
func owner(fs.FileInfo) (int, bool) { return 0, false }
