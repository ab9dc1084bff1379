package dashboard

import (
	"os"
	"testing"

	"github.com/tailpath/tailpath/probes/lab"
)

func TestMain(m *testing.M) {
	// The lab's DERP-only node re-executes this test binary.
	lab.MaybeRunNode()
	os.Exit(m.Run())
}
