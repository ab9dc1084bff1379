package peerstest

import (
	"time"

	"github.com/tailpath/tailpath/probes/probestest"
)

// CPUTime is probestest.CPUTime: the process's user plus system CPU time
// so far; 0 when it cannot be read.
func CPUTime() time.Duration { return probestest.CPUTime() }
