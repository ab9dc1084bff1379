// Package probes is tailpath's evidence and its judgement: the types a
// source fills (Snapshot, Peer, Path, Self, PeerSide, APIFacts, PingResult,
// the Events of a Source), the reason table (reasons.go) and the pure
// functions that walk it. It does no I/O and imports no network, LocalAPI
// or control-API package (TestImportsNoIO): the sources live in
// probes/tailscaled (tailscaled's LocalAPI), probes/controlapi (the
// Tailscale control API), probes/hostnet and probes/firewall (this host).
// It may import tailscale.com's type packages (tailcfg, ipnstate, opt) to
// read their values, never tailscale.com/client/... or tailscale.com/ipn,
// which bring net/http with them.
//
// Entry points:
//   - Classify(ps, online, now) turns one ipnstate.PeerStatus into a Path.
//   - Judge(snapshot, board) judges a whole gather: the tailnet-wide facts
//     (Tailnet), every peer's verdict, this node's own. The joiner
//     (probes/join) calls it; everything tailpath shows comes from it.
//   - JudgePoll(snapshot, board) is Judge without each peer's Settle,
//     which SettleOf(snapshot, i, board) works out for one peer.
//   - ApplyPeerFacts(snap, facts, st) merges the control API's facts.
//
// The reasons are documented in docs/diagnosis.md.
package probes
