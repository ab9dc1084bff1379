//go:build !(linux || darwin)

package peerstest

import "time"

// CPUTime is not measured on this GOOS; it returns 0.
func CPUTime() time.Duration { return 0 }
