// Package sysctl reads, recommends, applies and reverts the Linux TCP tuning
// that decides how fast TCP runs through a tailnet: socket buffer sizes
// (tcp_rmem, tcp_wmem, rmem_max, wmem_max), the congestion control (BBR or
// not, and why not) and the default qdisc.
//
// Every file it touches is found under a Host, whose roots tests and the demo
// replace with a directory tree: /proc (sysctls under /proc/sys, meminfo,
// modules, config.gz), /lib/modules, /etc/sysctl.d, and under Root the files
// that identify the system (Platform: DSM, Unraid, TrueNAS SCALE, QNAP,
// openmediavault, OpenWrt, systemd) and the places each keeps sysctls at
// boot (PlanPersist, ApplyPersist, RemovePersisted). Key paths that would
// escape the /proc/sys root (“..”, absolute paths, symlinks leading out) are
// refused with ErrBadKey.
//
// Errors callers can test with errors.Is:
//
//   - ErrNoProc: the /proc/sys root itself is missing (no procfs mounted, or
//     a wrong root); no key can be read.
//   - ErrNoMeminfo: /proc/meminfo is missing, so the memory size (and the
//     memory cap on buffers) is unknown; the sysctls may still be readable.
//   - ErrNoKey: /proc/sys exists but this kernel has no such key (an old
//     kernel, or a module not loaded).
//   - ErrBadKey: the key name is malformed or its path escapes the root.
//   - ErrInvalid: a value failed validation (not a number, min > max, an
//     unknown congestion control); nothing was written.
//   - ErrReadOnly: /proc/sys is mounted read-only (a container); nothing can
//     be written here, the host or runtime must set it.
//   - ErrCorruptState: the revert state file cannot be parsed; nothing was written.
//   - ErrUntrusted: as root, the revert state file (or a directory above it)
//     could have been written by another user; nothing was read or written.
//   - os.ErrPermission: not root (CAP_NET_ADMIN/CAP_SYS_ADMIN) when writing.
//
// The package never imports Bubble Tea: the tuning pane and `tailpath tune`
// are views over it.
package sysctl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tailpath/tailpath/internal/safetext"
)

// Sentinel errors; see the package documentation.
var (
	ErrNoProc       = errors.New("/proc/sys not found (is procfs mounted?)")
	ErrNoMeminfo    = errors.New("/proc/meminfo not found, so the memory size is unknown")
	ErrNoKey        = errors.New("no such sysctl on this kernel")
	ErrBadKey       = errors.New("bad sysctl key")
	ErrInvalid      = errors.New("invalid sysctl value")
	ErrReadOnly     = errors.New("/proc/sys is read-only here (a container?); set it on the host or through the container runtime")
	ErrCorruptState = errors.New("corrupt tailpath tune state file")
)

// Host locates the files the package reads and writes. The zero value is the
// real machine; tests and the demo point the roots at a directory tree.
type Host struct {
	// Proc is the procfs root ("/proc" when empty). Sysctls are read from
	// Proc/sys, memory from Proc/meminfo, modules from Proc/modules, the
	// kernel config from Proc/config.gz.
	Proc string
	// Modules is the kernel module tree ("/lib/modules" when empty); the
	// running kernel's modules are under Modules/<release>.
	Modules string
	// SysctlDir is where --persist writes 99-tailpath.conf on systems that
	// apply /etc/sysctl.d at boot ("/etc/sysctl.d" when empty).
	SysctlDir string
	// Root is the directory treated as "/" for everything else: the files
	// that identify the system (Platform) and the other persistence targets
	// (/usr/local/etc/rc.d on DSM, /boot/config/go on Unraid). "" means "/".
	Root string
	// Midclt is TrueNAS's middleware client used to persist tunables. ""
	// means "midclt" from PATH, but only when Root is "/": a directory tree
	// standing in for a TrueNAS system never runs this machine's midclt.
	Midclt string
}

// AtRoot returns a Host whose roots are all under dir, as if dir were "/":
// dir/proc, dir/lib/modules, dir/etc/sysctl.d, and Root dir. Used for
// sandboxes and tests.
func AtRoot(dir string) Host {
	return Host{
		Proc:      filepath.Join(dir, "proc"),
		Modules:   filepath.Join(dir, "lib", "modules"),
		SysctlDir: filepath.Join(dir, "etc", "sysctl.d"),
		Root:      dir,
	}
}

func (h Host) proc() string {
	if h.Proc == "" {
		return "/proc"
	}
	return h.Proc
}

func (h Host) modules() string {
	if h.Modules == "" {
		return "/lib/modules"
	}
	return h.Modules
}

func (h Host) sysctlDir() string {
	if h.SysctlDir == "" {
		return "/etc/sysctl.d"
	}
	return h.SysctlDir
}

// SysRoot is the directory sysctl keys are resolved under (Proc/sys).
func (h Host) SysRoot() string { return filepath.Join(h.proc(), "sys") }

// keyPath turns "net.ipv4.tcp_rmem" into "net/ipv4/tcp_rmem", refusing
// anything that is not a plain dotted name.
func keyPath(key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("%w: empty key", ErrBadKey)
	}
	if strings.ContainsAny(key, "/\\\x00") || strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") || strings.Contains(key, "..") {
		return "", fmt.Errorf("%w %q: want a dotted name like net.ipv4.tcp_rmem (no '/', '..' or leading dot)", ErrBadKey, key)
	}
	for _, r := range key {
		if !(r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", fmt.Errorf("%w %q: character %q not allowed", ErrBadKey, key, r)
		}
	}
	return strings.ReplaceAll(key, ".", "/"), nil
}

// openSys opens the /proc/sys root, mapping a missing directory to ErrNoProc.
func (h Host) openSys() (*os.Root, error) {
	r, err := os.OpenRoot(h.SysRoot())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("%w: %s", ErrNoProc, h.SysRoot())
		}
		return nil, fmt.Errorf("open %s: %w", h.SysRoot(), err)
	}
	return r, nil
}

// mapErr turns a file error on key into one of the package's sentinels where
// one applies, keeping the original error wrapped too.
func mapErr(key string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sysctl %s: %w", key, ErrNoKey)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("sysctl %s: %w (%v)", key, ErrReadOnly, err)
	case errors.Is(err, fs.ErrPermission) && os.Geteuid() == 0:
		// Root yet refused: a global key seen from a child network
		// namespace or a container is read-only there.
		return fmt.Errorf("sysctl %s: %w (root cannot write it here: inside a network namespace or container it belongs to the host)", key, err)
	case strings.Contains(err.Error(), "path escapes from parent"):
		// os.Root's unexported errPathEscapes: a symlink leading out of /proc/sys.
		return fmt.Errorf("sysctl %s: %w: path escapes %s", key, ErrBadKey, "/proc/sys")
	}
	return fmt.Errorf("sysctl %s: %w", key, err)
}

// ReadRaw returns the value of one sysctl key exactly as the kernel prints
// it, without the trailing newline. Errors: ErrNoProc, ErrNoKey, ErrBadKey,
// or the underlying read error (os.ErrPermission for root-only keys).
func (h Host) ReadRaw(key string) (string, error) {
	p, err := keyPath(key)
	if err != nil {
		return "", err
	}
	r, err := h.openSys()
	if err != nil {
		return "", err
	}
	defer r.Close()
	return readIn(r, key, p)
}

func readIn(r *os.Root, key, p string) (string, error) {
	b, err := r.ReadFile(p)
	if err != nil {
		return "", mapErr(key, err)
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// WriteRaw writes value to one sysctl key (no read-back; see Apply for the
// verified, rolled-back path). Errors: ErrNoProc, ErrNoKey, ErrBadKey,
// ErrReadOnly, os.ErrPermission when not root, or the kernel's own
// rejection (EINVAL for a malformed value, ENOENT for an unavailable
// congestion control).
func (h Host) WriteRaw(key, value string) error {
	p, err := keyPath(key)
	if err != nil {
		return err
	}
	r, err := h.openSys()
	if err != nil {
		return err
	}
	defer r.Close()
	// Open without O_CREATE: a sysctl that does not exist must not be created
	// in a fake tree either.
	f, err := r.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return mapErr(key, err)
	}
	_, werr := f.Write([]byte(value + "\n"))
	cerr := f.Close()
	if werr != nil {
		if errors.Is(werr, syscall.ENOENT) {
			return fmt.Errorf("sysctl %s = %q: the kernel refused it (ENOENT: not available on this kernel): %w", key, value, werr)
		}
		return mapErr(key, werr)
	}
	if cerr != nil {
		return mapErr(key, cerr)
	}
	return nil
}

// Normalize collapses runs of whitespace (the kernel separates triples with
// tabs, people type spaces) so values compare as the kernel means them:
// words joined by one space, none at either end. It is idempotent.
func Normalize(v string) string {
	f := strings.Fields(v)
	out := make([]string, 0, len(f))
	for _, w := range f {
		// A value read from the kernel or a sandbox root is outside text:
		// cleaned here, where it is read, word by word so that a newline
		// between words still separates them. A word that cleans to
		// nothing (an escape, DEL, a zero-width space) is no word: it
		// would leave a doubled or trailing space, and a line that
		// --persist writes would then fail revert's check (validBlock).
		out = append(out, strings.Fields(safetext.Clean(w))...)
	}
	return strings.Join(out, " ")
}

// SameValue reports whether two sysctl values are equal after Normalize.
func SameValue(a, b string) bool { return Normalize(a) == Normalize(b) }
