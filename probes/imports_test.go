package probes

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// ioImports are the packages whose presence among a package's
// dependencies means it can do network, process, serial or netlink I/O,
// or talk to tailscaled or the control API: what the diagnosis must not
// reach, directly or through another package.
var ioImports = []string{
	"net", "net/http", "os/exec",
	"tailscale.com/client/",       // the LocalAPI and control-API clients
	"go.bug.st/serial",            // the board's serial port
	"github.com/mdlayher/netlink", // sysctl's sockets and routes
	"github.com/jsimonetti/rtnetlink",
	"github.com/google/nftables",
	"github.com/creack/pty",
}

// ownAllowed are the packages of this module probes may import: leaves
// that do no I/O.
var ownAllowed = []string{
	"github.com/tailpath/tailpath/internal/safetext",
	"github.com/tailpath/tailpath/internal/tscompat",
}

// goListDeps is `go list -deps` of pkg for goos: every package it
// imports, directly or not, with the packages each imports.
func goListDeps(t *testing.T, pkg, goos string) map[string][]string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("skipping: reading imports needs the go command: %v", err)
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", pkg)
	cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s (GOOS=%s): %v", pkg, goos, err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[f[0]] = f[1:]
	}
	return deps
}

// sysOnly are packages that may bring in an I/O package because they are
// the platform's system interface: golang.org/x/sys/windows imports net
// for its socket types, and tailscale.com's type packages reach it on
// Windows (tailcfg → atomicfile). A dependency only they import is no I/O
// of the diagnosis.
var sysOnly = []string{"golang.org/x/sys/windows"}

// forbiddenIn lists the dependencies in deps that do I/O (unless only
// sysOnly packages import them), and the packages of this module other
// than self and ownAllowed, sorted.
func forbiddenIn(deps map[string][]string, self string) []string {
	importers := map[string][]string{}
	for p, imps := range deps {
		for _, i := range imps {
			importers[i] = append(importers[i], p)
		}
	}
	var bad []string
	for d := range deps {
		switch {
		case d == self || slices.Contains(ownAllowed, d):
		case strings.HasPrefix(d, "github.com/tailpath/tailpath"):
			bad = append(bad, d)
		case slices.ContainsFunc(ioImports, func(io string) bool {
			return d == io || (strings.HasSuffix(io, "/") && strings.HasPrefix(d, io)) ||
				(strings.Contains(io, ".") && strings.HasPrefix(d, io+"/"))
		}):
			if !slices.ContainsFunc(importers[d], func(p string) bool { return !slices.Contains(sysOnly, p) }) {
				continue
			}
			bad = append(bad, d)
		}
	}
	slices.Sort(bad)
	return bad
}

// TestImportsNoIO: the diagnosis is pure by its imports. probes imports
// nothing that reaches the network, a process, a serial port, netlink,
// tailscaled's LocalAPI or the control API, on any platform tailpath
// builds for (docs/architecture.md); its I/O lives in probes/tailscaled,
// probes/controlapi, probes/hostnet and probes/firewall.
func TestImportsNoIO(t *testing.T) {
	const self = "github.com/tailpath/tailpath/probes"
	for _, goos := range []string{"linux", "darwin", "windows"} {
		if bad := forbiddenIn(goListDeps(t, self, goos), self); len(bad) > 0 {
			t.Errorf("GOOS=%s: probes reaches %q; move that code to a package of its own (probes/tailscaled, …)", goos, bad)
		}
	}
	// The rule sees I/O where there is some: the LocalAPI side has it.
	const tailscaled = self + "/tailscaled"
	if bad := forbiddenIn(goListDeps(t, tailscaled, "linux"), tailscaled); !slices.Contains(bad, "net/http") || !slices.Contains(bad, "tailscale.com/client/local") {
		t.Errorf("the rule finds %q in probes/tailscaled, which imports net/http and tailscale.com/client/local", bad)
	}
}
