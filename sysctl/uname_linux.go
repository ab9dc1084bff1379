package sysctl

import "golang.org/x/sys/unix"

// unameMachine is this machine's uname(2) machine ("x86_64", "armv7l");
// "" when the call fails.
func unameMachine() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return cleanField(unix.ByteSliceToString(u.Machine[:]))
}
