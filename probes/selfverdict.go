package probes

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// This node's own verdict: trouble at this end that touches every path
// (logged out, UDP that cannot be received or is blocked, a netcheck that
// measured nothing, a control connection that keeps breaking), shown in
// `status` (a "self verdict:" line), --json (self.verdict), snapshots
// (recomputed from their evidence), the dashboard's Peers header and
// /metrics (tailpath_self_reason_info). Like a peer's verdict it is a pure
// function of evidence, diagnoseSelf (Judge's), walking the same reason table
// (reasons.go): the rows of Scope ScopeSelf, and those of ScopeBoth that
// judge this end and every peer's path alike (local-udp-blocked,
// derp-unreachable, local-tcp443-only). This file holds the evidence only
// pasted input shows (SelfEvidence) and the self rows' checks.

// Self reason ids (rows of Scope ScopeSelf). Stable: they appear in JSON,
// metrics and docs.
const (
	ReasonSelfLoggedOut         ReasonID = "self-logged-out"
	ReasonSelfNetcheckEmpty     ReasonID = "self-netcheck-empty"
	ReasonSelfUDPReceiveStopped ReasonID = "self-udp-receive-stopped"
	ReasonSelfControlBreaking   ReasonID = "self-control-breaking"
	ReasonSelfNetcheckFlaps     ReasonID = "self-netcheck-flaps"
	ReasonSelfUPnPNotGateway    ReasonID = "self-upnp-not-gateway"
	ReasonSelfNetworkChanges    ReasonID = "self-network-changes"
	ReasonSelfDERPServerWarns   ReasonID = "self-derp-server-warns"
	ReasonSelfSTUNUnanswered    ReasonID = "self-stun-unanswered"
)

// SourceLog is the Check.Source of facts read from tailscaled's own log
// lines (pasted): they exist only where someone pasted the log.
const SourceLog = "log"

// SelfEvidence is this node's own trouble beyond NetInfo and Status, as
// tailscaled's log and the CLI show it. Only pasted input fills it (a
// capture reads Status and NetInfo instead); the zero value says nothing.
// Counts are of what the input held: with LogLines 0 no log was read, so
// what only a log shows is unknown, not absent.
type SelfEvidence struct {
	// LogLines is how many tailscaled log lines were read.
	LogLines int `json:"log_lines,omitempty"`
	// ControlBreaks counts control-plane and log-upload streams cut
	// mid-stream ("PollNetMap: … unexpected EOF", "connection reset by
	// peer"); ControlBreak is the last one's text, sanitised.
	ControlBreaks int           `json:"control_breaks,omitempty"`
	ControlBreak  safetext.Text `json:"control_break,omitempty"`
	// NetmapsReceived counts "mapRoutine: netmap received" lines: a
	// whole map response arrived (control/controlclient/auto.go
	// UpdateFullNetmap), so large responses do get through.
	NetmapsReceived int `json:"netmaps_received,omitempty"`
	// BreakRun is the worst run of stream breaks and corrupted TLS
	// records: in log order, with no netmap received between them and
	// none more than ControlBreakWindow after the one before; nil when
	// not worked out (a file written before it was).
	BreakRun *BreakRun `json:"break_run,omitempty"`
	// TLSRecordErrors counts TLS records that arrived corrupted ("tls:
	// bad record MAC"); TLSRecordError is the last one's text.
	TLSRecordErrors int           `json:"tls_record_errors,omitempty"`
	TLSRecordError  safetext.Text `json:"tls_record_error,omitempty"`
	// NetcheckEmpty is true when a netcheck report measured nothing: UDP
	// false, no public address and no DERP latency, as when tailscaled is
	// logged out and has no DERP map to probe (its UDP is then unknown,
	// not blocked). NetcheckEmptyFrom names the report.
	NetcheckEmpty     bool   `json:"netcheck_empty,omitempty"`
	NetcheckEmptyFrom string `json:"netcheck_empty_from,omitempty"`
	// UDPBlockedLogged is netcheck's own "UDP is blocked, trying HTTPS"
	// (or ICMP) line, the newest: it sent STUN and heard nothing back;
	// UDPBlockedAt is when (zero undated).
	UDPBlockedLogged string    `json:"udp_blocked_logged,omitempty"`
	UDPBlockedAt     time.Time `json:"udp_blocked_at,omitzero"`
	// UDPWorkedLogged is the first evidence logged after that line that
	// STUN got answers since: an "endpoints changed" line with a STUN
	// endpoint (magicsock determineEndpoints adds EndpointSTUN only from
	// a netcheck report's STUN replies); UDPWorkedAt is when (zero
	// undated: after it in the log's order).
	UDPWorkedLogged string    `json:"udp_worked_logged,omitempty"`
	UDPWorkedAt     time.Time `json:"udp_worked_at,omitzero"`
	// UDPTestFailure is the CLI's "netcheck: UDP test failure: …": this
	// host could not even send the STUN test.
	UDPTestFailure safetext.Text `json:"udp_test_failure,omitempty"`
	// NoDERPMap is true when the CLI said tailscaled had no DERP map
	// ("No DERP map from tailscaled; using default."): not logged in.
	NoDERPMap bool `json:"no_derp_map,omitempty"`
	// Spread lists the facts several netcheck reports disagree on.
	Spread []FactSpread `json:"spread,omitempty"`
	// DERPErrors are DERP connections that failed, per region.
	DERPErrors []DERPError `json:"derp_errors,omitempty"`
	// DERPConnected are the regions tailscaled logged "derp-N
	// connected" for (wgengine/magicsock/derp.go, on success) with no
	// failure logged for them: reachable from here.
	DERPConnected []int `json:"derp_connected,omitempty"`
	// ProxyError is a failed CONNECT through an HTTP proxy to a DERP
	// server ("derphttp: CONNECT dial to …"): a proxy is in the way.
	ProxyError safetext.Text `json:"proxy_error,omitempty"`
	// ProxyConnect is the host:port an HTTP proxy connected DERP to
	// (derphttp "CONNECT dial to host:port: 200 …", logged on success
	// too): the proxy answered, and what answers there is what
	// tailscaled's TLS reached.
	ProxyConnect safetext.Text `json:"proxy_connect,omitempty"`
	// UPnPFrom answered UPnP discovery although the gateway is
	// UPnPGateway: a second router or a double NAT, whose mapping is of
	// no use (net/portmapper ignores it).
	UPnPFrom    netip.Addr `json:"upnp_from,omitzero"`
	UPnPGateway netip.Addr `json:"upnp_gateway,omitzero"`
	// LinkChanges counts major network changes tailscaled rebound for
	// ("LinkChange: major"), between FirstLinkChange and LastLinkChange
	// (zero when undated); Interfaces, DefaultRoute and HTTPProxy are
	// the last state it logged.
	LinkChanges     int            `json:"link_changes,omitempty"`
	FirstLinkChange time.Time      `json:"first_link_change,omitzero"`
	LastLinkChange  time.Time      `json:"last_link_change,omitzero"`
	Interfaces      []NetInterface `json:"interfaces,omitempty"`
	DefaultRoute    string         `json:"default_route,omitempty"`
	HTTPProxy       string         `json:"http_proxy,omitempty"`
	// Thread is what the daemon's other lines and its tools show
	// (thread.go); nil when none was read.
	Thread *ThreadFacts `json:"thread,omitempty"`
}

// FactSpread is one fact that several reports disagree on: how many said
// true and false, and the values with when they were reported (zero when
// undated) and by which report, in time order (the last MaxSpreadValues).
type FactSpread struct {
	Fact   string        `json:"fact"`
	True   int           `json:"true"`
	False  int           `json:"false"`
	Values []TimedReport `json:"values"`
}

// MaxSpreadValues bounds the values a FactSpread lists.
const MaxSpreadValues = 20

// TimedReport is one report's value of a fact.
type TimedReport struct {
	At    time.Time `json:"at,omitzero"`
	Value string    `json:"value"`
	From  string    `json:"from,omitempty"`
}

// DERPError is a failing connection to one DERP region.
type DERPError struct {
	Region int           `json:"region"`
	Code   safetext.Text `json:"code,omitempty"`
	Count  int           `json:"count"`
	Err    safetext.Text `json:"err"`
	// Last is when the newest failure was logged (zero undated).
	Last time.Time `json:"last,omitzero"`
	// SinceConnect counts the failures logged after the region's last
	// "derp-N connected" line (all of them when none was read); 0 with
	// Reconnected false in a file written before it was counted.
	SinceConnect int `json:"since_connect,omitempty"`
	// Reconnected is true when a "derp-N connected" line for the region
	// came after its newest failure: magicsock connected to it again
	// (wgengine/magicsock/derp.go logs it on success).
	Reconnected bool `json:"reconnected,omitempty"`
}

// BreakRun is a run of control streams cut mid-stream and corrupted TLS
// records (SelfEvidence.BreakRun).
type BreakRun struct {
	Breaks    int `json:"breaks"`
	TLSErrors int `json:"tls_errors,omitempty"`
	// First and Last date the run (zero undated).
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
}

// NetInterface is one network interface as tailscaled logged it.
type NetInterface struct {
	Name     string         `json:"name"`
	Up       bool           `json:"up"`
	Prefixes []netip.Prefix `json:"prefixes,omitempty"`
	// Masked are addresses the poster partly replaced ("100.95.x.y/29"),
	// each with the range its known octets fix.
	Masked []MaskedAddr `json:"masked,omitempty"`
}

// MaskedAddr is an IPv4 address a poster partly replaced: Text as pasted,
// Within the prefix its leading known octets fix (100.95.x.y: 100.95.0.0/16).
type MaskedAddr struct {
	Text   string       `json:"text"`
	Within netip.Prefix `json:"within"`
}

var receiveStoppedRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(Receive(?:IPv4|IPv6)) is not running|couldn't listen for incoming UDP|\bno udp4 bind\b`)
})

// notRunning are the backend states in which tailscaled makes no paths.
var notRunning = map[string]string{
	"NeedsLogin":       "logged out: `tailscale up` (or `tailscale login`) and log in",
	"NeedsMachineAuth": "waiting for an admin to approve this machine in the admin console",
	"Stopped":          "stopped: `tailscale up`",
	"NoState":          "not running: start tailscaled (systemctl start tailscaled, or the Tailscale app)",
}

// evidence is this node's pasted evidence (the zero value when none).
func (d *diag) evidence() *SelfEvidence {
	if d.self.Evidence != nil {
		return d.self.Evidence
	}
	return &noEvidence
}

var noEvidence SelfEvidence

// checkLoggedOut (self): tailscaled is not running, logged out or waiting
// for approval: `tailscale status` prints that instead of peers.
func (d *diag) checkLoggedOut() result {
	st := d.state
	if st == "" {
		d.unknown("Status.BackendState", "the input does not say what state tailscaled is in")
		return notHeld()
	}
	why, bad := notRunning[st]
	if !bad {
		d.add("Status.BackendState", st, false, "")
		return notHeld()
	}
	d.add("Status.BackendState", st, true, safetext.New("tailscaled is "+why))
	return holds()
}

// checkNetcheckEmpty (self): a netcheck report with UDP false, no public
// address and no DERP latency probed nothing (the parser keeps its UDP
// unknown).
func (d *diag) checkNetcheckEmpty() result {
	ev := d.evidence()
	if !ev.NetcheckEmpty {
		return notHeld()
	}
	d.add("Netcheck.RegionLatency", "none", true, safetext.New("the report ("+ev.NetcheckEmptyFrom+") has UDP false, no public address and no DERP latency: it probed nothing, as when tailscaled has no DERP map"))
	if ev.NoDERPMap {
		d.add("Netcheck.DERPMap", "none from tailscaled", true, "the CLI said tailscaled had no DERP map: it is not logged in")
	}
	return holds()
}

// checkReceiveStopped (self): a health warning that magicsock's UDP
// receive loop is not running, or that it could not bind UDP at all.
// IPv4 and IPv6 have a socket and a receive loop each (magicsock
// receiveIPv4, receiveIPv6; health.go checkReceiveFuncsLocked tracks
// each), so ReceiveIPv6 alone stops direct UDP over IPv6 only.
func (d *diag) checkReceiveStopped() result {
	ipv6 := ""
	for _, ht := range d.self.Health {
		h := string(ht)
		m := receiveStoppedRE().FindStringSubmatch(h)
		if m == nil {
			continue
		}
		if m[1] == "ReceiveIPv6" {
			ipv6 = h
			continue
		}
		d.rxStopped = "ipv4"
		what := "UDP socket"
		if m[1] != "" {
			what = m[1]
		}
		d.add("Status.Health", h, true, safetext.New(what+" is not receiving: peers' DISCO pings and WireGuard packets over UDP never arrive, so every path falls back to DERP"))
		return holds()
	}
	if ipv6 != "" {
		d.rxStopped = "ipv6"
		d.add("Status.Health", ipv6, true, "ReceiveIPv6 is not receiving: direct UDP over IPv6 never arrives here; IPv4 has its own socket and receive loop (magicsock receiveIPv4), so direct IPv4 paths are not touched")
		return holdsAs("ipv6")
	}
	return notHeld()
}

// ControlBreakWindow is how close breaks of the control stream must come
// to count as one run: control's long poll is retried with back-off
// (control/controlclient/auto.go mapRoutine), so a break now and then,
// hours apart, is ordinary.
const ControlBreakWindow = 10 * time.Minute

// checkControlBreaking (self): streams to the control (or log) server cut
// mid-stream, twice, or once beside a corrupted TLS record, in one run:
// no whole netmap received between them (auto.go UpdateFullNetmap logs
// "netmap received" when the large map response arrived), none more than
// ControlBreakWindow after the one before.
func (d *diag) checkControlBreaking() result {
	ev := d.evidence()
	if ev.LogLines == 0 || (ev.ControlBreaks == 0 && ev.TLSRecordErrors == 0) {
		return notHeld()
	}
	value := strconv.Itoa(ev.ControlBreaks) + "× " + string(ev.ControlBreak)
	if ev.ControlBreaks == 0 {
		value = "0"
	}
	run := ev.BreakRun
	if run == nil {
		d.unknownV("Log.ControlBreaks", value, "whether the breaks came close together, with no netmap received between them, was not worked out")
		return notHeld()
	}
	held := run.Breaks >= 2 || (run.Breaks >= 1 && run.TLSErrors >= 1)
	switch {
	case held:
		note := strconv.Itoa(run.Breaks) + " streams to control ended mid-response in one run"
		if run.TLSErrors > 0 {
			note += ", beside " + countOf(run.TLSErrors, "corrupted TLS record")
		}
		if !run.First.IsZero() && !run.Last.IsZero() {
			note += " within " + durText(run.Last.Sub(run.First))
		}
		d.add("Log.ControlBreaks", value, true, safetext.New(note+", with no netmap received between them: large responses keep getting cut"))
	case ev.ControlBreaks > 0:
		why := "they came more than " + durText(ControlBreakWindow) + " apart"
		if ev.NetmapsReceived > 0 {
			why = "a whole netmap arrived after each (" + countOf(ev.NetmapsReceived, "netmap") + " received), or " + why
		}
		d.info("Log.ControlBreaks", value, safetext.New("not one run: "+why+"; control's long poll ends now and then and is polled again (auto.go mapRoutine), so a break alone says nothing about the path"))
	default:
		d.info("Log.ControlBreaks", "0", "no stream to control was cut in this log")
	}
	if ev.TLSRecordErrors > 0 {
		d.add("Log.TLSRecordErrors", strconv.Itoa(ev.TLSRecordErrors)+"× "+string(ev.TLSRecordError), held, "a TLS record arrived corrupted: bytes changed or lost on the way")
	}
	return resultIf(held)
}

// checkNetcheckFlaps (self): several netcheck reports disagree on a fact.
func (d *diag) checkNetcheckFlaps() result {
	ev := d.evidence()
	for _, s := range ev.Spread {
		var parts []string
		for _, v := range s.Values {
			p := v.Value
			if !v.At.IsZero() {
				p += " at " + v.At.UTC().Format("15:04:05")
			}
			parts = append(parts, p)
		}
		value := strings.Join(parts, ", ")
		if n := s.True + s.False; n > len(s.Values) {
			value = fmt.Sprintf("true ×%d, false ×%d; the last %d: %s", s.True, s.False, len(s.Values), value)
		}
		d.add(safetext.New("Netcheck."+s.Fact), value, true, "reports disagree: the last one is not taken over the others")
	}
	if len(ev.Spread) == 0 {
		return notHeld()
	}
	if n := d.self.NAT; n != nil && n.WorkingIPv6 != nil && *n.WorkingIPv6 && slices.ContainsFunc(ev.Spread, func(s FactSpread) bool { return s.Fact == "MappingVariesByDestIP" }) {
		// IPv6 has no NAT mapping to vary: magicsock's betterAddr
		// prefers an IPv6 candidate, so a peer with IPv6 too goes
		// direct whatever the IPv4 mapping does.
		d.info("NetInfo.WorkingIPv6", "true", "IPv6 works here: with no NAT mapping on IPv6, a peer that has IPv6 too can go direct over it whatever the IPv4 mapping does (wgengine/magicsock endpoint.go betterAddr prefers IPv6)")
		return holdsAs("ipv6")
	}
	return holdsAs("")
}

// checkUPnPNotGateway (self, beside the verdict): tailscaled logged a
// UPnP answer from an address that is not its gateway. It keeps such an
// answer and asks the gateway instead, assuming the gateway's address
// floats (net/portmapper/portmapper.go Client.Probe, upnp.go
// getUPnPRootDevice; tailscale#5502), so the line alone is no fault:
// only with no port mapping held does it say why none was made.
func (d *diag) checkUPnPNotGateway() result {
	ev := d.evidence()
	if !ev.UPnPFrom.IsValid() {
		return notHeld()
	}
	value := ev.UPnPFrom.String() + " (gateway " + ev.UPnPGateway.String() + ")"
	const asked = "tailscaled keeps a UPnP answer from an address that is not its gateway and asks the gateway instead, assuming its address floats (net/portmapper getUPnPRootDevice)"
	nat := d.self.NAT
	switch {
	case (nat != nil && nat.HavePortMap) || d.typedEndpoint("portmap").IsValid():
		d.info("Log.UPnP", value, asked+"; it holds a port mapping, so nothing is wrong")
		return notHeld()
	case nat == nil || nat.PortMapUnknown:
		d.unknownV("Log.UPnP", value, asked+"; whether it then got a mapping is not known")
		return notHeld()
	}
	d.add("Log.UPnP", value, true, asked+", and holds no port mapping: the gateway did not map")
	return holds()
}

// typedEndpoint is our first endpoint tailscaled logged as typ
// ("portmap", "local", …); invalid when none, or types are unknown.
func (d *diag) typedEndpoint(typ string) netip.AddrPort {
	eps, types := d.self.Endpoints, d.self.EndpointTypes
	if len(types) != len(eps) {
		return netip.AddrPort{}
	}
	for i, t := range types {
		if t == typ {
			return eps[i]
		}
	}
	return netip.AddrPort{}
}

// networkChangesMin major link changes within networkChangesWindow make
// self-network-changes.
const (
	networkChangesMin    = 3
	networkChangesWindow = 10 * time.Minute
)

// checkNetworkChanges (self): tailscaled rebound for major network
// changes at least networkChangesMin times within networkChangesWindow.
func (d *diag) checkNetworkChanges() result {
	ev := d.evidence()
	if ev.LinkChanges < networkChangesMin {
		return notHeld()
	}
	span := ev.LastLinkChange.Sub(ev.FirstLinkChange)
	if ev.FirstLinkChange.IsZero() || span > networkChangesWindow {
		d.info("Log.LinkChanges", strconv.Itoa(ev.LinkChanges), safetext.New("over more than "+networkChangesWindow.String()+", or undated"))
		return notHeld()
	}
	d.add("Log.LinkChanges", fmt.Sprintf("%d in %v", ev.LinkChanges, span.Round(time.Second)), true, "")
	return holds()
}

// countOf words n things: "1 DERP region", "3 DERP regions".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// checkDERPServerWarns (self): a DERP region's server reported this
// connection unhealthy ("The relay server #N is reporting an issue: …").
// Only the server's words say what; derp/derp.go FrameHealth defines the
// frame for a duplicate connection, so a text saying so gets the clone's
// fix.
func (d *diag) checkDERPServerWarns() result {
	for _, pr := range DERPProblems(d.self.Health, d.regions) {
		if !pr.Issue {
			continue
		}
		_, problem, _ := strings.Cut(string(pr.Text), "reporting an issue:")
		problem = strings.TrimSpace(problem)
		d.add("Status.Health", string(pr.Text.Cut(160)), true, "the region's server sent a health frame over a live connection (magicsock/derp.go runDerpReader): the region is reachable, and its server says the connection is unhealthy")
		variant := ""
		if strings.Contains(strings.ToLower(problem), "duplicate") {
			variant = "duplicate"
		}
		return holdsAs(variant, "{region}", d.regionTitle(pr.Region), "{problem}", problem)
	}
	return notHeld()
}

// refail turns a check of field that a refutation set to info back to a
// failed one with note (the fact holds; what another rule read into it
// did not), and reports whether there was one.
func (d *diag) refail(field, note string) bool {
	for i := range d.checks {
		if c := &d.checks[i]; string(c.Field) == field && c.State == CheckInfo {
			c.Failed, c.State, c.Note = true, CheckFail, safetext.New(note)
			return true
		}
	}
	return false
}

// checkSTUNUnanswered (self): netcheck's STUN got no reply (NetInfo, or
// tailscaled's "UDP is blocked" line), yet a path proves UDP works here.
func (d *diag) checkSTUNUnanswered() result {
	if !d.tn.UDPWorks() {
		return notHeld()
	}
	n := d.self.NAT
	switch {
	case n != nil && n.WorkingUDP != nil && !*n.WorkingUDP && !d.self.NoSTUN && !d.self.OnlyTCP443:
		if !d.refail("NetInfo.WorkingUDP", "STUN to UDP 3478 of the DERP servers got no reply (net/netcheck addNodeLatency), while UDP itself works: it is STUN that fails") {
			d.add("NetInfo.WorkingUDP", "false", true, "STUN to UDP 3478 of the DERP servers got no reply (net/netcheck addNodeLatency)")
		}
	case (n == nil || n.WorkingUDP == nil) && d.evidence().UDPBlockedLogged != "" && d.evidence().UDPWorkedLogged == "":
		d.add("Log.Netcheck", d.evidence().UDPBlockedLogged, true, "netcheck sent STUN and heard nothing back")
	default:
		return notHeld()
	}
	how := "peer " + string(d.tn.UDP) + " is " + string(d.tn.UDPHow)
	if !d.recorded("Tailnet.UDP") {
		d.add("Tailnet.UDP", how, false, "UDP itself works here: "+udpWorksNote)
	}
	return holdsAs("", "{proof}", how)
}

// regionTitle names a region for the start of a phrase: its code
// quoted, or "Region N".
func (d *diag) regionTitle(id int) string {
	if r, ok := d.regions[id]; ok && r.Code != "" {
		return "Region " + strconv.Quote(string(r.Code))
	}
	return "Region " + strconv.Itoa(id)
}
