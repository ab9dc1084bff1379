package lab

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
)

// ObserverIP is the observer's IPv4 tailnet address.
func (l *Lab) ObserverIP() netip.Addr { return l.observer.ip }

// Listen listens on the observer's tailnet addresses (network "tcp",
// addr ":PORT"), as `tailpath serve --listen <tailnet IP>:PORT` does on a
// real node: the connections come from the lab's other nodes, with their
// tailnet addresses, which the observer's LocalAPI can WhoIs.
func (l *Lab) Listen(network, addr string) (net.Listener, error) {
	return l.observer.srv.Listen(network, addr)
}

// HTTPClient returns an HTTP client whose connections leave from the
// in-process node named name (DirectName or IdleName) over the tailnet.
func (l *Lab) HTTPClient(name string) (*http.Client, error) {
	for _, n := range l.inproc {
		if n != l.observer && n.srv.Hostname == name {
			return n.srv.HTTPClient(), nil
		}
	}
	return nil, fmt.Errorf("lab: no in-process node %q (only %s and %s dial from this process)", name, DirectName, IdleName)
}
