package devlink

import (
	"os"
	"path/filepath"
	"testing"
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
