package app

import (
	"fmt"
	"io"
	"net"
	"net/netip"
)

// Listen listens for serve on addr (an IP or localhost, and a port, as
// the flag was checked), says where on w, and warns when it is not
// loopback. flag names addr in errors.
func Listen(addr, flag string, w io.Writer) (net.Listener, error) {
	// An IPv4 address means IPv4 only: Go listens on 0.0.0.0 dual-stack
	// (as [::]) otherwise.
	network := "tcp"
	if ap, err := netip.ParseAddrPort(addr); err == nil && ap.Addr().Is4() {
		network = "tcp4"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, addr, err)
	}
	a := ln.Addr().(*net.TCPAddr)
	fmt.Fprintf(w, "tailpath serve: listening on http://%s (/metrics, /snapshot.json, /healthz)\n", a)
	if ip, ok := netip.AddrFromSlice(a.IP); ok && !ip.Unmap().IsLoopback() {
		fmt.Fprintf(w, "tailpath serve: %s is not loopback: tailnet nodes --allow names may read (default: this node's user's), and callers presenting the --token-file token; others are refused\n", a.IP)
	}
	return ln, nil
}
