package peers

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/tuitest"
)

func peerByID(s probes.Snapshot, id string) probes.Peer {
	for _, p := range s.Peers {
		if string(p.ID) == id {
			return p
		}
	}
	panic("no peer " + id)
}

func newTestDetail(ping PingFunc, id string) *Detail {
	d := NewDetail(common.DefaultStyles(), peerstest.Now, ping)
	d.SetSize(100, 40)
	s := peerstest.Snapshot()
	d.Update(peerstest.Joined(s))
	d.Update(common.PeerSelectedMsg{Peer: peerByID(s, id)})
	return d
}

func TestDetailShowsVerdictAndEvidence(t *testing.T) {
	d := newTestDetail(nil, "nCORES3")
	v := tuitest.Unstyled(d.View())
	for _, want := range []string{
		"cores3  freertos  100.64.0.3",
		`path       active; relay "nyc"`,
		"verdict    no-endpoints: peer advertises no UDP endpoints",
		"also       device-no-public-endpoint",
		"fix        the peer cannot receive UDP",
		"[ ] FAIL    WhoIs.Node.Endpoints = []: nothing to send DISCO pings to",
		"[x] ok      NetInfo.WorkingUDP = true: UDP works here",
		"endpoints  none advertised",
		"home DERP  nyc (region 1, New York City)",
		"handshake 1m ago",
		"ping       not available here",
		`05:21:03  active; relay "nyc"`,
	} {
		if !strings.Contains(v, want) {
			t.Errorf("detail lacks %q:\n%s", want, v)
		}
	}
	if d.keys.Disco.Enabled() || d.keys.TSMP.Enabled() {
		t.Error("ping keys enabled without a Ping function")
	}
}

// TestDetailVerdictNotRepeated: a summary that starts with its reason id
// (probes.Judge's "idle: no recent traffic", "offline since …") is
// shown once, not "idle: idle: …".
func TestDetailVerdictNotRepeated(t *testing.T) {
	for _, tt := range []struct {
		reason  probes.ReasonID
		summary string
		want    string
	}{
		{probes.ReasonIdle, "idle: no recent traffic", "verdict    idle: no recent traffic\n"},
		{probes.ReasonOffline, "offline since 2026-11-30 04:00Z", "verdict    offline since 2026-11-30 04:00Z\n"},
		{probes.ReasonIdle, "no traffic recently", "verdict    idle: no traffic recently\n"},
		{probes.ReasonIdle, "idleness", "verdict    idle: idleness\n"},
	} {
		d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
		d.SetSize(100, 40)
		s := peerstest.Snapshot()
		s.Peers[0].Verdict = probes.Verdict{Reason: tt.reason, Summary: safetext.New(tt.summary)}
		d.Update(peerstest.Joined(s))
		d.Update(common.PeerSelectedMsg{Peer: s.Peers[0]})
		v := regexp.MustCompile(`(?m) +$`).ReplaceAllString(ansi.Strip(d.View()), "")
		if !strings.Contains(v, tt.want) {
			t.Errorf("%s %q: detail lacks %q:\n%s", tt.reason, tt.summary, tt.want, v)
		}
	}
}

// TestDetailNoPingOffline: an offline peer offers no ping (every try
// would time out) and says why; p does nothing.
func TestDetailNoPingOffline(t *testing.T) {
	pinged := false
	d := newTestDetail(func(probes.Peer, probes.PingKind) tea.Cmd { pinged = true; return nil }, "nOLDPI")
	v := tuitest.Unstyled(d.View())
	if !strings.Contains(v, "ping       not while control says the peer is offline") {
		t.Errorf("offline peer's ping line:\n%s", v)
	}
	if d.keys.Disco.Enabled() || d.keys.TSMP.Enabled() {
		t.Error("ping keys enabled for an offline peer")
	}
	if strings.Contains(v, "(p to ping)") {
		t.Errorf("an offline peer's traffic line offers p:\n%s", v)
	}
	d.Update(tea.KeyPressMsg{Code: 'p', Text: "p"})
	if pinged {
		t.Error("p pinged an offline peer")
	}
	// The same detail on an online peer offers it.
	d = newTestDetail(func(probes.Peer, probes.PingKind) tea.Cmd { return nil }, "nNAS")
	if !d.keys.Disco.Enabled() || !strings.Contains(tuitest.Unstyled(d.View()), "p ping until direct") {
		t.Error("online peer: no ping offered")
	}
}

func TestDetailEndpointsWording(t *testing.T) {
	tests := []struct {
		id   string
		edit func(*probes.Peer)
		want string
	}{
		{"nNAS", nil, "endpoints  203.0.113.10:41641, 192.168.1.20:41641"},
		{"nNAS", func(p *probes.Peer) { p.EndpointsKnown, p.Endpoints = false, nil }, "endpoints  unknown (WhoIs not available)"},
		{"nOLDPI", nil, "home DERP  tok (region 9, Tokyo)"}, // code from the DERP map
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
			d.SetSize(100, 40)
			s := peerstest.Snapshot()
			for i := range s.Peers {
				if string(s.Peers[i].ID) == tt.id && tt.edit != nil {
					tt.edit(&s.Peers[i])
				}
			}
			d.Update(peerstest.Joined(s))
			d.Update(common.PeerSelectedMsg{Peer: peerByID(s, tt.id)})
			if v := tuitest.Unstyled(d.View()); !strings.Contains(v, tt.want) {
				t.Errorf("lacks %q:\n%s", tt.want, v)
			}
		})
	}
}

// TestDetailPingShownWhenScrolled: a ping started with the evidence
// scrolled to its end brings the run's lines (under the verdict) into view.
func TestDetailPingShownWhenScrolled(t *testing.T) {
	d := newTestDetail(func(probes.Peer, probes.PingKind) tea.Cmd { return nil }, "nCORES3")
	d.SetSize(100, 8)
	tuitest.Unstyled(d.View())
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	if v := tuitest.Unstyled(d.View()); strings.Contains(v, "verdict") {
		t.Fatalf("not scrolled away from the top:\n%s", v)
	}
	d.Update(kmsg("p"))
	if v := tuitest.Unstyled(d.View()); !strings.Contains(v, "DISCO ping until direct: started") {
		t.Errorf("the started run is off screen:\n%s", v)
	}
}

func TestDetailPingProgress(t *testing.T) {
	var calls []string
	ping := func(p probes.Peer, kind probes.PingKind) tea.Cmd {
		calls = append(calls, string(p.ID)+"/"+string(kind))
		return func() tea.Msg { return "ping started" }
	}
	d := newTestDetail(ping, "nCORES3")
	if !d.keys.Disco.Enabled() {
		t.Fatal("ping key disabled with a Ping function and a peer")
	}
	if cmd := d.Update(kmsg("p")); cmd == nil || cmd() != "ping started" {
		t.Fatal("p did not return the injected ping command")
	}
	if cmd := d.Update(kmsg("p")); cmd != nil {
		t.Error("second p during a run returned a command")
	}
	if d.keys.Disco.Enabled() {
		t.Error("ping key still enabled during a run")
	}
	results := []probes.PingResult{
		{PeerID: "nCORES3", Kind: probes.PingDISCO, Try: 1, Via: "DERP(nyc)", Path: probes.PathDERP, Latency: 44 * time.Millisecond},
		{PeerID: "nCORES3", Kind: probes.PingDISCO, Try: 2, Err: "timeout"},
		{PeerID: "nCORES3", Kind: probes.PingDISCO, Try: 3, Via: "DERP(nyc)", Path: probes.PathDERP, Latency: 42 * time.Millisecond},
		{PeerID: "nNAS", Kind: probes.PingDISCO, Try: 1, Via: "203.0.113.10:41641", Path: probes.PathDirect, Latency: time.Millisecond, Done: true},
		{PeerID: "nCORES3", Kind: probes.PingDISCO, Try: 10, Err: "direct connection not established", Done: true},
	}
	for _, r := range results {
		d.Update(r)
	}
	want := []string{ // the latest four; no "…" once the run is done
		"ping 1/10 via DERP(nyc) 44ms",
		"ping 2/10: timeout",
		"ping 3/10 via DERP(nyc) 42ms",
		"DISCO ping failed: direct connection not established · just now", // a finished run says its age
	}
	v := tuitest.Unstyled(d.View())
	var got []string
	in := false
	for _, l := range strings.Split(v, "\n") {
		switch {
		case strings.HasPrefix(l, "ping "):
			in = true
		case strings.HasPrefix(l, "evidence"):
			in = false
		case in:
			got = append(got, strings.TrimSpace(l))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ping lines (-want +got):\n%s\n%s", diff, v)
	}
	if strings.Contains(v, "203.0.113.10:41641 in") {
		t.Error("another peer's ping result shown")
	}
	if !d.keys.Disco.Enabled() {
		t.Error("ping key disabled after the run ended")
	}
	d.Update(kmsg("t"))
	d.Update(probes.PingResult{PeerID: "nCORES3", Kind: probes.PingTSMP, Try: 1, Via: "DERP(nyc)", Path: probes.PathDERP, Latency: 50 * time.Millisecond, Done: true})
	if diff := cmp.Diff([]string{"nCORES3/disco", "nCORES3/tsmp"}, calls); diff != "" {
		t.Errorf("ping calls (-want +got):\n%s", diff)
	}
	if v := tuitest.Unstyled(d.View()); !strings.Contains(v, "TSMP pong via DERP(nyc) in 50ms") || strings.Contains(v, "ping 3/10") {
		t.Errorf("TSMP run did not replace the DISCO run:\n%s", v)
	}
	// The other peer's finished run is shown when it is selected.
	d.Update(common.PeerSelectedMsg{Peer: peerByID(peerstest.Snapshot(), "nNAS")})
	if v := tuitest.Unstyled(d.View()); !strings.Contains(v, "direct 203.0.113.10:41641 in 1.0ms") {
		t.Errorf("nas ping result missing:\n%s", v)
	}
}

func TestDetailSourceDownEndsPing(t *testing.T) {
	ping := func(probes.Peer, probes.PingKind) tea.Cmd { return nil }
	d := newTestDetail(ping, "nCORES3")
	d.Update(kmsg("p"))
	if d.keys.Disco.Enabled() {
		t.Fatal("ping key enabled during a run")
	}
	d.Update(probes.SourceStatus{Up: false, Err: "connection refused"})
	if !d.keys.Disco.Enabled() {
		t.Error("ping key still disabled after the source went down")
	}
	if v := tuitest.Unstyled(d.View()); !strings.Contains(v, "stopped: tailscaled unavailable") {
		t.Errorf("no line says the run stopped:\n%s", v)
	}
}

func TestDetailKeepsPeerThatLeft(t *testing.T) {
	d := newTestDetail(nil, "nNAS")
	s := peerstest.Snapshot()
	s.Peers = s.Peers[:2]
	d.Update(peerstest.Joined(s))
	v := tuitest.Unstyled(d.View())
	if !strings.Contains(v, "not in the latest snapshot") || !strings.Contains(v, "nas  linux") {
		t.Errorf("peer that left not shown as last known:\n%s", v)
	}
}

func TestDetailBackAndScroll(t *testing.T) {
	d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
	d.SetSize(80, 5)
	s := peerstest.Snapshot()
	d.Update(peerstest.Joined(s))
	d.Update(common.PeerSelectedMsg{Peer: peerByID(s, "nCORES3")})
	first := tuitest.Unstyled(d.View())
	d.Update(kmsg("down"))
	if tuitest.Unstyled(d.View()) == first {
		t.Error("down did not scroll")
	}
	if got := len(strings.Split(tuitest.Unstyled(d.View()), "\n")); got != 5 {
		t.Errorf("%d lines, want 5", got)
	}
	cmd := d.Update(kmsg("esc"))
	if msg := runOne(cmd); msg != (common.ShowPaneMsg{Title: ListTitle}) {
		t.Errorf("esc returned %#v, want ShowPaneMsg{Peers}", msg)
	}
}

func TestDetailNoSelection(t *testing.T) {
	d := NewDetail(common.DefaultStyles(), nil, nil)
	d.SetSize(60, 3)
	if v := tuitest.Unstyled(d.View()); !strings.Contains(v, "No peer selected") {
		t.Errorf("empty detail:\n%s", v)
	}
	if d.Update(kmsg("p")) != nil {
		t.Error("p without a peer returned a command")
	}
}

// pingLinesOf returns the ping progress lines of d's view, trimmed.
func pingLinesOf(v string) []string {
	var got []string
	in := false
	for _, l := range strings.Split(v, "\n") {
		switch {
		case strings.HasPrefix(l, "ping "):
			in = true
		case strings.HasPrefix(l, "evidence"):
			in = false
		case in:
			got = append(got, strings.TrimSpace(l))
		}
	}
	return got
}

// TestDetailPingWording: each kind names itself in one casing, a TSMP
// timeout is not "direct connection not established", a DISCO run with no
// pong at all says so, and only the last line of a running run ends in "…".
func TestDetailPingWording(t *testing.T) {
	r := func(kind probes.PingKind, try int, err string, done bool) probes.PingResult {
		return probes.PingResult{PeerID: "nCORES3", Kind: kind, Try: try, Err: safetext.New(err), Done: done}
	}
	pong := func(try int) probes.PingResult {
		return probes.PingResult{PeerID: "nCORES3", Kind: probes.PingDISCO, Try: try, Via: "DERP(nyc)", Path: probes.PathDERP, Latency: time.Millisecond}
	}
	noDirect := probes.ErrNoDirect.Error()
	tests := []struct {
		name    string
		key     string
		results []probes.PingResult
		want    []string
	}{
		{
			name: "TSMP started, running",
			key:  "t",
			want: []string{"TSMP ping: started…"},
		},
		{
			name:    "TSMP timeout against an offline peer",
			key:     "t",
			results: []probes.PingResult{r(probes.PingTSMP, 1, "timeout", true)},
			want:    []string{"TSMP ping: started", "TSMP ping failed: timeout (no reply through WireGuard) · just now"},
		},
		{
			name:    "TSMP pong with no path named",
			key:     "t",
			results: []probes.PingResult{{PeerID: "nCORES3", Kind: probes.PingTSMP, Try: 1, Via: "TSMP", Latency: 3 * time.Millisecond, Done: true}},
			want:    []string{"TSMP ping: started", "TSMP pong in 3.0ms · just now"},
		},
		{
			name:    "DISCO running: only the newest line has the ellipsis",
			key:     "p",
			results: []probes.PingResult{pong(1), r(probes.PingDISCO, 2, "timeout", false)},
			want:    []string{"DISCO ping until direct: started", "ping 1/10 via DERP(nyc) 1.0ms", "ping 2/10: timeout…"},
		},
		{
			name:    "DISCO ten relayed pongs then not direct: the last try keeps no ellipsis",
			key:     "p",
			results: []probes.PingResult{pong(9), pong(10), r(probes.PingDISCO, 10, noDirect, true)},
			want:    []string{"DISCO ping until direct: started", "ping 9/10 via DERP(nyc) 1.0ms", "ping 10/10 via DERP(nyc) 1.0ms", "DISCO ping failed: " + noDirect + " · just now"},
		},
		{
			name:    "DISCO with no pong at all: the peer is not answering",
			key:     "p",
			results: []probes.PingResult{r(probes.PingDISCO, 9, "timeout", false), r(probes.PingDISCO, 10, "timeout", false), r(probes.PingDISCO, 10, noDirect, true)},
			want:    []string{"DISCO ping until direct: started", "ping 9/10: timeout", "ping 10/10: timeout", "DISCO ping failed: no pong in 10 tries, not even through DERP (" + noDirect + ") · just now"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ping := func(probes.Peer, probes.PingKind) tea.Cmd { return nil }
			d := newTestDetail(ping, "nCORES3")
			d.SetSize(200, 40)
			d.Update(kmsg(tt.key))
			for _, res := range tt.results {
				d.Update(res)
			}
			if diff := cmp.Diff(tt.want, pingLinesOf(tuitest.Unstyled(d.View()))); diff != "" {
				t.Errorf("ping lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDetailEvidenceMarks: unknown values and neutral facts are neither
// "ok" nor "FAIL"; a check without a State (older fixtures) reads by Failed.
func TestDetailEvidenceMarks(t *testing.T) {
	s := peerstest.Snapshot()
	for i := range s.Peers {
		if s.Peers[i].ID == "nCORES3" {
			s.Peers[i].Verdict.Checks = []probes.Check{
				{Field: "Status.CurAddr", Value: `""`, Failed: true, State: probes.CheckFail, Note: "no trusted direct UDP address"},
				{Field: "Status.PeerRelay", Value: `""`, State: probes.CheckInfo, Note: "no peer relay in use"},
				{Field: "NetInfo.MappingVariesByDestIP", Value: "unknown", State: probes.CheckUnknown},
				{Field: "NetInfo.WorkingUDP", Value: "true", State: probes.CheckOK},
				{Field: "Legacy", Value: "x"},
			}
		}
	}
	d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
	d.SetSize(100, 40)
	d.Update(peerstest.Joined(s))
	d.Update(common.PeerSelectedMsg{Peer: peerByID(s, "nCORES3")})
	var got []string
	in := false
	for _, l := range strings.Split(tuitest.Unstyled(d.View()), "\n") {
		switch {
		case strings.HasPrefix(l, "evidence"):
			in = true
		case in && strings.HasPrefix(l, "  ["):
			got = append(got, strings.TrimSpace(l))
		case in:
			in = false
		}
	}
	want := []string{
		`[ ] FAIL    Status.CurAddr = "": no trusted direct UDP address`,
		`[-] info    Status.PeerRelay = "": no peer relay in use`,
		`[?] unknown NetInfo.MappingVariesByDestIP = unknown`,
		`[x] ok      NetInfo.WorkingUDP = true`,
		`[x] ok      Legacy = x`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("evidence lines (-want +got):\n%s", diff)
	}
}

// TestLatencyIsLabelledAsLastPing: nothing measures latency passively, so
// the column is headed "ping" and the detail says "last ping", pointing at
// p when no ping has answered yet.
func TestLatencyIsLabelledAsLastPing(t *testing.T) {
	l := NewList(common.DefaultStyles())
	l.SetSize(120, 20)
	l.Update(peerstest.Joined(peerstest.Snapshot()))
	header := ""
	for _, line := range strings.Split(tuitest.Unstyled(l.View()), "\n") {
		if strings.Contains(line, "name") && strings.Contains(line, "path") {
			header = line
			break
		}
	}
	if !strings.Contains(header, " ping ") || strings.Contains(header, "latency") {
		t.Errorf("list header = %q, want a ping column, not latency", header)
	}

	ping := func(probes.Peer, probes.PingKind) tea.Cmd { return nil }
	tests := []struct {
		id   string
		ping PingFunc
		want string
	}{
		{"nCORES3", ping, "last ping 42ms  handshake"},
		{"nLAPTOP", ping, "last ping - (p to ping)  handshake"},
		{"nLAPTOP", nil, "last ping -  handshake"}, // no ping key: no hint
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			d := newTestDetail(tt.ping, tt.id)
			if v := tuitest.Unstyled(d.View()); !strings.Contains(v, tt.want) {
				t.Errorf("detail lacks %q:\n%s", tt.want, v)
			}
		})
	}
}

// TestDetailShowsPathChanges: the path changes of the joined snapshot are
// listed under "path changes", oldest first, with their times.
func TestDetailShowsPathChanges(t *testing.T) {
	var joiner join.Joiner
	d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
	d.SetSize(100, 60)
	s := peerstest.Snapshot()
	d.Update(joiner.SetSnapshot(&s))
	d.Update(common.PeerSelectedMsg{Peer: peerByID(s, "nNAS")})
	s2 := peerstest.Snapshot()
	s2.Time = s2.Time.Add(5 * time.Second)
	for i := range s2.Peers {
		if s2.Peers[i].ID == "nNAS" {
			s2.Peers[i].Path = probes.Path{Kind: probes.PathDERP, DERPCode: "nyc", Text: `active; relay "nyc"`}
		}
	}
	d.Update(joiner.SetSnapshot(&s2))
	var lines []string
	for _, l := range strings.Split(tuitest.Unstyled(d.View()), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	_, after, ok := strings.Cut(strings.Join(lines, "\n"), "path changes\n")
	if !ok {
		t.Fatalf("no path changes section:\n%s", tuitest.Unstyled(d.View()))
	}
	want := "  05:21:03  active; direct 203.0.113.10:41641\n  05:21:08  active; relay \"nyc\""
	if !strings.HasPrefix(after, want) {
		t.Errorf("path changes:\n%s\nwant:\n%s", after, want)
	}
}

// TestDetailBothEnds: the peer's own facts from the control API sit beside
// ours, named by their source, and r asks the API again.
func TestDetailBothEnds(t *testing.T) {
	s := peerstest.Snapshot()
	s.Self.NAT = &probes.NATInfo{WorkingUDP: new(true), MappingVariesByDestIP: new(false), WorkingIPv6: new(false),
		UPnP: new(false), PMP: new(false), PCP: new(false), DERPLatency: map[int]time.Duration{1: 12 * time.Millisecond}}
	for i := range s.Peers {
		if s.Peers[i].ID == "nCORES3" {
			s.Peers[i].PeerSide = &probes.PeerSide{Source: probes.SourceControlAPI, At: peerstest.Now().Add(-40 * time.Second),
				MappingVariesByDestIP: new(true), HomeDERP: 1, DERPLatencyMs: map[string]float64{"nyc": 9},
				ClientSupports: probes.ClientSupports{UDP: new(true), UPnP: new(false), PMP: new(false), PCP: new(true)}}
			s.Peers[i].Verdict.PeerSide = true
		}
	}
	s.ControlAPI = &probes.APIStatus{State: "ok", At: peerstest.Now().Add(-40 * time.Second), Matched: 1}
	d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
	d.SetSize(100, 60)
	d.Update(peerstest.Joined(s))
	d.Update(common.PeerSelectedMsg{Peer: peerByID(s, "nCORES3")})
	v := tuitest.Unstyled(d.View())
	// Compare with runs of spaces as one: the columns size to their cells.
	flat := strings.Join(strings.Fields(v), " ")
	for _, want := range []string{
		"both ends our end peer's end (control-api, 40s ago)",
		"NAT easy or none hard (new port per destination)",
		"UDP works works",
		"IPv6 no unknown",
		"port map none available (PCP)",
		"home DERP nyc 12ms nyc 9.0ms",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("detail lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "TAILSCALE_API_KEY") {
		t.Errorf("the API-key hint shows although the API answered:\n%s", v)
	}
	if d.keys.Refresh.Enabled() {
		t.Error("r enabled without a refresh action")
	}
	asked := 0
	d.SetRefresh(func() tea.Cmd { asked++; return nil })
	d.Update(kmsg("r"))
	if asked != 1 {
		t.Errorf("r asked the API %d times, want 1", asked)
	}
}

// TestDetailSaysOnceWhatWouldFillThePeerSide: without an API key the
// pane says, once, what a read-only key would fill.
func TestDetailSaysOnceWhatWouldFillThePeerSide(t *testing.T) {
	d := newTestDetail(nil, "nCORES3")
	v := tuitest.Unstyled(d.View())
	if n := strings.Count(v, "TAILSCALE_API_KEY"); n != 1 {
		t.Errorf("the API-key hint appears %d times, want once:\n%s", n, v)
	}
}

// TestDetailNeverSplitsACommand: at every width from 60 to 160 columns
// each `code span` of the fix and each flag and address of the evidence
// is on one line, whole (a 120-column Detail put "tailscaled -" at the end
// of one line and "-port=41641" at the start of the next, so a copied
// command was wrong).
func TestDetailNeverSplitsACommand(t *testing.T) {
	s := peerstest.Snapshot()
	fix := "enable UPnP, NAT-PMP or PCP on this network's router, or add a static UDP port-forward (e.g. 41641 with `tailscaled --port=41641`); several nodes behind one firewall make NAT hard"
	s.Peers[0].Verdict = probes.Verdict{Reason: probes.ReasonLocalHardNAT, Summary: "this end's NAT maps each destination to its own port",
		Fix: safetext.New(fix), Checks: []probes.Check{{Field: "Self.Endpoints", Value: "[203.0.113.50:41641 198.51.100.9:3478]", Failed: true, State: probes.CheckFail,
			Note: "restart tailscaled with --port=41641 --tun=userspace-networking to test, then `tailscale ping --until-direct cores3`"}}}
	whole := []string{"`tailscaled --port=41641`", "--port=41641", "--tun=userspace-networking", "`tailscale ping --until-direct cores3`", "203.0.113.50:41641", "198.51.100.9:3478]"}
	d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
	d.Update(peerstest.Joined(s))
	d.Update(common.PeerSelectedMsg{Peer: s.Peers[0]})
	for w := 60; w <= 160; w++ {
		d.SetSize(w, 200)
		v := ansi.Strip(d.View())
		for _, want := range whole {
			found := false
			for _, l := range strings.Split(v, "\n") {
				if strings.Contains(l, want) {
					found = true
				}
			}
			if !found {
				t.Errorf("%d columns: %q is not whole on any line:\n%s", w, want, v)
			}
		}
	}
}

// TestDetailPingResultAges: a finished ping's result stays until the next
// run, and says how old it is as the clock moves (a TSMP result from
// minutes ago read as fresh).
func TestDetailPingResultAges(t *testing.T) {
	now := peerstest.Now()
	clock := func() time.Time { return now }
	ping := func(probes.Peer, probes.PingKind) tea.Cmd { return nil }
	d := newTestDetail(ping, "nCORES3")
	d.now = clock
	d.SetSize(200, 40)
	d.Update(kmsg("t"))
	d.Update(probes.PingResult{PeerID: "nCORES3", Kind: probes.PingTSMP, Try: 1, Via: "TSMP", Latency: 3 * time.Millisecond, Done: true})
	now = now.Add(4 * time.Minute)
	d.Update(peerstest.Joined(peerstest.Snapshot())) // the next poll redraws
	lines := pingLinesOf(tuitest.Unstyled(d.View()))
	if got := lines[len(lines)-1]; got != "TSMP pong in 3.0ms · 4m ago" {
		t.Errorf("four minutes on, the result reads %q", got)
	}
}

// TestDetailNoPingsSaysSo: where nothing can be pinged (a saved
// snapshot), p and t say so rather than nothing.
func TestDetailNoPingsSaysSo(t *testing.T) {
	d := newTestDetail(nil, "nCORES3")
	d.SetSize(120, 40)
	for _, k := range []string{"p", "t"} {
		d.Update(kmsg(k))
		if v := tuitest.Unstyled(d.View()); !strings.Contains(v, "no pings here: nothing live to ping") {
			t.Errorf("%s with no pings:\n%s", k, v)
		}
		d.Update(kmsg("j"))
		if v := tuitest.Unstyled(d.View()); strings.Contains(v, "no pings here") {
			t.Errorf("the note outlived the next key:\n%s", v)
		}
	}
}

// TestDetailToSettle: an open verdict shows its "to settle" block, most
// deciding first: tailpath's own probe as a key, the peer's side as the
// command to run on the peer; a settled verdict shows none.
func TestDetailToSettle(t *testing.T) {
	s := peerstest.Snapshot()
	for i := range s.Peers {
		if s.Peers[i].ID == "nCORES3" {
			s.Peers[i].Verdict.Settle = &probes.Settle{
				Candidates: []probes.Candidate{{Reason: probes.ReasonPeerUDPBlocked, Open: []probes.SettleFact{probes.SettlePeerSide, probes.SettleDISCORun}}, {Reason: probes.ReasonDiscoUnanswered, Open: []probes.SettleFact{probes.SettleDISCORun}}},
				Deciders: []probes.Decider{
					{Fact: probes.SettleDISCORun, End: probes.EndSelf, Tailpath: probes.TailpathProbe, Decides: []probes.ReasonID{probes.ReasonPeerUDPBlocked, probes.ReasonDiscoUnanswered}},
					{Fact: probes.SettlePeerSide, End: probes.EndPeer, Tailpath: probes.TailpathControlAPI, Decides: []probes.ReasonID{probes.ReasonPeerUDPBlocked},
						Ask: &probes.Ask{Platform: probes.PlatformLinux, Command: "tailscale status; tailscale version; tailscale netcheck", Apply: probes.ApplyPeerSnapshot}},
				},
			}
		}
	}
	// From a file (no ping: nothing live) every step is a command on
	// an end, as status --from words it; tailpath's own probe is no step.
	pasted := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
	pasted.SetSize(100, 60)
	pasted.Update(peerstest.Joined(s))
	pasted.Update(common.PeerSelectedMsg{Peer: peerByID(s, "nCORES3")})
	if v := tuitest.Unstyled(pasted.View()); strings.Contains(v, "press P") || !strings.Contains(v, "  1. on cores3 (linux): tailscale status; tailscale version; tailscale netcheck") {
		t.Errorf("from a file, the steps are not the commands alone:\n%s", v)
	}
	// c copies the commands (OSC 52), and says so.
	cmd := pasted.Update(tea.KeyPressMsg{Code: 'c', Text: "c"})
	if cmd == nil {
		t.Fatal("c copied nothing")
	}
	if got := fmt.Sprint(cmd()); got != "tailscale status; tailscale version; tailscale netcheck\n" {
		t.Errorf("c copied %q", got)
	}
	if v := tuitest.Unstyled(pasted.View()); !strings.Contains(v, "sent to the terminal's clipboard") {
		t.Errorf("c says nothing:\n%s", v)
	}
	live := func(probes.Peer, probes.PingKind) tea.Cmd { return nil }
	d := NewDetail(common.DefaultStyles(), peerstest.Now, live)
	d.SetSize(100, 60)
	d.Update(peerstest.Joined(s))
	d.Update(common.PeerSelectedMsg{Peer: peerByID(s, "nCORES3")})
	v := tuitest.Unstyled(d.View())
	for _, want := range []string{
		"to settle",
		"  1. press P (in Peers) to probe it",
		"     decides peer-udp-blocked, disco-unanswered",
		"  2. on cores3 (linux): tailscale status; tailscale version; tailscale netcheck",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("detail lacks %q:\n%s", want, v)
		}
	}
	d.Update(common.PeerSelectedMsg{Peer: peerByID(s, "nNAS")})
	if v := tuitest.Unstyled(d.View()); strings.Contains(v, "to settle") {
		t.Errorf("a settled verdict shows a to-settle block:\n%s", v)
	}
}

// TestDetailSettlesFromAPoll: the dashboard's Joiner judges as a poll
// (no peer carries its Settle); Detail works out the one it shows, so the
// "to settle" block reads as it does from a one-shot judgement.
func TestDetailSettlesFromAPoll(t *testing.T) {
	raw := peerstest.Snapshot()
	for i := range raw.Peers {
		if raw.Peers[i].ID == "nCORES3" {
			// Nothing known of its end: the verdict is open.
			raw.Peers[i].EndpointsKnown, raw.Peers[i].Endpoints, raw.Peers[i].OS = false, nil, "linux"
		}
	}
	view := func(l *join.Joiner) string {
		ls := l.SetSnapshot(&raw)
		d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
		d.SetSize(100, 80)
		d.Update(ls)
		d.Update(common.PeerSelectedMsg{Peer: peerByID(*ls.Snapshot, "nCORES3")})
		return tuitest.Unstyled(d.View())
	}
	once, poll := view(&join.Joiner{}), view(&join.Joiner{Poll: true})
	if !strings.Contains(once, "to settle") {
		t.Fatalf("the one-shot judgement leaves cores3 settled: the test checks nothing\n%s", once)
	}
	if poll != once {
		t.Errorf("from a poll the Detail reads\n%s\nnot, as from a one-shot judgement,\n%s", poll, once)
	}
}
