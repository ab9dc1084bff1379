//go:build demo

package dashboard

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/labtest"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// startTestLab starts the lab tailnet for t (see labtest.Start).
func startTestLab(t *testing.T) *lab.Lab { return labtest.Start(t) }

// TestDemoSave: S in the demo saves the lab tailnet's snapshot with the
// sandbox's tuning report, and it diagnoses like the lab.
func TestDemoSave(t *testing.T) {
	l := startTestLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := Demo(ctx, l, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d.SaveDir = t.TempDir()
	msg := d.save(ctx, nil, nil, nil)
	if msg.Err != "" {
		t.Fatal(msg.Err)
	}
	b, err := os.ReadFile(string(msg.Path))
	if err != nil {
		t.Fatal(err)
	}
	f, err := snapshot.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Tuning == nil || !f.Tuning.Sandbox {
		t.Errorf("tuning %+v (error %q), want the demo's sandbox report", f.Tuning, f.TuningErr)
	}
	ls, err := f.Diagnose(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Peers) != 4 {
		t.Errorf("%d peers, want the lab's 4", len(ls.Peers))
	}
}
