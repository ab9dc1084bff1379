package probes

import (
	"net/netip"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDiagnoseSelf: each self rule holds on its evidence and not without
// it, the first that holds is the reason and the others go to Also, and
// an unknown fact is never the verdict.
func TestDiagnoseSelf(t *testing.T) {
	yes, no := true, false
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		state string
		self  Self
		want  ReasonID
		also  []ReasonID
	}{
		{"healthy", "Running", Self{NAT: &NATInfo{WorkingUDP: &yes, DERPLatency: map[int]time.Duration{1: time.Millisecond}}}, "", nil},
		{"nothing known", "", Self{}, "", nil},
		{"logged out", "NeedsLogin", Self{}, ReasonSelfLoggedOut, nil},
		{"not approved", "NeedsMachineAuth", Self{}, ReasonSelfLoggedOut, nil},
		{"starting is not trouble", "Starting", Self{}, "", nil},
		{"netcheck measured nothing", "", Self{Evidence: &SelfEvidence{NetcheckEmpty: true, NetcheckEmptyFrom: "tailscale netcheck"}}, ReasonSelfNetcheckEmpty, nil},
		{"logged out and netcheck empty", "NeedsLogin", Self{Evidence: &SelfEvidence{NetcheckEmpty: true}}, ReasonSelfLoggedOut, []ReasonID{ReasonSelfNetcheckEmpty}},
		{"ReceiveIPv4 stopped (1.70+ words)", "Running", Self{Health: []string{"The MagicSock function ReceiveIPv4 is not running. You might experience connectivity issues."}}, ReasonSelfUDPReceiveStopped, nil},
		{"ReceiveIPv4 stopped (1.50 words)", "Running", Self{Health: []string{"ReceiveIPv4 is not running"}}, ReasonSelfUDPReceiveStopped, nil},
		{"no UDP bind", "Running", Self{Health: []string{"Tailscale couldn't listen for incoming UDP connections."}}, ReasonSelfUDPReceiveStopped, nil},
		{"ReceiveDERP is not UDP", "Running", Self{Health: []string{"The MagicSock function ReceiveDERP is not running. You might experience connectivity issues."}}, "", nil},
		{"UDP blocked, DERP reached", "Running", Self{NAT: &NATInfo{WorkingUDP: &no, DERPLatency: map[int]time.Duration{1: 40 * time.Millisecond}}}, ReasonSelfUDPBlocked, nil},
		{"UDP false, nothing reached: unknown", "Running", Self{NAT: &NATInfo{WorkingUDP: &no}}, "", nil},
		{"UDP false, netcheck logged the block", "Running", Self{NAT: &NATInfo{WorkingUDP: &no}, Evidence: &SelfEvidence{UDPBlockedLogged: "netcheck: UDP is blocked, trying HTTPS"}}, ReasonSelfUDPBlocked, nil},
		{"UDP false by policy", "Running", Self{OnlyTCP443: true, NAT: &NATInfo{WorkingUDP: &no, DERPLatency: map[int]time.Duration{1: time.Millisecond}}}, "", nil},
		{"UDP untested: no STUN", "Running", Self{NoSTUN: true, NAT: &NATInfo{WorkingUDP: &no, DERPLatency: map[int]time.Duration{1: time.Millisecond}}}, "", nil},
		{"control EOF and TLS record", "Running", Self{Evidence: &SelfEvidence{LogLines: 3, ControlBreaks: 1, TLSRecordErrors: 1}}, ReasonSelfControlBreaking, nil},
		{"control EOF twice", "Running", Self{Evidence: &SelfEvidence{LogLines: 3, ControlBreaks: 2}}, ReasonSelfControlBreaking, nil},
		{"one EOF is not a pattern", "Running", Self{Evidence: &SelfEvidence{LogLines: 3, ControlBreaks: 1}}, "", nil},
		{"home DERP unreachable (health)", "Running", Self{Health: []string{"Tailscale could not connect to any relay server. Check your Internet connection."}}, ReasonSelfDERPUnreachable, nil},
		{"home region fails in the log", "Running", Self{HomeDERP: 1, Evidence: &SelfEvidence{LogLines: 2, DERPErrors: []DERPError{{Region: 1, Code: "nyc", Count: 2, Err: "dial tcp: i/o timeout"}}}}, ReasonSelfDERPUnreachable, nil},
		{"another region fails: the peers' trouble", "Running", Self{HomeDERP: 1, Evidence: &SelfEvidence{LogLines: 2, DERPErrors: []DERPError{{Region: 4, Code: "fra", Count: 2, Err: "dial tcp: i/o timeout"}}}}, "", nil},
		{"a proxy refuses CONNECT", "Running", Self{Evidence: &SelfEvidence{LogLines: 1, ProxyError: "CONNECT to derp1.tailscale.com:443: 403 Forbidden"}}, ReasonSelfDERPUnreachable, nil},
		{"reports disagree", "Running", Self{Evidence: &SelfEvidence{Spread: []FactSpread{{Fact: "UDP", Values: []TimedReport{{At: t0, Value: "true"}, {At: t0.Add(time.Minute), Value: "false"}}}}}}, ReasonSelfNetcheckFlaps, nil},
		{"UPnP from another router", "Running", Self{Evidence: &SelfEvidence{UPnPFrom: netip.MustParseAddr("192.168.1.2"), UPnPGateway: netip.MustParseAddr("192.168.1.1")}}, ReasonSelfUPnPNotGateway, nil},
		{"network changes often", "Running", Self{Evidence: &SelfEvidence{LinkChanges: 3, FirstLinkChange: t0, LastLinkChange: t0.Add(4 * time.Minute)}}, ReasonSelfNetworkChanges, nil},
		{"network changes over a day", "Running", Self{Evidence: &SelfEvidence{LinkChanges: 5, FirstLinkChange: t0, LastLinkChange: t0.Add(24 * time.Hour)}}, "", nil},
		{"several at once", "Running", Self{
			Health:   []string{"The MagicSock function ReceiveIPv4 is not running. You might experience connectivity issues."},
			NAT:      &NATInfo{WorkingUDP: &no, DERPLatency: map[int]time.Duration{1: time.Millisecond}},
			Evidence: &SelfEvidence{LogLines: 4, ControlBreaks: 2},
		}, ReasonSelfUDPReceiveStopped, []ReasonID{ReasonSelfUDPBlocked, ReasonSelfControlBreaking}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := DiagnoseSelf(tt.state, tt.self)
			if tt.want == "" {
				if v != nil {
					t.Fatalf("verdict %s (%v), want none", v.Reason, v.Checks)
				}
				return
			}
			if v == nil {
				t.Fatalf("no verdict, want %s", tt.want)
			}
			if v.Reason != tt.want || !cmp.Equal(v.Also, tt.also) {
				t.Errorf("verdict %s also %v, want %s also %v", v.Reason, v.Also, tt.want, tt.also)
			}
			if v.Summary == "" || v.Fix == "" {
				t.Errorf("verdict %s without summary or fix: %+v", v.Reason, v)
			}
			failed := false
			for _, c := range v.Checks {
				failed = failed || c.Mark() == CheckFail
				if c.Source == "" {
					t.Errorf("check %s has no source", c.Field)
				}
			}
			if !failed {
				t.Errorf("verdict %s rests on no failing check: %+v", v.Reason, v.Checks)
			}
		})
	}
}

// TestSelfRulesTable: every row is complete, ids are unique, and each
// needed fact names its source.
func TestSelfRulesTable(t *testing.T) {
	seen := map[ReasonID]bool{}
	for _, r := range SelfRules() {
		if seen[r.ID] {
			t.Errorf("%s twice", r.ID)
		}
		seen[r.ID] = true
		if r.Summary == "" || r.Fix == "" || r.Follows == "" || len(r.Needs) == 0 {
			t.Errorf("%s: incomplete row %+v", r.ID, r)
		}
		for _, n := range r.Needs {
			if n.Field == "" || n.Source == "" {
				t.Errorf("%s: fact %+v without field or source", r.ID, n)
			}
		}
		if SelfSummary(r.ID) != r.Summary {
			t.Errorf("SelfSummary(%s) = %q", r.ID, SelfSummary(r.ID))
		}
	}
}

// TestSelfReasonsDocumented: docs/diagnosis.md has a section for every
// self reason id, and every self section names one.
func TestSelfReasonsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/diagnosis.md")
	if err != nil {
		t.Fatal(err)
	}
	var ids []ReasonID
	for _, r := range SelfRules() {
		ids = append(ids, r.ID)
	}
	var sections []ReasonID
	for _, m := range regexp.MustCompile("(?m)^### `(self-[a-z0-9-]+)`").FindAllSubmatch(doc, -1) {
		sections = append(sections, ReasonID(m[1]))
	}
	for _, id := range ids {
		if !slices.Contains(sections, id) {
			t.Errorf("docs/diagnosis.md has no section for %s", id)
		}
	}
	for _, s := range sections {
		if !slices.Contains(ids, s) {
			t.Errorf("docs/diagnosis.md's section %s names no self reason", s)
		}
	}
}
