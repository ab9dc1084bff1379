package peers

import "github.com/charmbracelet/bubbles/key"

// listKeys are the Peers pane bindings. Bindings that make no sense in the
// current state are disabled (and so hidden from help), not special-cased.
type listKeys struct {
	Move                                    key.Binding // help only: up/down in one entry
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Open                                    key.Binding // open the Peer detail pane
	Sort                                    key.Binding // cycle the sort order
	Filter                                  key.Binding // open the filter input
	ClearFilter                             key.Binding // esc: drop the filter (outside the input)
	Apply                                   key.Binding // enter in the input: keep the filter
	Cancel                                  key.Binding // esc in the input: drop the filter
}

func newListKeys() listKeys {
	return listKeys{
		Move:        key.NewBinding(key.WithKeys("up", "down", "k", "j"), key.WithHelp("↑/↓", "move")),
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:      key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown:    key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:         key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Open:        key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Sort:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "show all")),
		Apply:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		Cancel:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
	}
}

// ShortHelp implements help.KeyMap.
func (k listKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Apply, k.Cancel, k.Move, k.Open, k.Sort, k.Filter, k.ClearFilter}
}

// FullHelp implements help.KeyMap.
func (k listKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Sort, k.Filter, k.ClearFilter, k.Apply, k.Cancel},
	}
}

// detailKeys are the Peer detail pane bindings.
type detailKeys struct {
	Scroll                     key.Binding // help only: up/down in one entry
	Up, Down, PageUp, PageDown key.Binding
	Disco                      key.Binding // DISCO ping until direct
	TSMP                       key.Binding // TSMP ping through WireGuard
	Back                       key.Binding // back to the Peers pane
}

func newDetailKeys() detailKeys {
	return detailKeys{
		Scroll:   key.NewBinding(key.WithKeys("up", "down", "k", "j"), key.WithHelp("↑/↓", "scroll")),
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Disco:    key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "ping until direct")),
		TSMP:     key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "TSMP ping")),
		Back:     key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k detailKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Disco, k.TSMP, k.Scroll, k.Back}
}

// FullHelp implements help.KeyMap.
func (k detailKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown},
		{k.Disco, k.TSMP, k.Back},
	}
}
