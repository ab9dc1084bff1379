// Package sysctltest is test support for the tuning packages' tests: a
// writable copy of a host's tuning keys in a directory (NewSandbox), which
// sysctl, tune and the Tuning pane read and write as they would the
// machine's, so a test can apply and revert without touching it.
package sysctltest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tailpath/tailpath/sysctl"
)

// SampleKeys is the tree a sandbox gets when the real /proc cannot be read
// (not Linux): stock Linux 6.1 defaults on a 4 GiB machine, BBR built in.
var SampleKeys = map[string]string{
	sysctl.KeyTCPRmem:            "4096\t131072\t6291456",
	sysctl.KeyTCPWmem:            "4096\t16384\t4194304",
	sysctl.KeyRmemMax:            "212992",
	sysctl.KeyWmemMax:            "212992",
	sysctl.KeyCongestionControl:  "cubic",
	sysctl.KeyAvailableCC:        "reno cubic bbr",
	sysctl.KeyDefaultQdisc:       "fq_codel",
	sysctl.KeyMTUProbing:         "0",
	sysctl.KeySlowStartAfterIdle: "1",
	sysctl.KeyNotsentLowat:       "4294967295",
	sysctl.KeyTCPMem:             "46509\t62012\t93018",
	sysctl.KeyOSRelease:          "6.1.0-sample",
}

// sandboxExtra are files copied besides the sysctls.
var sandboxExtra = []string{"meminfo", "modules"}

// NewSandbox builds a writable copy of from's tuning keys under dir (dir
// becomes "/": dir/proc/sys/…, dir/proc/meminfo, dir/etc/sysctl.d, and
// the files that identify the platform, so --persist writes where that
// system would) and returns a Host rooted there (sysctl.AtRoot). Keys the
// source lacks are left out, as on the source. When from's /proc/sys
// cannot be read at all, SampleKeys are used and sample is true.
func NewSandbox(dir string, from sysctl.Host) (h sysctl.Host, sample bool, err error) {
	h = sysctl.AtRoot(dir)
	keys := map[string]string{}
	for _, k := range append(slices.Clone(sysctl.Keys), sysctl.KeyOSRelease) {
		if v, err := from.ReadRaw(k); err == nil {
			keys[k] = v
		}
	}
	if len(keys) == 0 {
		keys, sample = SampleKeys, true
	}
	for k, v := range keys {
		p := filepath.Join(h.SysRoot(), strings.ReplaceAll(k, ".", string(filepath.Separator)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return h, sample, fmt.Errorf("sandbox: %w", err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			return h, sample, fmt.Errorf("sandbox: %w", err)
		}
	}
	fromProc := from.Proc
	if fromProc == "" {
		fromProc = "/proc"
	}
	for _, f := range sandboxExtra {
		b, err := os.ReadFile(filepath.Join(fromProc, f))
		if err != nil {
			if f == "meminfo" {
				b = []byte("MemTotal:        4030000 kB\n")
			} else {
				continue
			}
		}
		if err := os.WriteFile(filepath.Join(h.Proc, f), b, 0o644); err != nil {
			return h, sample, fmt.Errorf("sandbox: %w", err)
		}
	}
	if err := os.MkdirAll(h.SysctlDir, 0o755); err != nil {
		return h, sample, fmt.Errorf("sandbox: %w", err)
	}
	if err := copyIdentity(h, from, sample); err != nil {
		return h, sample, fmt.Errorf("sandbox: %w", err)
	}
	return h, sample, nil
}

// identityFiles are copied into a sandbox so it is detected as the same
// platform as its source (sysctl.Host.Platform; --persist there writes
// where that platform would); identityMarkers only need to exist, so they
// are created empty.
var (
	identityFiles   = []string{"/etc.defaults/VERSION", "/etc/unraid-version", "/etc/version", "/etc/config/uLinux.conf", "/etc/openwrt_release", "/etc/os-release", "/boot/config/go"}
	identityMarkers = []string{"/data/freenas-v1.db", "/usr/bin/midclt"}
	identityDirs    = []string{"/etc/openmediavault", "/run/systemd/system", "/usr/local/etc/rc.d"}
)

// copyIdentity copies from's identity files into h's root. A sample
// sandbox (from unreadable) is made a plain systemd Linux.
func copyIdentity(h, from sysctl.Host, sample bool) error {
	if sample {
		return os.MkdirAll(h.At("/run/systemd/system"), 0o755)
	}
	for _, p := range identityFiles {
		b, err := from.ReadIdentity(p)
		if err != nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(h.At(p)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(h.At(p), b, 0o644); err != nil {
			return err
		}
	}
	for _, p := range identityMarkers {
		if _, err := os.Stat(from.At(p)); err == nil {
			if err := os.MkdirAll(filepath.Dir(h.At(p)), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(h.At(p), nil, 0o644); err != nil {
				return err
			}
		}
	}
	for _, p := range identityDirs {
		if fi, err := os.Stat(from.At(p)); err == nil && fi.IsDir() {
			if err := os.MkdirAll(h.At(p), 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}
