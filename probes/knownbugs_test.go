package probes

import (
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/internal/safetext"
)

// TestKnownBugs: a version in a bug's range with its symptom is the
// verdict (and refutes what the bug makes false); outside the range, or
// without the symptom, it is not; with the version unknown, a verdict the
// bug would explain asks for it.
func TestKnownBugs(t *testing.T) {
	stunDead := easySelf()
	stunDead.NAT.WorkingUDP = boolp(false)
	peer := relayedPeer("203.0.113.5:41641", "192.168.7.2:41641")
	judge := func(self Self, p Peer) (Verdict, *Verdict) {
		s := &Snapshot{Time: fixtureNow, BackendState: "Running", Self: self, Regions: testRegions, Peers: []Peer{p}}
		Judge(s, nil)
		return s.Peers[0].Verdict, s.Self.Verdict
	}
	t.Run("1.77.160: STUN to port 0, not UDP blocked", func(t *testing.T) {
		v, sv := judge(withVersion(stunDead, "1.77.160"), peer)
		if v.Reason != ReasonKnownClientBug || !strings.Contains(string(v.Summary), "netcheck-stun-port-zero") {
			t.Errorf("peer verdict %s %q, want known-client-bug naming netcheck-stun-port-zero", v.Reason, v.Summary)
		}
		if sv == nil || sv.Reason != ReasonKnownClientBug {
			t.Fatalf("self verdict %+v, want known-client-bug", sv)
		}
		if !refutedIn(v, ReasonLocalUDPBlocked) || !strings.Contains(string(v.Fix), "1.77.168") {
			t.Errorf("local-udp-blocked not refuted (%+v) or fix %q names no fixed version", v.Refuted, v.Fix)
		}
	})
	t.Run("1.76.6: out of range, UDP blocked stands", func(t *testing.T) {
		v, _ := judge(withVersion(stunDead, "1.76.6"), peer)
		if v.Reason != ReasonLocalUDPBlocked {
			t.Errorf("verdict %s, want local-udp-blocked", v.Reason)
		}
	})
	t.Run("1.77.160 with UDP working: no symptom, no bug", func(t *testing.T) {
		v, sv := judge(withVersion(easySelf(), "1.77.160"), peer)
		if v.Reason == ReasonKnownClientBug || (sv != nil && sv.Reason == ReasonKnownClientBug) {
			t.Errorf("known-client-bug without its symptom")
		}
	})
	t.Run("version unknown: UDP blocked asks for it", func(t *testing.T) {
		v, _ := judge(stunDead, peer)
		if v.Reason != ReasonLocalUDPBlocked || !hasCheck(v.Checks, "Self.Version", CheckUnknown, "tailscale version") {
			t.Errorf("verdict %s without the version's question:\n%s", v.Reason, checksText(v.Checks))
		}
	})
	t.Run("the peer's 1.77.160 explains its UDP false", func(t *testing.T) {
		p := peer
		p.PeerSide = apiSide(func(s *PeerSide) { s.ClientSupports.UDP = boolp(false); s.ClientVersion = "1.77.160-t1234" })
		v, _ := judge(withVersion(easySelf(), "1.102.5"), p)
		if v.Reason != ReasonKnownClientBug || !strings.Contains(string(v.Summary), "the peer's") || !refutedIn(v, ReasonPeerUDPBlocked) {
			t.Errorf("verdict %s %q refuted %+v, want the peer's known bug refuting peer-udp-blocked", v.Reason, v.Summary, v.Refuted)
		}
	})
	t.Run("Windows 1.54 with ReceiveIPv4 stopped", func(t *testing.T) {
		self := withVersion(easySelf(), "1.54.0")
		self.OS = "windows"
		self.Health = []safetext.Text{"ReceiveIPv4 is not running"}
		_, sv := judge(self, peer)
		if sv == nil || sv.Reason != ReasonKnownClientBug || !strings.Contains(string(sv.Summary), "windows-receiveipv4-stops") {
			t.Errorf("self verdict %+v, want windows-receiveipv4-stops", sv)
		}
		self.OS = "linux"
		if _, sv := judge(self, peer); sv == nil || sv.Reason != ReasonSelfUDPReceiveStopped {
			t.Errorf("on Linux: self verdict %+v, want self-udp-receive-stopped", sv)
		}
	})
	t.Run("a UPnP mapping renewed by 1.90 passes nothing", func(t *testing.T) {
		self := withVersion(easySelf(), "1.90.1")
		self.NAT.MappingVariesByDestIP, self.NAT.HavePortMap, self.NAT.UPnP = boolp(true), true, boolp(true)
		// The router mapped 52000 to tailscaled's 41641: the renewal asks
		// for 52000 as the internal port, where nothing listens.
		self.Endpoints = []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:52000"), netip.MustParseAddrPort("192.168.1.20:41641")}
		self.EndpointTypes = []string{"portmap", "local"}
		v, _ := judge(self, peer)
		if v.Reason != ReasonKnownClientBug || !strings.Contains(string(v.Summary), "portmapper-upnp-internal-port") {
			t.Errorf("verdict %s %q, want portmapper-upnp-internal-port", v.Reason, v.Summary)
		}
		// The router kept tailscaled's port: the renewal asks for the
		// right one, and the bug does nothing.
		self.Endpoints[0] = netip.MustParseAddrPort("198.51.100.10:41641")
		if v, _ := judge(self, peer); v.Reason == ReasonKnownClientBug {
			t.Errorf("known-client-bug with the mapping on tailscaled's own port")
		}
	})
}

func refutedIn(v Verdict, id ReasonID) bool {
	for _, r := range v.Refuted {
		if r.Reason == id {
			return true
		}
	}
	return false
}

func hasCheck(cs []Check, field string, st CheckState, note string) bool {
	for _, c := range cs {
		if string(c.Field) == field && c.Mark() == st && strings.Contains(string(c.Note), note) {
			return true
		}
	}
	return false
}

// TestParseVersion reads the versions clients report.
func TestParseVersion(t *testing.T) {
	for in, want := range map[string][3]int{
		"1.77.165": {1, 77, 165}, "v1.102.5": {1, 102, 5}, "1.86.2-tc47caa10d-gf5d087d04": {1, 86, 2}, "1.86": {1, 86, 0},
	} {
		if got, ok := parseVersion(in); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "abc", "1", "unknown"} {
		if _, ok := parseVersion(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestDocsNameEveryBug: docs/diagnosis.md names every known bug by its id
// and thread.
func TestDocsNameEveryBug(t *testing.T) {
	doc, err := os.ReadFile("../docs/diagnosis.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range knownBugs {
		if !strings.Contains(string(doc), "`"+b.ID+"`") || !strings.Contains(string(doc), b.Source) {
			t.Errorf("docs/diagnosis.md does not name %s with %s", b.ID, b.Source)
		}
	}
}

// KnownBugs returns the table (a copy, for docs and tests).
func KnownBugs() []KnownBug { return slices.Clone(knownBugs) }
