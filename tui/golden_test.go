package tui

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// waitFor in a golden test's messages waits until the screen shows its
// text before the next is sent.
type waitFor string

// TestGolden renders whole screens at 100×30 and compares the focused
// pane's part of each (Model.Body: under the tab bar and banners, above the
// help; unstyled: the styles' SGR sequences left out) with
// testdata/TestGolden/*.golden. Regenerate with go generate ./... (or go
// test ./tui/ -run TestGolden -update).
func TestGolden(t *testing.T) {
	cores3 := func(try int, via string, path probes.PathKind, ms int, done bool, err string) probes.PingResult {
		return probes.PingResult{PeerID: "nCORES3", Kind: probes.PingDISCO, Try: try, Via: safetext.New(via), Path: path,
			Latency: time.Duration(ms) * time.Millisecond, Done: done, Err: safetext.New(err)}
	}
	tests := []struct {
		name string
		msgs []tea.Msg
		wait string // text of the last frame, to know it was drawn
	}{
		{name: "peers"},
		{name: "peers_filtered", msgs: append(keys("/"), append(typeText("relay"), keyMsg("enter"))...), wait: "filter: relay"},
		{name: "detail", msgs: []tea.Msg{
			keyMsg("enter"), waitFor("p ping until direct"), keyMsg("p"), waitFor("until direct: started"),
			cores3(1, "DERP(nyc)", probes.PathDERP, 44, false, ""),
			cores3(2, "", "", 0, false, "timeout"),
			cores3(3, "DERP(nyc)", probes.PathDERP, 42, false, ""),
		}, wait: "ping 3/10"},
		{name: "detail_direct", msgs: []tea.Msg{
			keyMsg("enter"), waitFor("p ping until direct"), keyMsg("p"), waitFor("until direct: started"),
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
			// Full colour to the terminal, so a hostile colour code would
			// show in the output as one.
			watched := tuitest.Watch(New(opts))
			tm := teatest.NewTestModel(t, watched, teatest.WithInitialTermSize(100, 30),
				teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor)))
			tm.Send(peerstest.Joined(peerstest.Snapshot()))
			watched.Wait(t, "old-pi", time.Minute)
			for _, m := range tt.msgs {
				if w, ok := m.(waitFor); ok {
					// The selection reaches Detail through a command, so
					// a key sent at once could beat it: wait for the
					// screen to show it first.
					watched.Wait(t, string(w), time.Minute)
					continue
				}
				tm.Send(m)
			}
			if len(tt.msgs) > 0 {
				watched.Wait(t, tt.wait, time.Minute)
			}
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(tuitest.Watched).Model.(Model)
			raw, _ := io.ReadAll(tm.FinalOutput(t))

			content := final.View().Content
			view := unstyled(content)
			checkScreen(t, tt.name, view, 100, 30)
			if strings.ContainsRune(view, '\x1b') {
				t.Errorf("view holds an escape byte besides its styles: %q", view)
			}
			// The hostile peer name and OS must reach neither the frame
			// (styles aside, whose colours are 256-colour indexes) nor the
			// terminal. (The program writes its own ESC[2J and ends its
			// background-colour query with BEL, so those are looked for in
			// the frame only.)
			for _, bad := range []string{"pwned", "\x1b]", "\a", "\x1b[31m", "\x1b[5m", "\x1b[2J"} {
				if strings.Contains(content, bad) {
					t.Errorf("frame holds %q from the peer's name or OS", bad)
				}
			}
			for _, bad := range []string{"pwned", "\x1b]0;", "\x1b[31m", "\x1b[5m"} {
				if bytes.Contains(raw, []byte(bad)) {
					t.Errorf("program output holds %q from the peer's name or OS", bad)
				}
			}
			requirePaneGolden(t, final)
		})
	}
}
