// Package app is tailpath's service layer: it runs the sources
// (Sources: tailscaled's LocalAPI through probes/tailscaled, a board through
// devlink, the host's TCP tuning through sysctl/tune) and relays what they
// report to a Sink, tailscaled's snapshots and the board's state meeting
// in one join.Joiner on the way. The dashboard's sink is
// internal/dashboard's; serve's keeps the newest values in its metrics
// store.
//
// It also holds the pieces the commands share: OpenFirmware,
// ReadBoard and PeerRTT; what status gathers and does with snapshots
// (Status, SaveSnapshot, ReadFrom, ApplyPeerSnapshots); serve (Serve,
// Listen); and, with the demo tag, the demo's sources (DemoSources,
// ServeDemo, Progress). It imports no Bubble Tea and no tui package.
package app
