package sysctl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var persistChanges = []Change{
	{Key: KeyTCPRmem, New: "4096 131072 16777216"},
	{Key: KeyWmemMax, New: "16777216"},
}

func TestPlatformDetection(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		dirs  []string
		want  Platform
	}{
		{"DSM 7", map[string]string{"etc.defaults/VERSION": "majorversion=\"7\"\nproductversion=\"7.2.1\"\nbuildnumber=\"69057\"\nsmallfixnumber=\"0\"\nos_name=\"DSM\"\n"}, nil,
			Platform{Kind: PlatformDSM, Name: "Synology DSM 7.2.1-69057", Version: "7.2.1", Evidence: "/etc.defaults/VERSION"}},
		{"DSM 6 without os_name", map[string]string{"etc.defaults/VERSION": "majorversion=\"6\"\nminorversion=\"2\"\nbuildnumber=\"25556\"\n"}, nil,
			Platform{Kind: PlatformDSM, Name: "Synology DSM 6.2-25556", Version: "6.2", Evidence: "/etc.defaults/VERSION"}},
		{"SRM is not DSM", map[string]string{"etc.defaults/VERSION": "productversion=\"1.3\"\nos_name=\"SRM\"\n"}, nil,
			Platform{Kind: PlatformUnknown, Name: "unknown Linux"}},
		{"Unraid", map[string]string{"etc/unraid-version": "version=\"7.0.1\"\n"}, nil,
			Platform{Kind: PlatformUnraid, Name: "Unraid 7.0.1", Version: "7.0.1", Evidence: "/etc/unraid-version"}},
		{"TrueNAS by midclt", map[string]string{"usr/bin/midclt": "", "etc/version": "25.04.2\n"}, nil,
			Platform{Kind: PlatformTrueNAS, Name: "TrueNAS SCALE 25.04.2", Version: "25.04.2", Evidence: "/etc/version"}},
		{"QNAP", map[string]string{"etc/config/uLinux.conf": "[Misc]\nVersion = 9\n[System]\nVersion = 5.2.0\n"}, nil,
			Platform{Kind: PlatformQNAP, Name: "QNAP QTS 5.2.0", Version: "5.2.0", Evidence: "/etc/config/uLinux.conf"}},
		{"OpenWrt without description", map[string]string{"etc/openwrt_release": "DISTRIB_RELEASE='24.10.0'\n"}, nil,
			Platform{Kind: PlatformOpenWrt, Name: "OpenWrt 24.10.0", Version: "24.10.0", Evidence: "/etc/openwrt_release"}},
		{"systemd", map[string]string{"etc/os-release": "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n"}, []string{"run/systemd/system"},
			Platform{Kind: PlatformSystemd, Name: "Ubuntu 24.04.1 LTS (systemd)", Evidence: "/run/systemd/system"}},
		{"escape sequences in a version file are dropped", map[string]string{"etc/unraid-version": "version=\"6.12\x1b[2J\x07\"\n"}, nil,
			Platform{Kind: PlatformUnraid, Name: "Unraid 6.12", Version: "6.12", Evidence: "/etc/unraid-version"}},
		{"UniFi OS", map[string]string{"usr/lib/version": "UCKP.apq8053.v3.0.17.8102bbc.230210.1526\n", "etc/os-release": "PRETTY_NAME=\"Debian GNU/Linux 11 (bullseye)\"\n"}, []string{"run/systemd/system"},
			Platform{Kind: PlatformUniFi, Name: "UniFi OS 3.0.17 (UCKP)", Version: "3.0.17", Evidence: "/usr/lib/version"}},
		{"UniFi OS by ubnt-device-info", map[string]string{"usr/bin/ubnt-device-info": ""}, []string{"run/systemd/system"},
			Platform{Kind: PlatformUniFi, Name: "UniFi OS", Evidence: "/usr/bin/ubnt-device-info"}},
		{"EdgeOS", map[string]string{"opt/vyatta/etc/version": "Version:      v2.0.9-hotfix.7\nBuild ID:     5619880\n"}, []string{"run/systemd/system"},
			Platform{Kind: PlatformEdgeOS, Name: "EdgeOS v2.0.9-hotfix.7", Version: "2.0.9-hotfix.7", Evidence: "/opt/vyatta/etc/version"}},
		{"Home Assistant OS", map[string]string{"etc/os-release": "NAME=\"Home Assistant OS\"\nID=haos\nVERSION_ID=13.2\nPRETTY_NAME=\"Home Assistant OS 13.2\"\n"}, []string{"run/systemd/system"},
			Platform{Kind: PlatformHAOS, Name: "Home Assistant OS 13.2", Version: "13.2", Evidence: "/etc/os-release"}},
		{"nothing", nil, nil, Platform{Kind: PlatformUnknown, Name: "unknown Linux"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, c := range tt.files {
				writeFile(t, filepath.Join(dir, p), c)
			}
			for _, d := range tt.dirs {
				os.MkdirAll(filepath.Join(dir, d), 0o755)
			}
			if diff := cmp.Diff(tt.want, AtRoot(dir).Platform()); diff != "" {
				t.Errorf("Platform (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnraidBlock: the block goes after the #! line and comes out exactly,
// even when the file has no newline after #!, and an edited block is still
// found by its markers.
func TestUnraidBlock(t *testing.T) {
	block := blockBegin + "\nsysctl -w x=1\n" + blockEnd + "\n"
	for _, orig := range []string{"#!/bin/bash\n/usr/local/sbin/emhttp &\n", "#!/bin/bash", "/usr/local/sbin/emhttp &\n", ""} {
		next, ins := insertBlock(orig, block)
		if !strings.Contains(next, block) || strings.HasPrefix(orig, "#!") && !strings.HasPrefix(next, "#!/bin/bash\n"+blockBegin) {
			t.Errorf("insertBlock(%q) = %q", orig, next)
		}
		back, found := removeBlock(next, ins)
		if !found || back != orig {
			t.Errorf("removeBlock(insertBlock(%q)) = %q, %v", orig, back, found)
		}
		edited := strings.Replace(next, "x=1", "x=2", 1)
		if back, found := removeBlock(edited, ins); !found || strings.Contains(back, "tailpath") || !strings.Contains(back, strings.TrimPrefix(orig, "#!/bin/bash")) {
			t.Errorf("removeBlock(edited %q) = %q, %v", edited, back, found)
		}
	}
	if _, found := removeBlock("#!/bin/bash\n# BEGIN something else\n", ""); found {
		t.Error("found a block that is not tailpath's")
	}
}

// TestPersistMarkers: revert removes only files carrying the marker, and
// persist never overwrites a file it did not write.
func TestPersistMarkers(t *testing.T) {
	dir := t.TempDir()
	h := AtRoot(dir)
	os.MkdirAll(filepath.Join(dir, "run", "systemd", "system"), 0o755)
	p := h.Platform()
	plan := h.PlanPersist(p, persistChanges, nil)
	if plan.Method != PersistSysctlD {
		t.Fatalf("plan %+v", plan)
	}
	// Someone else's 99-tailpath.conf: refused, left alone.
	writeFile(t, plan.Path, "net.core.rmem_max = 1\n")
	if _, err := h.ApplyPersist(context.Background(), plan, nil); !errors.Is(err, ErrNotPersisted) || !strings.Contains(err.Error(), "was not written by tailpath") {
		t.Fatalf("ApplyPersist over a foreign file = %v", err)
	}
	if b, _ := os.ReadFile(plan.Path); string(b) != "net.core.rmem_max = 1\n" {
		t.Fatalf("foreign file changed: %q", b)
	}
	os.Remove(plan.Path)
	rec, err := h.ApplyPersist(context.Background(), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The marker removed by hand: revert leaves the file and says why.
	writeFile(t, plan.Path, "net.core.rmem_max = 16777216\n")
	if err := h.RemovePersisted(context.Background(), rec); err == nil || !strings.Contains(err.Error(), "no longer carries tailpath's marker") {
		t.Fatalf("RemovePersisted of an unmarked file = %v", err)
	}
	if _, err := os.Stat(plan.Path); err != nil {
		t.Fatalf("unmarked file removed: %v", err)
	}
}

// TestPersistDSMCreatesAndRemovesDir: a DSM without /usr/local/etc/rc.d
// gets it, and revert removes what it created and nothing more.
func TestPersistDSMCreatesAndRemovesDir(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "etc.defaults", "VERSION"), "productversion=\"7.1\"\nos_name=\"DSM\"\n")
	os.MkdirAll(filepath.Join(dir, "usr"), 0o755)
	h := AtRoot(dir)
	plan := h.PlanPersist(h.Platform(), persistChanges, []string{"header"})
	rec, err := h.ApplyPersist(context.Background(), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "usr/local/etc/rc.d"), filepath.Join(dir, "usr/local/etc"), filepath.Join(dir, "usr/local")}
	if diff := cmp.Diff(want, rec.CreatedDirs); diff != "" {
		t.Errorf("created dirs (-want +got):\n%s", diff)
	}
	if err := (State{Version: StateVersion, Persist: &rec}).Persist.validate(); err != nil {
		t.Errorf("record does not validate: %v", err)
	}
	if err := h.RemovePersisted(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "usr", "local")); !os.IsNotExist(err) {
		t.Errorf("usr/local survived: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "usr")); err != nil {
		t.Errorf("usr (not ours) removed: %v", err)
	}
}

// fakeMidclt writes an executable named midclt into a temp directory that
// logs its arguments and fails tunable.create for failVar. It stands in
// only for fault cases: a real TrueNAS middleware cannot be run here.
func fakeMidclt(t *testing.T, failVar string) (path, log string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("skipping: the fake midclt is a shell script")
	}
	dir := t.TempDir()
	log = filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
echo "$*" >> ` + log + `
case "$*" in
*tunable.create*'"var":"` + failVar + `"'*) echo "[EEXIST] tunable_create.var: Tunable '` + failVar + `' already exists in database." >&2; exit 1 ;;
*tunable.create*) n=$(wc -l < ` + log + `); v=$(echo "$*" | sed 's/.*"var":"\([^"]*\)".*/\1/'); echo "{\"id\": $n, \"type\": \"SYSCTL\", \"var\": \"$v\", \"value\": \"x\", \"comment\": \"tailpath tune\", \"enabled\": true}" ;;
*tunable.delete*) echo true ;;
*tunable.query*) echo '[{"id": 1, "type": "SYSCTL", "var": "x", "value": "1", "comment": "tailpath tune", "enabled": true}]' ;;
esac
`
	path = filepath.Join(dir, "midclt")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, log
}

// TestPersistMidcltFailureUndoes: when the second tunable.create fails,
// the first tunable is deleted again and nothing is recorded.
func TestPersistMidcltFailureUndoes(t *testing.T) {
	midclt, log := fakeMidclt(t, KeyWmemMax)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data", "freenas-v1.db"), "")
	h := AtRoot(dir)
	h.Midclt = midclt
	plan := h.PlanPersist(h.Platform(), persistChanges, nil)
	if plan.Method != PersistMidclt {
		t.Fatalf("plan %+v", plan)
	}
	rec, err := h.ApplyPersist(context.Background(), plan, nil)
	if !errors.Is(err, ErrNotPersisted) || !strings.Contains(err.Error(), "already exists in database") || len(rec.Tunables) != 0 {
		t.Fatalf("ApplyPersist = %+v, %v", rec, err)
	}
	calls, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `tunable.create {"type":"SYSCTL","var":"net.ipv4.tcp_rmem","value":"4096 131072 16777216","comment":"tailpath tune","enabled":true}`) ||
		!strings.HasPrefix(lines[0], "call -j -jp description ") || lines[2] != "call -j -jp description tunable.delete 1" {
		t.Errorf("midclt calls:\n%s", calls)
	}
}

// TestPersistTrueNASWithoutMidclt: a TrueNAS tree (not this machine) never
// runs midclt from PATH; the plan is the UI and midclt steps.
func TestPersistTrueNASWithoutMidclt(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data", "freenas-v1.db"), "")
	t.Setenv("PATH", filepath.Dir(must(fakeMidclt(t, ""))))
	h := AtRoot(dir)
	plan := h.PlanPersist(h.Platform(), persistChanges, nil)
	if plan.Method != PersistSteps || !strings.Contains(plan.Why, "midclt is not available") {
		t.Fatalf("plan %+v", plan)
	}
	if got := strings.Join(plan.Steps, "\n"); !strings.Contains(got, `midclt call -j tunable.create '{"type":"SYSCTL","var":"net.core.wmem_max","value":"16777216","comment":"tailpath tune","enabled":true}'`) {
		t.Errorf("steps:\n%s", got)
	}
	if _, err := h.ApplyPersist(context.Background(), plan, nil); !errors.Is(err, ErrNotPersisted) {
		t.Errorf("ApplyPersist of steps = %v", err)
	}
}

func must[T any](v T, _ ...any) T { return v }

func TestParseMidcltOutput(t *testing.T) {
	id, err := ParseTunableCreated([]byte("{\"id\": 12, \"type\": \"SYSCTL\", \"var\": \"net.core.rmem_max\", \"value\": \"16777216\", \"comment\": \"tailpath tune\", \"enabled\": true, \"orig_value\": \"212992\"}\n"), KeyRmemMax)
	if err != nil || id != 12 {
		t.Fatalf("ParseTunableCreated = %d, %v", id, err)
	}
	for _, bad := range []string{"Failed to login:  [ENOTAUTHENTICATED]\n", "{\"id\": 0, \"var\": \"net.core.rmem_max\"}", "{\"id\": 3, \"var\": \"other\"}", "{\"id\": \"x\"}", ""} {
		if _, err := ParseTunableCreated([]byte(bad), KeyRmemMax); err == nil {
			t.Errorf("ParseTunableCreated(%q) accepted", bad)
		}
	}
	ts, err := ParseTunables([]byte("[{\"id\": 1, \"comment\": \"tailpath tune\"}, {\"id\": 2, \"comment\": \"\"}]\n"))
	if err != nil || len(ts) != 2 || ts[0].Comment != TunableComment {
		t.Fatalf("ParseTunables = %+v, %v", ts, err)
	}
}

func FuzzParseMidclt(f *testing.F) {
	f.Add([]byte("{\"id\": 12, \"type\": \"SYSCTL\", \"var\": \"net.core.rmem_max\", \"value\": \"1\", \"comment\": \"tailpath tune\", \"enabled\": true}\n"))
	f.Add([]byte("[{\"id\": 1}]"))
	f.Add([]byte("Failed to login: \x1b[31mno\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := ParseTunableCreated(b, KeyRmemMax); err == nil && id <= 0 {
			t.Fatalf("accepted id %d", id)
		} else if err != nil && strings.ContainsRune(err.Error(), 0x1b) {
			t.Fatalf("error carries an escape: %q", err)
		}
		ParseTunables(b)
	})
}

func FuzzIdentityFiles(f *testing.F) {
	f.Add([]byte("majorversion=\"7\"\nproductversion=\"7.1.1\"\nbuildnumber=\"42962\"\nsmallfixnumber=\"6\"\nos_name=\"DSM\"\n"))
	f.Add([]byte("version=\"6.12.10\"\n"))
	f.Add([]byte("[System]\nVersion = 5.1.7\nBuild Number = 20240520\n"))
	f.Add([]byte("DISTRIB_DESCRIPTION='OpenWrt 23.05.3'\nexport X=\"'\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		vars := ParseShellVars(b)
		ParseINISection(b, "System")
		if p, ok := parseDSMVersion(b); ok {
			if p.Kind != PlatformDSM || len([]rune(p.Version)) > 64 || strings.ContainsAny(p.Name, "\x1b\n\r") {
				t.Fatalf("parseDSMVersion = %+v", p)
			}
		}
		for k := range vars {
			if k == "" || strings.ContainsAny(k, " \t\n=") {
				t.Fatalf("bad key %q", k)
			}
		}
	})
}

func FuzzParseMemTotal(f *testing.F) {
	f.Add([]byte("MemTotal:        3902384 kB\nMemFree: 1 kB\n"))
	f.Add([]byte("MemTotal: 9223372036854775807 kB\n"))
	f.Add([]byte("MemTotal:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseMemTotal(b)
		if err == nil && n < 0 {
			t.Fatalf("negative MemTotal %d", n)
		}
	})
}
