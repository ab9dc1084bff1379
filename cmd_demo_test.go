//go:build demo

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"

	"github.com/tailpath/tailpath/probes/lab"
)

// TestDemoStatusJSONLinksBoard runs `tailpath demo --status --json`: the
// simulated board (the firmware scenario relabelled onto the lab's DERP-only
// node) is linked to lab-derp, whose verdict carries the board's Device.*
// checks, and every peer has its path changes (one snapshot: one each, its
// path then).
func TestDemoStatusJSONLinksBoard(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: starts the lab tailnet; run without -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, stdout, stderr := runTailpathCtx(ctx, t, "demo", "--status", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Peers []struct {
			ID      string `json:"id"`
			Name    string `json:"name"`
			Path    struct{ Kind, Text string }
			Verdict struct {
				Checks []struct{ Field, Value string }
			} `json:"verdict"`
			PathChanges []struct {
				Time time.Time `json:"time"`
				Text string    `json:"text"`
				Kind string    `json:"kind"`
			} `json:"path_changes"`
		} `json:"peers"`
		Board *struct {
			PeerID   string `json:"peer_id"`
			Evidence struct {
				Hostname  string `json:"hostname"`
				ProbesCap int    `json:"probes_cap"`
				H2Known   bool   `json:"h2_known"`
			} `json:"evidence"`
		} `json:"board"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout)
	}
	if got.Board == nil {
		t.Fatalf("no board in:\n%s", stdout)
	}
	if e := got.Board.Evidence; e.Hostname != "cores3" || e.ProbesCap == 0 || !e.H2Known {
		t.Errorf("board evidence = %+v, want the scenario's cores3 with its probe table and HTTP/2 window", e)
	}
	seen := 0
	for _, p := range got.Peers {
		if len(p.PathChanges) != 1 || p.PathChanges[0].Text != string(join.ChangeText(&probes.Path{Kind: probes.PathKind(p.Path.Kind), Text: safetext.New(p.Path.Text)})) || p.PathChanges[0].Kind != p.Path.Kind || p.PathChanges[0].Time.IsZero() {
			t.Errorf("%s: path_changes %+v, want one: its path %q now", p.Name, p.PathChanges, p.Path.Text)
		}
		var device []string
		for _, c := range p.Verdict.Checks {
			if strings.HasPrefix(c.Field, "Device.") {
				device = append(device, c.Field+" = "+c.Value)
			}
		}
		if p.Name != lab.DERPName {
			if len(device) > 0 {
				t.Errorf("%s is not the board but has %q", p.Name, device)
			}
			continue
		}
		seen++
		if got.Board.PeerID != p.ID {
			t.Errorf("board linked to %q, want %s's %q", got.Board.PeerID, p.Name, p.ID)
		}
		if len(device) == 0 || !strings.Contains(strings.Join(device, "\n"), `Device.Node = `) || !strings.Contains(strings.Join(device, "\n"), `"cores3"`) {
			t.Errorf("%s's verdict lacks the board's checks: %q", p.Name, device)
		}
	}
	if seen != 1 {
		t.Errorf("%d peers named %s", seen, lab.DERPName)
	}
}
