package common

import (
	"strings"
)

// Part is one piece of a status line.
type Part struct {
	// Text is the piece as shown when there is room.
	Text string
	// Short, if set, is a shorter wording tried before the piece is
	// dropped.
	Short string
	// Drop orders what goes first when the line is too wide: the highest
	// first (rightmost among equals); 0 is never dropped.
	Drop int
}

// FitParts joins parts with sep into a line of at most width cells by
// whole pieces: it shortens, then drops, the most droppable pieces, so no
// word is cut. Only when the pieces that are never dropped do not fit is
// the line cut, with "…".
func FitParts(parts []Part, sep string, width int) string {
	ps := append([]Part(nil), parts...)
	join := func() string {
		texts := make([]string, len(ps))
		for i, p := range ps {
			texts[i] = p.Text
		}
		return strings.Join(texts, sep)
	}
	for {
		line := join()
		if Width(line) <= width {
			return line
		}
		worst := -1
		for i, p := range ps {
			if p.Drop > 0 && (worst < 0 || p.Drop >= ps[worst].Drop) {
				worst = i
			}
		}
		if worst < 0 {
			return Truncate(line, width, "…")
		}
		if ps[worst].Short != "" {
			ps[worst].Text, ps[worst].Short = ps[worst].Short, ""
			continue
		}
		ps = append(ps[:worst], ps[worst+1:]...)
	}
}
