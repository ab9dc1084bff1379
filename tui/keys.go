package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

// globalKeys are the bindings the root handles for every pane (unless the
// focused pane is capturing keys for an input).
type globalKeys struct {
	Next key.Binding // next pane
	Prev key.Binding // previous pane
	Jump key.Binding // the tabs' numbers (tabNumbers): pane by number
	Help key.Binding // toggle full help
	Quit key.Binding // q, ctrl+c
	Save key.Binding // S: save a snapshot (enabled with Options.Save)
	// ForceQuit is ctrl+c alone: the one global key that still works while
	// the focused pane captures keys, so the only one help offers then.
	ForceQuit key.Binding
}

func newGlobalKeys() globalKeys {
	return globalKeys{
		Next: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		Prev: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "prev pane")),
		Jump: key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-9", "go to pane")),
		Help: key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit: key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Save: key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "save snapshot")),

		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
}

// ShortHelp implements help.KeyMap.
// The pane tabs show their numbers, so tab and 1-9 are left to full help.
func (k globalKeys) ShortHelp() []key.Binding { return []key.Binding{k.Help, k.Quit} }

// FullHelp implements help.KeyMap.
func (k globalKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Next, k.Prev, k.Jump, k.Save, k.Help, k.Quit}}
}

// helpKeys joins the focused pane's bindings and the global ones, pane
// first. While the pane is capturing (typing a filter), every key but
// ctrl+c goes to it, so the global part is only ctrl+c quit: advertising
// "? help" or "q quit" there would be a lie, those keys type text.
type helpKeys struct {
	pane      help.KeyMap
	global    globalKeys
	capturing bool
}

func (h helpKeys) ShortHelp() []key.Binding {
	var out []key.Binding
	if h.pane != nil {
		out = append(out, h.pane.ShortHelp()...)
	}
	if h.capturing {
		return append(out, h.global.ForceQuit)
	}
	return append(out, h.global.ShortHelp()...)
}

func (h helpKeys) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	if h.pane != nil {
		out = append(out, h.pane.FullHelp()...)
	}
	if h.capturing {
		return append(out, []key.Binding{h.global.ForceQuit})
	}
	return append(out, h.global.FullHelp()...)
}
