// Package common holds what every tailpath pane shares: the pane contract and
// the named style roles. Panes live in their own files or sub-packages of tui/
// and import only this package from tui/, so the root can compose them.
package common

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
)

// Pane is the contract between the root model and every pane.
//
// The root routes, in this order: tea.WindowSizeMsg becomes SetSize on every
// pane; keys go to an open prompt first (a pane whose Capturing() is true gets
// every key), then global bindings, then the focused pane; every other message
// (data from sources, ticks) goes to every pane, focused or not, and each pane
// ignores what it does not own. Update must not block or do I/O: return a
// tea.Cmd for that.
type Pane interface {
	// Title is the short tab label ("Peers", "Device", …).
	Title() string
	// SetSize gives the pane its content area in cells (the root draws tabs,
	// banners and help outside it).
	SetSize(width, height int)
	// Update handles one message and returns a command or nil.
	Update(msg tea.Msg) tea.Cmd
	// View renders exactly the content area given by SetSize.
	View() string
	// KeyMap is the pane's bindings for bubbles/help; disabled bindings are hidden.
	KeyMap() help.KeyMap
	// Capturing reports that the pane has an input or prompt open (filter,
	// search, confirm dialog) and wants every key, including global ones.
	Capturing() bool
}

// CursorPane is a pane that shows the terminal's cursor while it captures
// keys (a filter or search line): Cursor is where, relative to the content
// area given by SetSize, or nil for none. The root puts it in its tea.View,
// so the terminal draws a real cursor rather than a reverse-video cell.
type CursorPane interface {
	Pane
	Cursor() *tea.Cursor
}

// FocusMsg tells a pane it gained (true) or lost (false) focus.
type FocusMsg struct {
	Pane  string // Title of the pane concerned
	Focus bool
}
