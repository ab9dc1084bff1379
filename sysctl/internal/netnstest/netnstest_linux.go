package netnstest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// Run re-executes the test binary running only the test named testName,
// with scenario in the environment, in a new network namespace (and a new
// mount namespace when newMountNS is set). It returns the child's combined
// output and fails t when the child fails. It skips t with a reason when not
// root or when the kernel refuses to create the namespace.
func Run(t testing.TB, testName, scenario string, newMountNS bool) string {
	t.Helper()
	RequireRoot(t)
	flags := uintptr(syscall.CLONE_NEWNET)
	if newMountNS {
		flags |= syscall.CLONE_NEWNS
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+testName+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), envVar+"="+scenario)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS)) {
			t.Skipf("skipping: cannot create a network namespace here: %v", err)
		}
		t.Fatalf("child %s in a private network namespace failed: %v\n%s", scenario, err, out.String())
	}
	return out.String()
}

// NetNSInode returns the inode of this process's network namespace.
func NetNSInode(t testing.TB) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/net", &st); err != nil {
		t.Fatalf("stat /proc/self/ns/net: %v", err)
	}
	return st.Ino
}
