package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

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
		code := dispatch(context.Background(), tt.args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
		if code == 0 || !strings.Contains(errb.String()+out.String(), tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a failure saying %q", tt.args, code, out.String(), errb.String(), tt.want)
		}
		if b, err := os.ReadFile(ran); err == nil {
			t.Fatalf("%v: the planted midclt ran as uid %s", tt.args, strings.TrimSpace(string(b)))
		}
	}
}

// TestTuneApplyIgnoresUserEnvironment is the sudo -E attack on every
// variable tailpath reads on root's path: a user sets
// TAILPATH_CPUPROFILE, TAILPATH_LAB_NODE (a lab node's state directory
// and log file) or XDG_STATE_HOME, each through a link in their own
// directory to a root-only file, and root runs `tailpath tune --apply`
// (here on a --root copy) as a process of its own: each variable alone,
// then all at once. The command runs; no root file changes; nothing is
// created in the user's directory.
func TestTuneApplyIgnoresUserEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("skipping: tune is Linux only")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping: the attack is root following a user's links; run as root (CI does)")
	}
	for _, vars := range [][]string{{"TAILPATH_CPUPROFILE"}, {"TAILPATH_LAB_NODE"}, {"XDG_STATE_HOME"}, {"TAILPATH_CPUPROFILE", "TAILPATH_LAB_NODE", "XDG_STATE_HOME"}} {
		t.Run(strings.Join(vars, ","), func(t *testing.T) { tuneApplyUserEnv(t, vars) })
	}
}

// tuneApplyUserEnv runs TestTuneApplyIgnoresUserEnvironment with vars set.
func tuneApplyUserEnv(t *testing.T, vars []string) {
	// Root's files, readable by root only.
	secret := t.TempDir()
	victims := map[string]string{}
	for _, name := range []string{"profile-victim", "node-log-victim", "state-victim"} {
		p := filepath.Join(secret, name)
		if err := os.WriteFile(p, []byte("root's own "+name+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		victims[p] = "root's own " + name + "\n"
	}
	// The user's directory, and their links into root's files.
	user := t.TempDir()
	for l, target := range map[string]string{
		"cpu.prof":                       "profile-victim",
		"node.log":                       "node-log-victim",
		"state/tailpath/tune-state.json": "state-victim",
		"nodedir/tailscaled.log.conf":    "state-victim",
	} {
		p := filepath.Join(user, l)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(secret, target), p); err != nil {
			t.Fatal(err)
		}
	}
	filepath.Walk(user, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
	listUser := func() []string {
		var out []string
		filepath.Walk(user, func(p string, _ os.FileInfo, _ error) error { out = append(out, p); return nil })
		return out
	}
	before := listUser()

	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("sysctl", "testdata", "roots", "dsm-7.2-5.10"))); err != nil {
		t.Fatal(err)
	}
	values := map[string]string{
		"TAILPATH_CPUPROFILE": filepath.Join(user, "cpu.prof"),
		"TAILPATH_LAB_NODE":   `{"hostname":"mallory","control_url":"http://127.0.0.1:9","dir":"` + filepath.Join(user, "nodedir") + `","log_file":"` + filepath.Join(user, "node.log") + `"}`,
		"XDG_STATE_HOME":      filepath.Join(user, "state"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "tune", "--root", root, "--bandwidth", "400Mbit", "--rtt", "100ms", "--apply", "--yes")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	for _, v := range vars {
		cmd.Env = append(cmd.Env, v+"="+values[v])
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil || !strings.Contains(out.String(), "previous values saved in "+filepath.Join(root, "var", "lib", "tailpath", "tune-state.json")) {
		t.Errorf("tune --apply as root: %v\nstdout:\n%.2000s\nstderr:\n%.2000s", err, out.String(), errb.String())
	}
	if slices.Contains(vars, "TAILPATH_CPUPROFILE") && (!strings.Contains(errb.String(), "TAILPATH_CPUPROFILE") || !strings.Contains(errb.String(), "no profile written")) {
		t.Errorf("stderr does not say the profile was refused:\n%s", errb.String())
	}
	for p, want := range victims {
		b, err := os.ReadFile(p)
		if err != nil || string(b) != want {
			t.Errorf("root's %s changed: %.300q, %v", filepath.Base(p), b, err)
		}
	}
	if after := listUser(); !slices.Equal(before, after) {
		t.Errorf("root created files in the user's directory:\nbefore %v\nafter  %v", before, after)
	}
}
