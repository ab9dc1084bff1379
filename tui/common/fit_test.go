package common

import "testing"

func TestFitParts(t *testing.T) {
	parts := []Part{
		{Text: "6 peers"},
		{Text: "1 relayed via DERP", Drop: 1},
		{Text: "* board: cores3", Drop: 2},
		{Text: "sort: path (relayed first)", Short: "sort: path", Drop: 3},
	}
	for _, tt := range []struct {
		width int
		want  string
	}{
		{100, "6 peers · 1 relayed via DERP · * board: cores3 · sort: path (relayed first)"},
		{60, "6 peers · 1 relayed via DERP · * board: cores3 · sort: path"},
		{50, "6 peers · 1 relayed via DERP · * board: cores3"},
		{40, "6 peers · 1 relayed via DERP"},
		{12, "6 peers"},
		{5, "6 pe…"},
	} {
		if got := FitParts(parts, " · ", tt.width); got != tt.want {
			t.Errorf("width %d: %q, want %q", tt.width, got, tt.want)
		}
	}
}
