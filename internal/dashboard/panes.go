package dashboard

import (
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/device"
	"github.com/tailpath/tailpath/tui/logpane"
	"github.com/tailpath/tailpath/tui/tuning"
)

// paneRow is one pane of the dashboard beyond the root's own (Peers,
// Detail, Self: tui.OwnTabs).
type paneRow struct {
	// Tab is its tab number, the same in every mode (a live dashboard
	// without a board has no Device or Log: its Tuning is still 5); the
	// number key, the tab bar and the help read it (tui.Options.Tabs).
	Tab int
	// Title is the pane's Title().
	Title string
	// New builds the pane for d, or returns nil when d has none (no
	// board, no tuning). It starts nothing: the panes do no I/O, and what
	// they are handed to call (a board's reset, the tuning's apply) runs
	// in their commands.
	New func(d *Dashboard, st common.Styles) common.Pane
}

// paneTable is where a pane is registered: every pane the dashboard may
// have beyond the root's own, by tab number. Live, the demo and --from
// all build their panes from it (Dashboard.panes), and the root numbers
// its tabs by it (Tabs), so a new pane is one row here.
var paneTable = []paneRow{
	{Tab: 3, Title: device.Title, New: devicePane},
	{Tab: 4, Title: logpane.Title, New: logPane},
	{Tab: 5, Title: tuning.Title, New: tuningPane},
}

// panes builds the panes of paneTable that d has, in tab order, in the
// default styles (the root sends the terminal's: common.StylesMsg).
func (d *Dashboard) panes() []common.Pane {
	return d.panesIn(common.DefaultStyles())
}

// panesIn is panes in the styles st (the live dashboard's, worked out
// while the first gather runs).
func (d *Dashboard) panesIn(st common.Styles) []common.Pane {
	var panes []common.Pane
	for _, row := range paneTable {
		if p := row.New(d, st); p != nil {
			panes = append(panes, p)
		}
	}
	return panes
}

// Tabs are paneTable's tab numbers by title (tui.Options.Tabs), of every
// pane, whether this dashboard has it or not.
func Tabs() map[string]int {
	tabs := make(map[string]int, len(paneTable))
	for _, row := range paneTable {
		tabs[row.Title] = row.Tab
	}
	return tabs
}

// devicePane is the Device pane, with a board (live or a replayed
// capture; a saved snapshot keeps no board stream). R resets a live
// board, once, deliberately.
func devicePane(d *Dashboard, st common.Styles) common.Pane {
	src := d.Device
	if src == nil || d.Replay != nil {
		return nil
	}
	dev := device.New(st, nil)
	if src.Link != nil {
		dev.SetReset(src.Link.RequestReset)
	}
	return dev
}

// logPane is the Log pane, with a board; i types a console line to a
// live one, ended with d.EOL (CR by default).
func logPane(d *Dashboard, st common.Styles) common.Pane {
	src := d.Device
	if src == nil || d.Replay != nil {
		return nil
	}
	lp := logpane.New(st, LogKeep)
	if src.Link != nil {
		eol := d.EOL
		if eol == nil {
			eol = []byte("\r")
		}
		lp.SetConsole(src.Link.Send, eol)
	}
	return lp
}

// tuningPane is the Tuning pane over the host's tuning (live, the demo),
// or, read-only, over a snapshot's tuning report (--from).
func tuningPane(d *Dashboard, _ common.Styles) common.Pane {
	switch {
	case d.Replay != nil:
		if f := d.Replay; f.Tuning != nil || f.TuningErr != "" {
			return tuning.New(tuning.Options{Snapshot: safetext.New("taken " + f.Taken.UTC().Format("2006-01-02 15:04:05Z")), Now: d.replayClock()})
		}
	case d.Tuning != nil:
		return tuning.New(TuningOptions(*d.Tuning))
	}
	return nil
}
