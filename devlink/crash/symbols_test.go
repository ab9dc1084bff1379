package crash

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/devlink/devlinktest"
)

// testdata returns a file of the shared ESP-IDF monitor vectors, skipping
// when the folder is absent.
func testdata(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "testdata", "esp-idf-monitor", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test vectors not present (%v); they live at ../shared/testdata beside the repository", err)
	}
	return p
}

// TestSymbolsAgreeWithAddr2line compares the decoder with GNU addr2line for
// Xtensa on function, file and line, inlined frames included: on our own
// ELF (devlinktest, built from its C source) and on ESP-IDF monitor's
// log.elf (the shared vectors, when present).
func TestSymbolsAgreeWithAddr2line(t *testing.T) {
	for _, tc := range []struct {
		name        string
		elf         func(t testing.TB) string
		stride      int // every stride-th function
		min, inline int // addresses compared and with inlined frames, at least
	}{
		{"own", devlinktest.XtensaELF, 1, 20, 2},
		{"esp-idf-monitor", func(t testing.TB) string { return testdata(t, "log.elf") }, 7, 20, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			elfPath := tc.elf(t)
			if _, err := exec.LookPath("xtensa-lx106-elf-addr2line"); err != nil {
				t.Skip("xtensa-lx106-elf-addr2line not installed (Debian package binutils-xtensa-lx106); it is the reference")
			}
			addrs := devlinktest.CodeAddrs(t, elfPath, tc.stride)
			if tc.name == "own" { // and code inlined two levels deep
				pc, _ := devlinktest.InlinedPC(t, elfPath, "tp_pool_alloc", 3)
				addrs = append(addrs, pc)
			}
			if len(addrs) < tc.min {
				t.Fatalf("only %d code addresses picked", len(addrs))
			}
			want := devlinktest.Addr2Line(t, elfPath, addrs...)
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
			if compared < tc.min || inlined < tc.inline {
				t.Fatalf("%d addresses had debug info to compare, %d with inlined frames; want ≥ %d and ≥ %d", compared, inlined, tc.min, tc.inline)
			}
		})
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
