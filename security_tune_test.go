package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/sysctl"
)

// TestTuneRevertIgnoresPlantedState is the sudo -E attack: a user plants
// ~/.local/state/tailpath/tune-state.json naming their own midclt, and
// root runs `tailpath tune --revert` with the user's XDG_STATE_HOME
// still set. Root must read /var/lib/tailpath instead, refuse the
// planted file when named with --state, and run nothing from it.
func TestTuneRevertIgnoresPlantedState(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("skipping: tune is Linux only")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping: the attack is root reading a user's file; run as root (CI does)")
	}
	if _, err := os.Stat(sysctl.RootStatePath); err == nil {
		t.Skipf("skipping: this machine has a real %s, which a test must not revert", sysctl.RootStatePath)
	}
	home := t.TempDir()
	ran := filepath.Join(home, "ran")
	midclt := filepath.Join(home, "bin", "midclt")
	state := filepath.Join(home, ".local", "state", "tailpath", "tune-state.json")
	for p, content := range map[string]string{
		midclt: "#!/bin/sh\nid -u > " + ran + "\necho '[{\"id\": 1, \"comment\": \"tailpath tune\"}]'\n",
		state:  `{"version": 1, "keys": [], "persist": {"method": "truenas-midclt", "tunables": [1], "midclt": "` + midclt + `"}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The user's, as in their home directory.
	filepath.Walk(home, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"tune", "--revert"}, "nothing to revert: no state file at " + sysctl.RootStatePath},
		{[]string{"tune", "--revert", "--state", state}, "not trusted: " + state + " is owned by uid 65534"},
		{[]string{"tune", "--revert", "--json"}, "no state file at " + sysctl.RootStatePath},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), tt.args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		if code == 0 || !strings.Contains(errb.String()+out.String(), tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a failure saying %q", tt.args, code, out.String(), errb.String(), tt.want)
		}
		if b, err := os.ReadFile(ran); err == nil {
			t.Fatalf("%v: the planted midclt ran as uid %s", tt.args, strings.TrimSpace(string(b)))
		}
	}
}
