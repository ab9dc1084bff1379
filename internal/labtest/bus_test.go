package labtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes/lab"
)

func TestMain(m *testing.M) {
	// The lab's DERP-only node re-executes this test binary.
	lab.MaybeRunNode()
	os.Exit(m.Run())
}

// TestBusDelivery: the IPN bus of a lab node (tsnet's LocalAPI, which
// validates the mask as tailscaled does) streams a peer's endpoint
// change, and the Source re-gathers within a second although its poll
// is an hour away: only the bus brings it (the minute guards against a
// hang; how soon is logged).
func TestBusDelivery(t *testing.T) {
	l := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := BusDelivery(ctx, l, l.Observer(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("endpoint change reached the Source after %v", d.Round(time.Millisecond))
}
