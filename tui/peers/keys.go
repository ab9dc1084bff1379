package peers

import (
	"charm.land/bubbles/v2/key"

	"github.com/tailpath/tailpath/tui/common"
)

// listKeys are the Peers pane bindings. Bindings that make no sense in the
// current state are disabled (and so hidden from help), not special-cased.
type listKeys struct {
	common.Nav              // move the cursor (shared with every pane)
	Open        key.Binding // open the Peer detail pane
	Sort        key.Binding // cycle the sort order
	Filter      key.Binding // open the filter input
	ClearFilter key.Binding // esc: drop the filter (outside the input)
	Apply       key.Binding // enter in the input: keep the filter
	Cancel      key.Binding // esc in the input: drop the filter
	// Refresh reads the peers' own facts from the control API now;
	// enabled only with an API key (SetRefresh).
	Refresh key.Binding
	// Probe pings every relayed peer (a bounded DISCO run each; SetProbe),
	// enabled while relayed peers are shown and no probe runs.
	Probe key.Binding
	// Warnings shows (and hides) the snapshot's warnings in place of the
	// table, enabled while there are some; CloseWarnings is esc then.
	Warnings, CloseWarnings key.Binding
}

func newListKeys() listKeys {
	return listKeys{
		Nav:           common.NewNav("move"),
		Open:          key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Sort:          key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Filter:        key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "show all")),
		Apply:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		Cancel:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
		Refresh:       newRefreshKey(),
		Probe:         key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "probe relayed (DISCO)"), key.WithDisabled()),
		Warnings:      key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "warnings"), key.WithDisabled()),
		CloseWarnings: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to peers"), key.WithDisabled()),
	}
}

// newRefreshKey is r: re-read the control API (disabled until SetRefresh).
func newRefreshKey() key.Binding {
	return key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "refresh peer side (API)"), key.WithDisabled())
}

// ShortHelp implements help.KeyMap.
func (k listKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Apply, k.Cancel, k.CloseWarnings, k.Arrows, k.Open, k.Sort, k.Filter, k.ClearFilter, k.Warnings, k.Refresh, k.Probe}
}

// FullHelp implements help.KeyMap.
func (k listKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.Nav.Full(),
		{k.Open, k.Sort, k.Filter, k.ClearFilter, k.Apply, k.Cancel, k.Warnings, k.CloseWarnings, k.Refresh, k.Probe},
	}
}

// detailKeys are the Peer detail pane bindings.
type detailKeys struct {
	common.Nav             // scroll the text (shared with every pane)
	Disco      key.Binding // DISCO ping until direct
	TSMP       key.Binding // TSMP ping through WireGuard
	Back       key.Binding // back to the Peers pane
	Refresh    key.Binding // re-read the control API (SetRefresh)
	Copy       key.Binding // copy the to-settle commands (OSC 52)
}

func newDetailKeys() detailKeys {
	return detailKeys{
		Nav:     common.NewNav("scroll"),
		Disco:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "ping until direct")),
		TSMP:    key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "TSMP ping")),
		Back:    key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
		Refresh: newRefreshKey(),
		Copy:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "copy commands")),
	}
}

// ShortHelp implements help.KeyMap.
func (k detailKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Disco, k.TSMP, k.Refresh, k.Arrows, k.Back}
}

// FullHelp implements help.KeyMap.
func (k detailKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		k.Nav.Full(),
		{k.Disco, k.TSMP, k.Refresh, k.Copy, k.Back},
	}
}
