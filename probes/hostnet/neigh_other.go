//go:build !linux

package hostnet

import (
	"fmt"
	"net/netip"
	"runtime"
)

// neighbors is Linux only: the neighbour table is read over rtnetlink.
func neighbors() ([]netip.Addr, error) {
	return nil, fmt.Errorf("reading the neighbour table is Linux only, not %s", runtime.GOOS)
}
