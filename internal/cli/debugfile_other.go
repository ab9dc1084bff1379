//go:build !unix

package cli

import "os"

// openDebugFile creates path new: this system has no Unix owners to check.
func openDebugFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}
