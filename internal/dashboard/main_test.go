package dashboard

import (
	"os"
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
