// Package columns is tailpath's one column writer for plain-text tables
// (`tailpath status`, the Tuning pane's tables): Lip Gloss's table without
// borders, so cells are measured by display width (wide runes, escape
// sequences) the way the terminal draws them. It adds no style, so piped
// output holds no escape sequence of its own.
package columns

import (
	"strings"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
)

// Gap is the blank cells between two columns.
const Gap = 2

// Lines lays rows out in columns Gap cells apart, each column as wide as
// its widest cell, every line prefixed with indent and without trailing
// blanks. Rows may differ in length. Cells must be single lines; they are
// not cut, so callers truncate long ones first.
func Lines(rows [][]string, indent string) []string {
	if len(rows) == 0 {
		return nil
	}
	ncols := 0
	for _, r := range rows {
		ncols = max(ncols, len(r))
	}
	// lipgloss/table sizes by the first row: give every row every column.
	// The first row goes in as the header (Lip Gloss v1.1.0 cut the last
	// line of a table without one; v2 does not, and a header costs nothing).
	full := make([][]string, len(rows))
	for i, r := range rows {
		full[i] = append(r[:len(r):len(r)], make([]string, ncols-len(r))...)
	}
	gap := lipgloss.NewStyle().PaddingRight(Gap)
	last := lipgloss.NewStyle()
	t := table.New().
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderColumn(false).BorderHeader(false).BorderRow(false).
		Headers(full[0]...).
		Rows(full[1:]...).
		StyleFunc(func(_, col int) lipgloss.Style {
			if col < ncols-1 {
				return gap
			}
			return last
		})
	lines := strings.Split(t.String(), "\n")
	for i, l := range lines {
		lines[i] = indent + strings.TrimRight(l, " ")
	}
	return lines
}
