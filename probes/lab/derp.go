package lab

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"time"

	"tailscale.com/derp/derpserver"
	"tailscale.com/net/stun"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"
	"tailscale.com/types/logger"

	"github.com/tailpath/tailpath/internal/tscompat"
)

// Region describes one lab DERP region: a real derpserver behind TLS on
// 127.0.0.1 and a STUN responder on a 127.0.0.1 UDP port.
type Region struct {
	// ID is the DERP region id (900-999 is Tailscale's range for custom regions).
	ID int
	// Code is the region code tailscale status prints (`relay "lab1"`).
	Code string
	// Name is the long region name.
	Name string
	// Delay holds back each STUN answer and each HTTPS latency probe
	// (/derp/latency-check, /derp/probe) this long, so netcheck measures
	// this region as farther away, whether the node can use UDP or not;
	// 0 answers at once. (Nodes that cannot use UDP also measure by ICMP,
	// which no delay reaches; use NoHome to keep them off a region.)
	Delay time.Duration
	// NoHome marks the region NoMeasureNoHome: no node measures it or makes
	// it home, but a node reaches it if a peer homes there.
	NoHome bool
	// RelayDelay holds back every write the DERP server makes to a client
	// this long, so a relayed packet arrives later than a direct one, as
	// it does on a real network. tailscaled sends a DISCO ping bigger than
	// the direct path is known to carry both ways and takes the first
	// pong; with DERP on loopback too, DERP won that race on a loaded
	// machine. 0 relays at once.
	RelayDelay time.Duration
	// STUNOnly makes the region a STUN responder only, no DERP server: its
	// node is tailcfg.DERPNode.STUNOnly, so netcheck measures it by STUN
	// but never makes it home, and nodes that cannot use UDP never measure
	// it (no HTTPS or ICMP check of a region without a DERP node).
	STUNOnly bool
}

// DefaultRegions are the lab's DERP regions. Region 902 is NoHome, so
// every lab node homes on 901 and relayed paths read `relay "lab1"`
// deterministically. (A latency Delay alone is not enough: the DERP-only
// node cannot STUN and measures by ICMP, where both loopback regions tie.)
//
// Both hold relayed packets back 2 ms, which keeps a direct loopback path
// (about 0.15 ms) clearly ahead of DERP.
//
// Region 903 is a STUN responder only, 20 ms away: netcheck judges the NAT
// mapping (MappingVariesByDestIP) only from STUN replies of two regions
// (once one node of a region answers, it cancels the region's other
// probes), so with 901 alone our NAT type stayed unknown on incremental
// reports. 903 answers every report and never becomes home.
var DefaultRegions = []Region{
	{ID: 901, Code: "lab1", Name: "Lab relay 1 (loopback)", RelayDelay: 2 * time.Millisecond},
	{ID: 902, Code: "lab2", Name: "Lab relay 2 (loopback, never home)", NoHome: true, RelayDelay: 2 * time.Millisecond},
	{ID: 903, Code: "lab3", Name: "Lab STUN (loopback, no relay)", STUNOnly: true, Delay: 20 * time.Millisecond},
}

// DERP is running DERP+STUN regions (StartDERP): the lab's, or the NAT
// lab's infra's (internal/labtest).
type DERP struct {
	// Map describes the regions, as control hands it to every node.
	Map     *tailcfg.DERPMap
	regions []*derpRegion
}

// StartDERP starts one derpserver and STUN responder per region on host
// (an IPv4 address: 127.0.0.1 for the lab) and returns them with the DERP
// map describing them. Every listener is made before it returns, so a
// caller may run it on a thread in another network namespace and the
// sockets stay there. logf may be nil.
func StartDERP(regions []Region, host string, logf logger.Logf) (*DERP, error) {
	if logf == nil {
		logf = logger.Discard
	}
	dm, running, err := startDERP(regions, host, logf)
	if err != nil {
		return nil, err
	}
	return &DERP{Map: dm, regions: running}, nil
}

// Close stops every region.
func (d *DERP) Close() {
	for _, r := range d.regions {
		r.close()
	}
}

// derpRegion is one running region.
type derpRegion struct {
	srv  *derpserver.Server
	http *httptest.Server
	stun *stunServer
}

func (r *derpRegion) close() {
	if r.http != nil {
		r.http.CloseClientConnections()
		r.http.Close()
		r.srv.Close()
	}
	r.stun.close()
}

// startDERP starts one derpserver and STUN responder per region on host
// (an IPv4 address: 127.0.0.1 for the lab) and returns the DERP map
// describing them.
func startDERP(regions []Region, host string, logf logger.Logf) (*tailcfg.DERPMap, []*derpRegion, error) {
	if len(regions) == 0 {
		return nil, nil, errors.New("lab: no DERP regions configured")
	}
	dm := &tailcfg.DERPMap{Regions: map[tscompat.RegionID]*tailcfg.DERPRegion{}}
	var running []*derpRegion
	fail := func(err error) (*tailcfg.DERPMap, []*derpRegion, error) {
		for _, r := range running {
			r.close()
		}
		return nil, nil, err
	}
	for _, reg := range regions {
		if reg.ID <= 0 || reg.Code == "" {
			return fail(fmt.Errorf("lab: DERP region %+v needs an ID > 0 and a Code", reg))
		}
		if _, dup := dm.Regions[tscompat.RegionID(reg.ID)]; dup {
			return fail(fmt.Errorf("lab: DERP region id %d listed twice", reg.ID))
		}
		region := &tailcfg.DERPRegion{
			RegionID:        tscompat.RegionID(reg.ID),
			RegionCode:      reg.Code,
			RegionName:      reg.Name,
			NoMeasureNoHome: reg.NoHome,
			Nodes: []*tailcfg.DERPNode{{
				Name:             fmt.Sprintf("%da", reg.ID),
				RegionID:         tscompat.RegionID(reg.ID),
				HostName:         host,
				IPv4:             host,
				IPv6:             "none",
				STUNOnly:         reg.STUNOnly,
				STUNTestIP:       host,
				InsecureForTests: true,
			}},
		}
		node := region.Nodes[0]
		var dr derpRegion
		if !reg.STUNOnly {
			d := derpserver.New(key.NewNode(), logf)
			ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
			if err != nil {
				d.Close()
				return fail(fmt.Errorf("lab: DERP %s listen: %w", reg.Code, err))
			}
			hs := httptest.NewUnstartedServer(delayProbes(derpserver.Handler(d), reg.Delay))
			hs.Listener.Close()
			hs.Listener = ln
			if reg.RelayDelay > 0 {
				hs.Listener = delayedListener{ln, reg.RelayDelay}
			}
			hs.Config.ErrorLog = log.New(logWriter{logf}, "", 0)
			// derp clients speak HTTP/1.1 upgrade; HTTP/2 must be off.
			hs.Config.TLSNextProto = make(map[string]func(*http.Server, *tls.Conn, http.Handler))
			hs.StartTLS()
			dr.srv, dr.http = d, hs
			node.DERPPort = ln.Addr().(*net.TCPAddr).Port
		}
		st, err := startSTUN(host, reg.Delay, logf)
		if err != nil {
			if dr.http != nil {
				dr.http.Close()
				dr.srv.Close()
			}
			return fail(fmt.Errorf("lab: STUN %s: %w", reg.Code, err))
		}
		dr.stun = st
		node.STUNPort = st.port()
		running = append(running, &dr)
		dm.Regions[tscompat.RegionID(reg.ID)] = region
	}
	return dm, running, nil
}

// delayedListener's connections hold back each Write by delay.
type delayedListener struct {
	net.Listener
	delay time.Duration
}

func (l delayedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return delayedConn{c, l.delay}, nil
}

type delayedConn struct {
	net.Conn
	delay time.Duration
}

func (c delayedConn) Write(b []byte) (int, error) {
	time.Sleep(c.delay)
	return c.Conn.Write(b)
}

// delayProbes holds back netcheck's HTTPS latency probes by delay.
func delayProbes(h http.Handler, delay time.Duration) http.Handler {
	if delay <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/derp/latency-check", "/derp/probe":
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// stunServer answers STUN binding requests on one address, like a DERP
// server's STUN port, optionally after a delay.
type stunServer struct {
	pc    *net.UDPConn
	delay time.Duration
	logf  logger.Logf
	wg    sync.WaitGroup
	ctx   context.Context
	stop  context.CancelFunc
}

func startSTUN(host string, delay time.Duration, logf logger.Logf) (*stunServer, error) {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &stunServer{pc: pc, delay: delay, logf: logf, ctx: ctx, stop: cancel}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

func (s *stunServer) port() int { return s.pc.LocalAddr().(*net.UDPAddr).Port }

func (s *stunServer) serve() {
	defer s.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, src, err := s.pc.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		pkt := buf[:n]
		if !stun.Is(pkt) {
			continue
		}
		txid, err := stun.ParseBindingRequest(pkt)
		if err != nil {
			continue
		}
		src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
		res := stun.Response(txid, src)
		if s.delay <= 0 {
			s.pc.WriteToUDPAddrPort(res, src)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			t := time.NewTimer(s.delay)
			defer t.Stop()
			select {
			case <-t.C:
				s.pc.WriteToUDPAddrPort(res, src)
			case <-s.ctx.Done():
			}
		}()
	}
}

func (s *stunServer) close() {
	s.stop()
	s.pc.Close()
	s.wg.Wait()
}

// logWriter adapts a logger.Logf to an io.Writer for http.Server.ErrorLog.
type logWriter struct{ logf logger.Logf }

func (w logWriter) Write(p []byte) (int, error) {
	w.logf("%s", p)
	return len(p), nil
}
