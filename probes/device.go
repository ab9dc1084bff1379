package probes

import (
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// DeviceEvidence is what an embedded board (the CoreS3 running tailpath's
// telemetry component, or the ESP32 Tailscale port's log lines) says about
// itself, as far as the device diagnosis uses it. probes does not read the
// board: probes/link converts devlink.State into this value (see
// link.EvidenceFrom). Zero values mean "the board has not said"
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
	// control (N frame "eps"); -1 means unknown. Use NewDeviceEvidence or
	// set it explicitly: the zero value 0 means "none advertised".
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
	// this boot: its copy of a peer's disco key is stale.
	DiscoDecryptFails int64 `json:"disco_decrypt_fails"`
}

// Device reasons added by DiagnoseDevice beside those in types.go.
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

// H2Stalled reports whether the board's control stream is stuck: data was
// received, no credit was ever returned and the receive window is shut, so
// the control server can send it nothing more (such as the map response
// that carries its endpoint update's acknowledgement).
func (d DeviceEvidence) H2Stalled() bool {
	return d.H2Known && d.H2Received > 0 && d.H2WindowReturned == 0 && d.H2WindowOpen == 0
}

// NewDeviceEvidence returns evidence that knows nothing yet (Endpoints -1).
func NewDeviceEvidence() DeviceEvidence { return DeviceEvidence{Endpoints: -1} }

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
	if strings.EqualFold(d.Hostname, p.Name) {
		return true
	}
	label, _, _ := strings.Cut(p.DNSName, ".")
	return label != "" && strings.EqualFold(d.Hostname, label)
}

// DiagnoseDevice adds the board's own evidence to v, the Diagnose verdict of
// peer p, and returns the result. The caller has established that the board
// is p (DeviceEvidence.Matches). It is pure and does not modify v's slices.
//
// Checks added, after v's: Device.Node (how the board names itself),
// Device.Endpoints, then when known Device.H2Window (fails when
// H2Stalled: evidence for the flow-control fix, not a reason by itself),
// Device.ProbeTable, Device.HomeDERP, Device.DERPRelay and
// Device.DiscoDecrypt.
// Only a relayed path (DERP or peer relay) gets device reasons; the checks
// of a direct, idle or offline peer never fail.
//
// device-no-public-endpoint holds when the board says it advertised 0
// endpoints and control does not list a public one for it (WhoIs
// endpoints empty, all private, or unknown), or when the board says it
// advertised some and control lists none at all (they never reached it). It replaces no-endpoints as
// the primary reason (it says why there are none), which moves to Also;
// only no-home-derp, no-handshake, local-tcp443-only and local-udp-blocked
// stay ahead of it. device-probe-table-full holds
// when the table is full; it ranks after the endpoint reasons and ahead of
// NAT, disco-unanswered, lost-direct and unexplained. far-home-derp is
// added to Also when the board's home region is not its nearest and is
// FarDERPFactor times and FarDERPMargin slower. device-derp-down holds
// when the board says its relay connection is down: it goes first, since
// nothing relayed reaches the board. device-disco-key-stale holds when the
// board failed to decrypt DISCO packets; it ranks with the probe table.
// The Summary and Fix follow the primary reason.
func DiagnoseDevice(v Verdict, p Peer, d DeviceEvidence) Verdict {
	relayed := p.Path.Kind == PathDERP || p.Path.Kind == PathPeerRelay
	out := v
	out.Checks = make([]Check, len(v.Checks), len(v.Checks)+5)
	copy(out.Checks, v.Checks)
	add := func(field, value string, failed bool, note string) {
		failed = failed && relayed
		st := CheckOK
		if failed {
			st = CheckFail
		}
		out.Checks = append(out.Checks, Check{Field: field, Value: value, Failed: failed, State: st, Note: note})
	}
	addState := func(field, value string, st CheckState, note string) {
		out.Checks = append(out.Checks, Check{Field: field, Value: value, State: st, Note: note})
	}

	node := "unknown"
	switch {
	case d.TailnetIP.IsValid() && d.Hostname != "":
		node = d.TailnetIP.String() + " " + strconv.Quote(d.Hostname)
	case d.TailnetIP.IsValid():
		node = d.TailnetIP.String()
	case d.Hostname != "":
		node = strconv.Quote(d.Hostname)
	}
	addState("Device.Node", node, CheckInfo, "the board's telemetry names this peer")

	noPublic, unreached := false, false
	switch {
	case d.Endpoints < 0:
		addState("Device.Endpoints", "unknown", CheckUnknown, "the board has not reported its advertised endpoints")
	case d.Endpoints == 0:
		controlPublic := p.EndpointsKnown && hasPublic(p.Endpoints)
		noPublic = !controlPublic
		note := "the board has advertised no UDP endpoint: its public (STUN) endpoint never reached control"
		if controlPublic {
			note = "the board says none, but control lists a public endpoint: the telemetry may be stale"
		}
		add("Device.Endpoints", "0", noPublic, note)
	case p.EndpointsKnown && len(p.Endpoints) == 0:
		// The board says it sent endpoints that control does not list:
		// they never got there (the HTTP/2 stall of the CoreS3 case), or
		// the netmap predates the board's report.
		noPublic, unreached = true, true
		add("Device.Endpoints", strconv.FormatInt(d.Endpoints, 10), true,
			"the board says it advertised "+strconv.FormatInt(d.Endpoints, 10)+" endpoint(s), yet control lists none for it: the announcement has not reached control (a stalled control stream), or the netmap is older than the board's report")
	default:
		add("Device.Endpoints", strconv.FormatInt(d.Endpoints, 10), false, "the board has advertised endpoints")
	}

	if d.H2Known {
		buf := make([]byte, 0, 64)
		buf = strconv.AppendInt(buf, d.H2Received, 10)
		buf = append(buf, " B received, "...)
		buf = strconv.AppendInt(buf, d.H2WindowReturned, 10)
		buf = append(buf, " B credit returned, "...)
		buf = strconv.AppendInt(buf, d.H2WindowOpen, 10)
		buf = append(buf, " B window open"...)
		stalled := d.H2Stalled()
		note := "the control stream's HTTP/2 receive window is open"
		switch {
		case stalled:
			note = "the control stream's HTTP/2 receive window is shut and no WINDOW_UPDATE credit was ever returned: control can send the board nothing more"
		case d.H2WindowOpen == 0:
			note = "the control stream's receive window is shut right now, but credit has been returned before"
		}
		add("Device.H2Window", string(buf), stalled, note)
	}

	full := d.ProbeTableFull()
	if d.ProbesCap <= 0 {
		addState("Device.ProbeTable", "unknown", CheckUnknown, "the board has not reported its DISCO probe table")
	} else {
		buf := make([]byte, 0, 40)
		buf = strconv.AppendInt(buf, d.ProbesUsed, 10)
		buf = append(buf, '/')
		buf = strconv.AppendInt(buf, d.ProbesCap, 10)
		buf = append(buf, " used, "...)
		buf = strconv.AppendInt(buf, d.ProbesDropped, 10)
		buf = append(buf, " dropped"...)
		note := "free slots: new DISCO pings can be tracked"
		switch {
		case full:
			note = "the DISCO probe table is full: the board drops new pings, so no direct path can be validated"
		case d.ProbesDropped > 0:
			note = "not full now, but pings were dropped earlier when it was"
		}
		add("Device.ProbeTable", string(buf), full, note)
	}

	far := false
	if d.HomeDERP != 0 {
		buf := make([]byte, 0, 64)
		buf = append(buf, "home "...)
		buf = strconv.AppendInt(buf, int64(d.HomeDERP), 10)
		if d.HomeLatency > 0 {
			buf = append(buf, '=')
			buf = appendMs(buf, d.HomeLatency)
		}
		if d.HomeDERPBy != "" {
			buf = append(buf, " by "...)
			buf = append(buf, d.HomeDERPBy...)
		}
		note := "the board's nearest region is unknown"
		if d.NearestDERP != 0 {
			buf = append(buf, ", nearest "...)
			buf = strconv.AppendInt(buf, int64(d.NearestDERP), 10)
			if d.NearestLatency > 0 {
				buf = append(buf, '=')
				buf = appendMs(buf, d.NearestLatency)
			}
			switch {
			case d.NearestDERP == d.HomeDERP:
				note = "the board's home is the nearest region it measured"
			case d.HomeLatency > 0 && d.NearestLatency > 0 &&
				d.HomeLatency >= FarDERPFactor*d.NearestLatency && d.HomeLatency-d.NearestLatency >= FarDERPMargin:
				far = p.Path.Kind == PathDERP
				note = "the board's home region is far from it while a nearer one exists"
			default:
				note = "the board's home is not its nearest region, but not much slower"
			}
		}
		add("Device.HomeDERP", string(buf), far, note)
	}

	relayDown := d.RelayKnown && !d.RelayUp
	if d.RelayKnown {
		value, note := "up", "the board's connection to its DERP relay is up"
		if relayDown {
			value = "down"
			if d.RelayWasUp {
				value += ", was up earlier this boot"
			}
			if d.RelayAttempts > 0 {
				value += ", " + strconv.FormatInt(d.RelayAttempts, 10) + " reconnect attempts"
			}
			note = "the board's DERP relay connection is down while control still lists it: nothing relayed reaches it, and peers cannot start a path to it"
		}
		add("Device.DERPRelay", value, relayDown, note)
	}
	stale := d.DiscoDecryptFails > 0
	if stale {
		add("Device.DiscoDecrypt", strconv.FormatInt(d.DiscoDecryptFails, 10)+" failed", true,
			"the board cannot decrypt peers' DISCO packets (a stale disco key): their pings get no pong")
	}

	if !relayed {
		return out
	}
	// The causes in order: the primary first (unless unexplained or
	// peer-relay, which are not causes), then Also.
	causes := make([]ReasonID, 0, len(v.Also)+3)
	if v.Reason != ReasonUnexplained && v.Reason != ReasonPeerRelay {
		causes = append(causes, v.Reason)
	}
	causes = append(causes, v.Also...)
	var before ReasonID
	if len(causes) > 0 {
		before = causes[0]
	}
	// Reasons for no path at all (no-home-derp, no-handshake) and local
	// ones stay ahead of the board's own.
	if noPublic {
		causes = insertCause(causes, ReasonDeviceNoPublicEndpoint,
			ReasonNoHomeDERP, ReasonNoHandshake, ReasonLocalTCP443Only, ReasonLocalUDPBlocked)
	}
	if full {
		causes = insertCause(causes, ReasonDeviceProbeTableFull,
			ReasonNoHomeDERP, ReasonNoHandshake, ReasonLocalTCP443Only, ReasonLocalUDPBlocked,
			ReasonDeviceNoPublicEndpoint, ReasonNoEndpoints, ReasonPrivateEndpointsOnly, ReasonNoCommonFamily)
	}
	if stale {
		causes = insertCause(causes, ReasonDeviceDiscoKeyStale,
			ReasonNoHomeDERP, ReasonNoHandshake, ReasonLocalTCP443Only, ReasonLocalUDPBlocked,
			ReasonDeviceNoPublicEndpoint, ReasonNoEndpoints, ReasonPrivateEndpointsOnly, ReasonNoCommonFamily, ReasonDeviceProbeTableFull)
	}
	if relayDown && p.Path.Kind == PathDERP {
		// The board's relay down explains a missing handshake too, so it
		// leads; only a peer with no home DERP at all stays ahead.
		causes = insertCause(causes, ReasonDeviceDERPDown, ReasonNoHomeDERP)
	}
	if far && !hasReason(causes, ReasonFarHomeDERP) {
		causes = append(causes, ReasonFarHomeDERP)
	}
	if len(causes) == 0 || causes[0] == before || deviceFix(causes[0]) == "" {
		out.Also = alsoOf(v, causes)
		return out
	}
	// A device reason is now the primary one.
	first := causes[0]
	if p.Path.Kind == PathPeerRelay {
		out.Also = causes
		out.Summary = "via peer relay; not direct: " + deviceSummary(first)
	} else {
		out.Reason = first
		out.Also = causes[1:]
		out.Summary = deviceSummary(first)
	}
	out.Fix = deviceFix(first)
	if unreached && first == ReasonDeviceNoPublicEndpoint {
		out.Summary = strings.Replace(out.Summary, deviceSummary(first), "board's endpoints never reached control", 1)
		if d.H2Known && !d.H2Stalled() {
			// Its control stream's window is open: not the stall.
			out.Fix = "the board says it sent its endpoints, yet control lists none: check that its endpoint update reaches control (its control connection, its map request); if the netmap is merely older than the board's report, the next map update clears this"
		}
	}
	if len(out.Also) == 0 {
		out.Also = nil
	}
	return out
}

// alsoOf is v's Also after causes were added without changing the primary.
func alsoOf(v Verdict, causes []ReasonID) []ReasonID {
	if v.Reason != ReasonUnexplained && v.Reason != ReasonPeerRelay && len(causes) > 0 {
		causes = causes[1:]
	}
	if len(causes) == 0 {
		return nil
	}
	return causes
}

// insertCause puts r into causes after the last reason listed in ahead
// that is present (at the front when none is), moving it if it was there.
func insertCause(causes []ReasonID, r ReasonID, ahead ...ReasonID) []ReasonID {
	for i, c := range causes {
		if c == r {
			causes = append(causes[:i:i], causes[i+1:]...)
			break
		}
	}
	at := 0
	for i, c := range causes {
		if hasReason(ahead, c) {
			at = i + 1
		}
	}
	causes = append(causes, "")
	copy(causes[at+1:], causes[at:])
	causes[at] = r
	return causes
}

func hasReason(rs []ReasonID, r ReasonID) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func hasPublic(eps []netip.AddrPort) bool {
	for _, ep := range eps {
		if !IsPrivateAddr(ep.Addr()) {
			return true
		}
	}
	return false
}

func deviceSummary(r ReasonID) string {
	switch r {
	case ReasonDeviceNoPublicEndpoint:
		return "board advertised no endpoint"
	case ReasonDeviceProbeTableFull:
		return "board's DISCO probe table is full"
	case ReasonDeviceDERPDown:
		return "board's DERP relay is down"
	case ReasonDeviceDiscoKeyStale:
		return "board can't decrypt DISCO (stale disco key)"
	}
	return summaryFor(r)
}

func deviceFix(r ReasonID) string {
	switch r {
	case ReasonDeviceNoPublicEndpoint:
		return "firmware: return HTTP/2 receive-window credit on the control stream (stream and connection WINDOW_UPDATE as DATA is consumed); without it the long-poll map stream stops at 65,535 bytes and endpoint updates never arrive (reference: firmware tp_h2fc.h)"
	case ReasonDeviceProbeTableFull:
		return "firmware: reap stale DISCO probes (a TTL per slot) instead of freeing a slot only on a pong, so new pings to the peer's endpoints are tracked again (reference: firmware tp_probe.h)"
	case ReasonDeviceDERPDown:
		return "firmware: reconnect the DERP relay for as long as it is down, with back-off, and reconnect a connected relay that has gone silent (a receive watchdog); a reboot of the board restores it meanwhile (reference: firmware tp_relay.h)"
	case ReasonDeviceDiscoKeyStale:
		return "firmware: take each peer's disco key from every netmap update, not only the first, so DISCO packets from a peer that restarted decrypt again"
	}
	return ""
}
