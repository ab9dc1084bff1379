package probes

import (
	"strconv"
	"strings"
)

// The facts that refute a rule (Rule.Refutes): present anywhere in the
// input, each sets the rule aside whatever its own check found. Each says
// what it is, where it comes from, which of the rule's checks it
// contradicts, and, in its note, the Tailscale code that makes it a
// refutation.

// udpWorksNote is why a path proves UDP works whatever netcheck said.
const udpWorksNote = "magicsock sends UDP whatever netcheck says; a direct address exists only after a UDP pong came back on it (wgengine/magicsock/endpoint.go handlePongConnLocked), and a peer relay is UDP from the same sockets. netcheck's WorkingUDP is only whether STUN to UDP 3478 of the DERP servers got a reply (net/netcheck addNodeLatency is the only place it becomes true), which a self-hosted DERP with 3478 closed, or a firewall dropping only 3478, never gives"

// refUDPWorks: some path proves UDP works at this end: a peer is direct
// or over a peer relay (this one included), or a DISCO pong came back
// directly.
var refUDPWorks = Refuter{
	ID: "udp-works", Field: "Tailnet.UDP", Source: SourceLocalAPI,
	Claims:  []string{"NetInfo.WorkingUDP", "Log.Netcheck", "Self.CapMap"},
	refutes: (*diag).udpProven,
	holds:   (*diag).udpWorksHereNow,
}

// udpWorksHereNow is udpProven's answer without its words.
func (d *diag) udpWorksHereNow() bool {
	if d.p.Path.Kind == PathPeerRelay {
		if a, ok := peerRelayAddr(string(d.p.Path.PeerRelay)); ok && routableAddr(a) {
			return true
		}
	}
	return d.tn.UDPWorks()
}

// udpProven reports whether a path in the gather proves UDP works here.
func (d *diag) udpProven() (value, short, note string, ok bool) {
	if d.p.Path.Kind == PathPeerRelay {
		if a, ok := peerRelayAddr(string(d.p.Path.PeerRelay)); ok && routableAddr(a) {
			return "this peer, via a peer relay " + string(d.p.Path.PeerRelay), "UDP works here (this path is a peer relay at a public address)", udpWorksNote, true
		}
	}
	if d.tn.UDPWorks() {
		who := "peer " + string(d.tn.UDP)
		return who + ": " + string(d.tn.UDPHow), "UDP works here (" + who + " is " + string(d.tn.UDPHow) + ")", udpWorksNote, true
	}
	return "", "", "", false
}

// refDirectPong: this peer's fresh DISCO run got a pong directly, so a
// direct path between the two ends works: no cause that says it cannot
// stands (the path relays for now, and may go direct at the next ping).
var refDirectPong = Refuter{
	ID: "direct-pong", Field: "PingRun", Source: "probe",
	Claims: []string{"WhoIs.Node.Endpoints", "NetInfo.WorkingUDP", "Log.Netcheck", "NetInfo.MappingVariesByDestIP",
		"NetInfo.HavePortMap", "Peer.NetInfo.MappingVariesByDestIP", "API.clientConnectivity.mappingVariesByDestIP",
		"PeerSnapshot.NetInfo.MappingVariesByDestIP", "Peer.NetInfo.WorkingUDP", "API.clientConnectivity.clientSupports.udp",
		"PeerSnapshot.NetInfo.WorkingUDP", "NetInfo.WorkingIPv6", "Self.Endpoints", "Peer.Endpoints", "Host.Firewall",
		"Host.Interfaces", "Peer.NetInfo.HavePortMap", "API.clientConnectivity.clientSupports.upnp/pmp/pcp", "PeerSnapshot.NetInfo.HavePortMap"},
	refutes: func(d *diag) (string, string, string, bool) {
		r := d.p.PingRun
		if r == nil || !r.Direct || !d.fresh(r.At, PingRunMaxAge) {
			return "", "", "", false
		}
		return pingRunText(r), "a DISCO pong came directly (" + string(r.Via) + ")",
			"the last DISCO run got a pong directly from the peer (wgengine/magicsock/endpoint.go handlePongConnLocked): UDP crosses both ends' NATs and firewalls, so nothing that says a direct path cannot work holds; the path relays for now and a ping re-tries it", true
	},
}

// refDISCOAnswers: the peer answered DISCO pings lately, so it runs: a
// pong is sealed with its disco key by its running magicsock
// (wgengine/magicsock/magicsock.go handlePingLocked answers every ping
// it can open), whatever control says of its connection.
var refDISCOAnswers = Refuter{
	ID: "disco-pongs", Field: "PingRun", Source: "probe",
	Claims: []string{"WhoIs.Node.Online", "Status.Online", "Status.LastSeen", "pasted status text", "Status.LastHandshake"},
	refutes: func(d *diag) (string, string, string, bool) {
		r := d.p.PingRun
		if r == nil || r.Pongs == 0 || !d.fresh(r.At, PingRunMaxAge) {
			return "", "", "", false
		}
		return pingRunText(r), "the peer answered DISCO pings",
			"a DISCO pong is sealed with the peer's disco key by its running magicsock (wgengine/magicsock/magicsock.go handlePingLocked), so the peer is up; tailcfg.Node.Online is only its connection to the control server", true
	},
}

// refRxGrowing: WireGuard packets from the peer kept arriving over the
// last poll: wireguard-go counts received bytes only for handshake
// messages it authenticated and data it decrypted (device/receive.go),
// so the peer answers.
var refRxGrowing = Refuter{
	ID: "rx-growing", Field: "Status.RxBytes", Source: SourceLocalAPI,
	Claims: []string{"IPNBus.PeerState", "Status.LastHandshake", "Status.RxBytes"},
	refutes: func(d *diag) (string, string, string, bool) {
		p := d.p
		// Handshake initiations the peer keeps sending while our
		// responses are lost count too (device/receive.go adds a
		// consumed initiation's 148 bytes), one every 5 s (REKEY_TIMEOUT):
		// only more than initiations alone give is a session.
		if !p.RatesKnown || p.RxRate <= initiationRate {
			return "", "", "", false
		}
		return "growing (" + strconv.FormatFloat(p.RxRate, 'f', 0, 64) + " B/s)", "WireGuard packets from the peer keep arriving",
			"wireguard-go counts received bytes only for handshake messages it authenticated and data it decrypted (device/receive.go RoutineHandshake, RoutineSequentialReceiver), and more arrives than the peer's handshake initiations alone give: the peer speaks WireGuard with this node", true
	},
}

// refIPv6Works: a peer is direct over IPv6, so IPv6 works here.
var refIPv6Works = Refuter{
	ID: "ipv6-works", Field: "Tailnet.IPv6", Source: SourceLocalAPI,
	Claims: []string{"NetInfo.WorkingIPv6"},
	refutes: func(d *diag) (string, string, string, bool) {
		if d.tn == nil || d.tn.IPv6 == "" {
			return "", "", "", false
		}
		who := "peer " + string(d.tn.IPv6)
		return who + ": direct " + d.tn.IPv6Addr.String(), "IPv6 works here (" + who + " is direct over IPv6)",
			"a direct address exists only after a UDP pong came back on it (wgengine/magicsock/endpoint.go handlePongConnLocked), so UDP over IPv6 works from here, whatever netcheck said", true
	},
}

// refRegionUp: the region the rule says cannot be reached is shown
// reachable by another fact of the input (a peer relayed through it
// with bytes back, or tailscaled's "derp-N connected").
var refRegionUp = Refuter{
	ID: "region-up", Field: "Tailnet.RegionsUp", Source: "localapi or log",
	Claims: []string{"Status.Health", "Log.DERPErrors"},
	refutes: func(d *diag) (string, string, string, bool) {
		id := d.derpFailing
		if id == anyRegion {
			// "any region" or a proxy in the way of all: one that works
			// refutes it (a relayed peer's bytes coming back show one does).
			if d.tn != nil && d.tn.AnyRegionUp != "" {
				how := d.tn.AnyRegionUp
				return string(how), "a DERP region is reachable: " + string(how),
					"relayed bytes come back only over a working DERP connection (wgengine/magicsock/derp.go runDerpReader; a reply may come through either end's home region, derpWriteChanForRegion): some region is reachable from here", true
			}
			id = d.tn.anyRegionUp()
		}
		how := d.tn.RegionUp(id)
		if how == "" {
			return "", "", "", false
		}
		name := d.regionName(id)
		return name + ": " + string(how), "region " + name + " is reachable: " + string(how),
			"relayed bytes come back only over a working DERP connection (wgengine/magicsock/derp.go runDerpReader), and magicsock logs \"derp-N connected\" only on success: the region is reachable from here", true
	},
}

// refUDPReceived: a peer is direct over the family whose receive loop
// tailscaled warns has stopped, so UDP of that family is received: the
// pong that made the address trusted came in on it.
var refUDPReceived = Refuter{
	ID: "udp-received", Field: "Tailnet.UDP", Source: SourceLocalAPI,
	Claims: []string{"Status.Health"},
	refutes: func(d *diag) (string, string, string, bool) {
		const note = "a direct address is trusted only for 6.5 s after a pong received on it (wgengine/magicsock/endpoint.go trustUDPAddrDuration, handlePongConnLocked), so UDP of that family comes in; the health warning is older than the path, or about a socket tailscaled has since rebound"
		if d.tn == nil {
			return "", "", "", false
		}
		if d.rxStopped == "ipv6" {
			if d.tn.IPv6 == "" {
				return "", "", "", false
			}
			who := "peer " + string(d.tn.IPv6)
			return who + ": direct " + d.tn.IPv6Addr.String(), "UDP over IPv6 is received here (" + who + " is direct over IPv6)", note, true
		}
		how := string(d.tn.UDPHow)
		if !strings.HasPrefix(how, "direct ") || strings.Contains(how, "[") {
			return "", "", "", false
		}
		who := "peer " + string(d.tn.UDP)
		return who + ": " + how, "UDP over IPv4 is received here (" + who + " is direct)", note, true
	},
}

// refPeerUDP: this path runs over a peer relay, which the peer reaches
// over UDP from its own magicsock sockets: its UDP works.
var refPeerUDP = Refuter{
	ID: "peer-udp-works", Field: "Status.PeerRelay", Source: SourceLocalAPI,
	Claims: []string{"Peer.NetInfo.WorkingUDP", "API.clientConnectivity.clientSupports.udp", "PeerSnapshot.NetInfo.WorkingUDP"},
	refutes: func(d *diag) (string, string, string, bool) {
		if d.p.Path.Kind != PathPeerRelay {
			return "", "", "", false
		}
		return string(d.p.Path.PeerRelay), "the peer's UDP works (this path is a peer relay)",
			"a peer relay carries Geneve-wrapped UDP from both ends' magicsock sockets (wgengine/magicsock relaymanager), so the peer sends and receives UDP; its netcheck's WorkingUDP is only STUN to UDP 3478", true
	},
}

// pingRunText words a DISCO run for a check's value.
func pingRunText(r *PingRun) string {
	s := strconv.Itoa(r.Tries) + " tries, " + strconv.Itoa(r.Pongs) + " pongs"
	if r.Via != "" {
		s += ", last via " + string(r.Via)
	}
	if r.Direct {
		s += ", direct"
	}
	return s
}

// initiationRate is the receive rate, in bytes per second, that a peer's
// handshake initiations alone give (148 bytes every 5 s, wireguard-go's
// REKEY_TIMEOUT), with room for two at once.
const initiationRate = 2 * 148.0 / 5
