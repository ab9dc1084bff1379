//go:build !linux

package lab

import "syscall"

// childSysProcAttr is empty off Linux: there is no parent-death signal, so
// a lab node child relies on its stdin reaching EOF when tailpath exits.
func childSysProcAttr() *syscall.SysProcAttr { return nil }
