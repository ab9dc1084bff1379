package labtest

import (
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"tailscale.com/tailcfg"
	"tailscale.com/tstest/integration/testcontrol"
	"tailscale.com/types/key"
	"tailscale.com/types/logger"

	"github.com/tailpath/tailpath/probes/lab"
)

// Infra is the lab's control server and DERP+STUN regions alone, on one
// address, for real tailscaled daemons elsewhere (the NAT lab: daemons in
// network namespaces behind NAT routers, reaching these servers over an
// "internet" bridge). Start it with StartInfra; Close stops it.
type Infra struct {
	// ControlURL is the control server's base URL.
	ControlURL string
	// DERPMap describes the regions, all on the Infra's address.
	DERPMap *tailcfg.DERPMap

	control *testcontrol.Server
	http    *http.Server
	derp    *lab.DERP
	wg      sync.WaitGroup
	once    sync.Once
}

// StartInfra starts a control server (testcontrol, which passes each
// node's NetInfo to its peers) and the given DERP regions (lab.DefaultRegions
// when nil: two relaying regions and a STUN-only one, so netcheck can see
// a hard NAT) on addr. Every listener is created before it returns, so a
// caller may run it in another network namespace (a locked OS thread):
// the sockets stay there. logf may be nil.
func StartInfra(addr netip.Addr, regions []lab.Region, logf logger.Logf) (*Infra, error) {
	if !addr.Is4() {
		return nil, errors.New("lab: infra needs an IPv4 address")
	}
	if logf == nil {
		logf = logger.Discard
	}
	if regions == nil {
		regions = lab.DefaultRegions
	}
	derp, err := lab.StartDERP(regions, addr.String(), logf)
	if err != nil {
		return nil, err
	}
	dm := derp.Map
	in := &Infra{DERPMap: dm, derp: derp}
	ln, err := net.Listen("tcp", net.JoinHostPort(addr.String(), "0"))
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("lab: control listen: %w", err)
	}
	in.ControlURL = "http://" + ln.Addr().String()
	in.control = &testcontrol.Server{DERPMap: dm, MagicDNSDomain: lab.MagicDNSDomain, Logf: logf, ExplicitBaseURL: in.ControlURL}
	in.http = &http.Server{Handler: in.control, ErrorLog: log.New(logWriter{logf}, "", 0), ReadHeaderTimeout: 30 * time.Second}
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		in.http.Serve(ln)
	}()
	return in, nil
}

// DaemonEnv is the environment a real tailscaled needs to join the infra
// hermetically: no log uploads, no port mapping, no captive-portal probe
// to Tailscale's servers, a panic instead of contacting production
// control. Unlike DaemonEnv (a lab.Lab's) it keeps local addresses among the
// endpoints: a NAT lab is about them.
func (in *Infra) DaemonEnv() []string {
	return []string{
		"TS_NO_LOGS_NO_SUPPORT=true",
		"TS_DISABLE_PORTMAPPER=1",
		"TS_ASSUME_NETWORK_UP_FOR_TEST=1",
		"TS_PANIC_IF_HIT_MAIN_CONTROL=1",
		"TS_NETCHECK_GENERATE_204_URL=" + in.ControlURL + "/generate_204",
	}
}

// SetNodeUser makes node belong to the user that owns like, as if that
// user had logged it in (testcontrol gives every node a user of its own),
// and sends every node the new netmap. It fails when either node is not
// registered.
func (in *Infra) SetNodeUser(node, like key.NodePublic) error {
	n, l := in.control.Node(node), in.control.Node(like)
	if n == nil || l == nil {
		return fmt.Errorf("lab: node %s or %s is not registered", node.ShortString(), like.ShortString())
	}
	n.User = l.User
	in.control.UpdateNode(n)
	return nil
}

// Close stops the control server and the regions. Safe to call more
// than once.
func (in *Infra) Close() {
	in.once.Do(func() {
		if in.http != nil {
			in.http.Close()
		}
		in.wg.Wait()
		if in.derp != nil {
			in.derp.Close()
		}
	})
}

// logWriter adapts a logger.Logf to an io.Writer for http.Server.ErrorLog.
type logWriter struct{ logf logger.Logf }

func (w logWriter) Write(p []byte) (int, error) {
	w.logf("%s", p)
	return len(p), nil
}
