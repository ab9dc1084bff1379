package devlink

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/devlink/crash"
	"github.com/tailpath/tailpath/devlink/devlinktest"
)

// buildRISCV returns the RISC-V test ELF (devlinktest.RISCVELF) and its
// disassembly (objdump -d).
func buildRISCV(t *testing.T) (elfPath, disasm string) {
	t.Helper()
	elfPath = devlinktest.RISCVELF(t)
	d, err := exec.Command("riscv64-unknown-elf-objdump", "-d", elfPath).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	return elfPath, string(d)
}

// disasmAddrs returns the address of every instruction with mnemonic op, and the address just after it.
func disasmAddrs(t *testing.T, disasm, op string) (at, next []uint32) {
	t.Helper()
	lines := strings.Split(disasm, "\n")
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) < 3 || strings.TrimSpace(f[2]) != op {
			continue
		}
		a, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(f[0]), ":"), 16, 32)
		if err != nil {
			continue
		}
		at = append(at, uint32(a))
		// The instruction's length from its encoding's hex width.
		n := uint32(len(strings.TrimSpace(f[1])) / 2)
		next = append(next, uint32(a)+n)
	}
	return at, next
}

func addr2line(t *testing.T, elfPath string, pc uint32) string {
	t.Helper()
	out, err := exec.Command("riscv64-unknown-elf-addr2line", "-f", "-e", elfPath, fmt.Sprintf("0x%x", pc)).Output()
	if err != nil {
		t.Fatalf("addr2line: %v", err)
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	file, _, _ := strings.Cut(f[1], " (discriminator") // DWARF detail we do not print
	return f[0] + " at " + file
}

// TestRISCVPanicDecodes decodes a RISC-V panic with a RISC-V ELF through
// the same debug/dwarf path as Xtensa: MEPC and RA, a ROM MEPC, and the
// backtrace recovered from the stack dump (return addresses only: words
// after a call instruction), checked against binutils' addr2line.
func TestRISCVPanicDecodes(t *testing.T) {
	elfPath, disasm := buildRISCV(t)
	sym, err := crash.OpenELF(elfPath)
	if err != nil {
		t.Fatal(err)
	}
	traps, _ := disasmAddrs(t, disasm, "ebreak")
	_, afterJal := disasmAddrs(t, disasm, "jal")
	_, afterJalr := disasmAddrs(t, disasm, "jalr")
	if len(traps) != 1 || len(afterJal) != 2 || len(afterJalr) != 1 {
		t.Fatalf("unexpected code: %d traps, %d jal, %d jalr:\n%s", len(traps), len(afterJal), len(afterJalr), disasm)
	}
	mepc := traps[0]
	ra := afterJal[0]        // in middle, after its call of leaf
	retApp := afterJalr[0]   // in app_main, after hook(2)
	retStart := afterJal[1]  // in _start, after app_main()
	leafStart := mepc - 0x10 // leaf's first instruction: code, but no call before it
	log := fmt.Sprintf(`Guru Meditation Error: Core  0 panic'ed (Breakpoint). Exception was unhandled.

Core  0 register dump:
MEPC    : 0x%08x  RA      : 0x%08x  SP      : 0x3fc8cd50  GP      : 0x3fc887e0  
MSTATUS : 0x00001881  MTVEC   : 0x40380001  MCAUSE  : 0x00000003  MTVAL   : 0x00009002  
Stack memory:
3fc8cd50: 0x00000000 0x%08x 0x42001080 0x%08x 0xa5a5a5a5 0x%08x 0x00000001 0x3fc8cd80
3fc8cd70: 0x00000000 0x00000000

ELF file SHA256: 0000000000000000
Rebooting...
`, mepc, ra, retApp, leafStart, retStart)
	st, lines := replay([]byte(log), sym)
	c := st.LastCrash
	if c == nil || c.Arch != "riscv" || c.PC != mepc || !c.Ended {
		t.Fatalf("crash %+v", c)
	}
	if diff := cmp.Diff([]uint32{retApp, retStart}, c.StackFrames); diff != "" {
		t.Errorf("stack frames (-want +got):\n%s", diff)
	}
	var want []string
	for _, pc := range []uint32{mepc, ra, retApp, retStart} {
		want = append(want, fmt.Sprintf("0x%08x: %s", pc, addr2line(t, elfPath, pc)))
	}
	if diff := cmp.Diff(want, strs(c.Decoded)); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	// tail's per-line decoding agrees: the register row gives MEPC and
	// RA, the first stack row the two return addresses.
	var perLine []string
	for i := range lines {
		perLine = append(perLine, DecodeLine(sym, &lines[i])...)
	}
	if diff := cmp.Diff(want, perLine); diff != "" {
		t.Errorf("DecodeLine (-want +got):\n%s", diff)
	}

	// A MEPC in ROM is said to be there, not decoded as garbage.
	rom := strings.Replace(log, fmt.Sprintf("MEPC    : 0x%08x", mepc), "MEPC    : 0x40001be4", 1)
	st, _ = replay([]byte(rom), sym)
	if got := st.LastCrash.Decoded[0]; got != "0x40001be4: in ROM, not in the ELF" {
		t.Errorf("ROM MEPC decoded as %q", got)
	}
}
