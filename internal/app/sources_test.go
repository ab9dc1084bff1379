package app

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/sysctl/tune/tunetest"
)

// recordSink counts what Sources.Run delivers.
type recordSink struct {
	mu                               sync.Mutex
	snapshots, events, boards, tunes int
	lines                            int
	tuningErr                        error
}

func (k *recordSink) Deliver(ev Event) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch ev := ev.(type) {
	case JoinedEvent:
		k.snapshots++
	case TailscaledEvent:
		k.events++
	case BoardEvent:
		k.boards++
		k.lines += len(ev.Event.Lines)
	case TuningEvent:
		k.tunes++
		k.tuningErr = ev.Reading.Err
	}
}

// TestSourcesRun: one relay loop for the board and the tuning, as the
// dashboard and serve run it: a replayed board's lines all arrive, the
// tuning is read at once and again on its tick, and Run returns once ctx
// ends.
func TestSourcesRun(t *testing.T) {
	c, _, err := tunetest.Sandbox(t.TempDir(), tune.Inputs{Bandwidth: 1e9, RTT: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const capture = "I (100) tailscale: starting\nI (200) tailscale: derp home region 1\nI (300) wifi: connected\n"
	srcs := Sources{
		Device:      &devlink.Source{Replay: strings.NewReader(capture), Every: time.Millisecond},
		Tuning:      &c,
		TuningEvery: 20 * time.Millisecond,
	}
	var sink recordSink
	var joiner join.Joiner
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srcs.Run(ctx, nil, &joiner, &sink)
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		sink.mu.Lock()
		lines, tunes := sink.lines, sink.tunes
		sink.mu.Unlock()
		if lines >= 3 && tunes >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %d board lines (want 3), %d tuning readings (want 2)", lines, tunes)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after ctx ended")
	}
	if sink.events != 0 || sink.snapshots != 0 {
		t.Errorf("no tailscaled source, yet %d events and %d snapshots", sink.events, sink.snapshots)
	}
}
