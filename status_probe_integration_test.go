package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/lab"
)

// TestStatusProbeAgainstLab runs `tailpath status --probe --json` against
// the lab tailnet (real Tailscale code on loopback): the DERP-only peer is
// the one relayed peer, gets a bounded ping run (a TSMP ping, then DISCO
// pings) whose pongs come through DERP, and its verdict lists the run; it
// stays no-endpoints, which explains why no pong came directly.
func TestStatusProbeAgainstLab(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: starts the lab tailnet; run without -short")
	}
	l := startTestLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, out, errOut := tailpathStatus(ctx, "--json", "--probe", "--socket", l.ObserverSocket())
	if code != 0 {
		t.Fatalf("tailpath status --probe exit %d: %s", code, errOut)
	}
	t.Logf("stderr:\n%s", errOut)
	for _, want := range []string{"probing 1 relayed peer", "probe 1/1 " + lab.DERPName + ":", "probe done in"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	var doc struct {
		Peers []struct {
			Name    string          `json:"name"`
			PingRun *probes.PingRun `json:"ping_run"`
			Verdict probes.Verdict  `json:"verdict"`
		} `json:"peers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	found := false
	for _, p := range doc.Peers {
		if p.Name != lab.DERPName {
			if p.PingRun != nil && p.PingRun.Probe {
				t.Errorf("%s was probed though not relayed", p.Name)
			}
			continue
		}
		found = true
		r := p.PingRun
		if r == nil || !r.Probe || r.Tries == 0 || r.Pongs == 0 || r.Direct || !strings.HasPrefix(string(r.Via), "DERP(") {
			t.Errorf("%s: run %+v, want the probe's, pongs through DERP only", p.Name, r)
		}
		if p.Verdict.Reason != probes.ReasonNoEndpoints {
			t.Errorf("%s: reason %s, want no-endpoints", p.Name, p.Verdict.Reason)
		}
		uses := false
		for _, c := range p.Verdict.Checks {
			if c.Field == "PingRun" && strings.Contains(string(c.Note), "as expected with no endpoints") {
				uses = true
			}
		}
		if !uses {
			t.Errorf("%s: the verdict does not read the run: %+v", p.Name, p.Verdict.Checks)
		}
	}
	if !found {
		t.Errorf("no %s in the output", lab.DERPName)
	}
}
