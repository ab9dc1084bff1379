//go:build !linux

package netnstest

import "testing"

// Run skips: network namespaces are Linux only.
func Run(t testing.TB, testName, scenario string, newMountNS bool) string {
	t.Skip("skipping: network namespaces are Linux only")
	return ""
}

// NetNSInode skips: network namespaces are Linux only.
func NetNSInode(t testing.TB) uint64 {
	t.Skip("skipping: network namespaces are Linux only")
	return 0
}
