package labtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"tailscale.com/net/stun"
)

// DelayRelay is the NAT lab's delay element: a userspace relay in front of
// one DERP region's addresses (its DERP server's TCP port and its STUN
// port), which holds every chunk and datagram back by half of Delay in
// each direction, so the region measures Delay farther away to STUN and
// HTTPS probes alike and a relayed packet through it takes as much
// longer. The lab's kernel has no netem, so this stands in for `tc qdisc
// add … netem delay`.
//
// One goroutine per flow and direction reads, and one writes what was read
// once its time has come: the delay is a pipe's, not a stop-and-wait, and
// the order within a flow is kept. A change of Delay holds from the next
// chunk or datagram on.
//
// A STUN answer coming back through it carries the relay's own address
// as the asker's (the STUN server sees the relay, not the node): the relay
// rewrites it to the address the asker's datagram came from, as a STUN
// server at the relay's address would have answered, so netcheck's
// mapping (MappingVariesByDestIP, the public endpoint) stays the node's
// own.
type DelayRelay struct {
	delay atomic.Int64 // nanoseconds, the added round trip
	dial  func(network, addr string) (net.Conn, error)
	lns   []net.Listener
	pcs   []*net.UDPConn
	wg    sync.WaitGroup
	done  chan struct{}
	once  sync.Once

	mu    sync.Mutex
	conns map[io.Closer]bool
}

// RelayRoute is one port a DelayRelay forwards.
type RelayRoute struct {
	// UDP: a UDP port (a STUN server's); else a TCP port (a DERP
	// server's).
	UDP bool
	// Listen is the relay's own address and port.
	Listen netip.AddrPort
	// Target is the address forwarded to.
	Target netip.AddrPort
}

// StartDelayRelay listens on every route's address and forwards it, with
// delay added to each round trip (0: none until SetDelay). Every listener
// is made before it returns, so a caller may run it on a thread in another
// network namespace and the listeners stay there. The relay dials its
// targets later, from whatever thread its goroutines run on: dial (nil:
// net.Dial) is how, and a relay in another namespace needs one that makes
// its sockets there (a thread kept in it). A UDP target's dial must return
// a *net.UDPConn.
func StartDelayRelay(routes []RelayRoute, delay time.Duration, dial func(network, addr string) (net.Conn, error)) (*DelayRelay, error) {
	if dial == nil {
		dial = net.Dial
	}
	r := &DelayRelay{done: make(chan struct{}), conns: map[io.Closer]bool{}, dial: dial}
	r.delay.Store(int64(delay))
	for _, rt := range routes {
		if rt.UDP {
			pc, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(rt.Listen))
			if err != nil {
				r.Close()
				return nil, fmt.Errorf("lab: delay relay: %w", err)
			}
			r.pcs = append(r.pcs, pc)
			r.wg.Add(1)
			go r.serveUDP(pc, rt.Target)
			continue
		}
		ln, err := net.Listen("tcp4", rt.Listen.String())
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("lab: delay relay: %w", err)
		}
		r.lns = append(r.lns, ln)
		r.wg.Add(1)
		go r.serveTCP(ln, rt.Target)
	}
	return r, nil
}

// SetDelay sets the round trip the relay adds (half each way).
func (r *DelayRelay) SetDelay(d time.Duration) { r.delay.Store(int64(max(d, 0))) }

// Close stops the relay and every flow. Safe to call more than once.
func (r *DelayRelay) Close() {
	r.once.Do(func() {
		close(r.done)
		for _, ln := range r.lns {
			ln.Close()
		}
		for _, pc := range r.pcs {
			pc.Close()
		}
		r.mu.Lock()
		for c := range r.conns {
			c.Close()
		}
		r.mu.Unlock()
		r.wg.Wait()
	})
}

// track keeps c to close with the relay; false when it is closing.
func (r *DelayRelay) track(c io.Closer) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.done:
		c.Close()
		return false
	default:
	}
	r.conns[c] = true
	return true
}

func (r *DelayRelay) untrack(c io.Closer) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	c.Close()
}

// chunk is what one read got, and when it may be written.
type chunk struct {
	b  []byte
	at time.Time
}

// half is the delay one direction adds now.
func (r *DelayRelay) half() time.Duration { return time.Duration(r.delay.Load()) / 2 }

// pipe copies src to dst, each chunk held back by half the delay: a
// reader goroutine (this one) and a writer. It closes dst's write side
// (or dst) when src ends.
func (r *DelayRelay) pipe(dst, src net.Conn) {
	q := make(chan chunk, 256)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := range q {
			if !r.wait(c.at, nil) {
				return
			}
			if _, err := dst.Write(c.b); err != nil {
				for range q {
				}
				return
			}
		}
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
	}()
	for {
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case q <- chunk{buf[:n], time.Now().Add(r.half())}:
			case <-r.done:
				err = net.ErrClosed
			}
		}
		if err != nil {
			break
		}
	}
	close(q)
	wg.Wait()
}

func (r *DelayRelay) serveTCP(ln net.Listener, target netip.AddrPort) {
	defer r.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if !r.track(c) {
				return
			}
			defer r.untrack(c)
			up, err := r.dial("tcp4", target.String())
			if err != nil {
				return
			}
			if !r.track(up) {
				return
			}
			defer r.untrack(up)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.pipe(up, c)
			}()
			r.pipe(c, up)
			wg.Wait()
		}()
	}
}

// udpFlowIdle is how long a UDP flow with no datagram either way lives.
const udpFlowIdle = 2 * time.Minute

// serveUDP forwards datagrams arriving on pc to target, one upstream
// socket per asker, and the answers back to the asker, each way after
// half the delay.
func (r *DelayRelay) serveUDP(pc *net.UDPConn, target netip.AddrPort) {
	defer r.wg.Done()
	var mu sync.Mutex
	flows := map[netip.AddrPort]chan chunk{}
	buf := make([]byte, 64<<10)
	for {
		n, src, err := pc.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
		b := append([]byte(nil), buf[:n]...)
		mu.Lock()
		q, ok := flows[src]
		if !ok {
			c, err := r.dial("udp4", target.String())
			up, ok := c.(*net.UDPConn)
			if err != nil || !ok || !r.track(up) {
				if c != nil {
					c.Close()
				}
				mu.Unlock()
				continue
			}
			q = make(chan chunk, 256)
			flows[src] = q
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				r.udpFlow(pc, up, src, q)
				mu.Lock()
				delete(flows, src)
				mu.Unlock()
			}()
		}
		select {
		case q <- chunk{b, time.Now().Add(r.half())}:
		default: // a flow this far behind drops, as a full queue would
		}
		mu.Unlock()
	}
}

// udpFlow is one asker's flow: datagrams from q go up after their time,
// answers come back down after half the delay, STUN answers with the
// asker's own address in them. It ends when no answer came for
// udpFlowIdle (the next datagram starts another) or the relay closes.
func (r *DelayRelay) udpFlow(pc, up *net.UDPConn, asker netip.AddrPort, q chan chunk) {
	defer r.untrack(up)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case c := <-q:
				if !r.wait(c.at, stop) {
					return
				}
				up.Write(c.b)
			case <-stop:
				return
			case <-r.done:
				return
			}
		}
	}()
	down := make(chan chunk, 256)
	defer close(down)
	go func() {
		for c := range down {
			if !r.wait(c.at, stop) {
				return
			}
			pc.WriteToUDPAddrPort(c.b, asker)
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		up.SetReadDeadline(time.Now().Add(udpFlowIdle))
		n, err := up.Read(buf)
		if err != nil {
			return
		}
		b := append([]byte(nil), buf[:n]...)
		if stun.Is(b) {
			if tx, _, err := stun.ParseResponse(b); err == nil {
				b = stun.Response(tx, asker)
			}
		}
		select {
		case down <- chunk{b, time.Now().Add(r.half())}:
		default:
		}
	}
}

// wait sleeps until at; false when stop or the relay closed first.
func (r *DelayRelay) wait(at time.Time, stop <-chan struct{}) bool {
	d := time.Until(at)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
	case <-r.done:
	}
	return false
}
