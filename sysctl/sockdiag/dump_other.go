//go:build !linux

package sockdiag

import (
	"context"
	"net/netip"
)

// Client is unavailable off Linux.
type Client struct{}

// Dial returns ErrNotLinux.
func Dial() (*Client, error) { return nil, ErrNotLinux }

// Close does nothing.
func (cl *Client) Close() error { return nil }

// Options select what Dump returns.
type Options struct {
	// Match selects connections by remote address; nil means IsTailnet.
	Match func(remote netip.Addr) bool
}

// Dump returns ErrNotLinux.
func (cl *Client) Dump(ctx context.Context, opts Options) ([]Conn, error) { return nil, ErrNotLinux }

// Dump returns ErrNotLinux.
func Dump(ctx context.Context, opts Options) ([]Conn, error) { return nil, ErrNotLinux }
