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
	KeyOSRelease:          "6.1.0-sample",
}

// sandboxExtra are files copied besides the sysctls.
var sandboxExtra = []string{"meminfo", "modules"}

// NewSandbox builds a writable copy of from's tuning keys under dir (dir
// becomes "/": dir/proc/sys/…, dir/proc/meminfo, dir/etc/sysctl.d) and
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
	return h, sample, nil
}
