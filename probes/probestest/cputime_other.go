//go:build !(linux || darwin)

package probestest

import "time"

// CPUTime is not measured on this GOOS; it returns 0.
func CPUTime() time.Duration { return 0 }
