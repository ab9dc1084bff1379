package sysctl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// faultWriter wraps a Writer and fails the write of failKey (once) with err,
// or, with corrupt set, writes a different value so read-back catches it.
type faultWriter struct {
	Writer
	failKey string
	err     error
	corrupt bool
	writes  []string // "key=value" in order, including rollback writes
}

func (f *faultWriter) WriteRaw(key, value string) error {
	f.writes = append(f.writes, key+"="+Normalize(value))
	if key == f.failKey {
		f.failKey = ""
		if f.corrupt {
			return f.Writer.WriteRaw(key, "1 2 3")
		}
		return f.err
	}
	return f.Writer.WriteRaw(key, value)
}

// snapshot returns every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		// Compare meaning: the kernel prints tabs where people write spaces.
		out[strings.TrimPrefix(p, dir)] = Normalize(string(b))
		return nil
	})
	return out
}

var nasChanges = []Change{
	{Key: KeyTCPRmem, New: "4096 131072 50000000"},
	{Key: KeyTCPWmem, New: "4096 131072 50000000"},
	{Key: KeyCongestionControl, New: "bbr"},
	{Key: KeyRmemMax, New: "50000000"},
}

func anyCC(string) bool { return true }

func TestApplyFakeTree(t *testing.T) {
	h, _ := fakeHost(t, modernKeys, 0)
	res, err := Apply(h, nasChanges, CCChecker(mustRead(t, h), nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Written) != 4 || res.Failed != nil {
		t.Fatalf("result %+v, want 4 written", res)
	}
	got := mustRead(t, h)
	if got.TCPRmem != (Triple{4096, 131072, 50000000}) || got.CongestionControl != "bbr" || got.RmemMax != 50000000 {
		t.Fatalf("after Apply: %+v", got)
	}
	if res.Written[0].Old != "4096\t131072\t6291456" { // exactly as the kernel printed it
		t.Errorf("Written[0].Old = %q, want the previous value", res.Written[0].Old)
	}
}

func mustRead(t *testing.T, h Host) Settings {
	t.Helper()
	s, err := h.Read()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestApplyRollsBackOnThirdKey(t *testing.T) {
	for _, corrupt := range []bool{false, true} {
		t.Run(fmt.Sprintf("corrupt=%v", corrupt), func(t *testing.T) {
			h, dir := fakeHost(t, modernKeys, 0)
			before := snapshot(t, dir)
			fw := &faultWriter{Writer: h, failKey: KeyCongestionControl, err: fmt.Errorf("injected: %w", fs.ErrPermission), corrupt: corrupt}
			res, err := Apply(fw, nasChanges, anyCC)
			if err == nil {
				t.Fatal("Apply succeeded despite the injected failure")
			}
			if !corrupt && !errors.Is(err, os.ErrPermission) {
				t.Errorf("error %v does not wrap the injected cause", err)
			}
			if res.Failed == nil || res.Failed.Key != KeyCongestionControl {
				t.Fatalf("Failed = %+v, want the third key", res.Failed)
			}
			var rolled []string
			for _, c := range res.RolledBack {
				rolled = append(rolled, c.Key)
			}
			wantRolled := []string{KeyTCPWmem, KeyTCPRmem}
			if corrupt {
				// The bad value did land: it is put back first.
				wantRolled = append([]string{KeyCongestionControl}, wantRolled...)
			}
			if diff := cmp.Diff(wantRolled, rolled); diff != "" {
				t.Errorf("rolled back (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("tree after rollback (-before +after):\n%s", diff)
			}
			if !strings.Contains(res.Report(), "nothing changed: every key written was restored") {
				t.Errorf("report:\n%s", res.Report())
			}
			for _, w := range fw.writes {
				if strings.HasPrefix(w, KeyRmemMax) {
					t.Errorf("the fourth key was written after the failure: %v", fw.writes)
				}
			}
		})
	}
}

func TestApplyBadInputWritesNothing(t *testing.T) {
	h, dir := fakeHost(t, modernKeys, 0)
	ccAvailable := CCChecker(Settings{AvailableCC: []string{"reno", "cubic"}}, &BBRStatus{State: BBRImpossible})
	tests := []struct {
		name    string
		changes []Change
		want    error
		msg     string
	}{
		{"invalid triple", []Change{{Key: KeyTCPRmem, New: "4096 131072"}}, ErrInvalid, "want three byte counts"},
		{"min > max", []Change{{Key: KeyTCPRmem, New: "4096 131072 6291456"}, {Key: KeyTCPWmem, New: "65536 16384 4096"}}, ErrInvalid, "min ≤ default ≤ max"},
		{"unknown congestion control", []Change{{Key: KeyTCPRmem, New: "4096 131072 6291456"}, {Key: KeyCongestionControl, New: "bbr3"}}, ErrInvalid, `congestion control "bbr3" is not available`},
		{"bbr when impossible", []Change{{Key: KeyCongestionControl, New: "bbr"}}, ErrInvalid, "not available on this kernel"},
		{"non-numeric", []Change{{Key: KeyRmemMax, New: "lots"}}, ErrInvalid, `"lots" is not a whole number`},
		{"unmanaged key", []Change{{Key: "kernel.panic", New: "1"}}, ErrBadKey, "not a key tailpath tune manages"},
		{"twice", []Change{{Key: KeyRmemMax, New: "1"}, {Key: KeyRmemMax, New: "2"}}, ErrInvalid, "appears twice"},
		{"bad qdisc", []Change{{Key: KeyDefaultQdisc, New: "fast"}}, ErrInvalid, "unknown qdisc"},
	}
	before := snapshot(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw := &faultWriter{Writer: h}
			_, err := Apply(fw, tt.changes, ccAvailable)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), "nothing written") {
				t.Fatalf("Apply = %v; want %v saying %q and \"nothing written\"", err, tt.want, tt.msg)
			}
			if len(fw.writes) != 0 {
				t.Fatalf("writes happened: %v", fw.writes)
			}
		})
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("tree changed (-before +after):\n%s", diff)
	}
}

func TestApplyRecordedRevert(t *testing.T) {
	h, dir := fakeHost(t, modernKeys, 0)
	before := snapshot(t, dir)
	state := filepath.Join(t.TempDir(), "state", "tune-state.json")
	if _, err := ApplyRecorded(h, nasChanges[:2], anyCC, state); err != nil {
		t.Fatal(err)
	}
	// A second apply changes a recorded key again and adds one: the original
	// value must survive.
	second := []Change{{Key: KeyTCPRmem, New: "4096 131072 60000000"}, {Key: KeyWmemMax, New: "60000000"}}
	if _, err := ApplyRecorded(h, second, anyCC, state); err != nil {
		t.Fatal(err)
	}
	st, err := LoadState(state)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Key: KeyTCPRmem, Old: "4096\t131072\t6291456", New: "4096 131072 60000000"}, // as the kernel printed it
		{Key: KeyTCPWmem, Old: "4096\t16384\t4194304", New: "4096 131072 50000000"},
		{Key: KeyWmemMax, Old: "212992", New: "60000000"},
	}
	if diff := cmp.Diff(want, st.Keys); diff != "" {
		t.Errorf("state keys (-want +got):\n%s", diff)
	}
	plan := h.PlanPersist(Platform{Kind: PlatformSystemd, Name: "test"}, st.Keys, []string{"test"})
	rec, err := h.ApplyPersist(context.Background(), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := plan.Path
	st.Persist = &rec
	if err := SaveState(state, st); err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(p)
	if !strings.Contains(string(conf), "net.ipv4.tcp_rmem = 4096 131072 60000000\n") {
		t.Errorf("persisted file:\n%s", conf)
	}
	if _, err := Revert(h, state); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("persisted file still there after revert: %v", err)
	}
	if _, err := os.Stat(state); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file still there after revert: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "etc")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the etc/sysctl.d tailpath created survived revert: %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("tree after revert (-before +after):\n%s", diff)
	}
	if _, err := Revert(h, state); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "nothing to revert") {
		t.Errorf("second Revert = %v, want nothing to revert", err)
	}
}

func TestApplyRecordedFailureRestoresStateFile(t *testing.T) {
	h, _ := fakeHost(t, modernKeys, 0)
	state := filepath.Join(t.TempDir(), "tune-state.json")
	fw := &faultWriter{Writer: h, failKey: KeyCongestionControl, err: errors.New("injected")}
	if _, err := ApplyRecorded(fw, nasChanges, anyCC, state); err == nil {
		t.Fatal("want failure")
	}
	if _, err := os.Stat(state); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file left behind after a fully rolled-back apply: %v", err)
	}
}

func TestCorruptStateWritesNothing(t *testing.T) {
	for name, content := range map[string]string{
		"not json":      "{{{",
		"wrong version": `{"version": 7, "keys": []}`,
		"unknown field": `{"version": 1, "keys": [], "extra": 1}`,
		"unmanaged key": `{"version": 1, "keys": [{"key": "kernel.panic", "old": "1", "new": "0"}]}`,
		"bad old value": `{"version": 1, "keys": [{"key": "net.core.rmem_max", "old": "lots", "new": "1"}]}`,
		"empty old":     `{"version": 1, "keys": [{"key": "net.core.rmem_max", "old": "", "new": "1"}]}`,
		"trailing":      `{"version": 1, "keys": []} {}`,
		"odd persisted": `{"version": 1, "keys": [], "persisted": "/etc/passwd"}`,
		"truncated":     `{"version": 1, "keys": [{"key": "net.core.rmem_max", "old": "212992"`,
	} {
		t.Run(name, func(t *testing.T) {
			h, dir := fakeHost(t, modernKeys, 0)
			before := snapshot(t, dir)
			state := filepath.Join(t.TempDir(), "tune-state.json")
			writeFile(t, state, content)
			fw := &faultWriter{Writer: h}
			if _, err := Revert(fw, state); !errors.Is(err, ErrCorruptState) {
				t.Errorf("Revert = %v, want ErrCorruptState", err)
			}
			if _, err := ApplyRecorded(fw, nasChanges, anyCC, state); !errors.Is(err, ErrCorruptState) || !strings.Contains(err.Error(), "nothing written") {
				t.Errorf("ApplyRecorded = %v, want ErrCorruptState, nothing written", err)
			}
			if len(fw.writes) != 0 {
				t.Errorf("writes happened: %v", fw.writes)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("tree changed (-before +after):\n%s", diff)
			}
			if b, _ := os.ReadFile(state); string(b) != content {
				t.Errorf("corrupt state file was rewritten: %q", b)
			}
		})
	}
}

func TestWriteMissingKeyInFakeTreeDoesNotCreate(t *testing.T) {
	h, _ := fakeHost(t, copyKeys(modernKeys, map[string]string{KeyNotsentLowat: ""}), 0)
	if err := h.WriteRaw(KeyNotsentLowat, "16384"); !errors.Is(err, ErrNoKey) {
		t.Fatalf("WriteRaw missing key = %v, want ErrNoKey", err)
	}
	if _, err := h.ReadRaw(KeyNotsentLowat); !errors.Is(err, ErrNoKey) {
		t.Fatalf("key was created: %v", err)
	}
}

func TestNeedRootError(t *testing.T) {
	err := NeedRootError([]string{"tailpath", "tune", "--bandwidth", "400Mbit", "--rtt", "20ms", "--apply"})
	if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), "sudo tailpath tune --bandwidth 400Mbit --rtt 20ms --apply") {
		t.Fatalf("NeedRootError = %v", err)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"400Mbit": "400Mbit", "a b": "'a b'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// Apply is ApplyRecorded without the revert record: the tests' way to
// write changes through the same validation and rollback.
// Apply validates every change, re-reads each key's current value, then
// writes the keys in order, reading each back to verify. On the first
// failure it restores every key already written (in reverse order) and
// returns an error wrapping the cause (os.ErrPermission, ErrReadOnly,
// ErrNoKey, ErrInvalid…); the result says exactly what happened. Changes
// whose current value already equals New are skipped.
func Apply(w Writer, changes []Change, ccAvailable func(string) bool) (ApplyResult, error) {
	var res ApplyResult
	if err := Validate(changes, ccAvailable); err != nil {
		return res, fmt.Errorf("nothing written: %w", err)
	}
	return applyCore(w, changes)
}
