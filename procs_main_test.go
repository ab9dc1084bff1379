package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// procsChildEnv makes this test binary print the Ps its inits left it and
// exit (TestMain).
const procsChildEnv = "TAILPATH_TEST_PROCS"

// TestStatusProcessDropsAP: tailpath's own inits (main imports
// internal/procs for it) leave a status process one P fewer than any
// other command's. Run as this test binary, which links main's imports.
func TestStatusProcessDropsAP(t *testing.T) {
	ps := map[string]string{}
	for _, cmd := range []string{"status", "serve"} {
		c := exec.Command(os.Args[0], cmd, "--json")
		c.Env = append(os.Environ(), "GOMAXPROCS=", procsChildEnv+"=1")
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		ps[cmd] = strings.TrimSpace(string(out))
	}
	switch {
	case ps["serve"] == "1":
		t.Skip("skipping: one P by default here, none to take away")
	case ps["status"] == ps["serve"]:
		t.Errorf("status runs on %s Ps, as serve does: main no longer sets them (internal/procs)", ps["status"])
	}
}
