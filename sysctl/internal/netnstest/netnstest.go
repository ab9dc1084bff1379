// Package netnstest runs part of a test in a private Linux network namespace
// by re-executing the test binary in a child process created with
// CLONE_NEWNET (optionally CLONE_NEWNS). Unlike unsharing one thread, the
// whole child process lives in the new namespace, so /proc/sys/net opened by
// any goroutine shows the namespace's own values.
package netnstest

import (
	"os"
	"testing"
)

// envVar names the child scenario in the re-executed test binary.
const envVar = "TAILPATH_NETNS_CHILD"

// Scenario returns the scenario name when this process is a re-executed
// child, else "".
func Scenario() string { return os.Getenv(envVar) }

// RequireRoot skips t with a printed reason when not root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("skipping: creating a network namespace needs root (euid %d); run as root: sudo go test ./sysctl/...", os.Geteuid())
	}
}
