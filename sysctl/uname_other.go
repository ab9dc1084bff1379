//go:build !linux

package sysctl

// unameMachine is unknown off Linux: tailpath reads a Linux kernel's facts
// only from a --root copy there.
func unameMachine() string { return "" }
