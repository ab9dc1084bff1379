package probes

import (
	"net/netip"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// The facts a pasted thread shows beyond tailscaled's Status and NetInfo:
// how tailscaled runs here (its flags, its prefs, the install), what the
// host's own tools printed of its routes, and what the daemon's other
// lines and the DERP tools say. probes/snapshot's readers fill them (a
// live gather reads what it can of them from the LocalAPI and the host);
// links.go's checks read them.

// Daemon is how tailscaled runs on this node, as far as the input shows
// it: its command line (tailscaled's "Program starting" line, a
// tailscaled command typed or in a unit), its prefs (`tailscale debug
// prefs`, a `Prefs{…}` log line, a `tailscale up`/`set` command line) and
// the install. Every field is unknown when zero (nil).
type Daemon struct {
	// Port is tailscaled's UDP port as its --port flag (or the PORT its
	// package's defaults file sets) gives it; 0 with PortKnown true is
	// "OS-assigned": tailscaled binds port 0 unless told otherwise on
	// every OS but Windows (cmd/tailscaled/tailscaled.go defaultPort).
	Port      uint16 `json:"port,omitempty"`
	PortKnown bool   `json:"port_known,omitempty"`
	// Userspace is true for --tun=userspace-networking (Status.TUN
	// false): no kernel tunnel, tailnet TCP ends in tailscaled's netstack.
	Userspace *bool `json:"userspace,omitempty"`
	// Kubernetes: tailscaled runs in a Kubernetes pod (its state in a
	// Secret, --state=kube:…, as cmd/containerboot starts it there);
	// Container: in a container (containerboot's "boot: " lines, a
	// compose service, that state); PodAddr is the pod's own address
	// where the input shows it.
	Kubernetes bool       `json:"kubernetes,omitempty"`
	Container  bool       `json:"container,omitempty"`
	PodAddr    netip.Addr `json:"pod_addr,omitzero"`
	// AcceptRoutes is Prefs.RouteAll (`--accept-routes`); nil unknown.
	AcceptRoutes *bool `json:"accept_routes,omitempty"`
	// ExitNode is Prefs.ExitNodeIP or ExitNodeID ("" none or unknown).
	ExitNode safetext.Text `json:"exit_node,omitempty"`
	// NetfilterMode is Prefs.NetfilterMode in the CLI's words ("on",
	// "nodivert", "off"); "" unknown.
	NetfilterMode string `json:"netfilter_mode,omitempty"`
	// From says where each fact was read, for the checks' notes.
	From []string `json:"from,omitempty"`
}

// HostRoute is one route of this host's that points into tailscaled's
// tunnel: a subnet route tailscaled installed (Linux table 52, `ip route
// show table 52`; a route via the Tailscale interface elsewhere).
type HostRoute struct {
	Prefix netip.Prefix  `json:"prefix"`
	Dev    safetext.Text `json:"dev,omitempty"`
}

// ThreadFacts are this node's facts a pasted thread shows beyond the log
// lines SelfEvidence counts: the daemon's peer-relay and port-mapping
// lines, DERP servers' "peer gone" notices, `tailscale debug derp`'s
// findings and how region ids were tied to codes.
type ThreadFacts struct {
	// PortmapRefused is the newest line in which the router answered a
	// port-mapping request and refused it (net/portmapper: "failed to
	// get PCP mapping", "PMP probe failed due result code", UPnP's
	// AddPortMapping errors); PortmapRefusals counts them.
	PortmapRefused  safetext.Text `json:"portmap_refused,omitempty"`
	PortmapRefusals int           `json:"portmap_refusals,omitempty"`
	// PeerRelay counts magicsock's peer-relay allocation lines
	// (wgengine/magicsock/relaymanager.go, logged with debug logging).
	PeerRelay *PeerRelayLog `json:"peer_relay,omitempty"`
	// PeersGone are DERP servers' notices that a peer is not connected
	// to them ("derp-N does not know about peer [key], removing route":
	// wgengine/magicsock/derp.go on a PeerGone frame, reason not-here).
	PeersGone []PeerGone `json:"peers_gone,omitempty"`
	// STUNSilent are the regions `tailscale debug derp` found a node of
	// that "did not return a IPv4 STUN response" (ipn/localapi
	// debugderp.go); STUNAnswered those that did.
	STUNSilent   []int `json:"stun_silent,omitempty"`
	STUNAnswered []int `json:"stun_answered,omitempty"`
	// RegionLinks are the DERP region ids the input tied to codes, and
	// how: the input's own DERP map, `tailscale debug derp`, a log line
	// naming both, or Tailscale's default map (DefaultRegions).
	RegionLinks []RegionLink `json:"region_links,omitempty"`
}

// PeerRelayLog counts magicsock's peer-relay allocation and handshake
// lines.
type PeerRelayLog struct {
	AllocSent, AllocTimedOut, AllocOK, HandshakeTimedOut, RelayedPongs int
	// Last is the newest line's message, sanitised.
	Last safetext.Text `json:"last,omitempty"`
}

// PeerGone is one "derp-N does not know about peer" line.
type PeerGone struct {
	Region int `json:"region"`
	// Node is the peer's short node key as logged ("[QqQqQ]").
	Node safetext.Text `json:"node"`
	At   time.Time     `json:"at,omitzero"`
	// Count is how many such lines name this peer and region.
	Count int `json:"count"`
}

// RegionLink is one DERP region id tied to its code.
type RegionLink struct {
	ID   int           `json:"id"`
	Code safetext.Text `json:"code"`
	// From is how: "derp map", "debug derp", "log", "default map".
	From string `json:"from"`
}

// DefaultRegions are the region codes of Tailscale's own DERP map for the
// ids it gave them in its source, the one place the tailscale repository
// ties ids to codes: derp/derpmap/derpmap.go Prod() at commit 3d4d976
// (2021-04-21, "add São Paulo (derp11)"; the static map was deleted by
// 506c2fe in June 2021, since when control sends the map). Region ids of
// Tailscale's map have kept these codes; a custom map (headscale, a
// tailnet policy's derpMap) may use the same ids for other regions, so
// these fill a code only when the input holds no DERP map, and a link
// made with them says so.
var DefaultRegions = map[int]string{
	1: "nyc", 2: "sfo", 3: "sin", 4: "fra", 5: "syd", 6: "blr",
	7: "tok", 8: "lhr", 9: "dfw", 10: "sea", 11: "sao",
}

// DefaultRegionID is the id DefaultRegions gives code, 0 when none.
func DefaultRegionID(code string) int {
	for id, c := range DefaultRegions {
		if c == code {
			return id
		}
	}
	return 0
}
