// Package sockdiag lists the TCP connections that run over the tailnet
// (remote in 100.64.0.0/10 or fd7a:115c:a1e0::/48) with their kernel
// tcp_info, and judges each one: send-buffer limited, receive-window
// limited, retransmitting, or healthy. It is a thin NETLINK_SOCK_DIAG client
// (what `ss -ti` uses) on github.com/mdlayher/netlink, plus link attributes
// of tailscale0 through rtnetlink. Linux only: elsewhere Dump and LinkInfo
// return ErrNotLinux. The parsers are portable and fuzzed.
package sockdiag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// ErrNotLinux is returned on other operating systems: sock_diag is Linux only.
var ErrNotLinux = errors.New("sockdiag: per-connection TCP diagnostics are Linux only")

// ErrNoLink is returned by LinkInfo when the interface does not exist
// (tailscaled not running, or running in userspace-networking mode).
var ErrNoLink = errors.New("interface not found")

// ErrShort is wrapped by the parsers for truncated kernel messages.
var ErrShort = errors.New("sock_diag message too short")

// Netlink constants from linux/sock_diag.h and linux/inet_diag.h.
const (
	// NetlinkSockDiag is the netlink protocol number (NETLINK_SOCK_DIAG).
	NetlinkSockDiag = 4
	// SockDiagByFamily is the request message type (SOCK_DIAG_BY_FAMILY).
	SockDiagByFamily = 20
	// SizeofReqV2 is sizeof(struct inet_diag_req_v2).
	SizeofReqV2 = 56
	// SizeofMsg is sizeof(struct inet_diag_msg).
	SizeofMsg = 72
	// AttrInfo carries struct tcp_info (INET_DIAG_INFO).
	AttrInfo = 2
	// AttrCong carries the congestion control name (INET_DIAG_CONG).
	AttrCong = 4
	// AttrSkMemInfo carries the socket's memory counters (INET_DIAG_SKMEMINFO).
	AttrSkMemInfo = 7
)

var (
	tailnetV4 = netip.MustParsePrefix("100.64.0.0/10")
	tailnetV6 = netip.MustParsePrefix("fd7a:115c:a1e0::/48")
)

// IsTailnet reports whether a is a Tailscale address (100.64.0.0/10 or
// fd7a:115c:a1e0::/48; IPv4-mapped IPv6 counts as IPv4).
func IsTailnet(a netip.Addr) bool {
	a = a.Unmap()
	return tailnetV4.Contains(a) || tailnetV6.Contains(a)
}

// TCP states as numbered in include/net/tcp_states.h.
var stateNames = [...]string{
	1: "ESTABLISHED", 2: "SYN-SENT", 3: "SYN-RECV", 4: "FIN-WAIT-1", 5: "FIN-WAIT-2",
	6: "TIME-WAIT", 7: "CLOSE", 8: "CLOSE-WAIT", 9: "LAST-ACK", 10: "LISTEN", 11: "CLOSING",
}

// StateName returns the ss-style name of a TCP state number.
func StateName(s uint8) string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return fmt.Sprintf("STATE-%d", s)
}

// DumpStates is the state bitmask Dump asks for: every connected state
// (LISTEN and TIME-WAIT carry no tcp_info worth reading).
const DumpStates = 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<8 | 1<<9 | 1<<11

// MarshalRequest builds a SOCK_DIAG_BY_FAMILY inet_diag_req_v2 for TCP in
// family (AF_INET 2 or AF_INET6 10) asking for tcp_info, the congestion
// control name and the socket memory counters, followed by the bytecode filter as an
// INET_DIAG_REQ_BYTECODE attribute when filter is not empty.
func MarshalRequest(family uint8, states uint32, filter []byte) []byte {
	b := make([]byte, SizeofReqV2, SizeofReqV2+4+len(filter))
	b[0] = family
	b[1] = 6 // IPPROTO_TCP
	b[2] = 1<<(AttrInfo-1) | 1<<(AttrCong-1) | 1<<(AttrSkMemInfo-1)
	binary.NativeEndian.PutUint32(b[4:8], states)
	// inet_diag_sockid left zero: no single-socket lookup.
	if len(filter) > 0 {
		var h [4]byte
		binary.NativeEndian.PutUint16(h[0:2], uint16(4+len(filter)))
		binary.NativeEndian.PutUint16(h[2:4], attrReqBytecode)
		b = append(append(b, h[:]...), filter...)
	}
	return b
}

// Bytecode filter constants (linux/inet_diag.h).
const (
	attrReqBytecode = 1 // INET_DIAG_REQ_BYTECODE
	bcJmp           = 1 // INET_DIAG_BC_JMP
	bcDCond         = 8 // INET_DIAG_BC_D_COND
)

// TailnetFilter is inet_diag bytecode accepting sockets whose remote address
// is in 100.64.0.0/10 or fd7a:115c:a1e0::/48 (IPv4-mapped included), so the
// kernel skips every other socket before building its tcp_info.
//
// Layout, as ss builds an "or": [v4 cond][jmp][v6 cond]. Each op is
// {code u8, yes u8, no u16}; a condition continues at +yes when true, +no
// when false; reaching the end exactly accepts, end+4 rejects. The kernel's
// audit follows the yes chain, so every op must lie on it: a true v4 cond
// falls onto the jmp, which always takes its no branch to the end.
func TailnetFilter() []byte {
	v4 := tailnetV4.Addr().As4()
	v6 := tailnetV6.Addr().As16()
	const len4, lenJmp, len6 = 4 + 8 + 4, 4, 4 + 8 + 16
	b := make([]byte, 0, len4+lenJmp+len6)
	op := func(code uint8, yes, no int) {
		var h [4]byte
		h[0], h[1] = code, uint8(yes)
		binary.NativeEndian.PutUint16(h[2:4], uint16(no))
		b = append(b, h[:]...)
	}
	// hostcond: {family u8, prefix_len u8, pad u16, port int32 (-1 any), addr}.
	cond := func(family uint8, prefix int, addr []byte) {
		var h [8]byte
		h[0], h[1] = family, uint8(prefix)
		binary.NativeEndian.PutUint32(h[4:8], 0xffffffff)
		b = append(append(b, h[:]...), addr...)
	}
	op(bcDCond, len4, len4+lenJmp)
	cond(2, tailnetV4.Bits(), v4[:])
	op(bcJmp, lenJmp, lenJmp+len6)
	op(bcDCond, len6, len6+4)
	cond(10, tailnetV6.Bits(), v6[:])
	return b
}

// Conn is one TCP connection with its health.
type Conn struct {
	Local  netip.AddrPort `json:"local"`
	Remote netip.AddrPort `json:"remote"`
	// State is the TCP state ("ESTABLISHED").
	State string `json:"state"`
	// RecvQ and SendQ are bytes queued (inet_diag_msg idiag_rqueue/wqueue).
	RecvQ uint32 `json:"recv_q"`
	SendQ uint32 `json:"send_q"`
	UID   uint32 `json:"uid"`
	Inode uint32 `json:"inode"`
	// CC is the congestion control ("cubic", "bbr"); empty when not reported.
	CC string `json:"cc,omitempty"`
	// Info is the kernel's tcp_info; nil when the kernel sent none.
	Info *TCPInfo `json:"info,omitempty"`
	// Mem is the socket's memory (SO_SNDBUF/SO_RCVBUF in effect, queued
	// bytes), as `ss -m` shows it; nil when the kernel sent none.
	Mem *SkMem `json:"skmem,omitempty"`
	// Verdict is the health judgement of Info.
	Verdict Verdict `json:"verdict"`
}

// ParseMessage decodes one inet_diag_msg with its attributes. Errors wrap
// ErrShort for truncated input; unknown attributes are ignored.
func ParseMessage(b []byte) (Conn, error) {
	var c Conn
	if len(b) < SizeofMsg {
		return c, fmt.Errorf("%w: inet_diag_msg is %d bytes, want %d", ErrShort, len(b), SizeofMsg)
	}
	family := b[0]
	c.State = StateName(b[1])
	sport := binary.BigEndian.Uint16(b[4:6])
	dport := binary.BigEndian.Uint16(b[6:8])
	var src, dst netip.Addr
	switch family {
	case 2: // AF_INET
		src = netip.AddrFrom4([4]byte(b[8:12]))
		dst = netip.AddrFrom4([4]byte(b[24:28]))
	case 10: // AF_INET6
		src = netip.AddrFrom16([16]byte(b[8:24])).Unmap()
		dst = netip.AddrFrom16([16]byte(b[24:40])).Unmap()
	default:
		return c, fmt.Errorf("sock_diag: unexpected address family %d", family)
	}
	c.Local = netip.AddrPortFrom(src, sport)
	c.Remote = netip.AddrPortFrom(dst, dport)
	// id ends at 4+48 = 52: expires 52, rqueue 56, wqueue 60, uid 64, inode 68.
	c.RecvQ = binary.NativeEndian.Uint32(b[56:60])
	c.SendQ = binary.NativeEndian.Uint32(b[60:64])
	c.UID = binary.NativeEndian.Uint32(b[64:68])
	c.Inode = binary.NativeEndian.Uint32(b[68:72])
	rest := b[SizeofMsg:]
	for len(rest) >= 4 {
		l := int(binary.NativeEndian.Uint16(rest[0:2]))
		typ := binary.NativeEndian.Uint16(rest[2:4]) & 0x3fff // strip NLA_F_NESTED/NET_BYTEORDER
		if l < 4 || l > len(rest) {
			return c, fmt.Errorf("%w: attribute length %d with %d bytes left", ErrShort, l, len(rest))
		}
		val := rest[4:l]
		switch typ {
		case AttrInfo:
			info := ParseTCPInfo(val)
			c.Info = &info
		case AttrCong:
			c.CC = cString(val)
		case AttrSkMemInfo:
			if m, ok := ParseSkMem(val); ok {
				c.Mem = &m
			}
		}
		adv := (l + 3) &^ 3
		if adv > len(rest) {
			adv = len(rest)
		}
		rest = rest[adv:]
	}
	c.Verdict = Classify(c, Limits{})
	return c, nil
}

// SkMem is INET_DIAG_SKMEMINFO (`ss -m`'s skmem:(r…,rb…,t…,tb…,f…,w…,o…,bl…,d…)),
// bytes unless said otherwise.
type SkMem struct {
	RmemAlloc uint32 `json:"rmem_alloc"` // r: receive queue memory in use
	RcvBuf    uint32 `json:"rcvbuf"`     // rb: sk_rcvbuf, the receive buffer in effect
	WmemAlloc uint32 `json:"wmem_alloc"` // t: memory of packets in flight in the stack
	SndBuf    uint32 `json:"sndbuf"`     // tb: sk_sndbuf, the send buffer in effect
	FwdAlloc  uint32 `json:"fwd_alloc"`  // f: memory reserved ahead
	WmemQueue uint32 `json:"wmem_queued"`
	OptMem    uint32 `json:"optmem"`
	Backlog   uint32 `json:"backlog"`
	Drops     uint32 `json:"drops"` // packets dropped by this socket (Linux ≥ 4.1)
}

// ParseSkMem decodes INET_DIAG_SKMEMINFO: an array of u32. Kernels before
// 4.1 send 8 values (no drops); fewer than 6 is rejected (ok false).
func ParseSkMem(b []byte) (SkMem, bool) {
	n := len(b) / 4
	if n < 6 {
		return SkMem{}, false
	}
	v := func(i int) uint32 {
		if i >= n {
			return 0
		}
		return binary.NativeEndian.Uint32(b[4*i:])
	}
	return SkMem{RmemAlloc: v(0), RcvBuf: v(1), WmemAlloc: v(2), SndBuf: v(3), FwdAlloc: v(4),
		WmemQueue: v(5), OptMem: v(6), Backlog: v(7), Drops: v(8)}, true
}

// cString returns the bytes before the first NUL, keeping only printable
// ASCII (a congestion control name is a short identifier).
func cString(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, x := range b {
		if x == 0 {
			break
		}
		if x >= 0x21 && x < 0x7f {
			out = append(out, x)
		}
		if len(out) >= 16 {
			break
		}
	}
	return string(out)
}

// TCPInfo is the part of the kernel's struct tcp_info tailpath reads
// (layout of golang.org/x/sys/unix.TCPInfo, linux/tcp.h). Older kernels send
// a shorter struct: fields beyond what arrived are nil ("unknown"), never
// zero. Durations come from microsecond fields; rates are bytes per second.
type TCPInfo struct {
	// Len is how many bytes of tcp_info the kernel sent.
	Len int `json:"len"`
	// State is the TCP state number; CAState the congestion-avoidance state
	// (0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss).
	State   uint8 `json:"state"`
	CAState uint8 `json:"ca_state"`
	// Retransmits is how many RTOs in a row hit the oldest unacknowledged
	// segment (tcpi_retransmits); Backoff is the RTO backoff exponent.
	Retransmits uint8 `json:"retransmits"`
	Backoff     uint8 `json:"backoff"`

	RTO           *time.Duration `json:"rto_ns,omitempty"`            // tcpi_rto
	SndMSS        *uint32        `json:"snd_mss,omitempty"`           // bytes
	RcvMSS        *uint32        `json:"rcv_mss,omitempty"`           // bytes
	Unacked       *uint32        `json:"unacked,omitempty"`           // segments in flight
	Lost          *uint32        `json:"lost,omitempty"`              // segments
	Retrans       *uint32        `json:"retrans,omitempty"`           // segments being retransmitted now
	PMTU          *uint32        `json:"pmtu,omitempty"`              // path MTU the socket uses, bytes
	RTT           *time.Duration `json:"rtt_ns,omitempty"`            // smoothed, tcpi_rtt
	RTTVar        *time.Duration `json:"rttvar_ns,omitempty"`         // tcpi_rttvar
	SndCwnd       *uint32        `json:"snd_cwnd,omitempty"`          // segments
	AdvMSS        *uint32        `json:"advmss,omitempty"`            // MSS the route allows, bytes
	TotalRetrans  *uint32        `json:"total_retrans,omitempty"`     // segments over the connection's life
	PacingRate    *uint64        `json:"pacing_rate,omitempty"`       // bytes/s (Linux ≥ 3.15)
	BytesAcked    *uint64        `json:"bytes_acked,omitempty"`       // Linux ≥ 4.1
	BytesRecv     *uint64        `json:"bytes_received,omitempty"`    // Linux ≥ 4.1
	SegsOut       *uint32        `json:"segs_out,omitempty"`          // Linux ≥ 4.2
	NotsentBytes  *uint32        `json:"notsent_bytes,omitempty"`     // Linux ≥ 4.6
	MinRTT        *time.Duration `json:"min_rtt_ns,omitempty"`        // Linux ≥ 4.6
	DeliveryRate  *uint64        `json:"delivery_rate,omitempty"`     // bytes/s, Linux ≥ 4.9
	BusyTime      *time.Duration `json:"busy_ns,omitempty"`           // time with data in flight, Linux ≥ 4.10
	RwndLimited   *time.Duration `json:"rwnd_limited_ns,omitempty"`   // stalled by the peer's receive window
	SndbufLimited *time.Duration `json:"sndbuf_limited_ns,omitempty"` // stalled by our send buffer
	BytesSent     *uint64        `json:"bytes_sent,omitempty"`        // including retransmits, Linux ≥ 4.19
	BytesRetrans  *uint64        `json:"bytes_retrans,omitempty"`     // Linux ≥ 4.19
}

// Offsets into struct tcp_info (checked against x/sys/unix.TCPInfo in tests).
const (
	offRTO           = 8
	offSndMSS        = 16
	offRcvMSS        = 20
	offUnacked       = 24
	offLost          = 32
	offRetrans       = 36
	offPMTU          = 60
	offRTT           = 68
	offRTTVar        = 72
	offSndCwnd       = 80
	offAdvMSS        = 84
	offTotalRetrans  = 100
	offPacingRate    = 104
	offBytesAcked    = 120
	offBytesReceived = 128
	offSegsOut       = 136
	offNotsentBytes  = 144
	offMinRTT        = 148
	offDeliveryRate  = 160
	offBusyTime      = 168
	offRwndLimited   = 176
	offSndbufLimited = 184
	offBytesSent     = 200
	offBytesRetrans  = 208
)

// ParseTCPInfo decodes a tcp_info of any length; fields the kernel did not
// send stay nil. It never fails: an empty input gives an all-unknown value.
func ParseTCPInfo(b []byte) TCPInfo {
	t := TCPInfo{Len: len(b)}
	if len(b) >= 2 {
		t.State, t.CAState = b[0], b[1]
	}
	if len(b) >= 5 {
		t.Retransmits, t.Backoff = b[2], b[4]
	}
	// One backing allocation for every known field instead of one each:
	// a dump of thousands of sockets parses thousands of these.
	var store struct {
		d   [7]time.Duration
		u32 [12]uint32
		u64 [7]uint64
	}
	nd, n32, n64 := 0, 0, 0
	u32 := func(off int) *uint32 {
		if off+4 > len(b) {
			return nil
		}
		p := &store.u32[n32]
		n32++
		*p = binary.NativeEndian.Uint32(b[off : off+4])
		return p
	}
	u64 := func(off int) *uint64 {
		if off+8 > len(b) {
			return nil
		}
		p := &store.u64[n64]
		n64++
		*p = binary.NativeEndian.Uint64(b[off : off+8])
		return p
	}
	dur := func(us uint64) *time.Duration {
		p := &store.d[nd]
		nd++
		*p = time.Duration(min(us, uint64(1<<63-1)/1000)) * time.Microsecond
		return p
	}
	us32 := func(off int) *time.Duration {
		if off+4 > len(b) {
			return nil
		}
		return dur(uint64(binary.NativeEndian.Uint32(b[off : off+4])))
	}
	us64 := func(off int) *time.Duration {
		if off+8 > len(b) {
			return nil
		}
		return dur(binary.NativeEndian.Uint64(b[off : off+8]))
	}
	t.RTO = us32(offRTO)
	t.SndMSS = u32(offSndMSS)
	t.RcvMSS = u32(offRcvMSS)
	t.Unacked = u32(offUnacked)
	t.Lost = u32(offLost)
	t.Retrans = u32(offRetrans)
	t.PMTU = u32(offPMTU)
	t.RTT = us32(offRTT)
	t.RTTVar = us32(offRTTVar)
	t.SndCwnd = u32(offSndCwnd)
	t.AdvMSS = u32(offAdvMSS)
	t.TotalRetrans = u32(offTotalRetrans)
	t.PacingRate = u64(offPacingRate)
	t.BytesAcked = u64(offBytesAcked)
	t.BytesRecv = u64(offBytesReceived)
	t.SegsOut = u32(offSegsOut)
	t.NotsentBytes = u32(offNotsentBytes)
	t.MinRTT = us32(offMinRTT)
	t.DeliveryRate = u64(offDeliveryRate)
	t.BusyTime = us64(offBusyTime)
	t.RwndLimited = us64(offRwndLimited)
	t.SndbufLimited = us64(offSndbufLimited)
	t.BytesSent = u64(offBytesSent)
	t.BytesRetrans = u64(offBytesRetrans)
	return t
}

// share returns part/busy in [0,1] and whether both are known and busy > 0.
func share(part, busy *time.Duration) (float64, bool) {
	if part == nil || busy == nil || *busy <= 0 {
		return 0, false
	}
	s := float64(*part) / float64(*busy)
	if s > 1 {
		s = 1
	}
	return s, true
}

// SndbufShare is the share of busy time stalled by the send buffer; ok is
// false when unknown (kernel < 4.10, or never busy).
func (t *TCPInfo) SndbufShare() (float64, bool) { return share(t.SndbufLimited, t.BusyTime) }

// RwndShare is the share of busy time stalled by the peer's receive window.
func (t *TCPInfo) RwndShare() (float64, bool) { return share(t.RwndLimited, t.BusyTime) }

// RetransShare is retransmitted bytes over bytes sent (Linux ≥ 4.19), else
// total retransmitted segments over segments out; ok is false when unknown
// or nothing was sent.
func (t *TCPInfo) RetransShare() (float64, bool) {
	if t.BytesRetrans != nil && t.BytesSent != nil && *t.BytesSent > 0 {
		return float64(*t.BytesRetrans) / float64(*t.BytesSent), true
	}
	if t.TotalRetrans != nil && t.SegsOut != nil && *t.SegsOut > 0 {
		return float64(*t.TotalRetrans) / float64(*t.SegsOut), true
	}
	return 0, false
}
