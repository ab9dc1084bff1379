package probes

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// DeviceEvidence is what an embedded board (the CoreS3 running tailpath's
// telemetry component, or the ESP32 Tailscale port's log lines) says about
// itself, as far as the device diagnosis uses it. probes does not read the
// board: probes/join converts devlink.State into this value (see
// join.EvidenceFrom). Zero values mean "the board has not said"
// except where noted.
type DeviceEvidence struct {
	// TailnetIP is the board's own tailnet address (telemetry N frame
	// "ip"); invalid when unknown.
	TailnetIP netip.Addr `json:"tailnet_ip,omitzero"`
	// Hostname is the board's host name (N frame "host"), sanitised; "" unknown.
	Hostname string `json:"hostname,omitempty"`
	// ProbesUsed and ProbesCap are the DISCO probe table's slots in use and
	// its capacity (D frame "pu"/"pcap"); ProbesCap 0 means unknown.
	ProbesUsed int64 `json:"probes_used"`
	ProbesCap  int64 `json:"probes_cap"`
	// ProbesDropped counts DISCO pings the board dropped because the table
	// was full (D frame "pdrop"), since boot.
	ProbesDropped int64 `json:"probes_dropped"`
	// Endpoints is how many UDP endpoints the board has advertised to
	// control (N frame "eps"); -1 means unknown. Set it explicitly: the
	// zero value 0 means "none advertised".
	Endpoints int64 `json:"endpoints"`
	// HomeDERP is the board's home DERP region id and NearestDERP the region
	// it measured as nearest; 0 means unknown. HomeLatency and
	// NearestLatency are its measured round trips to them; 0 unknown.
	HomeDERP       int           `json:"home_derp,omitempty"`
	NearestDERP    int           `json:"nearest_derp,omitempty"`
	HomeLatency    time.Duration `json:"home_latency_ns,omitempty"`
	NearestLatency time.Duration `json:"nearest_latency_ns,omitempty"`
	// HomeDERPBy is how the board chose its home ("latency", "lowest-id",
	// "fixed", "none"); "" unknown.
	HomeDERPBy string `json:"home_derp_by,omitempty"`
	// H2Known is true when the board reported its control stream's HTTP/2
	// flow control (D frame "h2rx"/"h2wu"/"h2win"): H2Received DATA bytes
	// received, H2WindowReturned connection-level WINDOW_UPDATE credit
	// returned and H2WindowOpen receive window still open, all in bytes
	// (the board's counters wrap at 2^32).
	H2Known          bool  `json:"h2_known"`
	H2Received       int64 `json:"h2_received"`
	H2WindowReturned int64 `json:"h2_window_returned"`
	H2WindowOpen     int64 `json:"h2_window_open"`
	// RelayKnown is true when the board reported its connection to its
	// home DERP relay (microlink's `ml_derp: DERP status: connected=N …`
	// lines, telemetry R frames): RelayUp is whether it is up now,
	// RelayWasUp whether it was up earlier in this boot, RelayAttempts the
	// reconnect attempts since it went down.
	RelayKnown    bool  `json:"relay_known"`
	RelayUp       bool  `json:"relay_up"`
	RelayWasUp    bool  `json:"relay_was_up"`
	RelayAttempts int64 `json:"relay_attempts"`
	// DiscoDecryptFails counts DISCO packets the board could not decrypt
	// this boot.
	DiscoDecryptFails int64 `json:"disco_decrypt_fails"`
	// DiscoDecryptRecent are the latest of those failures, newest first
	// (at most 8): when each was read, and the address the line named as
	// its source (zero when it named none, or only the port's peer
	// index). One failure now and then is normal after a restart;
	// repeated recent ones from one end's address mean a stale key.
	DiscoDecryptRecent [8]DecryptFailure `json:"disco_decrypt_recent,omitzero"`
}

// DecryptFailure is one DISCO packet a board could not decrypt.
type DecryptFailure struct {
	At   time.Time      `json:"at,omitzero"`
	From netip.AddrPort `json:"from,omitzero"`
}

// Repeated decrypt failures: at least DiscoDecryptMin from one of our
// addresses within DiscoDecryptWindow of the snapshot's time.
const (
	DiscoDecryptMin    = 3
	DiscoDecryptWindow = 2 * time.Minute
)

// Device reasons judged by diagnoseDevice beside those in types.go (their
// rows are in the reason table, reasons.go).
const (
	// ReasonDeviceDERPDown: the board's own connection to its DERP relay is
	// down while control still lists it, so nothing sent to it through
	// DERP arrives and peers cannot start a path to it (DISCO's
	// CallMeMaybe travels through DERP).
	ReasonDeviceDERPDown ReasonID = "device-derp-down"
	// ReasonDeviceDiscoKeyStale: the board cannot decrypt peers' DISCO
	// packets, so no pong answers them and no direct path is validated.
	ReasonDeviceDiscoKeyStale ReasonID = "device-disco-key-stale"
)

// h2NoCreditYet is how much a control stream may receive without returning
// any WINDOW_UPDATE credit before that is a sign the client never will:
// half of HTTP/2's initial 65,535-byte window.
const h2NoCreditYet = 32768

// H2Stalled reports whether the board's control stream is stuck: data was
// received, no credit was ever returned and the receive window is shut, so
// the control server can send it nothing more (such as the map response
// that carries its endpoint update's acknowledgement).
func (d DeviceEvidence) H2Stalled() bool {
	return d.H2Known && d.H2Received > 0 && d.H2WindowReturned == 0 && d.H2WindowOpen == 0
}

// ProbeTableFull reports whether the board's DISCO probe table is full:
// capacity known and every slot in use.
func (d DeviceEvidence) ProbeTableFull() bool {
	return d.ProbesCap > 0 && d.ProbesUsed >= d.ProbesCap
}

// Matches reports whether the board is peer p. When both sides know a
// tailnet address the address decides (so a stale node that shares the host
// name is not linked); otherwise the board's host name must equal p's
// Name or the first label of its DNSName, ignoring case.
func (d DeviceEvidence) Matches(p *Peer) bool {
	if d.TailnetIP.IsValid() && len(p.TailscaleIPs) > 0 {
		ip := d.TailnetIP.Unmap()
		for _, a := range p.TailscaleIPs {
			if a.Unmap() == ip {
				return true
			}
		}
		return false
	}
	if d.Hostname == "" {
		return false
	}
	if strings.EqualFold(d.Hostname, string(p.Name)) {
		return true
	}
	label, _, _ := strings.Cut(string(p.DNSName), ".")
	return label != "" && strings.EqualFold(d.Hostname, label)
}

// diagnoseDevice adds the board's own evidence to v, the verdict of peer
// p (self, regions and now are diagnoseIn's), and returns the result. The caller
// has established that the board is p (DeviceEvidence.Matches). It is pure
// and does not modify v's slices.
//
// It records Device.Node (how the board names itself), then walks the
// reason table's rows that read a board (reasons.go), in order:
// device-derp-down (Device.DERPRelay), device-no-public-endpoint
// (Device.Endpoints, Device.H2Window), device-probe-table-full
// (Device.ProbeTable), device-disco-key-stale (Device.DiscoDecrypt),
// far-home-derp (Device.HomeDERP). Only a relayed path (DERP or peer
// relay) gets device reasons; the checks keep their own state on any
// path (a direct peer's board can still have a shut control stream). The
// board's causes join v's and all are ranked by the
// table: the first is the Reason (a peer-relay verdict keeps its reason
// and names it in the summary), and when it is a board's, the Summary and
// Fix are its row's.
//
// tn is the gather's tailnet-wide facts (nil: none).
func diagnoseDevice(v Verdict, self Self, p Peer, dev DeviceEvidence, regions map[int]Region, now time.Time, tn *Tailnet) Verdict {
	relayed := p.Path.Kind == PathDERP || p.Path.Kind == PathPeerRelay
	d := newDiag(self, p, regions, now)
	d.tn = tn
	defer d.free()
	d.dev = &dev
	d.checks = make([]Check, len(v.Checks), len(v.Checks)+7)
	copy(d.checks, v.Checks)

	node := "unknown"
	switch {
	case dev.TailnetIP.IsValid() && dev.Hostname != "":
		node = dev.TailnetIP.String() + " " + strconv.Quote(dev.Hostname)
	case dev.TailnetIP.IsValid():
		node = dev.TailnetIP.String()
	case dev.Hostname != "":
		node = strconv.Quote(dev.Hostname)
	}
	d.checks = append(d.checks, Check{Field: "Device.Node", Value: safetext.New(node), State: CheckInfo, Note: "the board's telemetry names this peer", Source: "device"})

	var board []ReasonID
	results := map[ReasonID]result{}
	for i := range rules {
		r := &rules[i]
		if r.boardCheck == nil {
			continue
		}
		res := d.judge(r, r.boardCheck)
		if res.holds && relayed && r.appliesTo(p.Path.Kind) {
			board = append(board, r.ID)
			results[r.ID] = res
		}
	}
	out := v
	out.Checks = d.checks
	if len(d.refuted) > 0 {
		out.Refuted = append(slices.Clip(v.Refuted), d.refuted...)
	}
	if !relayed || len(board) == 0 {
		return out
	}
	// v's causes (its Reason when a cause, the causes in Also), then
	// the board's, ranked by the table; RoleAlso reasons after them.
	var causes, also []ReasonID
	vCause := isCause(v.Reason, self)
	if vCause {
		causes = append(causes, v.Reason)
	}
	for _, r := range v.Also {
		if isCause(r, self) {
			causes = append(causes, r)
		} else {
			also = append(also, r)
		}
	}
	for _, r := range board {
		switch {
		case hasReason(causes, r) || hasReason(also, r):
		case rules[ruleIndex[r]].Role == RoleAlso:
			also = append(also, r)
		default:
			causes = append(causes, r)
		}
	}
	slices.SortStableFunc(causes, func(a, b ReasonID) int { return rank(a) - rank(b) })
	slices.SortStableFunc(also, func(a, b ReasonID) int { return rank(a) - rank(b) })
	first, isBoard := ReasonID(""), false
	if len(causes) > 0 {
		first = causes[0]
		_, isBoard = results[first]
	}
	name := pingName(&p)
	switch {
	case first == "" || !isBoard || (vCause && first == v.Reason):
		// The primary reason stands; the board adds to Also.
		rest := causes
		if vCause {
			rest = causes[1:]
		}
		out.Also = append(slices.Clip(rest), also...)
	case p.Path.Kind == PathPeerRelay:
		out.Also = append(slices.Clip(causes), also...)
		s, fix := rules[ruleIndex[first]].texts(results[first], name)
		out.Summary, _ = rule(ReasonPeerRelay).texts(holdsAs("not-direct", "{cause}", string(s)), name)
		out.Fix = fix
	default:
		out.Reason = first
		out.Also = append(slices.Clip(causes[1:]), also...)
		out.Summary, out.Fix = rules[ruleIndex[first]].texts(results[first], name)
		out.PeerSide = false
		out.Settle = out.Settle.before(first)
	}
	if len(out.Also) == 0 {
		out.Also = nil
	}
	return out
}

// isCause reports whether reason r, in a verdict's Also, is a cause (not
// a RoleAlso reason, nor a cause that held only as Also: a DERP region
// that cannot be reached while others remain).
func isCause(r ReasonID, self Self) bool {
	i, ok := ruleIndex[r]
	if !ok || rules[i].Role != RoleCause {
		return false
	}
	return r != ReasonDERPUnreachable || self.DERPRegions == 1
}

// addBoard records a board check. Its state is the board's fact's,
// whatever the path: a shut control-stream window is failing evidence on
// a direct path too (it is only no reason for relaying there: the board's
// reasons are judged on relayed paths alone, diagnoseDevice).
func (d *diag) addBoard(field safetext.Text, value string, failed bool, note safetext.Text) {
	st := CheckOK
	if failed {
		st = CheckFail
	}
	d.checks = append(d.checks, Check{Field: field, Value: safetext.New(value), Failed: failed, State: st, Note: note, Source: "device"})
}

// boardState records a board check with a state of its own.
func (d *diag) boardState(field safetext.Text, value string, st CheckState, note safetext.Text) {
	d.checks = append(d.checks, Check{Field: field, Value: safetext.New(value), State: st, Note: note, Source: "device"})
}

// boardRelay: the board's own connection to its DERP relay is down.
func (d *diag) boardRelay() result {
	dev := d.dev
	if !dev.RelayKnown {
		return notHeld()
	}
	if dev.RelayUp {
		d.addBoard("Device.DERPRelay", "up", false, "the board's connection to its DERP relay is up")
		return notHeld()
	}
	value := "down"
	if dev.RelayWasUp {
		value += ", was up earlier this boot"
	}
	if dev.RelayAttempts > 0 {
		value += ", " + strconv.FormatInt(dev.RelayAttempts, 10) + " reconnect attempts"
	}
	d.addBoard("Device.DERPRelay", value, true, "the board's DERP relay connection is down while control still lists it: nothing relayed reaches it, and peers cannot start a path to it")
	return holds()
}

// boardEndpoints: the board advertised no endpoint and control lists no
// public one, or it says it advertised some that control does not list.
// Device.H2Window (the control stream's flow control) is its evidence.
func (d *diag) boardEndpoints() result {
	dev, p := d.dev, d.p
	res := notHeld()
	switch {
	case dev.Endpoints < 0:
		d.boardState("Device.Endpoints", "unknown", CheckUnknown, "the board has not reported its advertised endpoints")
	case dev.Endpoints == 0:
		controlPublic := p.EndpointsKnown && hasPublic(p.Endpoints)
		note := "the board has advertised no UDP endpoint: its public (STUN) endpoint never reached control"
		if controlPublic {
			note = "the board says none, but control lists a public endpoint: the telemetry may be stale"
		}
		d.addBoard("Device.Endpoints", "0", !controlPublic, safetext.New(note))
		res = resultIf(!controlPublic)
	case p.EndpointsKnown && len(p.Endpoints) == 0:
		// The board says it sent endpoints that control does not list:
		// they never got there (the HTTP/2 stall of the CoreS3 case), or
		// the netmap predates the board's report.
		d.addBoard("Device.Endpoints", strconv.FormatInt(dev.Endpoints, 10), true,
			safetext.New("the board says it advertised "+strconv.FormatInt(dev.Endpoints, 10)+" endpoint(s), yet control lists none for it: the announcement has not reached control (a stalled control stream), or the netmap is older than the board's report"))
		res = holdsAs("unreached")
		if dev.H2Known && !dev.H2Stalled() {
			res = holdsAs("unreached-window-open")
		}
	default:
		d.addBoard("Device.Endpoints", strconv.FormatInt(dev.Endpoints, 10), false, "the board has advertised endpoints")
	}
	if dev.H2Known {
		buf := make([]byte, 0, 64)
		buf = strconv.AppendInt(buf, dev.H2Received, 10)
		buf = append(buf, " B received, "...)
		buf = strconv.AppendInt(buf, dev.H2WindowReturned, 10)
		buf = append(buf, " B credit returned, "...)
		buf = strconv.AppendInt(buf, dev.H2WindowOpen, 10)
		buf = append(buf, " B window open"...)
		stalled := dev.H2Stalled()
		note := "the control stream's HTTP/2 receive window is open"
		switch {
		case stalled:
			note = "the control stream's HTTP/2 receive window is shut and no WINDOW_UPDATE credit was ever returned: control can send the board nothing more"
		case dev.H2WindowOpen == 0:
			note = "the control stream's receive window is shut right now, but credit has been returned before"
		case dev.H2WindowReturned == 0 && dev.H2Received >= h2NoCreditYet:
			// Not ok either: a client that returns credit does so long
			// before half its window is used (RFC 9113 §6.9; Go's own
			// x/net/http2 as soon as 4 KiB is unsent, inflow.add and
			// inflowMinRefresh), so the window only shrinks.
			d.boardState("Device.H2Window", string(buf), CheckInfo, "open for now, but no WINDOW_UPDATE credit was returned for what was received: the window only shrinks, and at 0 control can send the board nothing more")
			return res
		}
		d.addBoard("Device.H2Window", string(buf), stalled, safetext.New(note))
	}
	return res
}

// boardProbeTable: the board's DISCO probe table is full.
func (d *diag) boardProbeTable() result {
	dev := d.dev
	if dev.ProbesCap <= 0 {
		d.boardState("Device.ProbeTable", "unknown", CheckUnknown, "the board has not reported its DISCO probe table")
		return notHeld()
	}
	full := dev.ProbeTableFull()
	buf := make([]byte, 0, 40)
	buf = strconv.AppendInt(buf, dev.ProbesUsed, 10)
	buf = append(buf, '/')
	buf = strconv.AppendInt(buf, dev.ProbesCap, 10)
	buf = append(buf, " used, "...)
	buf = strconv.AppendInt(buf, dev.ProbesDropped, 10)
	buf = append(buf, " dropped"...)
	note := "free slots: new DISCO pings can be tracked"
	switch {
	case full:
		note = "the DISCO probe table is full: the board drops new pings, so no direct path can be validated"
	case dev.ProbesDropped > 0:
		note = "not full now, but pings were dropped earlier when it was"
	}
	d.addBoard("Device.ProbeTable", string(buf), full, safetext.New(note))
	return resultIf(full)
}

// boardDiscoDecrypt: repeated, recent DISCO decrypt failures from one of
// this end's addresses mean the board holds a stale disco key for us.
// magicsock drops an undecryptable DISCO packet silently, as normal after
// a restart (handleDiscoMessage), so one failure since boot, or failures
// from elsewhere, are not evidence; failures whose source the board's
// lines do not name leave it unknown.
func (d *diag) boardDiscoDecrypt() result {
	dev := d.dev
	if dev.DiscoDecryptFails == 0 {
		return notHeld()
	}
	var recent, fromUs, unnamed int
	for _, f := range dev.DiscoDecryptRecent {
		if f.At.IsZero() || (!d.now.IsZero() && (d.now.Sub(f.At) > DiscoDecryptWindow || f.At.After(d.now.Add(time.Minute)))) {
			continue
		}
		recent++
		switch {
		case !f.From.IsValid():
			unnamed++
		case d.ourAddr(f.From.Addr()):
			fromUs++
		}
	}
	value := strconv.FormatInt(dev.DiscoDecryptFails, 10) + " failed since boot, " + strconv.Itoa(recent) + " in the last " + durText(DiscoDecryptWindow)
	switch {
	case fromUs >= DiscoDecryptMin:
		d.addBoard("Device.DiscoDecrypt", value+", "+strconv.Itoa(fromUs)+" from this end's address", true,
			"the board keeps failing to decrypt DISCO packets from this end: its copy of our disco key is stale, so our pings get no pong")
		return holds()
	case recent == 0:
		d.boardState("Device.DiscoDecrypt", value, CheckInfo, "none recently: a few after a restart are normal (magicsock drops them silently)")
	case unnamed > 0 && fromUs+unnamed >= DiscoDecryptMin:
		d.boardState("Device.DiscoDecrypt", value, CheckUnknown, "recent failures, but the board's lines do not say where they came from, so whether its key for this end is stale is not known")
	default:
		d.boardState("Device.DiscoDecrypt", value, CheckInfo, "not repeated from this end's address: not a stale key for this path")
	}
	return notHeld()
}

// ourAddr reports whether a is one of our endpoint addresses.
func (d *diag) ourAddr(a netip.Addr) bool {
	a = a.Unmap()
	for _, ep := range d.self.Endpoints {
		if ep.Addr().Unmap() == a {
			return true
		}
	}
	return false
}

// boardHomeDERP: the board's home region is not its nearest and is
// FarDERPFactor times and FarDERPMargin slower.
func (d *diag) boardHomeDERP() result {
	dev := d.dev
	if dev.HomeDERP == 0 {
		return notHeld()
	}
	far := false
	buf := make([]byte, 0, 64)
	buf = append(buf, "home "...)
	buf = d.appendRegionID(buf, dev.HomeDERP)
	if dev.HomeLatency > 0 {
		buf = append(buf, '=')
		buf = appendMs(buf, dev.HomeLatency)
	}
	if dev.HomeDERPBy != "" {
		buf = append(buf, " by "...)
		buf = append(buf, dev.HomeDERPBy...)
	}
	note := "the board's nearest region is unknown"
	if dev.NearestDERP != 0 {
		buf = append(buf, ", nearest "...)
		buf = d.appendRegionID(buf, dev.NearestDERP)
		if dev.NearestLatency > 0 {
			buf = append(buf, '=')
			buf = appendMs(buf, dev.NearestLatency)
		}
		switch {
		case dev.NearestDERP == dev.HomeDERP:
			note = "the board's home is the nearest region it measured"
		case dev.HomeLatency > 0 && dev.NearestLatency > 0 &&
			dev.HomeLatency >= FarDERPFactor*dev.NearestLatency && dev.HomeLatency-dev.NearestLatency >= FarDERPMargin:
			// The fact, whatever the path; it is a reason only on a DERP
			// path (far-home-derp's row: diagnoseDevice asks appliesTo).
			far = true
			note = "the board's home region is far from it while a nearer one exists"
			if dev.HomeDERPBy != "lowest-id" {
				note += "; " + homeChoiceNote
			}
		default:
			note = "the board's home is not its nearest region, but not much slower"
		}
	}
	d.addBoard("Device.HomeDERP", string(buf), far, safetext.New(note))
	return resultIf(far)
}
