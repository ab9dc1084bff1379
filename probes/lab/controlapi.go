package lab

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/lab/apiserver"
)

// The lab serves the part of the Tailscale control API tailpath reads
// (GET /api/v2/tailnet/-/devices?fields=all) on its control server's
// address, behind a key made at start. Each device is filled from the lab
// node's own state in the control server: the endpoints and NetInfo
// (NAT type, UDP, port mapping, DERP latencies) the node itself reported.
// So `tailpath demo` shows both ends of every path without an account.

// ControlAPIConfig is how to reach the lab's control API: its base URL
// (the control server's) and its key.
func (l *Lab) ControlAPIConfig() controlapi.APIConfig {
	return controlapi.APIConfig{APIKey: controlapi.NewAPISecret(l.apiKey), BaseURL: l.ControlURL}
}

// newAPIKey makes a key in the API's shape, random per lab.
func newAPIKey() string {
	var b [12]byte
	rand.Read(b[:])
	return "tskey-api-klab" + hex.EncodeToString(b[:4]) + "CNTRL-" + hex.EncodeToString(b[4:])
}

// apiHandler routes the API's paths to api and everything else to the
// control server.
func apiHandler(api, control http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v2/") {
			api.ServeHTTP(w, r)
			return
		}
		control.ServeHTTP(w, r)
	})
}

// apiDevices lists every node control knows as the API would, from what
// each node reported: addresses, endpoints, its NetInfo, its version.
func (l *Lab) apiDevices() []apiserver.Device {
	names := map[int]string{}
	for id, r := range l.derpMap.Regions {
		names[tscompat.IntRegionID(id)] = r.RegionName
	}
	var out []apiserver.Device
	for _, n := range l.Control.AllNodes() {
		out = append(out, apiDevice(n, names))
	}
	return out
}

// apiDevice is node n as a device with all fields; regions names DERP
// region ids (the API keys latencies by region name).
func apiDevice(n *tailcfg.Node, regions map[int]string) apiserver.Device {
	d := apiserver.Device{ID: strconv.FormatInt(int64(n.ID), 10), NodeID: string(n.StableID), Name: strings.TrimSuffix(n.Name, ".")}
	for _, a := range n.Addresses {
		d.Addresses = append(d.Addresses, a.Addr().String())
	}
	if n.Online != nil {
		d.ConnectedToControl = apiserver.Bool(*n.Online)
	}
	if n.LastSeen != nil {
		d.LastSeen = n.LastSeen.UTC().Format(time.RFC3339)
	}
	if !n.Hostinfo.Valid() {
		return d
	}
	hi := n.Hostinfo
	d.Hostname, d.OS, d.ClientVersion = hi.Hostname(), hi.OS(), hi.IPNVersion()
	cc := &apiserver.ClientConnectivity{}
	for _, ep := range n.Endpoints {
		cc.Endpoints = append(cc.Endpoints, ep.String())
	}
	if ni := hi.NetInfo(); ni.Valid() {
		cc.MappingVariesByDestIP = probes.OptBool(string(ni.MappingVariesByDestIP()))
		cc.ClientSupports = &apiserver.ClientSupports{
			UDP: probes.OptBool(string(ni.WorkingUDP())), IPv6: probes.OptBool(string(ni.WorkingIPv6())),
			UPnP: probes.OptBool(string(ni.UPnP())), PMP: probes.OptBool(string(ni.PMP())), PCP: probes.OptBool(string(ni.PCP())),
		}
		pref := ni.PreferredDERP()
		for key, sec := range ni.DERPLatency().All() {
			idStr, _, _ := strings.Cut(key, "-")
			id, err := strconv.Atoi(idStr)
			if err != nil || sec <= 0 {
				continue
			}
			name := regions[id]
			if name == "" {
				continue
			}
			ms := sec * 1000
			if cc.Latency == nil {
				cc.Latency = map[string]apiserver.Latency{}
			}
			if old, ok := cc.Latency[name]; !ok || ms < old.LatencyMs {
				cc.Latency[name] = apiserver.Latency{Preferred: id == pref, LatencyMs: ms}
			}
		}
	}
	d.ClientConnectivity = cc
	return d
}
