package probes

import (
	"net/netip"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
)

// TestJudgePending: a snapshot whose facts are still coming (Status alone:
// a relayed peer without its node, no DERP map, no NetInfo of ours) is not
// judged: every peer's verdict is pending, with no reason, checks or fix,
// and this node has no verdict; the same evidence with the facts marked
// arrived is judged as ever.
func TestJudgePending(t *testing.T) {
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	online := true
	mk := func(pending bool) *Snapshot {
		return &Snapshot{
			Time:         now,
			BackendState: "Running",
			Pending:      pending,
			Self:         Self{Name: "laptop", TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.1")}},
			Peers: []Peer{{
				ID: "n2", Name: "office-pc", Online: &online, Active: true,
				TailscaleIPs: []netip.Addr{netip.MustParseAddr("100.64.0.2")},
				Path:         Path{Kind: PathDERP, DERPCode: "fra"}, HomeDERPCode: safetext.New("fra"),
				LastHandshake: now.Add(-10 * time.Second),
			}},
		}
	}
	s := mk(true)
	if at := Judge(s, &DeviceEvidence{Hostname: "office-pc"}); at != -1 {
		t.Errorf("Judge of a pending snapshot matched the board to peer %d", at)
	}
	v := s.Peers[0].Verdict
	if !v.Pending || v.Reason != "" || v.Summary != "" || len(v.Checks) != 0 || v.Fix != "" || v.Settle != nil {
		t.Errorf("pending snapshot judged: %+v", v)
	}
	if s.Self.Verdict != nil || s.Self.View != nil {
		t.Errorf("pending snapshot: this node judged: %+v %+v", s.Self.Verdict, s.Self.View)
	}
	s = mk(false)
	Judge(s, nil)
	if v := s.Peers[0].Verdict; v.Pending || v.Reason == "" {
		t.Errorf("the same evidence, facts arrived: verdict %+v, want one judged", v)
	}
}
