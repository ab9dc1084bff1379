package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/discoping"
)

// TestStatusProbe: --probe pings the relayed peer before diagnosing
// (progress on stderr), so "relayed, both ends look fine" (unexplained
// without it) reads disco-unanswered: its fixture's pongs all come
// through DERP(nyc).
func TestStatusProbe(t *testing.T) {
	old := statusProbeOptions
	statusProbeOptions = discoping.Options{PerPeer: 600 * time.Millisecond}
	t.Cleanup(func() { statusProbeOptions = old })
	srv := statusFixture(t, "unexplained")

	_, out, _ := runStatusCmd(t, "--socket", srv.Socket)
	if !strings.Contains(out, "unexplained") {
		t.Fatalf("without --probe: want unexplained\n%s", out)
	}
	code, out, errOut := runStatusCmd(t, "--json", "--probe", "--socket", srv.Socket)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"probing 1 relayed peer", "probe 1/1 nas:", "none direct", "probe done in"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	var doc struct {
		Peers []struct {
			Name      string          `json:"name"`
			LatencyNS *int64          `json:"latency_ns"`
			PingRun   *probes.PingRun `json:"ping_run"`
			Verdict   probes.Verdict  `json:"verdict"`
		} `json:"peers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Peers[0]
	if p.PingRun == nil || !p.PingRun.Probe || p.PingRun.Tries == 0 || p.PingRun.Pongs == 0 || p.PingRun.Direct {
		t.Errorf("ping run %+v, want the probe's, answered only through DERP", p.PingRun)
	}
	// The pongs measured a round trip: it is the peer's latency, as a
	// ping's in the dashboard is (it was dropped: null, LATENCY -).
	if p.PingRun == nil || p.PingRun.Latency <= 0 || p.LatencyNS == nil || *p.LatencyNS != int64(p.PingRun.Latency) {
		t.Errorf("latency_ns %v, ping run %+v: want the last pong's round trip", p.LatencyNS, p.PingRun)
	}
	if p.Verdict.Reason != probes.ReasonDiscoUnanswered {
		t.Errorf("with --probe: reason %s, want disco-unanswered", p.Verdict.Reason)
	}
	if srv.Requests("ping") == 0 {
		t.Error("no ping reached tailscaled")
	}

	if code, _, errOut := runStatusCmd(t, "--probe", "--from", "testdata/from/thread.golden"); code != 2 || !strings.Contains(errOut, "--probe does not apply") {
		t.Errorf("--probe --from: exit %d, %q; want a usage error", code, errOut)
	}
}

// TestStatusProbeOutOfTime: when --probe's budget ends before a peer's run
// (here at once), status names the peer on stderr and in the warnings,
// its JSON run says unfinished, and its verdict does not read the missing
// answers as silence: it stays unexplained, neither no-handshake nor
// disco-unanswered.
func TestStatusProbeOutOfTime(t *testing.T) {
	old := statusProbeOptions
	statusProbeOptions = discoping.Options{Budget: time.Nanosecond}
	t.Cleanup(func() { statusProbeOptions = old })
	srv := statusFixture(t, "unexplained")

	code, out, errOut := runStatusCmd(t, "--json", "--probe", "--socket", srv.Socket)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"probe 1/1 nas: not pinged (out of time)", "--probe ran out of time (1ns) before it finished 1 of 1 relayed peers: nas;"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	var doc struct {
		Warnings []string `json:"warnings"`
		Peers    []struct {
			PingRun *probes.PingRun `json:"ping_run"`
			Verdict probes.Verdict  `json:"verdict"`
		} `json:"peers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Peers[0]
	if r := p.PingRun; r == nil || !r.Unfinished || r.Tries != 0 || r.Pongs != 0 {
		t.Errorf("ping run %+v, want unfinished with no try", r)
	}
	if p.Verdict.Reason != probes.ReasonUnexplained {
		t.Errorf("reason %s, want unexplained: a probe that ran out of time is no evidence", p.Verdict.Reason)
	}
	if !slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.Contains(w, "--probe ran out of time") }) {
		t.Errorf("warnings %q lack the unfinished probe", doc.Warnings)
	}
}
