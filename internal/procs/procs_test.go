package procs

import (
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// childEnv marks a run of this test binary as TestInitSetsProcs's child:
// it prints the Ps its init left and exits.
const childEnv = "TAILPATH_PROCS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		fmt.Println(runtime.GOMAXPROCS(0))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFor: only status runs on fewer Ps, one fewer than the default and
// at least one, and GOMAXPROCS given by the user stands.
func TestFor(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		env    map[string]string
		procs  int
		want   int
		wantOK bool
	}{
		{[]string{"status", "--json"}, nil, 2, 1, true},
		{[]string{"status"}, nil, 8, 7, true},
		{[]string{"status"}, nil, 1, 1, true},
		{[]string{"status"}, map[string]string{"GOMAXPROCS": "2"}, 2, 0, false},
		{nil, nil, 2, 0, false},
		{[]string{"--socket", "x", "status"}, nil, 2, 0, false},
		{[]string{"serve"}, nil, 2, 0, false},
		{[]string{"tail"}, nil, 2, 0, false},
		{[]string{"version"}, nil, 2, 0, false},
	} {
		n, ok := For(tc.args, func(k string) string { return tc.env[k] }, tc.procs)
		if n != tc.want || ok != tc.wantOK {
			t.Errorf("For(%q, %v, %d) = %d, %v; want %d, %v", tc.args, tc.env, tc.procs, n, ok, tc.want, tc.wantOK)
		}
	}
}

// TestInitSetsProcs runs this test binary as a process of each command
// and reads the Ps it runs on once the inits are done: status one fewer
// than serve (at least one), and GOMAXPROCS in the environment stands.
func TestInitSetsProcs(t *testing.T) {
	procsOf := func(args []string, env ...string) int {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), append(env, childEnv+"=1")...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("%q printed %q", args, out)
		}
		return n
	}
	// The children's default, whatever this process was given.
	base := procsOf([]string{"serve"}, "GOMAXPROCS=")
	if base < 1 {
		t.Fatalf("serve runs on %d Ps", base)
	}
	if base == 1 {
		t.Skip("skipping: one P by default here, none to take away")
	}
	if got, want := procsOf([]string{"status", "--json"}, "GOMAXPROCS="), max(base-1, 1); got != want {
		t.Errorf("status runs on %d Ps beside serve's %d; want %d", got, base, want)
	}
	if got := procsOf([]string{"status"}, "GOMAXPROCS=3"); got != 3 {
		t.Errorf("status with GOMAXPROCS=3 runs on %d Ps; want 3", got)
	}
}

// TestImportsOnlyOSAndRuntime: the package imports nothing that would
// have its init wait for more of the binary's packages (the package doc).
func TestImportsOnlyOSAndRuntime(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		if path != "os" && path != "runtime" {
			t.Errorf("procs imports %s: only os and the runtime keep its init among the first", path)
		}
	}
}
