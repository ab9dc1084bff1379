// Package procs sets how many Ps (runtime.GOMAXPROCS) the process of a
// one-shot command (status) runs Go code on, in its init. main imports it
// for that alone. It imports nothing beyond os and the runtime
// (TestImportsOnlyOSAndRuntime), so it is initialized among the first of
// the binary's packages: right after os, 26th of about 220 inits here,
// before all but a few of the libraries' (tailscale.com's, the Charm
// stack's, client_golang's), which then run on the Ps it leaves. Go (1.21
// and later) initializes next the first package, in import-path order,
// whose imports are all initialized; importing runtime/debug, say, for
// the one-shot GC settings, put it 122nd.
package procs

import (
	"os"
	"runtime"
)

// For is how many Ps the process of the command args runs on, given the
// runtime's default (procs); ok is false for every command but status
// (the dashboard, tail and serve run for hours) and when GOMAXPROCS is
// set in the environment, which stands.
//
// It is one P fewer than the default, at least one. Every request status
// makes goes to tailscaled on this host (the LocalAPI is a Unix socket, a
// named pipe or a loopback port), which answers while tailpath waits: the
// two take turns more than they run side by side. A P with nothing to run
// still costs: its thread spins looking for work and is woken for each
// goroutine started (on a virtual machine each wake is an interrupt
// between CPUs), and it caches memory spans of its own. On this
// project's 2-core machine one P fewer took a status the same time and
// 3-12% less CPU: 1.06-1.07x the CLI's CPU at 4 peers against 1.02-1.04x,
// 0.90-1.02x at 1,000 peers against 0.82-0.90x (docs/perf.md, round 9);
// the CPU it saves is the host's, which tailscaled shares.
func For(args []string, getenv func(string) string, procs int) (n int, ok bool) {
	if len(args) == 0 || args[0] != "status" || getenv("GOMAXPROCS") != "" {
		return 0, false
	}
	return max(procs-1, 1), true
}

func init() {
	// Setting the Ps stops the world once (0.3-1 ms on this machine);
	// done now, it saves the inits after this one and the command the
	// second P's thread.
	def := runtime.GOMAXPROCS(0)
	if n, ok := For(os.Args[1:], os.Getenv, def); ok && n != def {
		runtime.GOMAXPROCS(n)
	}
}
