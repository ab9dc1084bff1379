//go:build linux || darwin

package probestest

import (
	"syscall"
	"time"
)

// CPUTime is the process's user plus system CPU time so far (getrusage
// RUSAGE_SELF); 0 when it cannot be read. Benchmarks report it per op
// because wall time on a shared machine mostly measures the other load.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
