package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"
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

// ServeDemo serves the demo's sources (DemoSources: the lab's observer,
// the replayed board, the sandbox tuning, the lab's control API) as
// tailpath serve does, until ctx ends.
func ServeDemo(ctx context.Context, srcs Sources, addr string, stderr io.Writer) error {
	s := &Serve{Sources: srcs, PingEvery: time.Minute, Log: stderr}
	s.Snapshot = s.SnapshotFile
	ln, err := Listen(addr, "--serve", stderr)
	if err != nil {
		return err
	}
	return s.Run(ctx, ln)
}
