package sysctl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SampleKeys is the tree a sandbox gets when the real /proc cannot be read
// (not Linux): stock Linux 6.1 defaults on a 4 GiB machine, BBR built in.
var SampleKeys = map[string]string{
	KeyTCPRmem:            "4096\t131072\t6291456",
	KeyTCPWmem:            "4096\t16384\t4194304",
	KeyRmemMax:            "212992",
	KeyWmemMax:            "212992",
	KeyCongestionControl:  "cubic",
	KeyAvailableCC:        "reno cubic bbr",
	KeyDefaultQdisc:       "fq_codel",
	KeyMTUProbing:         "0",
	KeySlowStartAfterIdle: "1",
	KeyNotsentLowat:       "4294967295",
	KeyTCPMem:             "46509\t62012\t93018",
	KeyOSRelease:          "6.1.0-sample",
}

// sandboxExtra are files copied besides the sysctls.
var sandboxExtra = []string{"meminfo", "modules"}

// NewSandbox builds a writable copy of from's tuning keys under dir (dir
// becomes "/": dir/proc/sys/…, dir/proc/meminfo, dir/etc/sysctl.d, and
// the files that identify the platform, so --persist writes where that
// system would) and
// returns a Host rooted there, so the demo and tests can apply and revert
// without touching the machine. Keys the source lacks are left out, as on
// the source. When from's /proc/sys cannot be read at all, SampleKeys are
// used and sample is true.
func NewSandbox(dir string, from Host) (h Host, sample bool, err error) {
	h = AtRoot(dir)
	keys := map[string]string{}
	src, rerr := from.openSys()
	if rerr == nil {
		for _, k := range append(append([]string{}, Keys...), KeyOSRelease) {
			p, _ := keyPath(k)
			if v, err := readIn(src, k, p); err == nil {
				keys[k] = v
			}
		}
		src.Close()
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
	for _, f := range sandboxExtra {
		b, err := os.ReadFile(filepath.Join(from.proc(), f))
		if err != nil {
			if f == "meminfo" {
				b = []byte("MemTotal:        4030000 kB\n")
			} else {
				continue
			}
		}
		if err := os.WriteFile(filepath.Join(h.proc(), f), b, 0o644); err != nil {
			return h, sample, fmt.Errorf("sandbox: %w", err)
		}
	}
	if err := os.MkdirAll(h.sysctlDir(), 0o755); err != nil {
		return h, sample, fmt.Errorf("sandbox: %w", err)
	}
	if err := copyIdentity(h, from, sample); err != nil {
		return h, sample, fmt.Errorf("sandbox: %w", err)
	}
	return h, sample, nil
}

// identityFiles are copied into a sandbox so it is detected as the same
// platform as its source (and --persist there writes where that platform
// would); identityMarkers only need to exist, so they are created empty.
var (
	identityFiles   = []string{"/etc.defaults/VERSION", "/etc/unraid-version", "/etc/version", "/etc/config/uLinux.conf", "/etc/openwrt_release", "/etc/os-release", "/boot/config/go"}
	identityMarkers = []string{"/data/freenas-v1.db", "/usr/bin/midclt"}
	identityDirs    = []string{"/etc/openmediavault", "/run/systemd/system", "/usr/local/etc/rc.d"}
)

// copyIdentity copies from's identity files into h's root. A sample
// sandbox (from unreadable) is made a plain systemd Linux.
func copyIdentity(h, from Host, sample bool) error {
	if sample {
		return os.MkdirAll(h.at("/run/systemd/system"), 0o755)
	}
	for _, p := range identityFiles {
		b, err := from.readIdentity(p)
		if err != nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(h.at(p)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(h.at(p), b, 0o644); err != nil {
			return err
		}
	}
	for _, p := range identityMarkers {
		if from.exists(p) {
			if err := os.MkdirAll(filepath.Dir(h.at(p)), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(h.at(p), nil, 0o644); err != nil {
				return err
			}
		}
	}
	for _, p := range identityDirs {
		if fi, err := os.Stat(from.at(p)); err == nil && fi.IsDir() {
			if err := os.MkdirAll(h.at(p), 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}
