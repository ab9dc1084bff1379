package sysctl

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Known Linux kernel regressions that hurt Tailscale, with the same fields
// as the Tailscale client known-bug table in package probes: release
// range, symptom, upstream issue, fixed-in versions, workaround, source.
// A hit outranks any buffer advice: no sysctl fixes a kernel that rejects
// or mangles Tailscale's packets. docs/tuning.md says how to add an entry.

// KernelRange is one stable series' affected window: From ≤ patch < Fixed
// in major.minor (Fixed 0: no fixed release known in this series).
type KernelRange struct {
	Major, Minor int
	From, Fixed  int
}

// String renders the window as releases: "6.1.103–6.1.106".
func (r KernelRange) String() string {
	s := fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.From)
	if r.Fixed == 0 {
		return s + " and later"
	}
	if r.Fixed-1 == r.From {
		return s
	}
	return fmt.Sprintf("%s–%d.%d.%d", s, r.Major, r.Minor, r.Fixed-1)
}

// KernelBug is one known kernel regression.
type KernelBug struct {
	// ID is stable ("virtio-net-hdr-gso-einval").
	ID string `json:"id"`
	// Ranges are the affected stable windows, every series listed.
	Ranges []KernelRange `json:"ranges"`
	// Symptom is what a Tailscale node shows.
	Symptom string `json:"symptom"`
	// Upstream names the kernel commits that broke and fixed it.
	Upstream string `json:"upstream"`
	// FixedIn lists the first fixed release of each affected series.
	FixedIn []string `json:"fixed_in"`
	// ClientFix is the first Tailscale release that works around it
	// ("1.74.0"); "" when none does.
	ClientFix string `json:"client_fix,omitempty"`
	// Workaround is what to do until the kernel is fixed.
	Workaround string `json:"workaround"`
	// Source is the thread or record the ranges come from.
	Source string `json:"source"`
	// VendorFixed are vendor kernels inside a range that carry the fix
	// (a release containing Marker), with the evidence.
	VendorFixed []VendorFix `json:"vendor_fixed,omitempty"`
}

// VendorFix is a vendor kernel that carries a fix its stable version
// number does not show.
type VendorFix struct {
	// Marker is a substring of the release ("+truenas").
	Marker string `json:"marker"`
	// Why cites the vendor's backport.
	Why string `json:"why"`
}

// Releases renders the affected windows ("6.1.103–6.1.106, 6.6.44–6.6.45").
func (b KernelBug) Releases() string {
	parts := make([]string, len(b.Ranges))
	for i, r := range b.Ranges {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// KernelBugs is the table, in the order hits are reported.
var KernelBugs = []KernelBug{
	{
		ID: "virtio-net-hdr-gso-einval",
		// CVE-2024-43897 (the fix's record) lists the windows exactly;
		// e269d79c7d35 was backported to 5.15.165, 6.1.103, 6.6.44 and
		// 6.10.3 (CVE-2024-43817); 5.10 and older got no backport.
		Ranges: []KernelRange{
			{5, 15, 165, 167},
			{6, 1, 103, 107},
			{6, 6, 44, 46},
			{6, 10, 3, 5},
		},
		Symptom:    "the kernel rejects tailscaled's GRO-coalesced TUN writes with EINVAL (tailscaled logs \"wg: Failed to write packets to TUN device: write /dev/net/tun: invalid argument\"), so tailnet TCP crawls at one or two segments at a time on a path that looks healthy",
		Upstream:   "e269d79c7d35 \"net: missing check virtio\" broke virtio_net_hdr_to_skb(); 89add40066f9 \"net: drop bad gso csum_start and offset in virtio_net_hdr\" fixed it (tailscale/tailscale#13041)",
		FixedIn:    []string{"5.15.167", "6.1.107", "6.6.46", "6.10.5", "6.11"},
		ClientFix:  "1.74.0",
		Workaround: "Tailscale 1.74.0 or later (1.73.101 unstable) probes TCP GRO at start and turns TUN GRO off when the kernel refuses it (net/tstun: \"probe TCP GRO\", 7aa766ee6); or a kernel outside the range",
		Source:     "https://github.com/tailscale/tailscale/issues/13041",
		VendorFixed: []VendorFix{{
			Marker: "+truenas",
			Why:    "TrueNAS cherry-picked 89add40066f9 into its 24.10 kernel (truenas/linux#192, NAS-130945)",
		}},
	},
	{
		ID: "xtables-ipv6-mark",
		// CVE-2024-50038 lists where 0bfcb7b71e73 landed (6.6.57, 6.11.4,
		// also 5.15.168 and 6.1.113); tailscale/tailscale#13863's title
		// names 6.6.57–58 and 6.11.4–5; the fix 306ed1728e84 is in 6.6.59
		// and 6.11.6. The 5.15 and 6.1 windows' ends are not confirmed
		// here, so they are left out rather than guessed.
		Ranges: []KernelRange{
			{6, 6, 57, 59},
			{6, 11, 4, 6},
		},
		Symptom:    "ip6tables' MARK target does not load for IPv6, so tailscaled cannot add its ts-forward rule (health: \"adding [-i tailscale0 -j MARK --set-mark 0x40000/0xff0000] in v6/filter/ts-forward\"): subnet routing, exit-node forwarding and MagicDNS break",
		Upstream:   "0bfcb7b71e73 \"netfilter: xtables: avoid NFPROTO_UNSPEC where needed\" broke it; 306ed1728e84 \"netfilter: xtables: fix typo causing some targets not to load on IPv6\" fixed it (tailscale/tailscale#13863)",
		FixedIn:    []string{"6.6.59", "6.11.6", "6.12"},
		Workaround: "a kernel outside the range, or TS_DEBUG_FIREWALL_MODE=nftables for tailscaled (nftables needs no xtables MARK target)",
		Source:     "https://github.com/tailscale/tailscale/issues/13863",
	},
}

// KernelRelease is a kernel release string as the matcher reads it.
type KernelRelease struct {
	Major, Minor, Patch int
	// PatchKnown is false when the release does not say its upstream
	// patch level (Debian's "6.1.0-23-amd64", Ubuntu's
	// "6.8.0-45-generic": their 0 is an ABI, not the stable release).
	PatchKnown bool
	// From names where the patch level came from ("kernel.osrelease",
	// "kernel.version").
	From string
}

// distroABI matches the Debian and Ubuntu style "X.Y.0-N-flavour", whose
// 0 is no stable patch level.
var distroABI = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+\.\d+\.0-\d+`) })

// upstreamInVersion finds the upstream release a distribution prints in
// kernel.version ("#1 SMP PREEMPT_DYNAMIC Debian 6.1.106-3 (2024-08-26)").
var upstreamInVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:Debian|Ubuntu|PVE|pve) (\d+)\.(\d+)\.(\d+)`) })

// ParseKernelRelease reads a kernel release ("6.1.103-Unraid",
// "5.15.165+", "6.1.0-23-amd64"), with kernel.version for distributions
// that keep the stable level there; ok is false when release does not
// start with N.N.
func ParseKernelRelease(release, version string) (KernelRelease, bool) {
	ma, mi, ok := ParseKernelVersion(release)
	if !ok {
		return KernelRelease{}, false
	}
	r := KernelRelease{Major: ma, Minor: mi}
	parts := strings.SplitN(release, ".", 3)
	if len(parts) == 3 {
		i := 0
		for i < len(parts[2]) && parts[2][i] >= '0' && parts[2][i] <= '9' {
			i++
		}
		if n, err := strconv.Atoi(parts[2][:i]); err == nil && i > 0 {
			r.Patch, r.PatchKnown, r.From = n, true, KernelKeyRelease
		}
	} else {
		r.PatchKnown, r.From = true, KernelKeyRelease // "6.11": the .0 release
	}
	if distroABI().MatchString(release) {
		r.PatchKnown, r.From = false, ""
		if m := upstreamInVersion().FindStringSubmatch(version); m != nil {
			vma, _ := strconv.Atoi(m[1])
			vmi, _ := strconv.Atoi(m[2])
			vp, _ := strconv.Atoi(m[3])
			if vma == ma && vmi == mi {
				r.Patch, r.PatchKnown, r.From = vp, true, KernelKeyVersion
			}
		}
	}
	return r, true
}

// The sysctl keys the kernel matcher reads.
const (
	KernelKeyRelease = KeyOSRelease
	KernelKeyVersion = "kernel.version"
)

// KernelHit is one table entry matched against a release.
type KernelHit struct {
	Bug KernelBug `json:"bug"`
	// Sure is true when the release is inside a window; false when the
	// series is affected but the release does not say its patch level.
	Sure bool `json:"sure"`
	// Why says what matched ("6.1.103 is in 6.1.103–6.1.106", or what is
	// not known).
	Why string `json:"why"`
}

// MatchKernel returns the table's entries that affect release (with
// kernel.version for distributions that keep the stable level there):
// sure hits, and entries whose series matches a release that does not
// say its patch level (Sure false). Pure.
func MatchKernel(release, version string, table []KernelBug) []KernelHit {
	r, ok := ParseKernelRelease(release, version)
	if !ok {
		return nil
	}
	var hits []KernelHit
	for _, b := range table {
		if vendorFixed(release, b) {
			continue
		}
		for _, w := range b.Ranges {
			if w.Major != r.Major || w.Minor != r.Minor {
				continue
			}
			switch {
			case !r.PatchKnown:
				hits = append(hits, KernelHit{Bug: b, Why: fmt.Sprintf("kernel %s does not say its stable patch level, and %s was affected in %s (uname -v may name it)", release, b.ID, w)})
			case r.Patch >= w.From && (w.Fixed == 0 || r.Patch < w.Fixed):
				why := fmt.Sprintf("%d.%d.%d is in %s", r.Major, r.Minor, r.Patch, w)
				if r.From == KernelKeyVersion {
					why += " (the stable release from kernel.version)"
				} else if vendor := vendorSuffix(release); vendor != "" {
					why += " (a vendor kernel, " + vendor + ", could carry the fix without its version saying so)"
				}
				hits = append(hits, KernelHit{Bug: b, Sure: true, Why: why})
			}
		}
	}
	return hits
}

// vendorFixed reports whether release is a vendor kernel known to carry
// b's fix.
func vendorFixed(release string, b KernelBug) bool {
	for _, v := range b.VendorFixed {
		if v.Marker != "" && strings.Contains(release, v.Marker) {
			return true
		}
	}
	return false
}

// vendorSuffix is what follows a release's N.N.N ("-Unraid" in
// "6.1.103-Unraid"); "" for a plain release.
func vendorSuffix(release string) string {
	i, dots := 0, 0
	for i < len(release) && (release[i] >= '0' && release[i] <= '9' || release[i] == '.' && dots < 2) {
		if release[i] == '.' {
			dots++
		}
		i++
	}
	return strings.TrimLeft(release[i:], "-+_")
}
