//go:build !linux

package sockdiag

// LinkInfo returns ErrNotLinux.
func LinkInfo(name string) (Link, error) { return Link{}, ErrNotLinux }
