package sysctl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// nobody is the uid planted files are given: another user than root.
const nobody = 65534

// needRoot skips t unless it runs as root: the attack is root reading a
// file another user planted, which takes chown to set up.
func needRoot(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("skipping: file ownership is a Unix notion")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping: planting another user's file needs root (chown); CI runs as root")
	}
}

// TestDefaultStatePathIgnoresXDGForRoot: XDG_STATE_HOME survives sudo -E,
// so root never takes its state from there.
func TestDefaultStatePathIgnoresXDGForRoot(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/home/mallory/.local/state")
	defer func(f func() int) { geteuid = f }(geteuid)
	for _, tt := range []struct {
		euid int
		want string
	}{
		{0, RootStatePath},
		{1000, "/home/mallory/.local/state/tailpath/tune-state.json"},
	} {
		geteuid = func() int { return tt.euid }
		if got := DefaultStatePath(); got != tt.want {
			t.Errorf("euid %d: DefaultStatePath() = %q, want %q", tt.euid, got, tt.want)
		}
	}
}

// plantedState is a state file recording one key and TrueNAS tunables
// through a planted midclt that, if ever run, writes its uid to ran.
func plantState(t *testing.T, dir string) (state, midclt, ran string) {
	t.Helper()
	ran = filepath.Join(dir, "ran")
	midclt = filepath.Join(dir, "bin", "midclt")
	writeFile(t, midclt, "#!/bin/sh\nid -u > "+ran+"\necho '[{\"id\": 1, \"comment\": \"tailpath tune\"}]'\n")
	os.Chmod(midclt, 0o755)
	state = filepath.Join(dir, "state", "tailpath", "tune-state.json")
	writeFile(t, state, `{"version": 1, "saved": "2026-01-02T03:04:05Z",
 "keys": [{"key": "net.core.rmem_max", "old": "212992", "new": "16777216"}],
 "persist": {"method": "truenas-midclt", "tunables": [1], "midclt": "`+midclt+`"}}`)
	return state, midclt, ran
}

// TestUntrustedStateRefused plants state files root must not trust and
// checks Revert and ApplyRecorded read none of them: nothing written,
// nothing run.
func TestUntrustedStateRefused(t *testing.T) {
	needRoot(t)
	for _, tt := range []struct {
		name  string
		plant func(t *testing.T, dir, state string)
		why   string
	}{
		{"file owned by another user", func(t *testing.T, dir, state string) {
			must0(t, os.Chown(state, nobody, nobody))
		}, "is owned by uid 65534"},
		{"directory owned by another user", func(t *testing.T, dir, state string) {
			must0(t, os.Chown(filepath.Join(dir, "state"), nobody, nobody))
		}, "is owned by uid 65534"},
		{"file writable by others", func(t *testing.T, dir, state string) {
			must0(t, os.Chmod(state, 0o666))
		}, "is writable by group or others"},
		{"directory writable by others", func(t *testing.T, dir, state string) {
			must0(t, os.Chmod(filepath.Dir(state), 0o777))
		}, "is writable by group or others"},
		{"sticky directory owned by another user", func(t *testing.T, dir, state string) {
			d := filepath.Dir(state)
			must0(t, os.Chmod(d, 0o1777))
			must0(t, os.Chown(d, nobody, nobody))
		}, "is owned by uid 65534"},
		{"symbolic link", func(t *testing.T, dir, state string) {
			real := filepath.Join(dir, "real.json")
			must0(t, os.Rename(state, real))
			must0(t, os.Symlink(real, state))
		}, "is a symbolic link"},
		{"linked directory leading to another user's", func(t *testing.T, dir, state string) {
			other := filepath.Join(dir, "other")
			must0(t, os.Rename(filepath.Join(dir, "state"), other))
			must0(t, os.Chown(filepath.Join(other, "tailpath"), nobody, nobody))
			must0(t, os.Symlink(other, filepath.Join(dir, "state")))
		}, "is owned by uid 65534"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, proc := fakeHost(t, modernKeys, 0)
			before := snapshot(t, proc)
			dir := t.TempDir()
			state, _, ran := plantState(t, dir)
			tt.plant(t, dir, state)
			h.Midclt = "" // a sandbox: no midclt of its own
			_, err := Revert(h, state)
			if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), "nothing written") {
				t.Errorf("Revert = %v, want ErrUntrusted (%s), nothing written", err, tt.why)
			}
			if _, err := ApplyRecorded(h, nasChanges, anyCC, state); !errors.Is(err, ErrUntrusted) {
				t.Errorf("ApplyRecorded = %v, want ErrUntrusted", err)
			}
			if _, err := LoadState(state); !errors.Is(err, ErrUntrusted) {
				t.Errorf("LoadState = %v, want ErrUntrusted", err)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Errorf("the planted midclt ran")
			}
			if diff := diffTrees(before, snapshot(t, proc)); diff != "" {
				t.Errorf("sysctls changed:\n%s", diff)
			}
		})
	}
}

// TestRevertNeverRunsStateMidclt: a trusted state file naming a midclt
// still never gets it run: revert runs the host's own (here a fake one),
// or says none is available.
func TestRevertNeverRunsStateMidclt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: the midclts are shell scripts")
	}
	for _, withOwn := range []bool{false, true} {
		h, _ := fakeHost(t, modernKeys, 0)
		dir := t.TempDir()
		state, _, ran := plantState(t, dir)
		own, log := "", ""
		if withOwn {
			own, log = fakeMidclt(t, "")
		}
		h.Midclt = own
		_, err := Revert(h, state)
		if _, serr := os.Stat(ran); serr == nil {
			t.Errorf("own midclt %v: the state file's midclt ran", withOwn)
		}
		if !withOwn {
			if err == nil || !strings.Contains(err.Error(), "midclt is not available") {
				t.Errorf("Revert without a midclt = %v", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Revert with the host's midclt = %v", err)
		}
		if calls, _ := os.ReadFile(log); !strings.Contains(string(calls), "tunable.query") {
			t.Errorf("the host's midclt was not asked: %q", calls)
		}
	}
	// --apply --persist replacing an earlier record: the same.
	dir := t.TempDir()
	_, midclt, ran := plantState(t, dir)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "run", "systemd", "system", ".keep"), "")
	h := AtRoot(root)
	plan := h.PlanPersist(h.Platform(), persistChanges, nil)
	prev := &Persisted{Method: PersistMidclt, Tunables: []int64{1}, Midclt: midclt}
	if _, err := h.ApplyPersist(context.Background(), plan, prev); err == nil || !strings.Contains(err.Error(), "midclt is not available") {
		t.Errorf("ApplyPersist over a planted record = %v", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("ApplyPersist ran the state file's midclt")
	}
}

// TestStateNamesOnlyHostPaths: a state file may only name the files
// --persist writes on this host, and values valid as on apply.
func TestStateNamesOnlyHostPaths(t *testing.T) {
	for name, content := range map[string]string{
		"sysctl.d elsewhere":   `{"version": 1, "keys": [], "persist": {"method": "sysctl.d", "path": "/srv/x/99-tailpath.conf"}}`,
		"legacy elsewhere":     `{"version": 1, "keys": [], "persisted": "/srv/x/99-tailpath.conf"}`,
		"DSM script elsewhere": `{"version": 1, "keys": [], "persist": {"method": "dsm-rc.d", "path": "/etc/init.d/tailpath-sysctl.sh"}}`,
		"foreign go block":     `{"version": 1, "keys": [], "persist": {"method": "unraid-go", "path": "/boot/config/go", "block": "# BEGIN tailpath tune: ` + "`tailpath tune --revert`" + ` removes this block\nrm -rf /\n# END tailpath tune\n"}}`,
		"newline in value set": `{"version": 1, "keys": [{"key": "net.ipv4.tcp_congestion_control", "old": "cubic", "new": "bbr\nkernel.core_pattern=|/tmp/x"}]}`,
		"quote in value set":   `{"version": 1, "keys": [{"key": "net.ipv4.tcp_congestion_control", "old": "cubic", "new": "bbr';reboot;'"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			h, proc := fakeHost(t, modernKeys, 0)
			before := snapshot(t, proc)
			state := filepath.Join(t.TempDir(), "tune-state.json")
			writeFile(t, state, content)
			if _, err := Revert(h, state); !errors.Is(err, ErrCorruptState) {
				t.Errorf("Revert = %v, want ErrCorruptState", err)
			}
			if diff := diffTrees(before, snapshot(t, proc)); diff != "" {
				t.Errorf("tree changed:\n%s", diff)
			}
		})
	}
}

// TestCheckTrustedAcceptsRootsOwn: root's own files under a root-owned
// sticky /tmp pass, so tests and --state in a private directory work.
func TestCheckTrustedAcceptsRootsOwn(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: file ownership is a Unix notion")
	}
	p := filepath.Join(t.TempDir(), "a", "tune-state.json")
	if err := CheckTrusted(p); err != nil {
		t.Errorf("missing file in a private directory: %v", err)
	}
	writeFile(t, p, "{}")
	if err := CheckTrusted(p); err != nil {
		t.Errorf("own file: %v", err)
	}
}

func must0(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// diffTrees lists the files that differ between two snapshots.
func diffTrees(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k+": "+v+" → "+b[k])
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k+": new")
		}
	}
	return strings.Join(out, "\n")
}

// TestStateSwappedAfterCheck is the race of `tune --revert --state
// /tmp/tp-state.json`: between root's checks of the path and its read,
// another user puts a valid state file of their own at the path (in a
// sticky directory anyone may add to). Root must judge the file it reads,
// on its open descriptor, and refuse it: nothing applied, nothing run.
func TestStateSwappedAfterCheck(t *testing.T) {
	needRoot(t)
	for _, tt := range []struct {
		name string
		// before plants what is at the path when the checks run.
		before func(t *testing.T, state string)
	}{
		{"missing at the check", func(t *testing.T, state string) {}},
		{"root's own at the check", func(t *testing.T, state string) {
			writeFile(t, state, `{"version": 1, "keys": []}`)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, proc := fakeHost(t, modernKeys, 0)
			h.Midclt = ""
			before := snapshot(t, proc)
			sticky := filepath.Join(t.TempDir(), "tmp")
			must0(t, os.Mkdir(sticky, 0o755))
			must0(t, os.Chmod(sticky, os.ModeSticky|0o777))
			state := filepath.Join(sticky, "tp-state.json")
			// The attacker's file: valid, recording "previous" values of
			// their choosing, and theirs.
			theirs := filepath.Join(t.TempDir(), "theirs.json")
			writeFile(t, theirs, `{"version": 1, "saved": "2026-01-02T03:04:05Z", "keys": [{"key": "net.core.rmem_max", "old": "4096", "new": "16777216"}]}`)
			must0(t, os.Chown(theirs, nobody, nobody))
			swaps := 0
			testHookStateChecked = func(p string) {
				if p != state {
					return
				}
				swaps++
				os.Remove(state)
				must0(t, os.Link(theirs, state))
			}
			t.Cleanup(func() { testHookStateChecked = func(string) {} })
			for _, call := range []struct {
				name string
				run  func() error
			}{
				{"Revert", func() error { _, err := Revert(h, state); return err }},
				{"LoadState", func() error { _, err := LoadState(state); return err }},
				{"ApplyRecorded", func() error { _, err := ApplyRecorded(h, nasChanges, anyCC, state); return err }},
			} {
				os.Remove(state)
				tt.before(t, state)
				if err := call.run(); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "is owned by uid 65534") {
					t.Errorf("%s = %v; want ErrUntrusted naming the swapped file's owner", call.name, err)
				}
			}
			if swaps != 3 {
				t.Fatalf("the hook swapped %d times, want 3: the test no longer reaches the race", swaps)
			}
			if diff := diffTrees(before, snapshot(t, proc)); diff != "" {
				t.Errorf("the swapped file's values were applied:\n%s", diff)
			}
		})
	}
}
