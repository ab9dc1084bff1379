package metrics

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// DefaultMaxPeers is how many peers get per-peer series when
// Options.MaxPeers is 0.
const DefaultMaxPeers = 1000

// Options configure a Gatherer.
type Options struct {
	// MaxPeers caps the peers that get per-peer series (tailpath_peer_*);
	// 0 means DefaultMaxPeers. Over the cap, relayed peers are kept first,
	// then peer-relay, direct, idle and offline ones, by name; the rest
	// are counted in tailpath_peers_dropped and
	// tailpath_series_dropped_total. tailpath_peers counts every peer.
	MaxPeers int
	// Extra is gathered beside tailpath's own families (the Go runtime,
	// process and promhttp collectors of NewRuntimeRegistry); nil for none.
	Extra prometheus.Gatherer
}

// Gatherer is a prometheus.Gatherer reading a Store at every scrape. It
// builds the metric families itself rather than through a Registry's
// per-metric checks: the families are fixed (families), label names are
// sorted and every series is unique by construction, and a 1,000-peer
// scrape stays within its allocation budget (docs/perf.md).
type Gatherer struct {
	store *Store
	opts  Options

	// mu serialises builds: the peer label cache and the dropped counter.
	mu      sync.Mutex
	peers   map[safetext.Text]*peerLabels
	gen     uint32
	dropped float64
	// droppedFor is the snapshot dropped was last counted for: a
	// snapshot's dropped series count once, however often it is scraped.
	droppedFor *join.Snapshot

	// pool holds scrapes whose families were written and may be reused.
	pool sync.Pool
}

// NewGatherer returns a Gatherer of s's values.
func NewGatherer(s *Store, o Options) *Gatherer {
	if o.MaxPeers <= 0 {
		o.MaxPeers = DefaultMaxPeers
	}
	return &Gatherer{store: s, opts: o, peers: map[safetext.Text]*peerLabels{}}
}

// Gather implements prometheus.Gatherer: Extra's families, then
// tailpath's, sorted by name. An error from Extra is returned beside
// whatever was gathered.
func (g *Gatherer) Gather() ([]*dto.MetricFamily, error) {
	out, _, err := g.gather()
	return out, err
}

// Transactional returns g as a prometheus.TransactionalGatherer: the
// families it returns stay valid until its done func is called, after
// which their memory serves a later scrape (Handler uses it).
func (g *Gatherer) Transactional() prometheus.TransactionalGatherer { return transactional{g} }

type transactional struct{ g *Gatherer }

func (t transactional) Gather() ([]*dto.MetricFamily, func(), error) { return t.g.gather() }

// gather builds a scrape and returns its families and the func that
// releases its memory for reuse.
func (g *Gatherer) gather() ([]*dto.MetricFamily, func(), error) {
	s, _ := g.pool.Get().(*scrape)
	if s == nil {
		s = &scrape{}
	}
	var err error
	if g.opts.Extra != nil {
		var extra []*dto.MetricFamily
		extra, err = g.opts.Extra.Gather()
		s.out = append(s.out, extra...)
	}
	g.build(s)
	slices.SortFunc(s.out, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return s.out, func() {
		s.reset()
		g.pool.Put(s)
	}, err
}

// famMeta holds each family's name, help and type as the pointers
// dto.MetricFamily wants, made once.
var famMeta [numFamilies]struct {
	name, help *string
	typ        *dto.MetricType
}

// labelNames holds each label name as a pointer, made once.
var labelNames = map[string]*string{}

// Constant label sets, made once.
var (
	pathLabels    = map[string][]*dto.LabelPair{}
	bufferLabels  = map[string][]*dto.LabelPair{}
	verdictLabels = map[sockdiag.VerdictKind][]*dto.LabelPair{}
)

// pathWords are the path label's values, in tailpath_peers' order.
var pathWords = []string{"direct", "peer-relay", "derp", "idle", "offline"}

// bufferWords are the buffer label's values.
var bufferWords = []string{"tcp_rmem", "tcp_wmem", "rmem_max", "wmem_max"}

// verdictKinds are the connection verdicts always exported (0 when none).
var verdictKinds = []sockdiag.VerdictKind{
	sockdiag.VerdictHealthy, sockdiag.VerdictSndbuf, sockdiag.VerdictWmemMax, sockdiag.VerdictAppSndbuf,
	sockdiag.VerdictRwnd, sockdiag.VerdictMTU, sockdiag.VerdictRetrans, sockdiag.VerdictUnknown,
}

func init() {
	for i := range families {
		f := &families[i]
		famMeta[i].name, famMeta[i].help, famMeta[i].typ = proto.String(f.Name), proto.String(f.Help), f.Type.Enum()
		for _, l := range f.Labels {
			if labelNames[l] == nil {
				labelNames[l] = proto.String(l)
			}
		}
	}
	for _, w := range pathWords {
		pathLabels[w] = []*dto.LabelPair{pair("path", w)}
	}
	for _, w := range bufferWords {
		bufferLabels[w] = []*dto.LabelPair{pair("buffer", w)}
	}
	for _, k := range verdictKinds {
		verdictLabels[k] = []*dto.LabelPair{pair("verdict", string(k))}
	}
}

// pair is one label; value is made valid UTF-8 (sanitised text already
// is; this keeps a scrape from failing on anything else).
func pair(name, value string) *dto.LabelPair {
	if !utf8.ValidString(value) {
		value = strings.ToValidUTF8(value, "\uFFFD")
	}
	n := labelNames[name]
	if n == nil {
		panic("metrics: label " + name + " is in no family")
	}
	return &dto.LabelPair{Name: n, Value: proto.String(value)}
}

// peerLabels are one peer's label sets, kept from scrape to scrape and
// rebuilt only when the peer's name, path or reason changes. Built slices
// are never modified, so a scrape still encoding may keep using them.
type peerLabels struct {
	name, path, reason, region string
	base                       []*dto.LabelPair // id, peer
	info                       []*dto.LabelPair // id, path, peer, reason, region
	gen                        uint32
}

// chunkLen is how many values an arena chunk holds.
const chunkLen = 512

// arena hands out *T from chunks kept from scrape to scrape; reset makes
// them available again (their previous contents are overwritten by the
// caller). Chunks are never moved, so pointers stay valid until reset.
type arena[T any] struct {
	chunks [][]T
	c, i   int
}

func (a *arena[T]) next() *T {
	if a.c < len(a.chunks) && a.i == len(a.chunks[a.c]) {
		a.c, a.i = a.c+1, 0
	}
	if a.c == len(a.chunks) {
		a.chunks = append(a.chunks, make([]T, chunkLen))
	}
	p := &a.chunks[a.c][a.i]
	a.i++
	return p
}

func (a *arena[T]) reset() { a.c, a.i = 0, 0 }

// scrape accumulates one build's families. Its memory is reused by the
// next scrape once the handler has written this one (Gatherer.pool).
type scrape struct {
	fams     [numFamilies]*dto.MetricFamily
	metrics  arena[dto.Metric]
	gauges   arena[dto.Gauge]
	counters arena[dto.Counter]
	values   arena[float64]
	out      []*dto.MetricFamily
}

// reset empties s for another build.
func (s *scrape) reset() {
	for _, mf := range s.fams {
		if mf != nil {
			clear(mf.Metric)
			mf.Metric = mf.Metric[:0]
		}
	}
	s.metrics.reset()
	s.gauges.reset()
	s.counters.reset()
	s.values.reset()
	clear(s.out)
	s.out = s.out[:0]
}

// family returns f's family in this scrape, with room for n series.
func (s *scrape) family(f fam, n int) *dto.MetricFamily {
	mf := s.fams[f]
	if mf == nil {
		m := &famMeta[f]
		mf = &dto.MetricFamily{Name: m.name, Help: m.help, Type: m.typ}
		s.fams[f] = mf
	}
	if cap(mf.Metric)-len(mf.Metric) < n {
		mf.Metric = slices.Grow(mf.Metric, n)
	}
	return mf
}

// add appends one series of family f.
func (s *scrape) add(f fam, labels []*dto.LabelPair, v float64) {
	mf := s.family(f, 1)
	m, val := s.metrics.next(), s.values.next()
	*val = v
	m.Label = labels
	if families[f].Type == counter {
		c := s.counters.next()
		c.Value = val
		m.Counter, m.Gauge = c, nil
	} else {
		gg := s.gauges.next()
		gg.Value = val
		m.Gauge, m.Counter = gg, nil
	}
	mf.Metric = append(mf.Metric, m)
}

// one appends an unlabelled series.
func (s *scrape) one(f fam, v float64) { s.add(f, nil, v) }

// flag appends an unlabelled 0/1 series.
func (s *scrape) flag(f fam, b bool) { s.one(f, b01(b)) }

// tri appends an unlabelled 0/1 series when b is known.
func (s *scrape) tri(f fam, b *bool) {
	if b != nil {
		s.flag(f, *b)
	}
}

func b01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// build adds this scrape's families to s.out.
func (g *Gatherer) build(s *scrape) {
	st := g.store
	st.mu.RLock()
	defer st.mu.RUnlock()
	g.mu.Lock()
	defer g.mu.Unlock()

	up := st.sourceSeen && st.source.Up
	snap := st.snap

	s.flag(famTailscaledUp, up)
	if snap != nil {
		s.one(famSnapshotTime, unixSeconds(snap.Time.UnixNano()))
	}
	if up && snap != nil {
		g.tailnet(s, snap)
	}
	s.one(famSeriesDropped, g.dropped)
	if st.haveBoard {
		g.board(s, st.board, snap)
	}
	if st.haveTuning {
		tuning(s, st.tuning, st.tuningErr)
	}
	for _, mf := range s.fams {
		if mf != nil && len(mf.Metric) > 0 {
			// In label order, as a Registry gives them (and testutil
			// compares them).
			if !slices.IsSortedFunc(mf.Metric, compareLabels) {
				slices.SortFunc(mf.Metric, compareLabels)
			}
			s.out = append(s.out, mf)
		}
	}
}

// compareLabels orders two series of one family by their label values.
func compareLabels(a, b *dto.Metric) int {
	for i := range min(len(a.Label), len(b.Label)) {
		if c := strings.Compare(a.Label[i].GetValue(), b.Label[i].GetValue()); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a.Label), len(b.Label))
}

func unixSeconds(ns int64) float64 { return float64(ns) / 1e9 }

// pathWord is a path kind as the path label says it ("derp" for
// probes.PathDERP, whose own word is "relay").
func pathWord(k probes.PathKind) string {
	if k == probes.PathDERP {
		return "derp"
	}
	return string(k)
}

// tailnet adds the tailscaled-derived series. Caller holds both locks.
//
// Long on purpose: every tailnet family built in turn from the one ranked peer
// order; split, each piece would take that order and the label caches.
func (g *Gatherer) tailnet(s *scrape, snap *join.Snapshot) {
	self := snap.Self
	s.add(famTailscaledState, []*dto.LabelPair{pair("state", string(snap.BackendState))}, 1)

	var counts [5]int
	for i := range snap.Peers {
		for j, w := range pathWords {
			if pathWord(snap.Peers[i].Path.Kind) == w {
				counts[j]++
			}
		}
	}
	for j, w := range pathWords {
		s.add(famPeers, pathLabels[w], float64(counts[j]))
	}

	// Which peers get series: all, or the first MaxPeers by rank (peers
	// are sorted by name). They are exported in stable-id order, the order
	// of their labels, so each family is sorted as it is built.
	peers := snap.Peers
	order := make([]int, len(peers))
	for i := range order {
		order[i] = i
	}
	dropped := 0
	if len(peers) > g.opts.MaxPeers {
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Compare(peers[a].Path.Kind.Rank(), peers[b].Path.Kind.Rank())
		})
		for _, i := range order[g.opts.MaxPeers:] {
			p := &peers[i]
			n := 4 // path info, tx, rx, path changes
			if g.latency(p) > 0 {
				n++
			}
			if !p.LastHandshake.IsZero() {
				n++
			}
			dropped++
			if snap != g.droppedFor {
				g.dropped += float64(n)
			}
		}
		g.droppedFor = snap
		order = order[:g.opts.MaxPeers]
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(peers[a].ID, peers[b].ID), cmp.Compare(peers[a].Name, peers[b].Name))
	})
	s.one(famPeersDropped, float64(dropped))

	n := len(order)
	for _, f := range []fam{famPeerPath, famPeerTx, famPeerRx, famPeerPathChanges, famPeerLatency, famPeerHandshake} {
		s.family(f, n)
	}
	g.gen++
	for _, i := range order {
		p := &peers[i]
		pl := g.labelsFor(p)
		s.add(famPeerPath, pl.info, 1)
		s.add(famPeerTx, pl.base, float64(p.TxBytes))
		s.add(famPeerRx, pl.base, float64(p.RxBytes))
		var changes int64
		if c := g.store.changes[p.ID]; c != nil {
			changes = c.n
		}
		s.add(famPeerPathChanges, pl.base, float64(changes))
		if d := g.latency(p); d > 0 {
			s.add(famPeerLatency, pl.base, d.Seconds())
		}
		if !p.LastHandshake.IsZero() {
			s.add(famPeerHandshake, pl.base, unixSeconds(p.LastHandshake.UnixNano()))
		}
	}
	// Forget the labels of peers this scrape did not export.
	if len(g.peers) > n {
		for id, pl := range g.peers {
			if pl.gen != g.gen {
				delete(g.peers, id)
			}
		}
	}

	// DERP regions: the home flag for each region of the map, the
	// latency where measured.
	var lat map[int]float64
	if self.NAT != nil {
		lat = make(map[int]float64, len(self.NAT.DERPLatency))
		for id, d := range self.NAT.DERPLatency {
			if d > 0 {
				lat[id] = d.Seconds()
			}
		}
	}
	ids := make([]int, 0, len(snap.Regions)+1)
	for id := range snap.Regions {
		ids = append(ids, id)
	}
	if self.HomeDERP != 0 && !slices.Contains(ids, self.HomeDERP) {
		ids = append(ids, self.HomeDERP)
	}
	slices.Sort(ids)
	for _, id := range ids {
		code := regionCode(snap, id)
		if code == "" && id == self.HomeDERP {
			code = string(self.HomeDERPCode)
		}
		rl := []*dto.LabelPair{pair("region", orID(code, id))}
		s.add(famDERPHome, rl, b01(id == self.HomeDERP))
		if v, ok := lat[id]; ok {
			s.add(famDERPLatency, rl, v)
		}
	}

	if n := self.NAT; n != nil {
		s.tri(famNATUDP, n.WorkingUDP)
		s.tri(famNATHard, n.MappingVariesByDestIP)
		s.flag(famNATPortMap, n.HavePortMap)
		s.tri(famNATIPv6, n.WorkingIPv6)
	}
	if v := self.Verdict; v != nil {
		s.add(famSelfReason, []*dto.LabelPair{pair("primary", "true"), pair("reason", string(v.Reason))}, 1)
		for _, r := range v.Also {
			s.add(famSelfReason, []*dto.LabelPair{pair("primary", "false"), pair("reason", string(r))}, 1)
		}
	}
	if v := self.View; v != nil {
		if h := v.Home; h.HomeLatency > 0 && h.BestLatency > 0 {
			s.flag(famHomeFar, h.Far)
			s.one(famHomeBehind, h.Behind.Seconds())
		}
		if st := v.UDPReceive.State; st != "" {
			s.add(famUDPReceive, []*dto.LabelPair{pair("state", st)}, 1)
		}
		for _, b := range v.Bugs {
			s.add(famKnownBug, []*dto.LabelPair{pair("hit", strconv.FormatBool(b.Hit)), pair("id", b.ID)}, 1)
		}
	}
	if t := self.Traffic; t.Known() {
		for _, c := range []struct {
			f      fam
			dir    string
			counts probes.PathCounts
		}{{famTrafficBytes, "in", t.BytesIn}, {famTrafficBytes, "out", t.BytesOut}, {famTrafficPackets, "in", t.PacketsIn}, {famTrafficPackets, "out", t.PacketsOut}} {
			s.add(c.f, []*dto.LabelPair{pair("direction", c.dir), pair("path", "direct")}, float64(c.counts.Direct))
			s.add(c.f, []*dto.LabelPair{pair("direction", c.dir), pair("path", "derp")}, float64(c.counts.DERP))
			s.add(c.f, []*dto.LabelPair{pair("direction", c.dir), pair("path", "peer_relay")}, float64(c.counts.PeerRelay))
		}
	}
	if api := snap.ControlAPI; api != nil {
		s.flag(famControlAPIUp, api.State == "ok")
	}
}

// latency is p's last ping round trip: serve's own ping (Store.SetLatency),
// else the snapshot's; 0 when none. Caller holds the store's lock.
func (g *Gatherer) latency(p *probes.Peer) time.Duration {
	if d, ok := g.store.latency[p.ID]; ok {
		return d
	}
	return p.Latency
}

// labelsFor returns p's label sets, from the cache when unchanged.
func (g *Gatherer) labelsFor(p *probes.Peer) *peerLabels {
	path := pathWord(p.Path.Kind)
	region := ""
	if p.Path.Kind == probes.PathDERP {
		region = string(p.Path.DERPCode)
	}
	reason := string(p.Verdict.Reason)
	pl := g.peers[p.ID]
	if pl == nil || pl.name != string(p.Name) {
		pl = &peerLabels{name: string(p.Name), base: []*dto.LabelPair{pair("id", string(p.ID)), pair("peer", string(p.Name))}}
		g.peers[p.ID] = pl
	}
	if pl.info == nil || pl.path != path || pl.reason != reason || pl.region != region {
		pl.path, pl.reason, pl.region = path, reason, region
		pl.info = []*dto.LabelPair{pl.base[0], pair("path", path), pl.base[1], pair("reason", reason), pair("region", region)}
	}
	pl.gen = g.gen
	return pl
}

// regionCode is region id's code in snap's DERP map; "" when unknown.
func regionCode(snap *join.Snapshot, id int) string {
	if snap == nil {
		return ""
	}
	return string(snap.Regions[id].Code)
}

// orID is code, or the region id when the code is unknown.
func orID(code string, id int) string {
	if code != "" {
		return code
	}
	return strconv.Itoa(id)
}

// board adds the board's series: tailpath_board_up always (with --port);
// its identity and what spans boots (boots, crashes, HTTP/2 stalls, the
// last telemetry) once it reported; its live gauges and per-boot counters
// while its port is open. "0 means unknown" values are left out.
func (g *Gatherer) board(s *scrape, st *devlink.State, snap *join.Snapshot) {
	s.flag(famBoardUp, st != nil && st.Link.Up)
	if st == nil {
		return
	}
	id := ""
	if snap != nil {
		id = string(snap.BoardID())
	}
	// Its identity once it has one: a port that never opened, or a board
	// that sent neither telemetry nor a boot, has none to give.
	if st.Hostname != "" || id != "" || !st.LastFrameAt.IsZero() || st.Boots > 0 {
		s.add(famBoardInfo, []*dto.LabelPair{pair("host", st.Hostname.String()), pair("id", id)}, 1)
	}
	s.one(famBoardBoots, float64(st.Boots))
	s.one(famBoardCrashes, float64(st.Crashes))
	s.one(famBoardH2Stalls, float64(g.store.h2Stalls))
	if !st.LastFrameAt.IsZero() {
		s.one(famBoardTelemetryTime, unixSeconds(st.LastFrameAt.UnixNano()))
	}
	if !st.Link.Up {
		return
	}
	if st.ProbesCap > 0 {
		s.one(famBoardProbesUsed, float64(st.ProbesUsed))
		s.one(famBoardProbesCap, float64(st.ProbesCap))
	}
	if st.Frames > 0 {
		s.one(famBoardProbesDropped, float64(st.ProbesDropped))
		s.one(famBoardProbesReaped, float64(st.ProbesReaped))
	}
	if st.HeapFree > 0 {
		s.one(famBoardHeapFree, float64(st.HeapFree))
	}
	if st.HeapMin > 0 {
		s.one(famBoardHeapMin, float64(st.HeapMin))
	}
	if st.HeapLargest > 0 {
		s.one(famBoardHeapLargest, float64(st.HeapLargest))
	}
	if st.HomeDERP != 0 && st.HomeLatency > 0 {
		s.add(famBoardHomeLatency, []*dto.LabelPair{pair("region", orID(regionCode(snap, st.HomeDERP), st.HomeDERP))}, st.HomeLatency.Seconds())
	}
	if st.NearestDERP != 0 && st.NearestLatency > 0 {
		s.add(famBoardNearestLatency, []*dto.LabelPair{pair("region", orID(regionCode(snap, st.NearestDERP), st.NearestDERP))}, st.NearestLatency.Seconds())
	}
	if st.HomeDERP != 0 && st.NearestDERP != 0 {
		s.flag(famBoardHomeIsNearest, st.HomeDERP == st.NearestDERP)
	}
	if st.Relay.Known {
		s.flag(famBoardDERPConnected, st.Relay.Connected)
	}
	if st.H2Known {
		s.one(famBoardH2Open, float64(st.H2WindowOpen))
		s.flag(famBoardH2Stalled, g.store.h2Stalled)
	}
}

// tuning adds the host's tuning series: tailpath_tuning_up always (when
// tuning is read), the rest from a successful reading.
func tuning(s *scrape, r *tune.Report, err error) {
	ok := r != nil && err == nil
	s.flag(famTuningUp, ok)
	if !ok {
		return
	}
	switch r.Tunnel.Mode {
	case tune.TunnelUserspace:
		s.one(famTuningUserspace, 1)
	case tune.TunnelKernel:
		s.one(famTuningUserspace, 0)
	}
	set, rec := r.Settings, r.Rec
	cur := []int64{set.TCPRmem.Max, set.TCPWmem.Max, set.RmemMax, set.WmemMax}
	want := []int64{rec.TCPRmem.Max, rec.TCPWmem.Max, rec.RmemMax, rec.WmemMax}
	for i, w := range bufferWords {
		if cur[i] > 0 {
			s.add(famTuningBuffer, bufferLabels[w], float64(cur[i]))
		}
		if want[i] > 0 {
			s.add(famTuningRecommended, bufferLabels[w], float64(want[i]))
		}
	}
	s.one(famTuningBDP, float64(rec.BDPBytes))
	s.add(famTuningRTT, []*dto.LabelPair{pair("source", sourceWord(rec.Target.RTTSource))}, rec.Target.RTT.Seconds())
	s.add(famTuningBandwidth, []*dto.LabelPair{pair("source", sourceWord(rec.Target.BandwidthSource))}, rec.Target.Bandwidth/8)
	s.flag(famTuningSuffices, rec.Suffices)
	s.flag(famTuningBBRInUse, set.CongestionControl == "bbr")
	s.flag(famTuningBBRAvailable, r.BBR.State == sysctl.BBRAvailable || r.BBR.State == sysctl.BBRLoadable)
	counts := make(map[sockdiag.VerdictKind]int, len(verdictKinds))
	for i := range r.Conns {
		counts[r.Conns[i].Verdict.Kind]++
	}
	for _, k := range verdictKinds {
		s.add(famTuningConns, verdictLabels[k], float64(counts[k]))
		delete(counts, k)
	}
	for k, n := range counts { // a verdict newer than this list
		s.add(famTuningConns, []*dto.LabelPair{pair("verdict", string(k))}, float64(n))
	}
	tuningLimits(s, r)
}

// tuningLimits adds the series of what other than the buffers limits
// (tune's limit.go): the crypto ceiling measured here, the limits, the
// kernel regressions, forwarding and the UDP GRO check.
func tuningLimits(s *scrape, r *tune.Report) {
	if c := r.Crypto; c != nil && c.Measured != nil {
		m := c.Measured
		s.add(famTuningCrypto, []*dto.LabelPair{pair("cores", "all")}, m.AllCores/8)
		s.add(famTuningCrypto, []*dto.LabelPair{pair("cores", "one")}, m.OneCore/8)
	}
	for i, l := range r.Limits {
		s.add(famTuningLimit, []*dto.LabelPair{pair("kind", string(l.Kind)), pair("primary", strconv.FormatBool(i == 0))}, 1)
	}
	for _, h := range r.Kernel {
		s.add(famTuningKernel, []*dto.LabelPair{pair("id", h.Bug.ID), pair("mitigated", strconv.FormatBool(h.Mitigated != "")), pair("sure", strconv.FormatBool(h.Sure))}, 1)
	}
	if f := r.Forwarding; f != nil && (f.From != "" || f.Forwards()) {
		s.flag(famTuningForwarding, f.Forwards())
	}
	if o := r.Offloads; o != nil && o.UDPGRO != nil && o.UDPGRO.Err == "" && o.UDPGRO.NotApplicable == "" {
		s.flag(famTuningUDPGRO, o.UDPGRO.Suboptimal)
	}
}

// sourceWord reduces tune's source text ("measured: highest smoothed RTT
// …", "default: pass --rtt", "flag --rtt") to measured, default or given.
func sourceWord(src string) string {
	switch {
	case strings.HasPrefix(src, "measured"):
		return "measured"
	case strings.HasPrefix(src, "default"):
		return "default"
	case strings.HasPrefix(src, "this CPU's crypto ceiling"):
		return "cpu_ceiling"
	}
	return "given"
}
