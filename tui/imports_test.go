package tui

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The panes render what the sources report and do no I/O
// (docs/architecture.md). Two rules, checked with go list on every
// platform tailpath builds for:
//
//   - No package under tui/ imports the network, a process, a serial port,
//     netlink or tailscaled itself. Types they show may come from packages
//     that also do I/O (devlink's board state, sysctl/tune's report), but
//     the I/O is called by internal/app (or a function internal/dashboard
//     hands the pane), never by a pane itself.
//   - No package under tui/ reaches tailscaled's LocalAPI, the control API
//     or HTTP at all, even through another package.
//
// The test-harness packages (tui/peers/peerstest, tui/peers/labtest) run
// the lab tailnet and are exempt: no binary imports them.

// noDirect are what no tui package imports directly.
var noDirect = []string{
	"net", "net/http", "os/exec",
	"go.bug.st/serial",
	"github.com/mdlayher/netlink",
	"github.com/jsimonetti/rtnetlink/v2",
	"github.com/google/nftables",
	"tailscale.com/client/local",
}

// noReach are what no tui package reaches, directly or not: prefixes.
var noReach = []string{
	"net/http",
	"tailscale.com/client/",
	"github.com/tailpath/tailpath/probes/tailscaled",
	"github.com/tailpath/tailpath/probes/controlapi",
	"github.com/tailpath/tailpath/probes/hostnet",
	"github.com/tailpath/tailpath/probes/firewall",
	"github.com/tailpath/tailpath/probes/lab",
	"github.com/tailpath/tailpath/internal/app",
	"github.com/tailpath/tailpath/internal/dashboard",
}

func goList(t *testing.T, goos string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("skipping: reading imports needs the go command: %v", err)
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s (GOOS=%s): %v", strings.Join(args, " "), goos, err)
	}
	return string(out)
}

func TestPanesImportNoIO(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(goList(t, goos, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")), "\n") {
			f := strings.Fields(line)
			pkg, imports := f[0], f[1:]
			if strings.HasSuffix(pkg, "test") {
				continue // peerstest, labtest: harnesses
			}
			n++
			for _, imp := range imports {
				if slices.Contains(noDirect, imp) {
					t.Errorf("GOOS=%s: %s imports %s; the I/O belongs in internal/app or the source's own package", goos, pkg, imp)
				}
			}
			for _, dep := range strings.Fields(goList(t, goos, "-deps", pkg)) {
				if slices.ContainsFunc(noReach, func(p string) bool { return dep == p || strings.HasPrefix(dep, p) }) {
					t.Errorf("GOOS=%s: %s reaches %s", goos, pkg, dep)
				}
			}
		}
		if n < 6 {
			t.Errorf("GOOS=%s: checked only %d packages under tui/; is the listing right?", goos, n)
		}
	}
	// The rule sees I/O where there is some: the fixtures' harness serves
	// a fake LocalAPI over HTTP.
	deps := strings.Fields(goList(t, "linux", "-deps", "./peers/peerstest"))
	if !slices.Contains(deps, "net/http") {
		t.Errorf("go list -deps tui/peers/peerstest lacks net/http: %q", deps)
	}
}

// controlMakers are sysctl/tune's names that hold or make a host's
// Control, which reads and changes the host.
var controlMakers = []string{"Control", "Sandbox", "SeedNASControl"}

// controlUses lists where the non-test Go files under dir (harnesses,
// directories ending in "test", aside) name one of controlMakers.
func controlUses(t *testing.T, dir string) []string {
	t.Helper()
	var uses []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && strings.HasSuffix(d.Name(), "test") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"github.com/tailpath/tailpath/sysctl/tune"` {
				name = "tune"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && slices.Contains(controlMakers, sel.Sel.Name) {
					uses = append(uses, fmt.Sprintf("%s: tune.%s", fset.Position(sel.Pos()), sel.Sel.Name))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return uses
}

// TestPanesHoldNoControl: no pane holds or makes a sysctl/tune Control;
// the Tuning pane is handed read, apply and revert as functions
// (tuning.Options), as the Peers pane is handed its ping and probe, and
// internal/dashboard builds them from the Control.
func TestPanesHoldNoControl(t *testing.T) {
	for _, u := range controlUses(t, ".") {
		t.Errorf("%s: a pane holds the host's Control; hand it functions (internal/dashboard's TuningOptions)", u)
	}
	// The rule sees a Control where there is one.
	if len(controlUses(t, filepath.Join("..", "internal", "dashboard"))) == 0 {
		t.Error("found no tune.Control in internal/dashboard, which builds the pane's functions from one; is the check right?")
	}
}
