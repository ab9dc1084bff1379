// Command prebuild fills internal/prebuilt's cache before the tests run
// (.ci/run does, before go test), so no test spends its time building:
//
//	go run ./internal/prebuilt/prebuild
//
// It builds what the cache lacks for the current inputs (tailscaled and
// tailscale from the pinned module, the Xtensa and RISC-V test ELFs), says
// where each is and how long it took, and skips, with a line, an item
// whose tools are missing. It is run from the module's root.
package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tailpath/tailpath/devlink/devlinktest"
	"github.com/tailpath/tailpath/internal/prebuilt"
)

func main() {
	root, err := prebuilt.ModuleRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "prebuild: %v\n", err)
		os.Exit(1)
	}
	failed := false
	for _, it := range []prebuilt.Item{prebuilt.Tailscale(root), devlinktest.Xtensa(), devlinktest.RISCV()} {
		start := time.Now()
		_, had, _ := prebuilt.Path(it)
		dir, err := prebuilt.Get(it)
		switch {
		case errors.Is(err, prebuilt.ErrMissingTool):
			fmt.Printf("prebuild: %-10s skipped: %v (its tests will skip)\n", it.Name, err)
		case err != nil:
			fmt.Fprintf(os.Stderr, "prebuild: %s: %v\n", it.Name, err)
			failed = true
		case had:
			fmt.Printf("prebuild: %-10s cached   %s\n", it.Name, dir)
		default:
			fmt.Printf("prebuild: %-10s built    %s in %v\n", it.Name, dir, time.Since(start).Round(time.Second))
		}
	}
	if failed {
		os.Exit(1)
	}
}
