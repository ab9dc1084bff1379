package devlink

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testdata returns a file of the shared ESP-IDF monitor vectors, skipping
// when the folder is absent.
func testdata(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "testdata", "esp-idf-monitor", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test vectors not present (%v); they live at ../shared/testdata beside the repository", err)
	}
	return p
}

// codeAddrs picks addresses inside function symbols of executable sections:
// each function's start, a point in its middle and its last instruction area.
func codeAddrs(t *testing.T, path string) []uint64 {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	seen := map[uint64]bool{}
	sort.Slice(syms, func(i, j int) bool { return syms[i].Value < syms[j].Value })
	for i, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size < 16 || int(s.Section) >= len(f.Sections) || s.Section == elf.SHN_UNDEF {
			continue
		}
		if f.Sections[s.Section].Flags&elf.SHF_EXECINSTR == 0 {
			continue
		}
		if i%7 != 0 { // a spread, not all of them
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

// TestSymbolsAgreeWithAddr2line compares the decoder with GNU addr2line for
// Xtensa on function, file and line, inlined frames included.
func TestSymbolsAgreeWithAddr2line(t *testing.T) {
	elfPath := testdata(t, "log.elf")
	a2l, err := exec.LookPath("xtensa-lx106-elf-addr2line")
	if err != nil {
		t.Skip("xtensa-lx106-elf-addr2line not installed (Debian package binutils-xtensa-lx106); it is the reference")
	}
	addrs := codeAddrs(t, elfPath)
	if len(addrs) < 20 {
		t.Fatalf("only %d code addresses picked", len(addrs))
	}
	args := []string{"-pfiaC", "-e", elfPath}
	for _, a := range addrs {
		args = append(args, fmt.Sprintf("0x%x", a))
	}
	out, err := exec.Command(a2l, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	// Group addr2line's lines per address.
	want := map[uint64][]string{}
	var cur uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := discriminator.ReplaceAllString(sc.Text(), "")
		if rest, ok := strings.CutPrefix(line, " (inlined by) "); ok {
			want[cur] = append(want[cur], rest)
			continue
		}
		addr, rest, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("unexpected addr2line line %q", line)
		}
		cur, _ = strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64)
		want[cur] = []string{rest}
	}
	s, err := OpenELF(elfPath)
	if err != nil {
		t.Fatal(err)
	}
	compared, inlined := 0, 0
	for _, a := range addrs {
		w := want[a]
		if len(w) == 0 || strings.Contains(w[0], "??") {
			continue // addr2line knows no file:line here either
		}
		var got []string
		for _, l := range s.Lookup(a) {
			got = append(got, l.String())
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("0x%x (-addr2line +ours):\n%s", a, diff)
		}
		compared++
		if len(w) > 1 {
			inlined++
		}
	}
	t.Logf("compared %d addresses (%d with inlined frames)", compared, inlined)
	if compared < 20 {
		t.Fatalf("only %d addresses had debug info to compare; want ≥ 20", compared)
	}
}

// BenchmarkOpenELF measures loading log.elf (3 MB, DWARF 4/5) for decoding.
func BenchmarkOpenELF(b *testing.B) {
	p := testdata(b, "log.elf")
	for range b.N {
		if _, err := OpenELF(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup measures decoding one PC with inlined frames.
func BenchmarkLookup(b *testing.B) {
	s, err := OpenELF(testdata(b, "log.elf"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		if locs := s.Lookup(0x4008a000); len(locs) != 3 {
			b.Fatalf("got %d frames", len(locs))
		}
	}
}
