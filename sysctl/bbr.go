package sysctl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// BBRAvailability says whether BBR can be the congestion control here.
type BBRAvailability string

const (
	// BBRAvailable: "bbr" is in tcp_available_congestion_control now.
	BBRAvailable BBRAvailability = "available"
	// BBRLoadable: a tcp_bbr module exists (or the config says =m); setting
	// tcp_congestion_control=bbr as root loads it.
	BBRLoadable BBRAvailability = "loadable"
	// BBRImpossible: this kernel cannot run BBR; Missing says what is missing.
	BBRImpossible BBRAvailability = "impossible"
)

// BBRStatus is the evidence about BBR on this kernel and the verdict.
type BBRStatus struct {
	State BBRAvailability `json:"state"`
	// Kernel is kernel.osrelease ("6.1.0-13-amd64"); empty when unreadable.
	Kernel string `json:"kernel"`
	// KernelMajor, KernelMinor are parsed from Kernel; 0 when unknown.
	KernelMajor int `json:"kernel_major"`
	KernelMinor int `json:"kernel_minor"`
	// InAvailableList: "bbr" appears in tcp_available_congestion_control.
	InAvailableList bool `json:"in_available_list"`
	// ModuleLoaded: tcp_bbr appears in /proc/modules.
	ModuleLoaded bool `json:"module_loaded"`
	// ModulePath is the tcp_bbr.ko* file found under /lib/modules/<release>; empty if none.
	ModulePath string `json:"module_path,omitempty"`
	// Config is CONFIG_TCP_CONG_BBR from the kernel's config: "y", "m",
	// "n" (not set), or "" when no config is available.
	Config string `json:"config,omitempty"`
	// ConfigFrom is the file Config was read from: /proc/config.gz, else
	// /boot/config-<release> (Debian, Ubuntu and Fedora install it; a
	// service under systemd's ProtectKernelModules cannot see
	// /lib/modules, but /boot stays readable).
	ConfigFrom string `json:"config_from,omitempty"`
	// Current is the current default congestion control.
	Current string `json:"current"`
	// Qdisc is net.core.default_qdisc.
	Qdisc string `json:"qdisc"`
	// NeedsFQ: kernel before 4.13, where BBR relies on the fq qdisc for pacing.
	NeedsFQ bool `json:"needs_fq"`
	// Why is a one-line reading of the evidence.
	Why string `json:"why"`
	// Missing says what would have to change when State is BBRImpossible.
	Missing string `json:"missing,omitempty"`
}

// CanWork reports whether setting bbr would succeed (available or loadable).
func (b BBRStatus) CanWork() bool { return b.State == BBRAvailable || b.State == BBRLoadable }

// KernelBefore reports whether the parsed kernel version is known and older
// than major.minor.
func (b BBRStatus) KernelBefore(major, minor int) bool {
	if b.KernelMajor == 0 {
		return false
	}
	return b.KernelMajor < major || b.KernelMajor == major && b.KernelMinor < minor
}

// ParseKernelVersion extracts major and minor from a release string like
// "4.4.302+" or "6.18.44-fc-v782". ok is false when it does not start with N.N.
func ParseKernelVersion(release string) (major, minor int, ok bool) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	num := func(s string) (int, bool) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, false
		}
		n, err := strconv.Atoi(s[:i])
		return n, err == nil
	}
	ma, ok1 := num(parts[0])
	mi, ok2 := num(parts[1])
	if !ok1 || !ok2 || len(parts[0]) != len(strconv.Itoa(ma)) {
		return 0, 0, false
	}
	return ma, mi, true
}

// BBR is BBRFor(h.Platform()).
func (h Host) BBR() (BBRStatus, error) { return h.BBRFor(h.Platform()) }

// BBRFor gathers the evidence about BBR from the available list,
// /proc/modules, the module tree for the running kernel, /proc/config.gz
// (else /boot/config-<release>)
// and the kernel version, in that order, stopping once the answer is
// certain. When BBR is impossible, Missing gives advice that fits platform
// p: never a package that does not exist there. It fails only with
// ErrNoProc; other unreadable sources count as "no evidence".
func (h Host) BBRFor(p Platform) (BBRStatus, error) {
	r, err := h.openSys()
	if err != nil {
		return BBRStatus{}, err
	}
	defer r.Close()
	var b BBRStatus
	read := func(k string) string {
		p, _ := keyPath(k)
		v, err := readIn(r, k, p)
		if err != nil {
			return ""
		}
		return Normalize(v)
	}
	b.Kernel = read(KeyOSRelease)
	b.KernelMajor, b.KernelMinor, _ = ParseKernelVersion(b.Kernel)
	b.Current = read(KeyCongestionControl)
	b.Qdisc = read(KeyDefaultQdisc)
	for _, c := range strings.Fields(read(KeyAvailableCC)) {
		if c == "bbr" {
			b.InAvailableList = true
		}
	}
	b.ModuleLoaded = h.moduleLoaded("tcp_bbr")
	b.NeedsFQ = b.KernelBefore(4, 13)
	if b.InAvailableList {
		b.State = BBRAvailable
		switch {
		case b.ModuleLoaded:
			b.Why = "bbr is in tcp_available_congestion_control (module tcp_bbr loaded)"
		default:
			b.Why = "bbr is in tcp_available_congestion_control"
		}
		return b, nil
	}
	if b.Kernel != "" {
		b.ModulePath = h.findModule(b.Kernel, "tcp_bbr")
	}
	if b.ModulePath != "" {
		b.State = BBRLoadable
		b.Why = fmt.Sprintf("module %s exists; setting bbr as root loads it (or: modprobe tcp_bbr)", b.ModulePath)
		return b, nil
	}
	if b.KernelBefore(4, 9) {
		// No module and a kernel older than BBR: the config cannot change
		// the answer, so skip decompressing it.
		b.State, b.NeedsFQ = BBRImpossible, false
		b.Why = fmt.Sprintf("kernel %s predates BBR (mainline since 4.9)", b.Kernel)
		b.Missing = oldKernelAdvice(p)
		return b, nil
	}
	b.Config, b.ConfigFrom = h.kernelConfig("CONFIG_TCP_CONG_BBR", b.Kernel)
	if b.Config == "m" {
		b.State = BBRLoadable
		b.Why = "CONFIG_TCP_CONG_BBR=m in " + b.ConfigFrom + " (module not found under " + h.modules() + "; the kernel may still load it)"
		return b, nil
	}
	b.State = BBRImpossible
	b.NeedsFQ = false
	switch {
	case b.Config == "y":
		// Built in yet not listed: the available list is what the kernel will accept.
		b.Why = "CONFIG_TCP_CONG_BBR=y in " + b.ConfigFrom + ", yet bbr is not in tcp_available_congestion_control"
		b.Missing = "a running kernel that registers bbr (" + b.ConfigFrom + " may not match this kernel)"
	case b.Config == "n":
		b.Why = "kernel built without BBR (# CONFIG_TCP_CONG_BBR is not set)"
		b.Missing = "a kernel built with CONFIG_TCP_CONG_BBR=y or =m"
	case b.Kernel == "":
		b.Why = "bbr is not available and the kernel version is unknown"
		b.Missing = "evidence: bbr is not in tcp_available_congestion_control and no tcp_bbr module was found"
	default:
		b.Why = fmt.Sprintf("bbr is not available, no tcp_bbr module under %s/%s, and no /proc/config.gz or /boot/config-<release> to say otherwise", h.modules(), b.Kernel)
		b.Missing = noModuleAdvice(p)
	}
	return b, nil
}

// keepCubic is the advice when nothing can add BBR: buffers are what helps.
const keepCubic = "keep cubic, and raise the buffers where they are the limit (tailpath tune says whether they are)"

// oldKernelAdvice is what is missing on a kernel before 4.9, per platform.
func oldKernelAdvice(p Platform) string {
	switch p.Kind {
	case PlatformDSM:
		return "a kernel ≥ 4.9; Synology ships this model with a 4.4 kernel and no tcp_bbr, and no package adds it: " + keepCubic
	case PlatformQNAP:
		return "a kernel ≥ 4.9; QNAP ships this model's kernel without BBR, and no package adds it: " + keepCubic
	case PlatformOpenWrt:
		return "a kernel ≥ 4.9: upgrade to a current OpenWrt release, then install kmod-tcp-bbr; until then " + keepCubic
	case PlatformUniFi, PlatformEdgeOS, PlatformHAOS:
		return "a kernel ≥ 4.9, which only a firmware (OS) update of this appliance can bring: " + keepCubic
	}
	return "a kernel ≥ 4.9 (or a vendor backport of tcp_bbr): upgrade the kernel, or " + keepCubic
}

// noModuleAdvice is what is missing when a kernel ≥ 4.9 has no tcp_bbr
// module and no config says otherwise, per platform.
func noModuleAdvice(p Platform) string {
	switch p.Kind {
	case PlatformDSM:
		return "a kernel built with tcp_bbr; Synology builds this kernel without it and ships no package that adds it: " + keepCubic
	case PlatformQNAP:
		return "a kernel built with tcp_bbr; QNAP ships none for this model and no package adds it: " + keepCubic
	case PlatformUnraid:
		return "the tcp_bbr module, which Unraid's own kernel normally ships: update Unraid (there is no package manager for kernel modules); until then " + keepCubic
	case PlatformTrueNAS:
		return "the tcp_bbr module; TrueNAS SCALE's kernel comes with the release (apt is disabled): update TrueNAS; until then " + keepCubic
	case PlatformOpenWrt:
		return "the tcp_bbr module: install kmod-tcp-bbr (opkg install kmod-tcp-bbr, or apk add kmod-tcp-bbr on releases that use apk)"
	case PlatformUniFi:
		return "the tcp_bbr module, which only a UniFi OS firmware update can bring (the kernel comes with the firmware; apt there must not replace it): " + keepCubic
	case PlatformEdgeOS:
		return "the tcp_bbr module, which only an EdgeOS firmware update can bring (the kernel comes with the firmware, and apt on EdgeOS must not upgrade the system): " + keepCubic
	case PlatformHAOS:
		return "the tcp_bbr module, which only a Home Assistant OS release can bring (the host has no package manager): " + keepCubic
	case PlatformOMV:
		return "the tcp_bbr module, which Debian's own kernel packages include: boot a Debian kernel (apt install linux-image-amd64, or the flavour for this machine), or " + keepCubic
	}
	return "the tcp_bbr module for this kernel (your distribution's kernel modules package; e.g. linux-modules-extra-<release> on Ubuntu), or " + keepCubic
}

// moduleLoaded reports whether name is listed in /proc/modules.
func (h Host) moduleLoaded(name string) bool {
	b, err := os.ReadFile(filepath.Join(h.proc(), "modules"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return true
		}
	}
	return false
}

// findModule looks for name.ko (plain or compressed) for kernel release in
// the usual place, then through modules.dep. It returns the path or "".
func (h Host) findModule(release, name string) string {
	if strings.ContainsAny(release, "/\\") || release == "." || release == ".." {
		return ""
	}
	base := filepath.Join(h.modules(), release)
	exts := []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"}
	for _, e := range exts {
		p := filepath.Join(base, "kernel", "net", "ipv4", name+e)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	dep, err := os.ReadFile(filepath.Join(base, "modules.dep"))
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(dep))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		mod, _, _ := strings.Cut(sc.Text(), ":")
		fn := filepath.Base(mod)
		for _, e := range exts {
			if fn == name+e && filepath.IsLocal(mod) {
				p := filepath.Join(base, mod)
				if _, err := os.Stat(p); err == nil {
					return p
				}
			}
		}
	}
	return ""
}

// kernelConfig returns "y", "m", "n" or "" (unknown) for option and the
// file it was read from: /proc/config.gz, else /boot/config-<release>
// under the host's root.
func (h Host) kernelConfig(option, release string) (string, string) {
	if f, err := os.Open(filepath.Join(h.proc(), "config.gz")); err == nil {
		defer f.Close()
		if zr, err := gzip.NewReader(f); err == nil {
			if v, err := scanConfig(io.LimitReader(zr, 16<<20), option); err == nil && v != "" {
				return v, "/proc/config.gz"
			}
		}
	}
	if release == "" || strings.ContainsAny(release, `/\`) {
		return "", ""
	}
	name := "/boot/config-" + release
	f, err := os.Open(h.At(name))
	if err != nil {
		return "", ""
	}
	defer f.Close()
	if v, err := scanConfig(io.LimitReader(f, 16<<20), option); err == nil && v != "" {
		return v, name
	}
	return "", ""
}

// scanConfig finds option in a kernel .config stream: "y"/"m" for
// OPTION=y/m, "n" for "# OPTION is not set", "" when absent. It stops at the
// first match, so a packed /proc/config.gz is only unpacked that far.
func scanConfig(r io.Reader, option string) (string, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	set := []byte(option + "=")
	notSet := []byte("# " + option + " is not set")
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case bytes.HasPrefix(line, set):
			v := bytes.TrimRight(line[len(set):], "\r\n")
			return strings.Trim(string(v), `"`), nil
		case bytes.HasPrefix(line, notSet):
			return "n", nil
		}
		for err == bufio.ErrBufferFull { // an absurdly long line: skip its rest
			_, err = br.ReadSlice('\n')
		}
		if err == io.EOF {
			return "", nil
		}
		if err != nil {
			return "", err
		}
	}
}
