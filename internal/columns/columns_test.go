package columns

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLines(t *testing.T) {
	rows := [][]string{
		{"NAME", "OS", "REASON"},
		{"cores3", "freertos", "no-endpoints: peer advertises no UDP endpoints"},
		{"日本語名", "", "direct"}, // wide runes: 8 cells; an empty cell
		{"short"},              // fewer cells than columns
	}
	want := []string{
		"  NAME      OS        REASON",
		"  cores3    freertos  no-endpoints: peer advertises no UDP endpoints",
		"  日本語名            direct",
		"  short",
	}
	if diff := cmp.Diff(want, Lines(rows, "  ")); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if Lines(nil, "") != nil {
		t.Error("no rows: want no lines")
	}
}
