package sockdiag

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Client is an open NETLINK_SOCK_DIAG socket, reusable across polls. It is
// not safe for concurrent use.
type Client struct {
	c   *netlink.Conn
	raw syscall.RawConn
	buf []byte
}

// Dial opens a sock_diag netlink socket. Any user may dump sockets; only
// root sees other users' sockets' details on hardened kernels.
func Dial() (*Client, error) {
	c, err := netlink.Dial(NetlinkSockDiag, nil)
	if err != nil {
		return nil, fmt.Errorf("sockdiag: open netlink socket: %w", err)
	}
	raw, err := c.SyscallConn()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("sockdiag: %w", err)
	}
	return &Client{c: c, raw: raw, buf: make([]byte, recvBufSize)}, nil
}

// Close closes the socket.
func (cl *Client) Close() error { return cl.c.Close() }

// Options select what Dump returns.
type Options struct {
	// Match selects connections by remote address; nil means IsTailnet,
	// which also runs TailnetFilter in the kernel so other sockets cost
	// almost nothing.
	Match func(remote netip.Addr) bool
}

// Dump lists the TCP connections (IPv4 and IPv6) whose remote address
// matches, each with tcp_info, congestion control and verdict. ctx's
// deadline bounds the netlink exchange.
func (cl *Client) Dump(ctx context.Context, opts Options) ([]Conn, error) {
	match := opts.Match
	var filter []byte
	if match == nil {
		match = IsTailnet
		filter = tailnetBytecode
	}
	if dl, ok := ctx.Deadline(); ok {
		cl.c.SetDeadline(dl)
	} else {
		cl.c.SetDeadline(time.Time{})
	}
	var out []Conn
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		err := cl.dumpFamily(fam, filter, func(b []byte) error {
			if len(b) < SizeofMsg {
				return nil
			}
			// Filter on the raw remote address before the full parse: most
			// sockets on a busy host are not tailnet ones.
			if !match(remoteAddr(b)) {
				return nil
			}
			c, err := ParseMessage(b)
			if err != nil {
				return err
			}
			out = append(out, c)
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("sockdiag: dump family %d: %w", fam, err)
		}
	}
	return out, nil
}

// remoteAddr extracts the remote address of an inet_diag_msg of at least
// SizeofMsg bytes.
func remoteAddr(b []byte) netip.Addr {
	if b[0] == unix.AF_INET {
		return netip.AddrFrom4([4]byte(b[24:28]))
	}
	return netip.AddrFrom16([16]byte(b[24:40])).Unmap()
}

// Dump opens a socket, dumps once (see Client.Dump) and closes it.
func Dump(ctx context.Context, opts Options) ([]Conn, error) {
	cl, err := Dial()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return cl.Dump(ctx, opts)
}

var tailnetBytecode = TailnetFilter()

// recvBufSize is the receive buffer per recvmsg. The kernel sizes each dump
// batch to the largest buffer the reader has offered (up to 32 KiB), so
// reading with a big buffer, rather than peeking first, cuts the number of
// batches (and syscalls) eight-fold on a host with thousands of sockets.
const recvBufSize = 64 << 10

// Netlink message header constants (linux/netlink.h).
const (
	nlmsgHdrLen = 16
	nlmsgError  = 2
	nlmsgDone   = 3
)

// dumpFamily sends one SOCK_DIAG_BY_FAMILY dump request through the
// mdlayher/netlink connection and reads the multipart reply itself with a
// large buffer, calling fn with each message payload.
func (cl *Client) dumpFamily(fam uint8, filter []byte, fn func([]byte) error) error {
	req, err := cl.c.Send(netlink.Message{
		Header: netlink.Header{Type: SockDiagByFamily, Flags: netlink.Request | netlink.Dump},
		Data:   MarshalRequest(fam, DumpStates, filter),
	})
	if err != nil {
		return err
	}
	seq := req.Header.Sequence
	for {
		var n int
		var rerr error
		err := cl.raw.Read(func(fd uintptr) bool {
			n, _, rerr = unix.Recvfrom(int(fd), cl.buf, unix.MSG_DONTWAIT)
			return !errors.Is(rerr, unix.EAGAIN) && !errors.Is(rerr, unix.EINTR)
		})
		if err != nil {
			return err
		}
		if rerr != nil {
			return rerr
		}
		done, err := walkMessages(cl.buf[:n], seq, fn)
		if err != nil || done {
			return err
		}
	}
}

// walkMessages calls fn with the payload of each netlink message in b that
// answers seq. done is true at NLMSG_DONE; an NLMSG_ERROR becomes an error.
func walkMessages(b []byte, seq uint32, fn func([]byte) error) (done bool, err error) {
	for len(b) >= nlmsgHdrLen {
		l := int(binary.NativeEndian.Uint32(b[0:4]))
		typ := binary.NativeEndian.Uint16(b[4:6])
		mseq := binary.NativeEndian.Uint32(b[8:12])
		if l < nlmsgHdrLen || l > len(b) {
			return false, fmt.Errorf("%w: netlink message length %d with %d bytes left", ErrShort, l, len(b))
		}
		payload := b[nlmsgHdrLen:l]
		adv := (l + 3) &^ 3
		if adv > len(b) {
			adv = len(b)
		}
		b = b[adv:]
		if mseq != seq {
			continue // a stale reply to an earlier, abandoned request
		}
		switch typ {
		case nlmsgDone:
			return true, nil
		case nlmsgError:
			if len(payload) >= 4 {
				if code := int32(binary.NativeEndian.Uint32(payload[0:4])); code != 0 {
					return true, syscall.Errno(-code)
				}
			}
			return true, nil
		}
		if err := fn(payload); err != nil {
			return false, err
		}
	}
	return false, nil
}
