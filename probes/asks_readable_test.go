package probes_test

import (
	"slices"
	"testing"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/paste"
)

// TestAsksReadable: every command a "to settle" block may ask for prints
// only what a reader of probes/paste reads (the readers it names are
// input kinds of that package), and every reader of a command is one.
// An external test: probes/paste imports probes.
func TestAsksReadable(t *testing.T) {
	kinds := []string{paste.KindStatusJSON, paste.KindStatusText, paste.KindNetcheckJSON, paste.KindNetcheckText, paste.KindPing, paste.KindLog, paste.KindVersion}
	asks := probes.AllAsks()
	if len(asks) < 20 {
		t.Fatalf("%d asks, want every fact on every platform with a CLI", len(asks))
	}
	for _, a := range asks {
		if len(a.Readers) == 0 {
			t.Errorf("%s: %q names no reader", a.Platform, a.Command)
		}
		for _, r := range a.Readers {
			if !slices.Contains(kinds, r) {
				t.Errorf("%s: %q is read as %q, which no reader of probes/paste reads", a.Platform, a.Command, r)
			}
		}
		if a.Apply != probes.ApplyAppend && a.Apply != probes.ApplyPeerSnapshot {
			t.Errorf("%s: %q comes back as %q", a.Platform, a.Command, a.Apply)
		}
	}
}
