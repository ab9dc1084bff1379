package common

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// WrapLines word-wraps each line wider than width cells, continuing with
// a four-space indent, so a narrow window loses no words; lines that fit
// are kept as they are. A single word wider than the width is broken.
// Text panes (Device, Tuning) wrap their content with it before cutting
// anything.
func WrapLines(lines []string, width int) []string {
	const indent = "    "
	if width <= 2*len(indent) {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if ansi.StringWidth(l) <= width {
			out = append(out, l)
			continue
		}
		first, rest, _ := strings.Cut(ansi.Wrap(l, width, ""), "\n")
		out = append(out, first)
		rest = strings.TrimLeft(strings.ReplaceAll(rest, "\n", " "), " ")
		for _, r := range strings.Split(ansi.Wrap(rest, width-len(indent), ""), "\n") {
			out = append(out, indent+r)
		}
	}
	return out
}
