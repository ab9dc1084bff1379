package snapshot

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"

	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// ErrReadOnly is what a snapshot's Client answers to calls that need a
// live tailscaled (the IPN bus, pings).
var ErrReadOnly = errors.New("a snapshot is read-only: it cannot watch the IPN bus or ping")

// Client is a tailscaled.LocalClient answering from a File: its Status, its
// WhoIs replies (a denied one as tailscaled denies it, an address the file
// does not hold with no node, so that peer's endpoints are unknown) and
// its DERP map. Make one with File.Client.
type Client struct {
	f     *File
	whois map[string]WhoIs
}

var _ tailscaled.LocalClient = (*Client)(nil)

// Client returns a LocalClient answering from f.
func (f *File) Client() *Client {
	c := &Client{f: f, whois: make(map[string]WhoIs, len(f.WhoIs))}
	for _, w := range f.WhoIs {
		c.whois[w.Addr] = w
	}
	return c
}

// Status implements tailscaled.LocalClient.
func (c *Client) Status(context.Context) (*ipnstate.Status, error) {
	if c.f.Status == nil {
		return nil, errors.New("the snapshot has no status")
	}
	return c.f.Status, nil
}

// WhoIs implements tailscaled.LocalClient.
func (c *Client) WhoIs(_ context.Context, addr string) (*apitype.WhoIsResponse, error) {
	w, ok := c.whois[addr]
	switch {
	case !ok:
		return &apitype.WhoIsResponse{}, nil
	case w.Denied:
		return nil, &local.AccessDeniedError{}
	case w.Node == nil && w.Err != "":
		return nil, errors.New(w.Err)
	}
	return &apitype.WhoIsResponse{Node: w.Node}, nil
}

// CurrentDERPMap implements tailscaled.LocalClient.
func (c *Client) CurrentDERPMap(context.Context) (*tailcfg.DERPMap, error) {
	if c.f.DERPMap == nil && c.f.DERPMapErr != "" {
		return nil, errors.New(c.f.DERPMapErr)
	}
	return c.f.DERPMap, nil
}

// WatchIPNBus implements tailscaled.LocalClient: ErrReadOnly.
func (c *Client) WatchIPNBus(context.Context, ipn.NotifyWatchOpt) (*local.IPNBusWatcher, error) {
	return nil, ErrReadOnly
}

// Ping implements tailscaled.LocalClient: ErrReadOnly.
func (c *Client) Ping(context.Context, netip.Addr, tailcfg.PingType) (*ipnstate.PingResult, error) {
	return nil, ErrReadOnly
}

// Diagnose diagnoses f as it was when taken: tailscaled.GatherWith over
// f.Client at f.Taken (with f's control-API facts and DERP latency
// measurement), then f's history put back on every peer, then linked to
// f's board and path changes as the dashboard links them (the joiner
// judges the whole gather once: probes.Judge). The warnings are f's own. For a
// File that Capture or Recorder.File made, every peer's path and verdict
// equal those of the live diagnosis.
func (f *File) Diagnose(ctx context.Context) (*join.Snapshot, error) {
	// Every node the file holds (AllNodes): answering from the file costs
	// nothing, and what it shows of a direct peer is what was saved.
	opts := tailscaled.GatherOptions{All: f.All, Now: f.Taken, NoCache: true, AllNodes: true, Latency: f.Netcheck}
	if f.Host != nil {
		opts.Host = func(context.Context) func(probes.Self) *probes.HostFacts {
			return func(probes.Self) *probes.HostFacts { return f.Host }
		}
	}
	if api := f.ControlAPI; api != nil {
		st := api.Status
		opts.PeerFacts, opts.APIStatus = api.Facts, &st
	}
	snap, err := tailscaled.GatherWith(ctx, f.Client(), nil, opts)
	if err != nil {
		return nil, err
	}
	if sf := f.Self; sf != nil {
		f.fillSelf(snap, sf)
	}
	// The counters as captured (the file holds no metrics text to read).
	snap.Self.Traffic = f.Traffic
	if snap.Self.DERPLatencyFrom == "netinfo" {
		snap.Self.DERPLatencyAt, snap.Self.DERPLatencySeen = f.History.DERPLatencyAt, f.History.DERPLatencySeen
	}
	for i := range snap.Peers {
		p := &snap.Peers[i]
		// A peer without history had none live either (Gather notes a
		// direct path and an active peer without handshake itself, and the
		// capture kept those), so Gather's own first-poll values stand.
		if h, ok := f.History.Peers[p.ID]; ok {
			p.NoHandshakeSince = h.NoHandshakeSince
			p.LastDirect, p.LastDirectAddr = h.LastDirect, h.LastDirectAddr
			p.LastChange, p.PingRun, p.Latency = h.LastChange, h.PingRun, h.Latency
			p.ICMPReply = h.ICMPReply
			p.TxRate, p.RxRate, p.RatesKnown = h.TxRate, h.RxRate, h.RatesKnown
			p.HandshakeUnknown = h.HandshakeUnknown
			if h.PathText != "" {
				p.Path.Text = safetext.New(h.PathText)
			}
			if h.PathUnknown {
				p.Path = probes.Path{Kind: probes.PathUnknown, Text: p.Path.Text}
			}
			if h.Offline && p.Online == nil {
				// The text said offline without a time: as control's
				// offline, unless a handshake says otherwise.
				p.Online, p.OnlineSource = boolp(false), "pasted status text"
				if ps := f.peerStatus(p.ID); ps != nil {
					p.Path = probes.Classify(ps, p.Online, snap.Time)
				}
			}
			p.WireGuard, p.WireGuardSince = safetext.New(h.WireGuard), h.WireGuardSince
			p.LastSeenAgo = h.LastSeenAgo
		}
		if side := f.PeerSides[p.ID]; side != nil {
			c := *side
			p.PeerSide = probes.MergePeerSide(p.PeerSide, &c)
		}
	}
	snap.Warnings = slices.Clone(f.Warnings)
	var l join.Joiner
	if f.Board != nil {
		l.SetEvidence(f.Board.Evidence)
	}
	return l.SetSnapshot(snap).WithChanges(f.PathChanges), nil
}

// fillSelf fills what snap's self lacks from pasted facts: the NAT facts
// (keeping a measurement's latencies), endpoints and home DERP. The
// parser already keeps a port-mapping service that answered apart from a
// mapping held: HavePortMap is true only where NetInfo said "active-"
// (paste_netcheck.go natInfo), and unknown (PortMapUnknown) where the
// report cannot tell.
func (f *File) fillSelf(snap *probes.Snapshot, sf *SelfFacts) {
	self := &snap.Self
	if sf.NAT != nil && (self.NAT == nil || self.NAT.MappingVariesByDestIP == nil && self.NAT.WorkingUDP == nil) {
		nat := *sf.NAT
		if self.NAT != nil && self.DERPLatencyFrom == "netcheck" {
			nat.DERPLatency = self.NAT.DERPLatency
		}
		self.NAT = &nat
		if self.DERPLatencyFrom == "" && len(nat.DERPLatency) > 0 {
			self.DERPLatencyFrom = "netinfo"
		}
		snap.Warnings = slices.DeleteFunc(snap.Warnings, func(w safetext.Text) bool { return strings.HasPrefix(string(w), "NetInfo: ") })
	}
	if len(self.Endpoints) == 0 {
		self.Endpoints = sf.Endpoints
		if len(sf.EndpointTypes) == len(sf.Endpoints) {
			self.EndpointTypes = sf.EndpointTypes
		}
	}
	if sf.Evidence != nil {
		ev := *sf.Evidence
		self.Evidence = &ev
	}
	if self.Version == "" {
		self.Version = sf.Version
	}
	if sf.Daemon != nil && self.Daemon == nil {
		d := *sf.Daemon
		self.Daemon = &d
	}
	if len(sf.Prose) > 0 {
		self.Prose = slices.Clone(sf.Prose)
	}
	if self.HomeDERP == 0 && sf.HomeDERP != 0 {
		self.HomeDERP = sf.HomeDERP
		if self.HomeDERPCode == "" {
			self.HomeDERPCode = snap.Regions[sf.HomeDERP].Code
		}
	}
}

// peerStatus is f's status entry of the peer with stable id id.
func (f *File) peerStatus(id safetext.Text) *ipnstate.PeerStatus {
	for _, ps := range f.Status.Peer {
		if ps != nil && string(ps.ID) == string(id) {
			return ps
		}
	}
	return nil
}
