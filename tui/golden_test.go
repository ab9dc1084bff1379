package tui

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
)

// recorder keeps every byte the program wrote, across WaitFor calls.
type recorder struct {
	mu  sync.Mutex
	all bytes.Buffer
}

func (r *recorder) waitFor(t *testing.T, tm *teatest.TestModel, want string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.all.Reset()
		r.all.Write(b)
		return bytes.Contains(b, []byte(want))
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// TestGolden renders whole screens at 100×30 in the ASCII profile (set in
// TestMain) and compares them with testdata/TestGolden/*.golden. Regenerate
// with: go test ./tui/ -run TestGolden -update
func TestGolden(t *testing.T) {
	cores3 := func(try int, via string, path probes.PathKind, ms int, done bool, err string) probes.PingResult {
		return probes.PingResult{PeerID: "nCORES3", Kind: probes.PingDISCO, Try: try, Via: via, Path: path,
			Latency: time.Duration(ms) * time.Millisecond, Done: done, Err: err}
	}
	tests := []struct {
		name string
		msgs []tea.Msg
		wait string // text of the last frame, to know it was drawn
	}{
		{name: "peers"},
		{name: "peers_filtered", msgs: append(keys("/"), append(typeText("relay"), keyMsg("enter"))...), wait: "filter: relay"},
		{name: "detail", msgs: []tea.Msg{
			keyMsg("enter"), keyMsg("p"),
			cores3(1, "DERP(nyc)", probes.PathDERP, 44, false, ""),
			cores3(2, "", "", 0, false, "timeout"),
			cores3(3, "DERP(nyc)", probes.PathDERP, 42, false, ""),
		}, wait: "ping 3/10"},
		{name: "detail_direct", msgs: []tea.Msg{
			keyMsg("enter"), keyMsg("p"),
			cores3(1, "DERP(nyc)", probes.PathDERP, 44, false, ""),
			cores3(2, "203.0.113.33:41641", probes.PathDirect, 3, true, ""),
		}, wait: "direct 203.0.113.33:41641 in 3.0ms"},
		{name: "source_down", msgs: []tea.Msg{probes.SourceStatus{
			Err:       "failed to connect to local tailscaled; is it running?",
			NextRetry: peerstest.Now().Add(3 * time.Second),
		}}, wait: "retrying in 3s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions()
			opts.Ping = func(probes.Peer, probes.PingKind) tea.Cmd { return nil }
			tm := teatest.NewTestModel(t, New(opts), teatest.WithInitialTermSize(100, 30))
			var rec recorder
			tm.Send(peerstest.Linked(peerstest.Snapshot()))
			rec.waitFor(t, tm, "old-pi")
			for _, m := range tt.msgs {
				tm.Send(m)
			}
			if len(tt.msgs) > 0 {
				rec.waitFor(t, tm, tt.wait)
			}
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
			rest, _ := io.ReadAll(tm.FinalOutput(t))
			raw := append(rec.all.Bytes(), rest...)

			view := final.View()
			checkScreen(t, tt.name, view, 100, 30)
			if strings.ContainsRune(view, '\x1b') {
				t.Errorf("ASCII-profile view holds an escape byte: %q", view)
			}
			// The hostile peer name and OS must not reach the terminal raw.
			for _, bad := range []string{"pwned", "\x1b]", "\a", "\x1b[31m", "\x1b[5m", "\x1b[2J"} {
				if bytes.Contains(raw, []byte(bad)) {
					t.Errorf("program output holds %q from the peer's name or OS", bad)
				}
			}
			teatest.RequireEqualOutput(t, []byte(view))
		})
	}
}
