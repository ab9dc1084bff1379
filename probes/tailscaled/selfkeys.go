package tailscaled

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
)

// NetcheckNow measures this host's DERP latencies now (the Self tab's
// n), as `tailscale netcheck` does, from tailpath's own socket
// (MeasureDERPLatency, or SourceOptions.MeasureDERP), and keeps the
// result for the next snapshots as a scheduled measurement would be kept.
//
// Not through the daemon: its LocalAPI has no call that returns a fresh
// report. `tailscale debug restun` (POST /localapi/v0/debug?action=restun)
// needs write permission and only makes magicsock re-run netcheck, whose
// latencies reach the LocalAPI through NetInfo, which magicsock re-sends
// only when something other than latency changed (tailcfg.NetInfo
// BasicallyEqual ignores DERPLatency). So the numbers are tailpath's, with
// the CLI's caveat: another socket, another port than tailscaled's.
//
// Errors: no DERP map, UDP blocked, an exit node in use (the STUN packets
// would go through it), ctx ending.
func (s *Source) NetcheckNow(ctx context.Context, exitNode bool) (*probes.DERPLatencyReport, error) {
	if exitNode {
		return nil, errors.New("an exit node carries this host's traffic, so a measurement from here would be the exit node's; stop using it to measure")
	}
	measure := s.opts.MeasureDERP
	if measure == nil {
		measure = MeasureDERPLatency
	}
	dm, err := s.c.CurrentDERPMap(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the DERP map from tailscaled: %w", err)
	}
	rep, err := measure(ctx, dm)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.derpLatency, s.lastMeasure = rep, time.Now()
	s.mu.Unlock()
	select {
	case s.apiTrigger <- struct{}{}:
	default:
	}
	return rep, nil
}

// PingDERP times one HTTPS request to region id's first DERP server
// (the Self tab's d): GET /derp/latency-check, the path derper answers
// for latency checks (cmd/derper: "/derp/latency-check" and "/derp/probe"
// return 200). The round trip includes the TCP and TLS handshakes, as
// netcheck's HTTPS fallback measures (net/netcheck measureHTTPSLatency
// times one request on a new connection too). Its code is the region's.
func PingDERP(ctx context.Context, dm *tailcfg.DERPMap, id int) (time.Duration, string, error) {
	if dm == nil {
		return 0, "", errors.New("no DERP map")
	}
	r := dm.Regions[tscompat.RegionID(id)]
	if r == nil || len(r.Nodes) == 0 {
		return 0, "", fmt.Errorf("region %d is not in the DERP map", id)
	}
	var n *tailcfg.DERPNode
	for _, c := range r.Nodes {
		if !c.STUNOnly {
			n = c
			break
		}
	}
	if n == nil {
		return 0, r.RegionCode, fmt.Errorf("region %s relays nothing (STUN only)", r.RegionCode)
	}
	host := n.HostName
	addr := host
	if n.IPv4 != "" && n.IPv4 != "none" {
		addr = n.IPv4
	}
	port := 443
	if n.DERPPort != 0 {
		port = n.DERPPort
	}
	tr := &http.Transport{
		DisableKeepAlives: true,
		Proxy:             http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort(addr, strconv.Itoa(port)))
		},
		TLSClientConfig: &tls.Config{ServerName: cmpOr(n.CertName, host), InsecureSkipVerify: n.InsecureForTests},
	}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+net.JoinHostPort(host, strconv.Itoa(port))+"/derp/latency-check", nil)
	if err != nil {
		return 0, r.RegionCode, err
	}
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, r.RegionCode, fmt.Errorf("HTTPS to %s: %w", r.RegionCode, err)
	}
	d := time.Since(start)
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return d, r.RegionCode, fmt.Errorf("HTTPS to %s: %s", r.RegionCode, resp.Status)
	}
	return d, r.RegionCode, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// DERPMap is tailscaled's current DERP map, for PingDERP.
func (s *Source) DERPMap(ctx context.Context) (*tailcfg.DERPMap, error) {
	return s.c.CurrentDERPMap(ctx)
}
