package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tailpath/tailpath/internal/labtest"
	"github.com/tailpath/tailpath/probes/lab"
)

func TestMain(m *testing.M) {
	// The lab's DERP-only node re-executes this test binary.
	lab.MaybeRunNode()
	os.Exit(m.Run())
}

// startTestLab starts the lab tailnet for t (see labtest.Start).
func startTestLab(t *testing.T) *lab.Lab { return labtest.Start(t) }

// monitorVectors returns the ESP-IDF monitor test vector folder, skipping
// when the shared folder is absent.
func monitorVectors(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "testdata", "esp-idf-monitor")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared test vectors not present (%v); they live at ../shared/testdata beside the repository", err)
	}
	return dir
}
