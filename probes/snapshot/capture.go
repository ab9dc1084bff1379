package snapshot

import (
	"context"
	"errors"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"time"

	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// Recorder is a tailscaled.LocalClient that passes every call to the client it
// wraps and keeps the replies a snapshot needs (Status, every WhoIs, the
// DERP map). Gather through it with tailscaled.GatherOptions.NoCache set, so
// that every WhoIs answer used is asked, then call File. Safe for the
// concurrent WhoIs calls Gather makes.
type Recorder struct {
	c tailscaled.LocalClient

	mu      sync.Mutex
	status  *ipnstate.Status
	whois   map[string]WhoIs
	derp    *tailcfg.DERPMap
	derpErr string
}

var _ tailscaled.LocalClient = (*Recorder)(nil)

// NewRecorder wraps c.
func NewRecorder(c tailscaled.LocalClient) *Recorder {
	return &Recorder{c: c, whois: map[string]WhoIs{}}
}

// Status implements tailscaled.LocalClient.
func (r *Recorder) Status(ctx context.Context) (*ipnstate.Status, error) {
	st, err := r.c.Status(ctx)
	if err == nil {
		r.mu.Lock()
		r.status = st
		r.mu.Unlock()
	}
	return st, err
}

// WhoIs implements tailscaled.LocalClient.
func (r *Recorder) WhoIs(ctx context.Context, addr string) (*apitype.WhoIsResponse, error) {
	res, err := r.c.WhoIs(ctx, addr)
	w := WhoIs{Addr: addr}
	switch {
	case err != nil:
		w.Err, w.Denied = err.Error(), local.IsAccessDeniedError(err)
	case res != nil:
		w.Node = res.Node
	}
	if ctx.Err() == nil {
		r.mu.Lock()
		r.whois[addr] = w
		r.mu.Unlock()
	}
	return res, err
}

// seed records, as if asked, the WhoIs answers snap's gather reused
// rather than asked through r.
func (r *Recorder) seed(snap *probes.Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add := func(id safetext.Text) {
		n, addr := tailscaled.NodeOf(snap, id)
		if n == nil {
			return
		}
		if _, ok := r.whois[addr.String()]; !ok {
			r.whois[addr.String()] = WhoIs{Addr: addr.String(), Node: n}
		}
	}
	add("")
	for i := range snap.Peers {
		add(snap.Peers[i].ID)
	}
}

// CurrentDERPMap implements tailscaled.LocalClient.
func (r *Recorder) CurrentDERPMap(ctx context.Context) (*tailcfg.DERPMap, error) {
	dm, err := r.c.CurrentDERPMap(ctx)
	r.mu.Lock()
	r.derp, r.derpErr = dm, ""
	if err != nil {
		r.derpErr = err.Error()
	}
	r.mu.Unlock()
	return dm, err
}

// errNotRecorded is the Recorder's answer to the IPN bus.
var errNotRecorded = errors.New("snapshot: the IPN bus is not recorded; asking WhoIs instead")

// WatchIPNBus implements tailscaled.LocalClient: it refuses, so that a Gather
// through the Recorder asks WhoIs for every node (which is recorded)
// rather than reading them from the bus's netmap (which a snapshot does
// not hold).
func (r *Recorder) WatchIPNBus(context.Context, ipn.NotifyWatchOpt) (*local.IPNBusWatcher, error) {
	return nil, errNotRecorded
}

// Ping implements tailscaled.LocalClient by passing it on (not recorded).
func (r *Recorder) Ping(ctx context.Context, ip netip.Addr, pingtype tailcfg.PingType) (*ipnstate.PingResult, error) {
	return r.c.Ping(ctx, ip, pingtype)
}

// Extras are what a File holds beside the LocalAPI's replies and the
// joined snapshot.
type Extras struct {
	// All: the gather kept the peers `tailscale status` hides.
	All bool
	// PeerFacts are the control API's facts the diagnosis used (nil when
	// none) and APIStatus its state; APIStatus nil means the API was not asked.
	PeerFacts *probes.APIFacts
	APIStatus *probes.APIStatus
	// Tuning is the host's tuning report, TuningErr why there is none.
	Tuning    *tune.Report
	TuningErr string
}

// File returns the snapshot of ls, which must have been gathered through
// r (ls.Snapshot's Status is the last one r saw): the recorded replies,
// the history ls carries (per-peer facts from earlier polls, path changes,
// the board's evidence) and extras. The File shares ls's values; write it
// or Redact it, do not modify it.
func (r *Recorder) File(ls *join.Snapshot, ex Extras) *File {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &File{
		Format:     Format,
		Version:    Version,
		Taken:      ls.Time,
		Origin:     OriginLocalAPI,
		All:        ex.All,
		Status:     r.status,
		DERPMap:    r.derp,
		DERPMapErr: r.derpErr,
		Board:      ls.Board,
		Host:       ls.Self.Host,
		Traffic:    ls.Self.Traffic,
		Tuning:     ex.Tuning,
		TuningErr:  ex.TuningErr,
		Warnings:   ls.Warnings,
	}
	for _, addr := range sortedKeys(r.whois) {
		f.WhoIs = append(f.WhoIs, r.whois[addr])
	}
	self := ls.Self
	if self.DERPLatencyFrom == "netcheck" && self.NAT != nil {
		f.Netcheck = &probes.DERPLatencyReport{At: self.DERPLatencyAt, ByRegion: maps.Clone(self.NAT.DERPLatency)}
	} else {
		f.History.DERPLatencyAt, f.History.DERPLatencySeen = self.DERPLatencyAt, self.DERPLatencySeen
	}
	if ex.APIStatus != nil {
		f.ControlAPI = &ControlAPI{Status: *ex.APIStatus, Facts: ex.PeerFacts}
	}
	for i := range ls.Peers {
		p := &ls.Peers[i]
		h := PeerHistory{
			NoHandshakeSince: p.NoHandshakeSince,
			LastDirect:       p.LastDirect,
			LastDirectAddr:   p.LastDirectAddr,
			LastChange:       p.LastChange,
			PingRun:          p.PingRun,
			Latency:          p.Latency,
			TxRate:           p.TxRate,
			RxRate:           p.RxRate,
			RatesKnown:       p.RatesKnown,
			WireGuard:        string(p.WireGuard),
			WireGuardSince:   p.WireGuardSince,
		}
		if !h.empty() {
			if f.History.Peers == nil {
				f.History.Peers = map[safetext.Text]PeerHistory{}
			}
			f.History.Peers[p.ID] = h
		}
		if chs := ls.Changes(p.ID); len(chs) > 0 {
			if f.PathChanges == nil {
				f.PathChanges = map[safetext.Text][]join.PathChange{}
			}
			f.PathChanges[p.ID] = chs
		}
	}
	return f
}

// Options are what Capture gathers with.
type Options struct {
	// Gather are the options of tailscaled.GatherWith (All, Latency,
	// PeerFacts, APIStatus); Capture sets NoCache and AllNodes itself.
	Gather tailscaled.GatherOptions
	// Prev is the previous snapshot of a long-running source (the
	// dashboard's, serve's), whose history (rates, ping runs, last direct
	// path, no-handshake time) the capture carries on; nil for a one-shot.
	// When Gather.Latency is nil and Prev's latencies were measured by
	// tailpath, those are used again.
	Prev *probes.Snapshot
	// Joined is the source's latest joined snapshot, whose board and path
	// changes the capture keeps; nil for none.
	Joined *join.Snapshot
	// Tuning is the host's tuning report to include (Linux), TuningErr
	// why there is none.
	Tuning    *tune.Report
	TuningErr string
	// ReuseWhoIs reuses the WhoIs answers Prev carries (fresher than
	// tailscaled.WhoIsMaxAge) instead of asking each peer again, and records
	// them as if asked: a long-running source (serve) captures without a
	// WhoIs per peer. The file diagnoses the same either way.
	ReuseWhoIs bool
}

// Capture gathers once from c through a Recorder and returns the File and
// the joined snapshot it diagnosed (with opts.Joined's board and path
// changes). Errors are tailscaled.GatherWith's (wrapping tailscaled.ErrNotRunning,
// ErrPermission, ErrBadReply); ctx bounds the gather.
func Capture(ctx context.Context, c tailscaled.LocalClient, opts Options) (*File, *join.Snapshot, error) {
	rec := NewRecorder(c)
	gopts := opts.Gather
	gopts.NoCache = !opts.ReuseWhoIs || opts.Prev == nil
	// Every peer's node is evidence a snapshot keeps, the ones no verdict
	// reads too (a direct peer's endpoints and NetInfo).
	gopts.AllNodes = true
	if p := opts.Prev; gopts.Latency == nil && p != nil && p.Self.DERPLatencyFrom == "netcheck" && p.Self.NAT != nil {
		gopts.Latency = &probes.DERPLatencyReport{At: p.Self.DERPLatencyAt, ByRegion: p.Self.NAT.DERPLatency}
	}
	snap, err := tailscaled.GatherWith(ctx, rec, opts.Prev, gopts)
	if err != nil {
		return nil, nil, err
	}
	if !gopts.NoCache {
		rec.seed(snap)
	}
	var l join.Joiner
	var changes map[safetext.Text][]join.PathChange
	if ls := opts.Joined; ls != nil {
		if ls.Board != nil {
			l.SetEvidence(ls.Board.Evidence)
		}
		changes = map[safetext.Text][]join.PathChange{}
		for _, p := range snap.Peers {
			changes[p.ID] = withCurrent(ls.Changes(p.ID), &p.Path, snap.Time)
		}
	}
	linked := l.SetSnapshot(snap).WithChanges(changes)
	f := rec.File(linked, Extras{All: gopts.All, PeerFacts: gopts.PeerFacts, APIStatus: gopts.APIStatus,
		Tuning: opts.Tuning, TuningErr: opts.TuningErr})
	return f, linked, nil
}

// withCurrent is a peer's observed path changes with its path now added
// when it differs from the last one observed (an offline peer's "last
// seen" words change without its path changing).
func withCurrent(chs []join.PathChange, p *probes.Path, now time.Time) []join.PathChange {
	if len(chs) == 0 {
		return nil
	}
	last := chs[len(chs)-1]
	if last.Kind == p.Kind && (p.Kind == probes.PathOffline || last.Text == join.PathText(p)) {
		return chs
	}
	out := slices.Clip(chs)
	if len(out) >= join.HistoryLen {
		out = out[1:]
	}
	return append(out, join.PathChange{When: now, Text: join.ChangeText(p), Kind: p.Kind})
}

// sortedKeys returns m's keys in order.
func sortedKeys[K ~string, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
