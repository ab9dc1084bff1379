package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The map of the code (docs/architecture.md) and the import rules it
// states, kept true by go list. probes' own rule (no I/O) is
// probes.TestImportsNoIO.

const module = "github.com/tailpath/tailpath"

// goList runs `go list` with args in the module's root (this package's
// directory) and returns its output's fields; GOOS, when not "", is the
// platform listed for.
func goList(t *testing.T, goos string, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("skipping: reading packages needs the go command: %v", err)
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	if goos != "" {
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// docPackages are the packages docs/architecture.md's package table
// names: every `backticked` name in a row's first cell.
func docPackages(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Packages\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	names := map[string]bool{}
	tick := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range tick.FindAllStringSubmatch(first, -1) {
			names[m[1]] = true
		}
	}
	if len(names) == 0 {
		t.Fatal("docs/architecture.md's package table names no package")
	}
	return names
}

// TestArchitectureNamesEveryPackage: docs/architecture.md's package table
// names every package `go list ./...` prints (by its path in the module,
// "." for the root), and nothing that is no package.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc := docPackages(t)
	pkgs := map[string]bool{}
	for _, p := range goList(t, "", "./...") {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		if rel == "" {
			rel = "."
		}
		pkgs[rel] = true
		if !doc[rel] {
			t.Errorf("docs/architecture.md's package table does not name %s: add its row (what it owns)", rel)
		}
	}
	for name := range doc {
		if !pkgs[name] {
			t.Errorf("docs/architecture.md's package table names %s, which go list ./... does not print", name)
		}
	}
}

// TestArchitectureFilesExist: every file or directory path that
// docs/architecture.md names in backticks from the repository's root (its
// first element a top-level directory; no placeholder such as <name>, no
// Go name such as internal/dashboard.Dashboard) exists, so its recipes stay
// true.
func TestArchitectureFilesExist(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	path := regexp.MustCompile("`((?:[a-z0-9_.-]+/)+[A-Za-z0-9_.-]*)`")
	goName := regexp.MustCompile(`\.[A-Z]`)
	n := 0
	for _, m := range path.FindAllStringSubmatch(string(b), -1) {
		p := m[1]
		first, _, _ := strings.Cut(p, "/")
		if fi, err := os.Stat(first); err != nil || !fi.IsDir() || goName.MatchString(p) {
			continue // another tree's path (net/http, cmd/tailscale/…), or a Go name
		}
		n++
		if _, err := os.Stat(filepath.FromSlash(strings.TrimSuffix(p, "/"))); err != nil {
			t.Errorf("docs/architecture.md names %s, which does not exist", p)
		}
	}
	if n < 20 {
		t.Errorf("docs/architecture.md names only %d paths; is the pattern still right?", n)
	}
}

// leaves are the packages of internal/ that every package may import
// because they import nothing of ours (docs/architecture.md).
var leaves = []string{"safetext", "units", "columns", "termcolor", "secretfile", "tscompat", "buildinfo"}

// TestInternalLeavesImportNothingOfOurs: no leaf of internal/ imports a
// package of this module, directly or not, on any platform tailpath
// builds for.
func TestInternalLeavesImportNothingOfOurs(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, leaf := range leaves {
			self := module + "/internal/" + leaf
			var ours []string
			for _, d := range goList(t, goos, "-deps", self) {
				if d != self && (d == module || strings.HasPrefix(d, module+"/")) {
					ours = append(ours, d)
				}
			}
			if len(ours) > 0 {
				t.Errorf("GOOS=%s: internal/%s imports %q; a leaf imports nothing of tailpath's (move what needs it to internal/app or a package of its own)", goos, leaf, ours)
			}
		}
	}
	// The rule sees an import where there is one: internal/report is no leaf.
	if deps := goList(t, "linux", "-deps", module+"/internal/report"); !slices.Contains(deps, module+"/probes") {
		t.Errorf("go list -deps internal/report lacks probes: %q", deps)
	}
}

// ui are the packages that make the terminal dashboard: Bubble Tea, Lip
// Gloss, Bubbles (v2 under charm.land, v1 under github.com), and our own
// tui packages and their wiring. (charmbracelet/x/ansi, safetext's
// cleaner, and colorprofile, termcolor's, draw nothing.)
var ui = []string{"charm.land/", "github.com/charmbracelet/bubbletea", "github.com/charmbracelet/lipgloss",
	"github.com/charmbracelet/bubbles", module + "/tui", module + "/internal/dashboard"}

// TestAppImportsNoUI: internal/app, the service layer the headless
// commands and serve share, imports no Bubble Tea, no Lip Gloss and no
// tui package, directly or not, on any platform tailpath builds for; the
// dashboard's wiring is internal/dashboard's.
func TestAppImportsNoUI(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, tags := range []string{"", "demo"} {
			for _, d := range goList(t, goos, "-deps", "-tags", tags, module+"/internal/app") {
				if slices.ContainsFunc(ui, func(p string) bool { return strings.HasPrefix(d, p) }) {
					t.Errorf("GOOS=%s -tags %q: internal/app imports %s; what draws the dashboard belongs in internal/dashboard", goos, tags, d)
				}
			}
		}
	}
	// The rule sees a UI import where there is one.
	if deps := goList(t, "linux", "-deps", module+"/internal/dashboard"); !slices.Contains(deps, "charm.land/bubbletea/v2") {
		t.Errorf("go list -deps internal/dashboard lacks Bubble Tea: %q", deps)
	}
}

// TestEverydayBuildLinksNoTailscaleNode: the binary built without tags
// links no tsnet and no gVisor network stack (the demo's lab node, and
// nothing else, needs them; cmd_demo_lab.go), and the demo build does, so
// the tag is what keeps them out (docs/perf.md: "Building").
func TestEverydayBuildLinksNoTailscaleNode(t *testing.T) {
	heavy := func(pkg string) bool {
		return pkg == "tailscale.com/tsnet" || strings.HasPrefix(pkg, "gvisor.dev/") || pkg == "tailscale.com/wgengine/netstack"
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		var found []string
		for _, p := range goList(t, goos, "-deps", ".") {
			if heavy(p) {
				found = append(found, p)
			}
		}
		if len(found) > 0 {
			t.Errorf("GOOS=%s: the everyday build links %d packages of the demo's node: %v", goos, len(found), found[:min(len(found), 5)])
		}
	}
	if !slices.ContainsFunc(goList(t, "linux", "-deps", "-tags", "demo", "."), heavy) {
		t.Error("the demo build links no tsnet: is the demo still behind its tag (cmd_demo_lab.go)?")
	}
}
