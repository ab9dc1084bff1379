// Package devlinktest builds the repository's own test ELFs for the
// backtrace decoder's tests: testdata/xtensa_app.c, compiled with Debian's
// xtensa-lx106-elf-gcc (gcc-xtensa-lx106; .ci/run installs it) at ESP32
// addresses, with DWARF line tables and inlined functions, and
// testdata/riscv_app.c for RV32IMC. GNU addr2line from the same toolchain
// is the reference a test compares with. Each is built once and kept by
// internal/prebuilt (its source, compiler version and flags are the key).
// Tests skip, saying what to install, when the toolchain is absent.
package devlinktest

import (
	"bufio"
	"bytes"
	"debug/elf"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/internal/prebuilt"
)

//go:embed testdata/xtensa_app.c
var xtensaApp []byte

// SourceDir is where the ELF's debug info says its source lives
// (-fdebug-prefix-map), so decoded paths do not depend on the machine.
const SourceDir = "/src/tp_demo/main"

// XtensaELF returns the path of testdata/xtensa_app.c compiled (once, kept
// by internal/prebuilt): IRAM functions from 0x40080400, flash ones from
// 0x400d0020. It skips t when the toolchain is absent.
func XtensaELF(t testing.TB) string {
	t.Helper()
	return filepath.Join(get(t, Xtensa()), xtensaELF)
}

// RISCVELF returns the path of testdata/riscv_app.c compiled for RV32IMC
// (laid out like an ESP32-C3 app in flash, 0x4200_0000) with Debian's
// riscv64-unknown-elf-gcc (gcc-riscv64-unknown-elf; .ci/run installs it),
// once, kept by internal/prebuilt. It skips t when the toolchain is absent.
func RISCVELF(t testing.TB) string {
	t.Helper()
	return filepath.Join(get(t, RISCV()), riscvELF)
}

// get is prebuilt.Get for a test: a missing tool skips t.
func get(t testing.TB, it prebuilt.Item) string {
	t.Helper()
	dir, err := prebuilt.Get(it)
	if errors.Is(err, prebuilt.ErrMissingTool) {
		t.Skipf("%v: it builds the %s test ELF", err, it.Name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

const (
	xtensaELF = "tp_demo.elf"
	riscvELF  = "app.elf"
)

//go:embed testdata/riscv_app.c
var riscvApp []byte

// Xtensa is the Xtensa test ELF as a prebuilt item (its source, the
// compiler's version and flags are its inputs).
func Xtensa() prebuilt.Item {
	args := func(dir string) []string {
		return []string{"-O2", "-g", "-nostdlib", "-ffreestanding", "-mtext-section-literals",
			"-fdebug-prefix-map=" + dir + "=" + SourceDir,
			"-Wl,--section-start=.iram1.text=0x40080400", "-Wl,-Ttext=0x400d0020", "-o", filepath.Join(dir, xtensaELF), filepath.Join(dir, "xtensa_app.c")}
	}
	return cItem("xtensa-elf", "xtensa-lx106-elf-gcc", []string{"xtensa-lx106-elf-gcc", "xtensa-lx106-elf-addr2line"},
		"apt-get install gcc-xtensa-lx106 binutils-xtensa-lx106", "xtensa_app.c", xtensaApp, args)
}

// RISCV is the RISC-V test ELF as a prebuilt item.
func RISCV() prebuilt.Item {
	args := func(dir string) []string {
		return []string{"-march=rv32imc", "-mabi=ilp32", "-O1", "-g", "-nostdlib", "-ffreestanding", "-fno-optimize-sibling-calls",
			"-fdebug-prefix-map=" + dir + "=" + SourceDir, "-Wl,-Ttext=0x42000020", "-o", filepath.Join(dir, riscvELF), filepath.Join(dir, "app.c")}
	}
	return cItem("riscv-elf", "riscv64-unknown-elf-gcc", []string{"riscv64-unknown-elf-gcc", "riscv64-unknown-elf-objdump", "riscv64-unknown-elf-addr2line"},
		"apt-get install gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf", "app.c", riscvApp, args)
}

// cItem compiles source (written as file in the build directory) with cc
// and args(dir); the args with the directory as "DIR" are an input.
func cItem(name, cc string, tools []string, install, file string, source []byte, args func(dir string) []string) prebuilt.Item {
	return prebuilt.Item{
		Name: name, Tools: tools, Install: install,
		Inputs: func() ([]byte, error) { return prebuilt.CompilerInputs(cc, args("DIR"), source) },
		Build: func(dir string) error {
			if err := os.WriteFile(filepath.Join(dir, file), source, 0o644); err != nil {
				return err
			}
			if b, err := exec.Command(cc, args(dir)...).CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %w\n%s", cc, err, b)
			}
			return nil
		},
	}
}

// Func returns the address of the function symbol name in the ELF.
func Func(t testing.TB, path, name string) uint64 {
	t.Helper()
	for _, s := range funcs(t, path) {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no function %s", path, name)
	return 0
}

// funcs returns the ELF's function symbols in executable sections, by address.
func funcs(t testing.TB, path string) []elf.Symbol {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var out []elf.Symbol
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) {
			continue
		}
		if f.Sections[s.Section].Flags&elf.SHF_EXECINSTR == 0 {
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}

// CodeAddrs picks addresses inside the ELF's functions of at least 16
// bytes: each one's start + 3, middle and end - 4, from every stride-th
// function (1: all of them).
func CodeAddrs(t testing.TB, path string, stride int) []uint64 {
	t.Helper()
	var out []uint64
	seen := map[uint64]bool{}
	for i, s := range funcs(t, path) {
		if s.Size < 16 || i%stride != 0 {
			continue
		}
		for _, a := range []uint64{s.Value + 3, s.Value + s.Size/2, s.Value + s.Size - 4} {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

var discriminator = regexp.MustCompile(` \(discriminator \d+\)$`)

// Addr2Line runs GNU addr2line for Xtensa (-pfiaC) on pcs and returns, per
// address, its frames as `func at file:line`, the innermost first, the
// frames it was inlined into after it (addr2line's " (inlined by) " cut
// off; DWARF discriminators dropped).
func Addr2Line(t testing.TB, path string, pcs ...uint64) map[uint64][]string {
	t.Helper()
	args := []string{"-pfiaC", "-e", path}
	for _, a := range pcs {
		args = append(args, fmt.Sprintf("0x%x", a))
	}
	out, err := exec.Command("xtensa-lx106-elf-addr2line", args...).Output()
	if err != nil {
		t.Fatalf("xtensa-lx106-elf-addr2line: %v", err)
	}
	frames := map[uint64][]string{}
	var cur uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := discriminator.ReplaceAllString(sc.Text(), "")
		if rest, ok := strings.CutPrefix(line, " (inlined by) "); ok {
			frames[cur] = append(frames[cur], rest)
			continue
		}
		addr, rest, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("unexpected addr2line line %q", line)
		}
		cur, _ = strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64)
		frames[cur] = []string{rest}
	}
	return frames
}

// Decoded is how the decoder (and ESP-IDF monitor) print pc's frames:
// `0xPC: func at file:line`, then ` (inlined by) …` lines.
func Decoded(pc uint64, frames []string) []string {
	var out []string
	for i, f := range frames {
		if i == 0 {
			out = append(out, fmt.Sprintf("0x%08x: %s", pc, f))
		} else {
			out = append(out, " (inlined by) "+f)
		}
	}
	return out
}

// InlinedPC returns the first address in function fn whose addr2line
// frames number at least depth (code inlined depth-1 levels deep), and
// those frames.
func InlinedPC(t testing.TB, path, fn string, depth int) (uint64, []string) {
	t.Helper()
	for _, s := range funcs(t, path) {
		if s.Name != fn {
			continue
		}
		var pcs []uint64
		for a := s.Value; a < s.Value+s.Size; a++ {
			pcs = append(pcs, a)
		}
		got := Addr2Line(t, path, pcs...)
		for _, a := range pcs {
			if len(got[a]) >= depth {
				return a, got[a]
			}
		}
		t.Fatalf("%s: no address in %s inlines %d levels deep", path, fn, depth)
	}
	t.Fatalf("%s: no function %s", path, fn)
	return 0, nil
}
