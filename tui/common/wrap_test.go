package common

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

// TestWrapText: breaks only at spaces: a flag, an address and a code span
// move to the next line whole (ansi.Wrap broke `tailscaled --port=41641`
// after its first hyphen), every line fits, and no character is lost.
func TestWrapText(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		width int
		want  []string
	}{
		{"a flag is not split at its hyphens",
			"restart it with a fixed port: tailscaled --port=41641 and allow that port inbound", 42,
			[]string{"restart it with a fixed port: tailscaled", "--port=41641 and allow that port inbound"}},
		{"a code span moves whole",
			"open inbound UDP on the peer: `sudo ufw allow 41641/udp` then ping again", 40,
			[]string{"open inbound UDP on the peer:", "`sudo ufw allow 41641/udp` then ping", "again"}},
		{"an address stays whole",
			"the board's endpoint 203.0.113.7:41641 never reached control", 30,
			[]string{"the board's endpoint", "203.0.113.7:41641 never", "reached control"}},
		{"an IPv6 address stays whole",
			"reached through [2001:db8::7]:41641 directly", 24,
			[]string{"reached through", "[2001:db8::7]:41641", "directly"}},
		{"a span wider than a line breaks at its spaces",
			"run `tailpath status --from snap.json --peer-snapshot theirs.json` on both", 30,
			[]string{"run `tailpath status --from", "snap.json --peer-snapshot", "theirs.json` on both"}},
		{"a word wider than a line is broken as a last resort",
			"key nodekey:0123456789abcdef0123456789abcdef", 20,
			[]string{"key", "nodekey:0123456789ab", "cdef0123456789abcdef"}},
		{"fits: unchanged", "tailscaled --port=41641", 40, []string{"tailscaled --port=41641"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Split(WrapText(tc.in, tc.width), "\n")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, l := range got {
				if w := ansi.StringWidth(l); w > tc.width {
					t.Errorf("line %q is %d cells, over %d", l, w, tc.width)
				}
			}
			if strings.ReplaceAll(strings.Join(got, ""), " ", "") != strings.ReplaceAll(tc.in, " ", "") {
				t.Errorf("characters lost or changed: %q", got)
			}
		})
	}
}

// TestWrapTextStyled: styled text wraps the same, its escapes kept.
func TestWrapTextStyled(t *testing.T) {
	in := "\x1b[33mrestart it with a fixed port: tailscaled --port=41641 and allow that port\x1b[0m"
	got := WrapText(in, 42)
	if plain := ansi.Strip(got); plain != "restart it with a fixed port: tailscaled\n--port=41641 and allow that port" {
		t.Errorf("got %q", plain)
	}
}
