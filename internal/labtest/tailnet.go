package labtest

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"

	"github.com/tailpath/tailpath/probes/lab"
)

// DaemonEnv is the environment an outside tailscaled needs to join l
// hermetically: no log uploads, no port mapping, no captive-portal probe
// to Tailscale's servers, a panic instead of contacting production
// control, and only its STUN-learned 127.0.0.1 endpoint advertised (so
// direct paths read 127.0.0.1:port). Append it to the daemon's
// environment; `tailscale up --login-server l.ControlURL` joins it.
func DaemonEnv(l *lab.Lab) []string {
	return []string{
		"TS_DEBUG_OMIT_LOCAL_ADDRS=1",
		"TS_NO_LOGS_NO_SUPPORT=true",
		"TS_DISABLE_PORTMAPPER=1",
		"TS_ASSUME_NETWORK_UP_FOR_TEST=1",
		"TS_PANIC_IF_HIT_MAIN_CONTROL=1",
		"TS_NETCHECK_GENERATE_204_URL=" + l.ControlURL + "/generate_204",
	}
}

// Listen listens on the observer's tailnet addresses (network "tcp",
// addr ":PORT"), as `tailpath serve --listen <tailnet IP>:PORT` does on a
// real node: the connections come from the lab's other nodes, with their
// tailnet addresses, which the observer's LocalAPI can WhoIs.
func Listen(l *lab.Lab, network, addr string) (net.Listener, error) {
	return l.Nodes[lab.ObserverName].Listen(network, addr)
}

// HTTPClient returns an HTTP client whose connections leave from the
// in-process node named name (lab.DirectName or lab.IdleName) over the
// tailnet.
func HTTPClient(l *lab.Lab, name string) (*http.Client, error) {
	if n := l.Nodes[name]; n != nil && name != lab.ObserverName {
		return n.HTTPClient(), nil
	}
	return nil, fmt.Errorf("lab: no in-process node %q (only %s and %s dial from this process)", name, lab.DirectName, lab.IdleName)
}

// SetPeerEndpoints replaces the UDP endpoints control lists for the lab
// peer name and sends the changed netmap to every node, as a real control
// server does when a node reports new endpoints; tailscaled passes the
// change to IPN bus watchers as a peer patch. Use it on the offline peer:
// a running node would soon report its own endpoints again.
func SetPeerEndpoints(l *lab.Lab, name string, eps []netip.AddrPort) error {
	var ip netip.Addr
	for _, p := range l.Peers() {
		if p.Name == name {
			ip = p.TailscaleIP
		}
	}
	if !ip.IsValid() {
		return fmt.Errorf("lab: no peer %q", name)
	}
	for _, n := range l.Control.AllNodes() {
		for _, a := range n.Addresses {
			if a.Addr() == ip {
				n = n.Clone()
				n.Endpoints = slices.Clone(eps)
				l.Control.UpdateNode(n)
				return nil
			}
		}
	}
	return fmt.Errorf("lab: control does not list peer %q (%v)", name, ip)
}
