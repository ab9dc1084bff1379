//go:build linux

package lab

import "syscall"

// childSysProcAttr makes the kernel kill a lab node child when tailpath
// dies, even by SIGKILL, in addition to the stdin EOF the child watches.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
