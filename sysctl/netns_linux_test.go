package sysctl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tailpath/tailpath/sysctl/internal/netnstest"
)

// perNetns are the keys that belong to each network namespace (Linux ≥ 4.15),
// so writing them in a private namespace leaves the host alone.
var perNetns = []string{KeyTCPRmem, KeyTCPWmem, KeyCongestionControl}

func hostValues(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range append([]string{KeyRmemMax, KeyWmemMax}, perNetns...) {
		v, err := Host{}.ReadRaw(k)
		if err != nil {
			t.Fatalf("reading host %s: %v", k, err)
		}
		out[k] = Normalize(v)
	}
	return out
}

// TestRealKernelNetns applies, verifies and reverts real per-namespace
// sysctls in a private network namespace, injects a failure on the third key,
// tries a read-only /proc/sys, and shows the host's values never changed.
func TestRealKernelNetns(t *testing.T) {
	if netnstest.Scenario() != "" {
		t.Skip("running as a namespace child")
	}
	netnstest.RequireRoot(t)
	before := hostValues(t)
	hostNS := netnstest.NetNSInode(t)
	for _, sc := range []struct {
		name    string
		mountNS bool
		expect  string
	}{
		{"apply-revert", false, "OK apply-revert"},
		{"fault-third-key", false, "OK fault-third-key"},
		{"read-only", true, "OK read-only"},
		{"global-key", false, "OK global-key"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			out := netnstest.Run(t, "TestNetnsChild", sc.name, sc.mountNS)
			if strings.Contains(out, fmt.Sprintf("netns: inode %d\n", hostNS)) {
				t.Fatalf("child ran in the host's network namespace:\n%s", out)
			}
			if !strings.Contains(out, sc.expect) {
				t.Fatalf("child output lacks %q:\n%s", sc.expect, out)
			}
			t.Logf("child:\n%s", grepLines(out, "netns:"))
		})
	}
	if after := hostValues(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("host values changed: before %v, after %v", before, after)
	}
	t.Logf("host values unchanged: %v", before)
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.Index(l, prefix); i >= 0 {
			out = append(out, l[i:])
		}
	}
	return strings.Join(out, "\n")
}

// TestNetnsChild is the body run inside the private namespace.
func TestNetnsChild(t *testing.T) {
	sc := netnstest.Scenario()
	if sc == "" {
		t.Skip("helper for TestRealKernelNetns; runs only in its re-executed child")
	}
	fmt.Printf("netns: inode %d\n", netnstest.NetNSInode(t))
	var h Host
	cur, err := h.Read()
	if err != nil {
		t.Fatal(err)
	}
	// Pick values that certainly differ from the namespace's current ones.
	rmem := Triple{4096, 131072, cur.TCPRmem.Max + 1<<20}
	wmem := Triple{4096, 65536, cur.TCPWmem.Max + 2<<20}
	cc := "reno"
	if cur.CongestionControl == "reno" {
		cc = "cubic"
	}
	if !cur.HasCC(cc) {
		t.Fatalf("%s not available: %v", cc, cur.AvailableCC)
	}
	changes := []Change{
		{Key: KeyTCPRmem, New: rmem.String()},
		{Key: KeyTCPWmem, New: wmem.String()},
		{Key: KeyCongestionControl, New: cc},
	}
	fmt.Printf("netns: %s: before rmem=%q wmem=%q cc=%q\n", sc, cur.Raw[KeyTCPRmem], cur.Raw[KeyTCPWmem], cur.CongestionControl)
	switch sc {
	case "apply-revert":
		state := filepath.Join(t.TempDir(), "tune-state.json")
		res, err := ApplyRecorded(h, changes, CCChecker(cur, nil), state)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Written) != 3 {
			t.Fatalf("written %d keys, want 3: %+v", len(res.Written), res)
		}
		got, _ := h.Read()
		if got.TCPRmem != rmem || got.TCPWmem != wmem || got.CongestionControl != cc {
			t.Fatalf("after apply read %v %v %q, want %v %v %q", got.TCPRmem, got.TCPWmem, got.CongestionControl, rmem, wmem, cc)
		}
		fmt.Printf("netns: applied:\nnetns: %s\n", strings.ReplaceAll(strings.TrimSpace(res.Report()), "\n", "\nnetns: "))
		if _, err := Revert(h, state); err != nil {
			t.Fatal(err)
		}
		back, _ := h.Read()
		for _, k := range perNetns {
			if !SameValue(back.Raw[k], cur.Raw[k]) {
				t.Fatalf("after revert %s = %q, want %q", k, back.Raw[k], cur.Raw[k])
			}
		}
		fmt.Printf("netns: reverted to rmem=%q wmem=%q cc=%q\n", back.Raw[KeyTCPRmem], back.Raw[KeyTCPWmem], back.CongestionControl)
	case "fault-third-key":
		fw := &faultWriter{Writer: h, failKey: KeyCongestionControl, err: fmt.Errorf("injected fault: %w", syscall.EIO)}
		res, err := Apply(fw, changes, CCChecker(cur, nil))
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("Apply = %v, want the injected EIO", err)
		}
		if len(res.RolledBack) != 2 || res.Failed.Key != KeyCongestionControl {
			t.Fatalf("result %+v: want 2 keys rolled back after the third failed", res)
		}
		back, _ := h.Read()
		for _, k := range perNetns {
			if !SameValue(back.Raw[k], cur.Raw[k]) {
				t.Fatalf("after rollback %s = %q, want %q", k, back.Raw[k], cur.Raw[k])
			}
		}
		fmt.Printf("netns: %s\n", strings.ReplaceAll(strings.TrimSpace(res.Report()), "\n", "\nnetns: "))
	case "read-only":
		// Private mount propagation, then a read-only bind of /proc/sys.
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			t.Fatalf("make / private: %v", err)
		}
		if err := syscall.Mount("/proc/sys", "/proc/sys", "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			t.Fatalf("bind /proc/sys: %v", err)
		}
		if err := syscall.Mount("", "/proc/sys", "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			t.Fatalf("remount /proc/sys read-only: %v", err)
		}
		_, err := Apply(h, changes, CCChecker(cur, nil))
		if !errors.Is(err, ErrReadOnly) {
			t.Fatalf("Apply on read-only /proc/sys = %v, want ErrReadOnly", err)
		}
		back, _ := h.Read()
		for _, k := range perNetns {
			if !SameValue(back.Raw[k], cur.Raw[k]) {
				t.Fatalf("read-only: %s changed to %q", k, back.Raw[k])
			}
		}
		fmt.Printf("netns: read-only: %v\n", err)
	case "global-key":
		// net.core.rmem_max is global: a child namespace sees it read-only
		// (or not at all on older kernels). The real kernel's refusal must
		// roll back the per-namespace key written before it.
		mixed := []Change{{Key: KeyTCPWmem, New: wmem.String()}, {Key: KeyRmemMax, New: itoa64(cur.RmemMax + 1)}}
		res, err := Apply(h, mixed, CCChecker(cur, nil))
		if err == nil {
			t.Fatalf("writing a global key from a child namespace succeeded: %+v", res)
		}
		back, _ := h.Read()
		if !SameValue(back.Raw[KeyTCPWmem], cur.Raw[KeyTCPWmem]) {
			t.Fatalf("tcp_wmem left at %q after the failure", back.Raw[KeyTCPWmem])
		}
		fmt.Printf("netns: %s\n", strings.ReplaceAll(strings.TrimSpace(res.Report()), "\n", "\nnetns: "))
		fmt.Printf("netns: error: %v\n", err)
	default:
		t.Fatalf("unknown scenario %q", sc)
	}
	fmt.Printf("OK %s\n", sc)
	_ = os.Stdout.Sync()
}
