package peers

import "charm.land/bubbles/v2/table"

// Column indexes of the Peers table. Every row has one cell per column;
// columns hidden at narrow widths get width 0 (List.drawTable skips
// them). The columns and rows are bubbles/table's types; the pane draws
// them itself (drawTable).
const (
	colName = iota
	colOS
	colPath
	colLatency
	colDERP
	colTx
	colRx
	colReason
	numCols
)

// rowPrefix is the cells before a row's name: the cursor ("> "), the
// board marker (BoardMarker) and a space: ">* cores3", "   nas".
const rowPrefix = 3

// colSpec describes how one column sizes: min cells, the width growth stops
// at in the first pass (pref), and when it is dropped at narrow widths
// (hide: 0 never, then 1 first, 2 next…).
type colSpec struct {
	title string
	min   int
	pref  int
	hide  int
}

var colSpecs = [numCols]colSpec{
	colName:    {title: "   name", min: 14, pref: 22},
	colOS:      {title: "OS", min: 8, pref: 8, hide: 1},
	colPath:    {title: "path", min: 25, pref: 36},
	colLatency: {title: "ping", min: 7, pref: 7, hide: 3}, // the last ping's round trip: nothing measures it passively
	colDERP:    {title: "DERP", min: 4, pref: 4, hide: 3},
	colTx:      {title: "tx", min: 9, pref: 9, hide: 2},
	colRx:      {title: "rx", min: 9, pref: 9, hide: 2},
	colReason:  {title: "reason", min: 22, pref: 40},
}

// reasonComfort is the reason width that fits most one-phrase reasons.
const reasonComfort = 34

// cellGap is the blank cells right of every column. It is part of the
// table column's width (cells are truncated to the width less the gap
// first), so a cell is drawn as its text and blanks, with no style.
const cellGap = 1

// layoutColumns sizes the table's columns (text width plus cellGap; 0 for
// a hidden column) to fit width cells, dropping
// optional columns (OS, then tx/rx, then latency and DERP) until the minimum
// widths fit, then growing reason, path and name. Extra width past every
// preferred width goes to reason.
func layoutColumns(width int) []table.Column {
	var w [numCols]int
	for i, s := range colSpecs {
		w[i] = s.min
	}
	used := func() int {
		n := 0
		for _, x := range w {
			if x > 0 {
				n += x + cellGap
			}
		}
		return n
	}
	// OS is dropped unless it leaves path some room to grow: the path's
	// words matter more than the OS, which the detail pane shows anyway.
	const osSlack = 20
	for level := 1; level <= 3; level++ {
		slack := 0
		if level == 1 {
			slack = osSlack
		}
		if used()+slack <= width {
			break
		}
		for i, s := range colSpecs {
			if s.hide == level {
				w[i] = 0
			}
		}
	}
	// Still too wide (below ~60 cells): shrink the flexible columns evenly.
	for _, i := range []int{colReason, colPath, colName} {
		if over := used() - width; over > 0 {
			w[i] = max(3, w[i]-over)
		}
	}
	extra := width - used()
	grow := func(i, upto int) {
		if extra <= 0 || w[i] == 0 || w[i] >= upto {
			return
		}
		d := min(extra, upto-w[i])
		w[i] += d
		extra -= d
	}
	// The reason is why the tool exists, then the path's words (a relayed
	// path, `active; relay "nyc"`, fits the minimum; direct addresses are
	// longer), then the name.
	grow(colReason, reasonComfort)
	grow(colPath, colSpecs[colPath].pref)
	grow(colName, colSpecs[colName].pref)
	grow(colReason, colSpecs[colReason].pref)
	grow(colReason, 1<<30)

	cols := make([]table.Column, numCols)
	for i, s := range colSpecs {
		cols[i] = table.Column{Title: s.title}
		if w[i] > 0 {
			cols[i].Width = w[i] + cellGap
		}
	}
	return cols
}
