// Package firewall judges, read-only, what this host's nftables ruleset
// does with a new inbound UDP packet to one port: accepted, dropped, or
// unknown (not root, legacy iptables tables loaded, or a rule that matches
// on something tailpath cannot judge). iptables-nft rules live in nftables
// too, so they are read as well. Linux only: elsewhere a Ruleset's
// InboundUDP returns ErrNotSupported. It never changes a rule.
//
// tailpath uses it as evidence for local-inbound-udp-blocked: a host with
// a public address on its own interface goes direct with any peer unless
// inbound UDP to tailscaled's port is dropped (wgengine/magicsock
// handlePingLocked answers every DISCO ping's source).
package firewall

import (
	"errors"
	"runtime"
)

// Verdict is what the ruleset does with the packet.
type Verdict string

// Verdicts.
const (
	Accept  Verdict = "accept"
	Drop    Verdict = "drop"
	Unknown Verdict = "unknown"
)

// Result is the ruleset's answer for inbound UDP to Port.
type Result struct {
	// Port is the UDP port judged.
	Port uint16
	// Verdict for a new packet (one this host did not ask for: a peer's
	// DISCO ping to tailscaled's port).
	Verdict Verdict
	// Stateful is true when a new packet is dropped but a reply to one
	// this host sent is accepted (a ct state established rule before the
	// drop): then a port mapping on the other end of a path helps.
	Stateful bool
	// Why says how the verdict was reached, or why it is unknown.
	Why string
}

// ErrNotSupported is returned by InboundUDP off Linux.
var ErrNotSupported = errors.New("firewall: reading the packet filter needs Linux (nftables); not supported on " + runtime.GOOS)

// Ruleset is this host's ruleset as ReadRuleset read it, to judge a port
// later: a gather reads it beside tailscaled's Status, before the port is
// known (probes/hostnet).
type Ruleset struct {
	judge func(port uint16) (Result, error)
}

// ReadRuleset reads this host's nftables ruleset (IPv4: tables of the ip
// and inet families, base chains of type filter on the prerouting and
// input hooks, every chain's rules and the sets they look up) and whether
// legacy iptables tables are loaded, over one netlink socket. What it
// cannot read is said by InboundUDP's Result.
func ReadRuleset() *Ruleset {
	return &Ruleset{judge: readRules()}
}

// InboundUDP judges, on r, a new inbound UDP packet to port, and a reply
// to one this host sent. Reading the ruleset needs CAP_NET_ADMIN (root):
// without it the Result is Unknown with the reason, not an error.
// Errors: ErrNotSupported off Linux.
func (r *Ruleset) InboundUDP(port uint16) (Result, error) {
	return r.judge(port)
}
