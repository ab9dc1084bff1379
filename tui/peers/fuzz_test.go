package peers

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// FuzzPanesRenderOutsideText feeds arbitrary peer text (names, OS, path
// words, reasons, evidence) to both panes and checks that every frame stays
// inside its box and carries no control bytes: the peer cannot draw outside
// its cells or reach the terminal.
func FuzzPanesRenderOutsideText(f *testing.F) {
	f.Add(peerstest.EvilName, "linux\x1b[2J", `active; relay "nyc"`, "no traffic\x1b[5m", 80)
	f.Add("名前テスト😀👩‍👩‍👧", "\u202eevil", "", "", 23)
	f.Add("a\tb\r\nc", "\x00\x07\x9b31m", "offline, last seen 3h ago", strings.Repeat("very long reason ", 20), 200)
	f.Add("\xff\xfe", "é", "active; direct [2001:db8::1]:41641", "", 61)
	f.Fuzz(func(t *testing.T, name, osName, path, summary string, width int) {
		if width < 0 {
			width = -width
		}
		width = 20 + width%200
		const height = 12
		s := peerstest.Snapshot()
		p := &s.Peers[0]
		p.Name, p.OS, p.Path.Text, p.Verdict.Summary, p.Verdict.Fix = safetext.New(name), safetext.New(osName), safetext.New(path), safetext.New(summary), safetext.New(summary)
		p.Verdict.Checks = append(p.Verdict.Checks, probes.Check{Field: safetext.New(name), Value: safetext.New(osName), Note: safetext.New(path), Failed: true})

		l := NewList(common.DefaultStyles())
		l.SetSize(width, height)
		l.Update(peerstest.Joined(s))
		d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
		d.SetSize(width, height)
		d.Update(peerstest.Joined(s))
		d.Update(common.PeerSelectedMsg{Peer: *p})
		for pane, v := range map[string]string{"list": tuitest.Unstyled(l.View()), "detail": tuitest.Unstyled(d.View())} {
			lines := strings.Split(v, "\n")
			if pane == "detail" && len(lines) != height {
				t.Errorf("%s: %d lines, want %d", pane, len(lines), height)
			}
			if len(lines) > height {
				t.Errorf("%s: %d lines, more than %d", pane, len(lines), height)
			}
			for i, line := range lines {
				if w := ansi.StringWidth(line); w > width {
					t.Errorf("%s line %d: %d cells wide, more than %d: %q", pane, i, w, width, line)
				}
				for _, r := range line {
					if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
						t.Fatalf("%s line %d holds control %U: %q", pane, i, r, line)
					}
				}
			}
		}
	})
}
