package tui

// frameMsg asks the root to rebuild its cached frame if data changed since
// the last one. At most one is pending: data messages only mark the frame
// dirty, so a flood of them costs one render per frame interval.
type frameMsg struct{}

// bannerTickMsg refreshes the source-down banner's retry countdown once a
// second. gen is compared with the root's bannerGen so ticks from an earlier
// outage are dropped.
type bannerTickMsg struct{ gen int }
