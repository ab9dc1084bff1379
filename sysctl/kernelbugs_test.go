package sysctl

import (
	"fmt"
	"strings"
	"testing"
)

// TestMatchKernel: each affected series' first and last affected release
// hits; the releases just outside do not; a vendor suffix is read through
// (and said); Debian's ABI release is read by kernel.version; a vendor
// known to carry the fix does not hit.
func TestMatchKernel(t *testing.T) {
	virtio := "virtio-net-hdr-gso-einval"
	tests := []struct {
		release, version string
		want             string // hit ids, sure ones plain, unsure ones with "?"
	}{
		{"6.1.102", "", ""},
		{"6.1.103-Unraid", "", virtio},
		{"6.1.106", "", virtio},
		{"6.1.107", "", ""},
		{"5.15.164", "", ""},
		{"5.15.165", "", virtio},
		{"5.15.167", "", ""},
		{"6.6.44-production+truenas", "", ""}, // TrueNAS backported the fix
		{"6.6.44", "", virtio},
		{"6.6.45-arch1-1", "", virtio},
		{"6.6.46", "", ""},
		{"6.10.3", "", virtio},
		{"6.10.5", "", ""},
		{"6.11", "", ""},
		{"5.10.224", "", ""}, // 5.10 got no backport of the culprit
		{"6.6.57", "", "xtables-ipv6-mark"},
		{"6.6.58", "", "xtables-ipv6-mark"},
		{"6.6.59", "", ""},
		{"6.11.5", "", "xtables-ipv6-mark"},
		{"6.1.0-23-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.99-1 (2024-07-15)", ""},
		{"6.1.0-24-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.106-3 (2024-08-26)", virtio},
		{"6.1.0-24-amd64", "#1 SMP PREEMPT_DYNAMIC", virtio + "?"},
		{"6.8.0-45-generic", "#45-Ubuntu SMP PREEMPT_DYNAMIC", ""},
		{"garbage", "", ""},
	}
	for _, tt := range tests {
		var got []string
		for _, h := range MatchKernel(tt.release, tt.version, KernelBugs) {
			id := h.Bug.ID
			if !h.Sure {
				id += "?"
			}
			got = append(got, id)
			if h.Why == "" {
				t.Errorf("%s: hit %s without its why", tt.release, id)
			}
		}
		if g := strings.Join(got, ","); g != tt.want {
			t.Errorf("MatchKernel(%q, %q) = %q, want %q", tt.release, tt.version, g, tt.want)
		}
	}
}

// TestKernelBugsTable: every entry has every field, windows that are
// windows, and a fixed-in release for each window's series.
func TestKernelBugsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range KernelBugs {
		if b.ID == "" || seen[b.ID] || b.Symptom == "" || b.Upstream == "" || b.Workaround == "" || !strings.HasPrefix(b.Source, "https://") || len(b.Ranges) == 0 {
			t.Errorf("entry %+v: a field is missing or the id repeats", b)
		}
		seen[b.ID] = true
		for _, r := range b.Ranges {
			if r.Fixed != 0 && r.Fixed <= r.From {
				t.Errorf("%s: window %s is empty", b.ID, r)
			}
			fixed := false
			for _, f := range b.FixedIn {
				fixed = fixed || f == fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Fixed)
			}
			if r.Fixed != 0 && !fixed {
				t.Errorf("%s: window %s has no fixed-in release listed (FixedIn %v)", b.ID, r, b.FixedIn)
			}
		}
	}
}

func FuzzMatchKernel(f *testing.F) {
	f.Add("6.1.103-Unraid", "")
	f.Add("6.1.0-24-amd64", "#1 SMP Debian 6.1.106-3")
	f.Add("6..", "Debian 6.1.")
	f.Fuzz(func(t *testing.T, release, version string) {
		for _, h := range MatchKernel(release, version, KernelBugs) {
			if h.Bug.ID == "" || h.Why == "" {
				t.Fatalf("hit without id or why: %+v", h)
			}
		}
	})
}

// TestBBRAdviceNamesOnlyPackageManagersThere: the BBR advice for an
// appliance never names a package manager the system does not have, and
// never tells a Debian-based firmware to install a kernel package.
func TestBBRAdviceNamesOnlyPackageManagersThere(t *testing.T) {
	managers := []string{"apt", "opkg", "apk ", "yum", "dnf", "pacman", "zypper"}
	has := map[PlatformKind][]string{
		PlatformOpenWrt: {"opkg", "apk "},
		PlatformUniFi:   {"apt"},
		PlatformEdgeOS:  {"apt"},
		PlatformHAOS:    nil,
		PlatformDSM:     nil,
		PlatformQNAP:    nil,
		PlatformUnraid:  nil,
		PlatformTrueNAS: {"apt"},
	}
	for kind, allowed := range has {
		for _, advice := range []string{noModuleAdvice(Platform{Kind: kind}), oldKernelAdvice(Platform{Kind: kind})} {
			for _, m := range managers {
				ok := false
				for _, a := range allowed {
					ok = ok || a == m
				}
				if !ok && strings.Contains(advice, m) {
					t.Errorf("%s: advice names %q, which it does not have: %s", kind, strings.TrimSpace(m), advice)
				}
			}
			if kind != PlatformOpenWrt && strings.Contains(advice, "install") && kind != PlatformOMV {
				t.Errorf("%s: advice says install: %s", kind, advice)
			}
			if (kind == PlatformUniFi || kind == PlatformEdgeOS || kind == PlatformHAOS) && !strings.Contains(advice, "only a") {
				t.Errorf("%s: advice does not say only the appliance's own update brings another kernel: %s", kind, advice)
			}
		}
	}
}
