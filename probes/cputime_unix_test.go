//go:build linux || darwin

package probes

import (
	"syscall"
	"time"
)

// processCPU is the process's user+system CPU time so far (getrusage), so
// benchmarks can report CPU per op on a machine shared with other work.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
