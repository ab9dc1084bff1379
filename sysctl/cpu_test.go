package sysctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cpuinfo samples as each kernel prints them (trimmed to the lines read).
const (
	cpuinfoPi3ARMv7 = "processor\t: 0\nmodel name\t: ARMv7 Processor rev 4 (v7l)\nFeatures\t: half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt vfpd32 lpae evtstrm crc32\nCPU implementer\t: 0x41\nCPU architecture: 7\nCPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n\n" +
		"processor\t: 1\nmodel name\t: ARMv7 Processor rev 4 (v7l)\nCPU implementer\t: 0x41\nCPU architecture: 7\nCPU part\t: 0xd03\n\n" +
		"Hardware\t: BCM2835\nRevision\t: a020d3\nModel\t\t: Raspberry Pi 3 Model B Plus Rev 1.3\n"
	cpuinfoPi2v11 = "processor\t: 0\nmodel name\t: ARMv7 Processor rev 5 (v7l)\nCPU implementer\t: 0x41\nCPU architecture: 7\nCPU part\t: 0xc07\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 2 Model B Rev 1.1\n"
	cpuinfoArm64  = "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n"
	cpuinfoMIPS   = "system type\t\t: Broadcom BCM4718 chip rev 1 pkg 10\nmachine\t\t\t: Asus RT-N16\nprocessor\t\t: 0\ncpu model\t\t: MIPS 74Kc V4.0\nisa\t\t\t: mips1 mips2 mips32r1 mips32r2\n"
	cpuinfoOcteon = "system type\t\t: UBNT_E300\nmachine\t\t\t: Unknown\nprocessor\t\t: 0\ncpu model\t\t: Cavium Octeon III V0.2\nisa\t\t\t: mips1 mips2 mips3 mips4 mips5 mips64r2\n\nprocessor\t\t: 1\ncpu model\t\t: Cavium Octeon III V0.2\n"
	cpuinfoX86    = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu vme de pse tsc msr pae lm avx2\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu lm\n"
	cpuinfoAtom32 = "processor\t: 0\nmodel name\t: Intel(R) Atom(TM) CPU N270   @ 1.60GHz\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 sse sse2 ss\n"
)

// TestCPUFacts: what each kernel's /proc/cpuinfo (and kernel.arch where
// given) says about the kernel's and the CPU's word size.
func TestCPUFacts(t *testing.T) {
	tests := []struct {
		name, cpuinfo, arch string
		want                CPU
		family, name2       string
		wasted              string
	}{
		{name: "Pi 3B+ on a 32-bit kernel", cpuinfo: cpuinfoPi3ARMv7,
			want: CPU{Model: "ARMv7 Processor rev 4 (v7l)", Board: "Raspberry Pi 3 Model B Plus Rev 1.3", Core: "Cortex-A53", Cores: 2,
				KernelBits: 32, KernelWhy: "/proc/cpuinfo: CPU architecture 7, which a 32-bit Arm kernel prints",
				CPUBits: 64, CPUWhy: "Cortex-A53 (CPU part 0xd03) is an ARMv8 core with AArch64"},
			family: "arm", name2: "Raspberry Pi 3 Model B Plus Rev 1.3, ARMv7 Processor rev 4 (v7l), a Cortex-A53", wasted: "the kernel"},
		{name: "Pi 2 v1.1: a 32-bit core", cpuinfo: cpuinfoPi2v11,
			want: CPU{Model: "ARMv7 Processor rev 5 (v7l)", Board: "Raspberry Pi 2 Model B Rev 1.1", Core: "Cortex-A7", Cores: 1,
				KernelBits: 32, KernelWhy: "/proc/cpuinfo: CPU architecture 7, which a 32-bit Arm kernel prints",
				CPUBits: 32, CPUWhy: "Cortex-A7 (CPU part 0xc07) is a 32-bit ARMv7 core"},
			family: "arm"},
		{name: "Pi 4 on arm64", cpuinfo: cpuinfoArm64, arch: "aarch64",
			want: CPU{Board: "Raspberry Pi 4 Model B Rev 1.4", Core: "Cortex-A72", Cores: 1, Arch: "aarch64", ArchFrom: KeyArch,
				KernelBits: 64, KernelWhy: "kernel.arch says aarch64", CPUBits: 64, CPUWhy: "Cortex-A72 (CPU part 0xd08) is an ARMv8 core with AArch64"},
			family: "arm64", name2: "Raspberry Pi 4 Model B Rev 1.4, a Cortex-A72"},
		{name: "MIPS 74Kc", cpuinfo: cpuinfoMIPS,
			want:   CPU{Model: "MIPS 74Kc V4.0", Board: "Broadcom BCM4718 chip rev 1 pkg 10", Cores: 1, CPUBits: 32, CPUWhy: "/proc/cpuinfo isa lists no mips64 level"},
			family: "mips"},
		{name: "Octeon on a mips64 kernel", cpuinfo: cpuinfoOcteon, arch: "mips64",
			want: CPU{Model: "Cavium Octeon III V0.2", Board: "UBNT_E300", Cores: 2, Arch: "mips64", ArchFrom: KeyArch,
				KernelBits: 64, KernelWhy: "kernel.arch says mips64", CPUBits: 64, CPUWhy: "/proc/cpuinfo isa lists mips64r2"},
			family: "mips64"},
		{name: "x86-64", cpuinfo: cpuinfoX86, arch: "x86_64",
			want: CPU{Model: "AMD EPYC", Cores: 2, Arch: "x86_64", ArchFrom: KeyArch, KernelBits: 64, KernelWhy: "kernel.arch says x86_64",
				CPUBits: 64, CPUWhy: "/proc/cpuinfo flags include lm (long mode)"},
			family: "amd64"},
		{name: "a 32-bit Atom", cpuinfo: cpuinfoAtom32, arch: "i686",
			want: CPU{Model: "Intel(R) Atom(TM) CPU N270   @ 1.60GHz", Cores: 1, Arch: "i686", ArchFrom: KeyArch, KernelBits: 32, KernelWhy: "kernel.arch says i686",
				CPUBits: 32, CPUWhy: "/proc/cpuinfo flags lack lm (long mode)"},
			family: "386"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "proc", "cpuinfo"), tt.cpuinfo)
			if tt.arch != "" {
				writeFile(t, filepath.Join(dir, "proc", "sys", "kernel", "arch"), tt.arch+"\n")
			}
			got, err := AtRoot(dir).CPU()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(CPU{}), cmpIgnoreRaw); diff != "" {
				t.Errorf("CPU (-want +got):\n%s", diff)
			}
			if f := got.Family(); f != tt.family {
				t.Errorf("Family = %q, want %q", f, tt.family)
			}
			if tt.name2 != "" && got.Name() != tt.name2 {
				t.Errorf("Name = %q, want %q", got.Name(), tt.name2)
			}
			if w := got.Wasted64(); w != tt.wasted {
				t.Errorf("Wasted64 = %q, want %q", w, tt.wasted)
			}
		})
	}
}

// cmpIgnoreRaw leaves out what CPU keeps of the file for its own
// judgement (the isa, flags and Arm ids).
var cmpIgnoreRaw = cmp.FilterPath(func(p cmp.Path) bool {
	switch p.Last().String() {
	case ".isa", ".flags", ".implementer", ".part", ".armArch":
		return true
	}
	return false
}, cmp.Ignore())

// TestTailscaledBinary: tailscaled's ELF header decides its word size, at
// the first known path that holds one; a 32-bit tailscaled on a 64-bit
// kernel and CPU is wasted 64 bits too.
func TestTailscaledBinary(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "proc", "cpuinfo"), cpuinfoArm64)
	writeFile(t, filepath.Join(dir, "proc", "sys", "kernel", "arch"), "aarch64\n")
	elf32arm := append([]byte("\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x28\x00"), make([]byte, 32)...)
	p := filepath.Join(dir, "usr", "bin", "tailscaled")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, elf32arm, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := AtRoot(dir).CPU()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Binary{Path: "/usr/bin/tailscaled", Bits: 32, Arch: "arm"}, c.Tailscaled); diff != "" {
		t.Errorf("Tailscaled (-want +got):\n%s", diff)
	}
	if w := c.Wasted64(); w != "tailscaled" {
		t.Errorf("Wasted64 = %q, want tailscaled", w)
	}
}

func TestParseELFHeader(t *testing.T) {
	hdr := func(class, data byte, machine uint16) []byte {
		b := []byte("\x7fELF")
		b = append(b, class, data, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0)
		if data == 2 {
			return append(b, byte(machine>>8), byte(machine))
		}
		return append(b, byte(machine), byte(machine>>8))
	}
	tests := []struct {
		b    []byte
		want Binary
		err  bool
	}{
		{hdr(1, 1, 40), Binary{Bits: 32, Arch: "arm"}, false},
		{hdr(2, 1, 183), Binary{Bits: 64, Arch: "arm64"}, false},
		{hdr(1, 1, 8), Binary{Bits: 32, Arch: "mipsle"}, false},
		{hdr(1, 2, 8), Binary{Bits: 32, Arch: "mips"}, false},
		{hdr(2, 2, 8), Binary{Bits: 64, Arch: "mips64"}, false},
		{hdr(2, 1, 62), Binary{Bits: 64, Arch: "amd64"}, false},
		{hdr(2, 1, 9999), Binary{Bits: 64, Arch: "machine 9999"}, false},
		{[]byte("#!/bin/sh\nexec tailscaled\n"), Binary{}, true},
		{hdr(3, 1, 40), Binary{}, true},
		{[]byte("\x7fELF"), Binary{}, true},
	}
	for _, tt := range tests {
		got, err := ParseELFHeader(tt.b)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseELFHeader(%q) = %+v, %v; want %+v, error %v", tt.b, got, err, tt.want, tt.err)
		}
	}
}

// FuzzParseCPUInfo: any /proc/cpuinfo gives a CPU whose texts are clean
// and short, and never a panic.
func FuzzParseCPUInfo(f *testing.F) {
	for _, s := range []string{cpuinfoPi3ARMv7, cpuinfoArm64, cpuinfoMIPS, cpuinfoOcteon, cpuinfoX86, "model name: \x1b[2Jevil\nCPU part: 0xd03\nCPU implementer: 0x41\nCPU architecture: 7\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := ParseCPUInfo(b)
		c.judgeBits()
		for _, s := range []string{c.Model, c.Board, c.Core, c.Name(), c.Family()} {
			if strings.ContainsAny(s, "\x1b\n\r\x07") || len([]rune(s)) > 3*64+16 {
				t.Fatalf("unclean or long text %q", s)
			}
		}
		if c.Cores < 0 {
			t.Fatalf("Cores = %d", c.Cores)
		}
	})
}

func FuzzParseELFHeader(f *testing.F) {
	f.Add([]byte("\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x28\x00"))
	f.Add([]byte("\x7fELF\x02\x02"))
	f.Fuzz(func(t *testing.T, b []byte) {
		bin, err := ParseELFHeader(b)
		if err == nil && (bin.Bits != 32 && bin.Bits != 64 || bin.Arch == "") {
			t.Fatalf("ParseELFHeader = %+v", bin)
		}
	})
}
