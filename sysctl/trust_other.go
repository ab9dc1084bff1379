//go:build !unix

package sysctl

import "io/fs"

// ownershipKnown: this system has no Unix file owners to check.
const ownershipKnown = false

// fileOwner is unknown here.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
