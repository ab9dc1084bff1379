package sysctl

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CPU is what the kernel says about the processor WireGuard's crypto runs
// on (/proc/cpuinfo, kernel.arch) and what tailscaled's binary is built
// for: enough to tell a 32-bit system on a 64-bit-capable CPU, where
// wireguard-go runs Go's generic ChaCha20-Poly1305 instead of assembly.
// Text from the files is cleaned and cut to 64 characters as it is read.
type CPU struct {
	// Model names the processor as the kernel prints it: "AMD EPYC" (x86
	// "model name"), "ARMv7 Processor rev 4 (v7l)" (32-bit ARM "model
	// name"), "MIPS 74Kc V4.0" (MIPS "cpu model"); "" when the kernel
	// prints none (arm64 prints only part numbers: see Core).
	Model string `json:"model,omitempty"`
	// Board names the machine where the kernel says it: "Raspberry Pi 3
	// Model B Plus Rev 1.3" (Model), "BCM2835" (Hardware), "UBNT_E300"
	// (MIPS "system type").
	Board string `json:"board,omitempty"`
	// Core names an Arm core from its "CPU implementer" and "CPU part"
	// ("Cortex-A53"), as Linux's arch/arm64/include/asm/cputype.h numbers
	// them; "" when not an Arm core tailpath knows.
	Core string `json:"core,omitempty"`
	// Cores counts the "processor" entries; 0 when unknown.
	Cores int `json:"cores"`
	// Arch is the kernel's machine, as uname -m prints it ("x86_64",
	// "armv7l", "aarch64", "mips", "mips64"); "" when unknown. ArchFrom
	// names where it came from (kernel.arch, uname(2)).
	Arch     string `json:"arch,omitempty"`
	ArchFrom string `json:"arch_from,omitempty"`
	// KernelBits is 32 or 64 for the running kernel, 0 when unknown;
	// KernelWhy is the evidence.
	KernelBits int    `json:"kernel_bits,omitempty"`
	KernelWhy  string `json:"kernel_why,omitempty"`
	// CPUBits is 64 when the processor can run a 64-bit kernel, 32 when
	// it cannot, 0 when unknown; CPUWhy is the evidence.
	CPUBits int    `json:"cpu_bits,omitempty"`
	CPUWhy  string `json:"cpu_why,omitempty"`
	// Tailscaled is tailscaled's binary where one was found at a known
	// path; nil otherwise.
	Tailscaled *Binary `json:"tailscaled,omitempty"`

	// isa is MIPS's "isa" line, implementer and part Arm's ids, flags
	// x86's flags, armArch Arm's "CPU architecture"; not exported.
	isa, flags        []string
	implementer, part string
	armArch           string
}

// Binary is an executable's ELF header: its word size and machine.
type Binary struct {
	// Path is where it was found, as an absolute path on that system.
	Path string `json:"path"`
	// Bits is 32 or 64 (ELF class).
	Bits int `json:"bits"`
	// Arch is the machine in Go's words ("arm", "arm64", "mips", "mipsle",
	// "mips64", "amd64", "386", "riscv64"), or "machine N" for another.
	Arch string `json:"arch"`
}

// ErrNoCPUInfo says /proc/cpuinfo could not be read.
var ErrNoCPUInfo = errors.New("/proc/cpuinfo not readable")

// KeyArch is kernel.arch: the kernel's machine (uname -m), where the
// kernel has it.
const KeyArch = "kernel.arch"

// maxCPUInfo bounds how much of /proc/cpuinfo is read (a 256-core server
// prints about 400 KiB).
const maxCPUInfo = 1 << 20

// TailscaledPaths are where tailscaled's binary is looked for, in order:
// the Linux packages' /usr/sbin and /usr/bin, a static install's
// /usr/local/bin, Synology's package, OpenWrt's /usr/sbin (covered), and
// UniFi's and EdgeOS's community installs under /data and /config.
var TailscaledPaths = []string{
	"/usr/sbin/tailscaled",
	"/usr/bin/tailscaled",
	"/usr/local/bin/tailscaled",
	"/usr/local/sbin/tailscaled",
	"/var/packages/Tailscale/target/bin/tailscaled",
	"/data/tailscale/tailscaled",
	"/config/tailscale/tailscaled",
}

// CPU reads /proc/cpuinfo, kernel.arch (uname(2) on the real machine when
// the kernel lacks it) and the ELF header of tailscaled at TailscaledPaths.
// Errors: ErrNoCPUInfo; the rest count as unknown.
func (h Host) CPU() (CPU, error) {
	p := filepath.Join(h.proc(), "cpuinfo")
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) && h.Root != "" {
		return CPU{}, fmt.Errorf("%w: not in the root", ErrNoCPUInfo)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return CPU{}, fmt.Errorf("%w: %s does not exist", ErrNoCPUInfo, p)
	}
	if err != nil {
		return CPU{}, fmt.Errorf("%w at %s: %v", ErrNoCPUInfo, p, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCPUInfo))
	f.Close()
	if err != nil {
		return CPU{}, fmt.Errorf("%w at %s: %v", ErrNoCPUInfo, p, err)
	}
	c := ParseCPUInfo(b)
	if v, err := h.ReadRaw(KeyArch); err == nil && cleanField(v) != "" {
		c.Arch, c.ArchFrom = cleanField(v), KeyArch
	} else if h.Root == "" {
		if m := unameMachine(); m != "" {
			c.Arch, c.ArchFrom = m, "uname(2)"
		}
	}
	c.judgeBits()
	for _, tp := range TailscaledPaths {
		if bin, err := h.readBinary(tp); err == nil {
			c.Tailscaled = &bin
			break
		}
	}
	return c, nil
}

// readBinary reads the ELF header of the system file p.
func (h Host) readBinary(p string) (Binary, error) {
	f, err := os.Open(h.At(p))
	if err != nil {
		return Binary{}, err
	}
	defer f.Close()
	hdr := make([]byte, 20)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return Binary{}, fmt.Errorf("%s: %w", p, err)
	}
	bin, err := ParseELFHeader(hdr)
	bin.Path = p
	return bin, err
}

// ParseELFHeader reads an ELF file's class and machine from its first 20
// bytes (e_ident, e_type, e_machine). Errors: not ELF, or too short.
func ParseELFHeader(b []byte) (Binary, error) {
	if len(b) < 20 || string(b[:4]) != "\x7fELF" {
		return Binary{}, errors.New("not an ELF executable")
	}
	var bin Binary
	switch b[4] {
	case 1:
		bin.Bits = 32
	case 2:
		bin.Bits = 64
	default:
		return Binary{}, fmt.Errorf("ELF class %d unknown", b[4])
	}
	var order binary.ByteOrder = binary.LittleEndian
	if b[5] == 2 {
		order = binary.BigEndian
	}
	m := order.Uint16(b[18:20])
	// e_machine values from the ELF ABI (Go's debug/elf names them EM_*).
	switch m {
	case 3:
		bin.Arch = "386"
	case 62:
		bin.Arch = "amd64"
	case 40:
		bin.Arch = "arm"
	case 183:
		bin.Arch = "arm64"
	case 8:
		switch {
		case bin.Bits == 64 && b[5] == 2:
			bin.Arch = "mips64"
		case bin.Bits == 64:
			bin.Arch = "mips64le"
		case b[5] == 2:
			bin.Arch = "mips"
		default:
			bin.Arch = "mipsle"
		}
	case 243:
		bin.Arch = "riscv64"
	case 21:
		bin.Arch = "ppc64"
	case 22:
		bin.Arch = "s390x"
	default:
		bin.Arch = "machine " + strconv.Itoa(int(m))
	}
	return bin, nil
}

// armCores names Arm Ltd's cores by "CPU part" (implementer 0x41), from
// Linux's arch/arm64/include/asm/cputype.h (ARM_CPU_PART_*) and
// arch/arm/include/asm/cputype.h; bits says whether the core has AArch64.
var armCores = map[string]struct {
	name string
	bits int
}{
	"0xc05": {"Cortex-A5", 32}, "0xc07": {"Cortex-A7", 32}, "0xc08": {"Cortex-A8", 32},
	"0xc09": {"Cortex-A9", 32}, "0xc0d": {"Cortex-A12", 32}, "0xc0e": {"Cortex-A17", 32},
	"0xc0f": {"Cortex-A15", 32},
	"0xd03": {"Cortex-A53", 64}, "0xd04": {"Cortex-A35", 64}, "0xd05": {"Cortex-A55", 64},
	"0xd07": {"Cortex-A57", 64}, "0xd08": {"Cortex-A72", 64}, "0xd09": {"Cortex-A73", 64},
	"0xd0a": {"Cortex-A75", 64}, "0xd0b": {"Cortex-A76", 64}, "0xd0c": {"Neoverse-N1", 64},
	"0xd0d": {"Cortex-A77", 64}, "0xd40": {"Neoverse-V1", 64}, "0xd41": {"Cortex-A78", 64},
	"0xd44": {"Cortex-X1", 64}, "0xd47": {"Cortex-A710", 64}, "0xd48": {"Cortex-X2", 64},
	"0xd49": {"Neoverse-N2", 64}, "0xd4b": {"Cortex-A78C", 64},
}

// ParseCPUInfo reads /proc/cpuinfo as x86, Arm (32- and 64-bit kernels)
// and MIPS kernels print it. It never fails: what it cannot read stays
// unknown. Kernel and CPU bits are judged by CPU's reader (judgeBits),
// once kernel.arch is known too.
func ParseCPUInfo(b []byte) CPU {
	var c CPU
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 4096), 64<<10)
	first := map[string]string{}
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "processor" {
			if _, err := strconv.Atoi(v); err == nil {
				c.Cores++
			}
			continue
		}
		if _, seen := first[k]; !seen {
			first[k] = v
		}
	}
	c.Model = cleanField(first["model name"])
	if c.Model == "" {
		c.Model = cleanField(first["cpu model"]) // MIPS
	}
	for _, k := range []string{"Model", "Hardware", "system type"} {
		if v := cleanField(first[k]); v != "" {
			c.Board = v
			break
		}
	}
	c.implementer = strings.ToLower(cleanField(first["CPU implementer"]))
	c.part = strings.ToLower(cleanField(first["CPU part"]))
	c.armArch = cleanField(first["CPU architecture"])
	if c.implementer == "0x41" {
		if core, ok := armCores[c.part]; ok {
			c.Core = core.name
		}
	}
	c.isa = strings.Fields(cleanField(first["isa"]))
	c.flags = strings.Fields(first["flags"])
	return c
}

// judgeBits decides KernelBits and CPUBits from the facts read, saying why.
func (c *CPU) judgeBits() {
	switch a := c.Arch; {
	case a == "":
	case strings.Contains(a, "64") || a == "s390x":
		c.KernelBits, c.KernelWhy = 64, fmt.Sprintf("%s says %s", c.ArchFrom, a)
	default:
		c.KernelBits, c.KernelWhy = 32, fmt.Sprintf("%s says %s", c.ArchFrom, a)
	}
	switch {
	case c.armArch != "":
		// A 32-bit Arm kernel prints "CPU architecture: 7" for every core
		// with the new CPUID scheme, ARMv8 cores included
		// (arch/arm/kernel/setup.c, c_show); arm64 always prints 8
		// (arch/arm64/kernel/cpuinfo.c).
		if c.KernelBits == 0 {
			if c.armArch == "8" {
				c.KernelBits, c.KernelWhy = 64, "/proc/cpuinfo: CPU architecture 8, which only an arm64 kernel prints"
			} else if c.armArch == "7" {
				c.KernelBits, c.KernelWhy = 32, "/proc/cpuinfo: CPU architecture 7, which a 32-bit Arm kernel prints"
			}
		}
		if core, ok := armCores[c.part]; ok && c.implementer == "0x41" {
			c.CPUBits = core.bits
			if core.bits == 64 {
				c.CPUWhy = core.name + " (CPU part " + c.part + ") is an ARMv8 core with AArch64"
			} else {
				c.CPUWhy = core.name + " (CPU part " + c.part + ") is a 32-bit ARMv7 core"
			}
		} else if c.KernelBits == 64 {
			c.CPUBits, c.CPUWhy = 64, "it runs a 64-bit kernel"
		}
	case len(c.isa) > 0:
		for _, i := range c.isa {
			if strings.HasPrefix(i, "mips64") {
				c.CPUBits, c.CPUWhy = 64, "/proc/cpuinfo isa lists "+i
			}
		}
		if c.CPUBits == 0 {
			c.CPUBits, c.CPUWhy = 32, "/proc/cpuinfo isa lists no mips64 level"
		}
	case len(c.flags) > 0:
		c.CPUBits, c.CPUWhy = 32, "/proc/cpuinfo flags lack lm (long mode)"
		for _, f := range c.flags {
			if f == "lm" {
				c.CPUBits, c.CPUWhy = 64, "/proc/cpuinfo flags include lm (long mode)"
			}
		}
	case c.KernelBits == 64:
		c.CPUBits, c.CPUWhy = 64, "it runs a 64-bit kernel"
	}
}

// Family is the CPU's instruction set family in Go's words, from the
// kernel's machine, else tailscaled's binary, else what /proc/cpuinfo
// prints: "amd64", "arm", "arm64", "mips", "mips64", …; "" when unknown.
func (c CPU) Family() string {
	switch a := c.Arch; {
	case a == "x86_64":
		return "amd64"
	case a == "i386" || a == "i486" || a == "i586" || a == "i686":
		return "386"
	case a == "aarch64" || a == "arm64":
		return "arm64"
	case strings.HasPrefix(a, "arm"):
		return "arm"
	case a == "mips64":
		return "mips64"
	case strings.HasPrefix(a, "mips"):
		return "mips"
	case a != "":
		return a
	}
	switch {
	case c.armArch == "8":
		return "arm64"
	case c.armArch != "":
		return "arm"
	case len(c.isa) > 0 && c.KernelBits == 64:
		return "mips64"
	case len(c.isa) > 0:
		return "mips"
	case len(c.flags) > 0:
		return "x86"
	}
	return ""
}

// Name is the processor in one phrase: the board, the model and the core
// where known ("Raspberry Pi 3 Model B Plus Rev 1.3, ARMv7 Processor rev
// 4 (v7l), a Cortex-A53"); "unknown" when nothing is.
func (c CPU) Name() string {
	var parts []string
	if c.Board != "" {
		parts = append(parts, c.Board)
	}
	if c.Model != "" {
		parts = append(parts, c.Model)
	}
	if c.Core != "" && !strings.Contains(c.Model, c.Core) {
		parts = append(parts, "a "+c.Core)
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}

// Wasted64 says, when the processor could run 64-bit code but the kernel
// or tailscaled is 32-bit, which of them ("the kernel and tailscaled",
// "tailscaled"); "" otherwise or when unknown.
func (c CPU) Wasted64() string {
	if c.CPUBits != 64 {
		return ""
	}
	k := c.KernelBits == 32
	t := c.Tailscaled != nil && c.Tailscaled.Bits == 32
	switch {
	case k && t:
		return "the kernel and tailscaled"
	case k:
		return "the kernel"
	case t:
		return "tailscaled"
	}
	return ""
}
