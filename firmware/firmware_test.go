package firmware

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHostBuild runs `make -C host test xtensa scenario-check`: every
// portable C module's cmocka tests under ASan+UBSan, the Xtensa build of the
// core within its size budget, and the regenerated scenario against
// testdata/scenario.log. It skips only when the C toolchain or cmocka is
// missing (Debian: build-essential libcmocka-dev gcc-xtensa-lx106
// binutils-xtensa-lx106 picolibc-xtensa-lx106-elf).
func TestHostBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the C build in -short mode")
	}
	for _, tool := range []string{"make", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: install build-essential to run the firmware host tests", tool)
		}
	}
	if !haveCmocka() {
		t.Skip("cmocka not found: apt-get install libcmocka-dev to run the firmware host tests")
	}
	targets := []string{"test", "scenario-check"}
	if _, err := exec.LookPath("xtensa-lx106-elf-gcc"); err == nil {
		targets = append(targets, "xtensa")
	} else {
		t.Errorf("xtensa-lx106-elf-gcc not found: apt-get install gcc-xtensa-lx106 binutils-xtensa-lx106 picolibc-xtensa-lx106-elf")
	}
	cmd := exec.Command("make", append([]string{"-C", "host"}, targets...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	text := out.String()
	if err != nil {
		t.Fatalf("make -C host %s: %v\n%s", strings.Join(targets, " "), err, text)
	}
	// Surface the figures in -v output.
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "PASSED") || strings.HasPrefix(l, "core (") || strings.HasPrefix(l, "scenario:") {
			t.Log(l)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^\[  PASSED  \] \d+ test`).FindAllString(text, -1)); n < 7 {
		t.Errorf("%d cmocka suites passed, want 7:\n%s", n, text)
	}
	if strings.Contains(text, "FAILED") {
		t.Errorf("a cmocka test failed:\n%s", text)
	}
}

// haveCmocka reports whether cmocka's header is where cc finds it.
func haveCmocka() bool {
	for _, dir := range []string{"/usr/include", "/usr/local/include", "/opt/homebrew/include"} {
		if ok, _ := filepath.Glob(filepath.Join(dir, "cmocka.h")); len(ok) > 0 {
			return true
		}
	}
	return false
}

// TestESPIDFGlueCompiles runs `make -C host idf-check`: the ESP-IDF glue
// (port/esp_idf/tp_port_esp.c, main/app_main.c), which no host build links,
// compiled to objects with -std=c11 -Wall -Wextra -Werror against our
// stand-in SDK headers (host/idfstub), in every configuration of its #ifs.
// It proves the glue type-checks against those declarations, not that it
// builds against the real SDK (host/idfstub/README.md).
func TestESPIDFGlueCompiles(t *testing.T) {
	for _, tool := range []string{"make", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: install build-essential to compile the ESP-IDF glue", tool)
		}
	}
	out, err := exec.Command("make", "-C", "host", "idf-check").CombinedOutput()
	if err != nil {
		t.Fatalf("make -C host idf-check: %v\n%s", err, out)
	}
	// Each file in each of the three passes.
	for _, f := range []string{"tp_port_esp.c", "app_main.c"} {
		if n := strings.Count(string(out), f); n != 3 {
			t.Errorf("%s compiled %d times, want 3:\n%s", f, n, out)
		}
	}
}
