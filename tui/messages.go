package tui

import (
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// frameMsg asks the root to rebuild its cached frame if data changed since
// the last one. At most one is pending: data messages only mark the frame
// dirty, so a flood of them costs one render per frame interval.
type frameMsg struct{}

// bannerTickMsg refreshes the source-down banner's retry countdown once a
// second. gen is compared with the root's bannerGen so ticks from an earlier
// outage are dropped.
type bannerTickMsg struct{ gen int }

// SavedMsg is the outcome of Options.Save's command: the snapshot's path,
// or why it could not be saved (Err; Path is "" then). The root shows it under
// the tabs for a few seconds.
type SavedMsg struct {
	Path safetext.Text
	Err  safetext.Text
}

// clockTickMsg redraws the board replay's clock once a second.
type clockTickMsg struct{}

// flashFor is how long a SavedMsg stays on screen.
const flashFor = 6 * time.Second

// flashDoneMsg clears the save outcome of generation gen.
type flashDoneMsg struct{ gen int }
