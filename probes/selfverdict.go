package probes

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The self's own verdict: trouble at this end that touches every path
// (logged out, UDP that cannot be received or is blocked, a netcheck that
// measured nothing, a control connection that keeps breaking), shown in
// `status` (a "self-verdict:" line), --json (self.verdict), snapshots
// (recomputed from their evidence), the dashboard's Peers header and
// /metrics (tailpath_self_reason_info). Like a peer's verdict it is a pure
// function of evidence: DiagnoseSelf. The reasons are one table,
// selfRules, in the shape of the peer rule table (id, summary, fix, the
// facts each needs with their source, its check, the Tailscale source it
// follows); docs/diagnosis.md has a section for each id.

// Self reason ids. Stable: they appear in JSON, metrics and docs.
const (
	ReasonSelfLoggedOut         ReasonID = "self-logged-out"
	ReasonSelfNetcheckEmpty     ReasonID = "self-netcheck-empty"
	ReasonSelfUDPReceiveStopped ReasonID = "self-udp-receive-stopped"
	ReasonSelfUDPBlocked        ReasonID = "self-udp-blocked"
	ReasonSelfControlBreaking   ReasonID = "self-control-breaking"
	ReasonSelfDERPUnreachable   ReasonID = "self-derp-unreachable"
	ReasonSelfNetcheckFlaps     ReasonID = "self-netcheck-flaps"
	ReasonSelfUPnPNotGateway    ReasonID = "self-upnp-not-gateway"
	ReasonSelfNetworkChanges    ReasonID = "self-network-changes"
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
	ControlBreaks int    `json:"control_breaks,omitempty"`
	ControlBreak  string `json:"control_break,omitempty"`
	// TLSRecordErrors counts TLS records that arrived corrupted ("tls:
	// bad record MAC"); TLSRecordError is the last one's text.
	TLSRecordErrors int    `json:"tls_record_errors,omitempty"`
	TLSRecordError  string `json:"tls_record_error,omitempty"`
	// NetcheckEmpty is true when a netcheck report measured nothing: UDP
	// false, no public address and no DERP latency, as when tailscaled is
	// logged out and has no DERP map to probe (its UDP is then unknown,
	// not blocked). NetcheckEmptyFrom names the report.
	NetcheckEmpty     bool   `json:"netcheck_empty,omitempty"`
	NetcheckEmptyFrom string `json:"netcheck_empty_from,omitempty"`
	// UDPBlockedLogged is netcheck's own "UDP is blocked, trying HTTPS"
	// (or ICMP) line: it sent STUN and heard nothing back.
	UDPBlockedLogged string `json:"udp_blocked_logged,omitempty"`
	// UDPTestFailure is the CLI's "netcheck: UDP test failure: …": this
	// host could not even send the STUN test.
	UDPTestFailure string `json:"udp_test_failure,omitempty"`
	// NoDERPMap is true when the CLI said tailscaled had no DERP map
	// ("No DERP map from tailscaled; using default."): not logged in.
	NoDERPMap bool `json:"no_derp_map,omitempty"`
	// Spread lists the facts several netcheck reports disagree on.
	Spread []FactSpread `json:"spread,omitempty"`
	// DERPErrors are DERP connections that failed, per region.
	DERPErrors []DERPError `json:"derp_errors,omitempty"`
	// ProxyError is a failed CONNECT through an HTTP proxy to a DERP
	// server ("derphttp: CONNECT dial to …"): a proxy is in the way.
	ProxyError string `json:"proxy_error,omitempty"`
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
	Region int    `json:"region"`
	Code   string `json:"code,omitempty"`
	Count  int    `json:"count"`
	Err    string `json:"err"`
}

// NetInterface is one network interface as tailscaled logged it.
type NetInterface struct {
	Name     string         `json:"name"`
	Up       bool           `json:"up"`
	Prefixes []netip.Prefix `json:"prefixes,omitempty"`
}

// SelfFact is one fact a self rule needs and where it comes from.
type SelfFact struct {
	Field  string `json:"field"`
	Source string `json:"source"`
}

// selfRule is one row of the self reason table.
type selfRule struct {
	ID      ReasonID
	Summary string
	Fix     string
	// Needs are the facts the check reads; Check adds its checks to d
	// and reports whether the reason holds.
	Needs []SelfFact
	Check func(d *selfDiag) bool
	// Follows names the Tailscale code the rule rests on.
	Follows string
}

// SelfRules are the self reasons in the order DiagnoseSelf tries them.
func SelfRules() []SelfRule {
	out := make([]SelfRule, len(selfRules))
	for i, r := range selfRules {
		out[i] = SelfRule{ID: r.ID, Summary: r.Summary, Fix: r.Fix, Needs: r.Needs, Follows: r.Follows}
	}
	return out
}

// SelfRule is a self rule's description (SelfRules), for docs and tests.
type SelfRule struct {
	ID      ReasonID
	Summary string
	Fix     string
	Needs   []SelfFact
	Follows string
}

var (
	receiveStoppedRE = regexp.MustCompile(`\b(Receive(?:IPv4|IPv6)) is not running|couldn't listen for incoming UDP|\bno udp4 bind\b`)
	derpHealthRE     = regexp.MustCompile(`could not connect to (?:any relay server|the '[^']*' relay server|the relay server with ID '\d+')|hasn't heard from the (?:'[^']*'|home) relay server|\bno DERP home\b|not connected to home DERP region \d+|haven't heard from home DERP region`)
)

// notRunning are the backend states in which tailscaled makes no paths.
var notRunning = map[string]string{
	"NeedsLogin":       "logged out: `tailscale up` (or `tailscale login`) and log in",
	"NeedsMachineAuth": "waiting for an admin to approve this machine in the admin console",
	"Stopped":          "stopped: `tailscale up`",
	"NoState":          "not running: start tailscaled (systemctl start tailscaled, or the Tailscale app)",
}

var selfRules = []selfRule{
	{
		ID:      ReasonSelfLoggedOut,
		Summary: "tailscaled is not logged in or not running: no paths at all",
		Fix:     "log in: `tailscale up` (or approve the machine in the admin console; start tailscaled if it is not running)",
		Needs:   []SelfFact{{"Status.BackendState", SourceLocalAPI}},
		Follows: "cmd/tailscale/cli/status.go isRunningOrStarting; ipn.State",
		Check: func(d *selfDiag) bool {
			st := d.state
			if st == "" {
				d.unknown("Status.BackendState", SourceLocalAPI, "the input does not say what state tailscaled is in")
				return false
			}
			why, bad := notRunning[st]
			if !bad {
				d.add("Status.BackendState", st, false, SourceLocalAPI, "")
				return false
			}
			d.add("Status.BackendState", st, true, SourceLocalAPI, "tailscaled is "+why)
			return true
		},
	},
	{
		ID:      ReasonSelfNetcheckEmpty,
		Summary: "netcheck measured nothing (no DERP map: logged out?), so UDP is unknown, not blocked",
		Fix:     "log in first (`tailscale up`), then run `tailscale netcheck` again; if logged in, check that this host reaches the internet at all (DERP over TCP 443)",
		Needs:   []SelfFact{{"Netcheck.UDP", "netcheck"}, {"Netcheck.RegionLatency", "netcheck"}, {"Netcheck.GlobalV4", "netcheck"}},
		Follows: "cmd/tailscale/cli/netcheck.go printReport (\"no response to latency probes\"); net/netcheck Client.GetReport",
		Check: func(d *selfDiag) bool {
			ev := d.ev
			if !ev.NetcheckEmpty {
				return false
			}
			from := ev.NetcheckEmptyFrom
			d.add("Netcheck.RegionLatency", "none", true, "netcheck", "the report ("+from+") has UDP false, no public address and no DERP latency: it probed nothing, as when tailscaled has no DERP map")
			if ev.NoDERPMap {
				d.add("Netcheck.DERPMap", "none from tailscaled", true, "netcheck", "the CLI said tailscaled had no DERP map: it is not logged in")
			}
			return true
		},
	},
	{
		ID:      ReasonSelfUDPReceiveStopped,
		Summary: "this end cannot receive direct UDP (its receive loop stopped)",
		Fix:     "restart tailscaled; if it stops again, its log says why the UDP socket failed (another program on the port, a firewall module, an interface that went away)",
		Needs:   []SelfFact{{"Status.Health", SourceLocalAPI}},
		Follows: "health/health.go checkReceiveFuncsLocked (magicsock-receive-func-error, no-udp4-bind); wgengine/magicsock receiveIPv4",
		Check: func(d *selfDiag) bool {
			for _, h := range d.self.Health {
				if m := receiveStoppedRE.FindStringSubmatch(h); m != nil {
					what := "UDP socket"
					if m[1] != "" {
						what = m[1]
					}
					d.add("Status.Health", h, true, SourceLocalAPI, what+" is not receiving: peers' DISCO pings and WireGuard packets over UDP never arrive, so every path falls back to DERP")
					return true
				}
			}
			return false
		},
	},
	{
		ID:      ReasonSelfUDPBlocked,
		Summary: "UDP is blocked here (netcheck got no STUN reply, yet reached DERP)",
		Fix:     "allow outbound UDP from this host (tailscaled's port, 41641 by default, and 3478 to the DERP servers' STUN) in its firewall and the network's",
		Needs:   []SelfFact{{"NetInfo.WorkingUDP", SourceLocalAPI}, {"NetInfo.DERPLatency", SourceLocalAPI}},
		Follows: "net/netcheck Client.GetReport (STUN probes; \"UDP is blocked, trying HTTPS\" and the HTTPS/ICMP latency fallback)",
		Check: func(d *selfDiag) bool {
			n := d.self.NAT
			if n == nil || n.WorkingUDP == nil {
				if d.ev.UDPBlockedLogged != "" {
					d.add("Log.Netcheck", d.ev.UDPBlockedLogged, true, SourceLog, "netcheck sent STUN and heard nothing back")
					return true
				}
				return false
			}
			if *n.WorkingUDP {
				d.add("NetInfo.WorkingUDP", "true", false, SourceLocalAPI, "")
				return false
			}
			switch {
			case d.self.OnlyTCP443:
				d.info("NetInfo.WorkingUDP", "false", SourceLocalAPI, "the tailnet policy (only-tcp-443) stops UDP here; not a network block")
				return false
			case d.self.NoSTUN:
				d.info("NetInfo.WorkingUDP", "false", SourceLocalAPI, "the DERP map has no STUN, so UDP was never tested")
				return false
			case len(n.DERPLatency) == 0 && d.ev.UDPBlockedLogged == "":
				d.unknown("NetInfo.WorkingUDP", SourceLocalAPI, "UDP false, but the report reached no DERP region either: it may have measured nothing")
				return false
			}
			note := fmt.Sprintf("no STUN reply, while %s answered over TCP or ICMP: the network drops UDP", countOf(len(n.DERPLatency), "DERP region"))
			if len(n.DERPLatency) == 0 {
				note = "netcheck logged that UDP is blocked: " + d.ev.UDPBlockedLogged
			}
			d.add("NetInfo.WorkingUDP", "false", true, SourceLocalAPI, note)
			return true
		},
	},
	{
		ID:      ReasonSelfControlBreaking,
		Summary: "the control connection keeps breaking mid-stream: check the WAN MTU or MSS clamping",
		Fix:     "large TLS records are cut or corrupted while small requests work: set the WAN MTU to what the path carries (PPPoE 1492, a tunnel less) or clamp TCP MSS to the path MTU on the router; a middlebox rewriting TLS does the same",
		Needs:   []SelfFact{{"Log.ControlBreaks", SourceLog}, {"Log.TLSRecordErrors", SourceLog}},
		Follows: "control/controlclient/auto.go mapRoutine (report \"PollNetMap\"); ipn/ipnlocal setControlClientStatusLocked (\"Received error\"); logtail upload",
		Check: func(d *selfDiag) bool {
			ev := d.ev
			if ev.LogLines == 0 {
				return false
			}
			if ev.ControlBreaks == 0 && ev.TLSRecordErrors == 0 {
				return false
			}
			holds := ev.ControlBreaks >= 2 || (ev.ControlBreaks >= 1 && ev.TLSRecordErrors >= 1)
			if ev.ControlBreaks > 0 {
				d.add("Log.ControlBreaks", strconv.Itoa(ev.ControlBreaks)+"× "+ev.ControlBreak, holds, SourceLog, "a stream to the control or log server ended mid-response")
			} else {
				d.info("Log.ControlBreaks", "0", SourceLog, "no stream to control was cut in this log")
			}
			if ev.TLSRecordErrors > 0 {
				d.add("Log.TLSRecordErrors", strconv.Itoa(ev.TLSRecordErrors)+"× "+ev.TLSRecordError, holds, SourceLog, "a TLS record arrived corrupted: bytes changed or lost on the way")
			}
			return holds
		},
	},
	{
		ID:      ReasonSelfDERPUnreachable,
		Summary: "this node cannot reach its home DERP relay (or any): peers cannot reach it through DERP",
		Fix:     "allow outbound TCP 443 (and 80) to the DERP servers; with a proxy, let it CONNECT to them",
		Needs:   []SelfFact{{"Status.Health", SourceLocalAPI}, {"Log.DERPErrors", SourceLog}, {"Self.HomeDERP", SourceLocalAPI}},
		Follows: "health/health.go updateBuiltinWarnablesLocked (no-derp-home, no-derp-connection and derp-timed-out are of the home region); derp/derphttp Client.connect",
		Check: func(d *selfDiag) bool {
			holds := false
			for _, h := range d.self.Health {
				if derpHealthRE.MatchString(h) {
					d.add("Status.Health", h, true, SourceLocalAPI, "tailscaled warns of its home DERP region")
					holds = true
				}
			}
			for _, e := range d.ev.DERPErrors {
				where := "region " + strconv.Itoa(e.Region)
				if e.Code != "" {
					where += " (" + e.Code + ")"
				}
				value := fmt.Sprintf("%s: %d× %s", where, e.Count, e.Err)
				home := d.self.HomeDERP
				switch {
				case home == 0:
					d.add("Log.DERPErrors", value, true, SourceLog, "our home region is unknown; a DERP region fails to connect")
					holds = true
				case e.Region == home || (e.Code != "" && e.Code == d.self.HomeDERPCode):
					d.add("Log.DERPErrors", value, true, SourceLog, "our home region")
					holds = true
				default:
					d.info("Log.DERPErrors", value, SourceLog, "not our home region: it touches the peers homed there")
				}
			}
			if d.ev.ProxyError != "" {
				d.add("Log.ProxyError", d.ev.ProxyError, true, SourceLog, "DERP goes through an HTTP proxy that refused or failed the CONNECT")
				holds = true
			}
			return holds
		},
	},
	{
		ID:      ReasonSelfNetcheckFlaps,
		Summary: "netcheck reports disagree over time: the network here changes under tailscaled",
		Fix:     "find what changes between the reports (Wi-Fi roaming, a second WAN or failover, a router that restarts, a VPN); the facts that flap are unknown until they settle",
		Needs:   []SelfFact{{"Netcheck.Reports", "netcheck"}},
		Follows: "net/netcheck Client.GetReport (one report per run); wgengine/magicsock updateNetInfo",
		Check: func(d *selfDiag) bool {
			for _, s := range d.ev.Spread {
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
				d.add("Netcheck."+s.Fact, value, true, "netcheck", "reports disagree: the last one is not taken over the others")
			}
			return len(d.ev.Spread) > 0
		},
	},
	{
		ID:      ReasonSelfUPnPNotGateway,
		Summary: "UPnP answered from a router that is not the gateway: no usable port mapping",
		Fix:     "enable UPnP, NAT-PMP or PCP on the gateway itself, or put the second router in bridge or access-point mode (a double NAT)",
		Needs:   []SelfFact{{"Log.UPnP", SourceLog}},
		Follows: "net/portmapper Client.getUPnPPortMapping / receiveUPnP (\"UPnP discovery response from %v, but gateway IP is %v\")",
		Check: func(d *selfDiag) bool {
			if !d.ev.UPnPFrom.IsValid() {
				return false
			}
			d.add("Log.UPnP", d.ev.UPnPFrom.String()+" (gateway "+d.ev.UPnPGateway.String()+")", true, SourceLog,
				"tailscaled ignores a UPnP answer from anything but its gateway")
			return true
		},
	},
	{
		ID:      ReasonSelfNetworkChanges,
		Summary: "the network here changed often: every change rebinds and re-probes every path",
		Fix:     "look at what keeps changing (Wi-Fi roaming, an interface that flaps, a VPN or Docker creating interfaces); paths relay until direct is found again after each change",
		Needs:   []SelfFact{{"Log.LinkChanges", SourceLog}},
		Follows: "wgengine/userspace.go linkChange (\"LinkChange: major, rebinding\"); magicsock Rebind",
		Check: func(d *selfDiag) bool {
			ev := d.ev
			if ev.LinkChanges < networkChangesMin {
				return false
			}
			span := ev.LastLinkChange.Sub(ev.FirstLinkChange)
			if ev.FirstLinkChange.IsZero() || span > networkChangesWindow {
				d.info("Log.LinkChanges", strconv.Itoa(ev.LinkChanges), SourceLog, "over more than "+networkChangesWindow.String()+", or undated")
				return false
			}
			d.add("Log.LinkChanges", fmt.Sprintf("%d in %v", ev.LinkChanges, span.Round(time.Second)), true, SourceLog, "")
			return true
		},
	},
}

// networkChangesMin major link changes within networkChangesWindow make
// self-network-changes.
const (
	networkChangesMin    = 3
	networkChangesWindow = 10 * time.Minute
)

// selfDiag collects one self diagnosis's checks.
type selfDiag struct {
	state  string
	self   Self
	ev     SelfEvidence
	checks []Check
}

func (d *selfDiag) add(field, value string, failed bool, source, note string) {
	st := CheckOK
	if failed {
		st = CheckFail
	}
	d.checks = append(d.checks, Check{Field: field, Value: value, Failed: failed, State: st, Note: note, Source: source})
}

func (d *selfDiag) info(field, value, source, note string) {
	d.checks = append(d.checks, Check{Field: field, Value: value, State: CheckInfo, Note: note, Source: source})
}

func (d *selfDiag) unknown(field, source, note string) {
	d.checks = append(d.checks, Check{Field: field, Value: "unknown", State: CheckUnknown, Note: note, Source: source})
}

// DiagnoseSelf is this node's own verdict from backendState (Status
// .BackendState, "" unknown) and self (its NAT facts, health and
// Evidence): the first self rule that holds is the Reason, the others that
// hold go to Also. nil when none holds: nothing at this end explains
// anything. Pure, like Diagnose.
func DiagnoseSelf(backendState string, self Self) *Verdict {
	d := selfDiag{state: backendState, self: self}
	if self.Evidence != nil {
		d.ev = *self.Evidence
	}
	var v Verdict
	for _, r := range selfRules {
		if !r.Check(&d) {
			continue
		}
		if v.Reason == "" {
			v.Reason, v.Summary, v.Fix = r.ID, r.Summary, r.Fix
			continue
		}
		v.Also = append(v.Also, r.ID)
	}
	if v.Reason == "" {
		return nil
	}
	v.Checks = d.checks
	return &v
}

// SelfSummary is the one-phrase reason for a self reason id.
func SelfSummary(id ReasonID) string {
	for _, r := range selfRules {
		if r.ID == id {
			return r.Summary
		}
	}
	return string(id)
}

// countOf words n things: "1 DERP region", "3 DERP regions".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
