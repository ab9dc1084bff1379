// Package devlinktest builds the repository's own Xtensa test ELF for the
// backtrace decoder's tests: testdata/xtensa_app.c, compiled with Debian's
// xtensa-lx106-elf-gcc (gcc-xtensa-lx106; .ci/run installs it) at ESP32
// addresses, with DWARF line tables and inlined functions. GNU addr2line
// from the same toolchain is the reference a test compares with. Tests
// skip, saying what to install, when the toolchain is absent.
package devlinktest

import (
	"bufio"
	"bytes"
	"debug/elf"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

//go:embed testdata/xtensa_app.c
var xtensaApp []byte

// SourceDir is where the ELF's debug info says its source lives
// (-fdebug-prefix-map), so decoded paths do not depend on the machine.
const SourceDir = "/src/tp_demo/main"

// XtensaELF compiles testdata/xtensa_app.c into t's temporary directory
// and returns the ELF's path: IRAM functions from 0x40080400, flash ones
// from 0x400d0020. It skips t when the toolchain is absent.
func XtensaELF(t testing.TB) string {
	t.Helper()
	for _, tool := range []string{"xtensa-lx106-elf-gcc", "xtensa-lx106-elf-addr2line"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: apt-get install gcc-xtensa-lx106 binutils-xtensa-lx106 to build the Xtensa test ELF", tool)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "xtensa_app.c")
	if err := os.WriteFile(src, xtensaApp, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tp_demo.elf")
	cmd := exec.Command("xtensa-lx106-elf-gcc", "-O2", "-g", "-nostdlib", "-ffreestanding", "-mtext-section-literals",
		"-fdebug-prefix-map="+dir+"="+SourceDir,
		"-Wl,--section-start=.iram1.text=0x40080400", "-Wl,-Ttext=0x400d0020", "-o", out, src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xtensa-lx106-elf-gcc: %v\n%s", err, b)
	}
	return out
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
