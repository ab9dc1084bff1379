package paste

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// fieldDir holds inputs from public reports that tailpath once got wrong,
// with their right answers in its README (../shared beside the repo).
var fieldDir = filepath.Join("..", "..", "..", "shared", "testdata", "field", "pasted")

// TestFieldPasted: the four pasted field inputs give the answers
// ../shared/testdata/field/README.md states.
func TestFieldPasted(t *testing.T) {
	if _, err := os.Stat(fieldDir); err != nil {
		t.Skip("../shared/testdata/field/pasted is absent: field inputs not checked")
	}
	read := func(t *testing.T, name string) (*snapshot.File, *probesSnapshot) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(fieldDir, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse([]Raw{{Name: name, Data: b}}, pasteNow)
		if err != nil {
			t.Fatalf("%s: %v (it holds Tailscale lines: it must be read)", name, err)
		}
		ls, err := roundTrip(t, f).Diagnose(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return f, &probesSnapshot{ls.Self, ls.Peers, ls.Regions}
	}
	natReasons := []probes.ReasonID{probes.ReasonLocalHardNAT, probes.ReasonBothHardNAT, probes.ReasonPeerHardNAT,
		probes.ReasonHardAndFilteringNAT, probes.ReasonLocalUDPBlocked, probes.ReasonPeerUDPBlocked}

	t.Run("netcheck-logged-out", func(t *testing.T) {
		// Nothing was measured: UDP unknown, not blocked; say so; never
		// advise opening UDP.
		_, s := read(t, "netcheck-logged-out.txt")
		if n := s.self.NAT; n != nil && n.WorkingUDP != nil {
			t.Errorf("UDP = %v, want unknown (the report measured nothing)", *n.WorkingUDP)
		}
		v := s.self.Verdict
		if v == nil || v.Reason != probes.ReasonSelfNetcheckEmpty {
			t.Fatalf("self verdict %+v, want %s", v, probes.ReasonSelfNetcheckEmpty)
		}
		if slices.Contains(v.Also, probes.ReasonLocalUDPBlocked) || strings.Contains(strings.ToLower(string(v.Fix)), "allow outbound udp") {
			t.Errorf("verdict %+v advises opening UDP", v)
		}
	})
	t.Run("netcheck-redacted", func(t *testing.T) {
		// UDP works, easy NAT; [redacted] is never a region.
		_, s := read(t, "netcheck-redacted.txt")
		n := s.self.NAT
		if n == nil || n.WorkingUDP == nil || !*n.WorkingUDP || n.MappingVariesByDestIP == nil || *n.MappingVariesByDestIP {
			t.Errorf("NAT %+v, want UDP true and an easy NAT", n)
		}
		if s.self.HomeDERP != 0 || len(s.regions) != 0 {
			t.Errorf("home %d, regions %v: the redacted nearest DERP must stay unknown", s.self.HomeDERP, s.regions)
		}
		if s.self.Verdict != nil {
			t.Errorf("self verdict %+v, want none", s.self.Verdict)
		}
	})
	t.Run("ping-placeholders", func(t *testing.T) {
		// One peer, MACHINE-2, reached only through DERP nue at 6 ms
		// after ten DISCO pings: no direct path answered; the
		// placeholder is an unknown address; no NAT verdict.
		_, s := read(t, "ping-placeholders.txt")
		if len(s.peers) != 1 {
			t.Fatalf("%d peers, want 1", len(s.peers))
		}
		p := s.peers[0]
		if p.Name != "MACHINE-2" || len(p.TailscaleIPs) != 0 || p.Path.Kind != probes.PathDERP || p.Path.DERPCode != "nue" || p.Latency != 6*time.Millisecond {
			t.Errorf("peer %s %v %s %q %v, want MACHINE-2, no address, relayed via nue, 6ms", p.Name, p.TailscaleIPs, p.Path.Kind, p.Path.DERPCode, p.Latency)
		}
		if r := p.PingRun; r == nil || r.Tries != 10 || r.Pongs != 10 || r.Direct || r.Via != "DERP(nue)" {
			t.Errorf("ping run %+v, want 10 pongs, none direct, via DERP(nue)", r)
		}
		if slices.Contains(natReasons, p.Verdict.Reason) {
			t.Errorf("verdict %s: the text cannot show a NAT cause", p.Verdict.Reason)
		}
		// Ten DISCO pings went to DERP and every endpoint the daemon
		// knew (magicsock endpoint.discoPing) and none came back
		// directly: disco-unanswered, as from a live run.
		if p.Verdict.Reason != probes.ReasonDiscoUnanswered {
			t.Errorf("verdict %s, want disco-unanswered (the ping run as evidence)", p.Verdict.Reason)
		}
		if !slices.ContainsFunc(p.Verdict.Checks, func(c probes.Check) bool { return c.Field == "PingRun" }) {
			t.Errorf("the ping run is not among the checks: %+v", p.Verdict.Checks)
		}
	})
	t.Run("journal-control-tls", func(t *testing.T) {
		// The control connection keeps breaking mid-stream: a self
		// finding pointing at the WAN MTU / MSS clamping, no peer.
		f, s := read(t, "journal-control-tls.txt")
		if len(f.Ignored) != 0 {
			t.Errorf("ignored %+v: every line is tailscaled's", f.Ignored)
		}
		v := s.self.Verdict
		if v == nil || v.Reason != probes.ReasonSelfControlBreaking {
			t.Fatalf("self verdict %+v, want %s", v, probes.ReasonSelfControlBreaking)
		}
		if !strings.Contains(string(v.Summary+v.Fix), "MTU") || !strings.Contains(string(v.Summary+v.Fix), "MSS") {
			t.Errorf("verdict %q / %q does not point at the MTU and MSS", v.Summary, v.Fix)
		}
		if len(s.peers) != 0 {
			t.Errorf("%d peers from a journal of control errors", len(s.peers))
		}
	})
	selfIs := func(t *testing.T, s *probesSnapshot, want probes.ReasonID, words ...string) *probes.Verdict {
		t.Helper()
		v := s.self.Verdict
		if v == nil || v.Reason != want {
			t.Fatalf("self verdict %+v, want %s", v, want)
		}
		for _, w := range words {
			if !strings.Contains(string(v.Summary+" "+v.Fix), w) {
				t.Errorf("verdict %q / %q does not say %q", v.Summary, v.Fix, w)
			}
		}
		return v
	}
	t.Run("logtail-cgnat-collision-android", func(t *testing.T) {
		// The carrier's 100.95.x.y lies inside 100.64.0.0/10: routes
		// collide; the placeholder octets never drop the line.
		_, s := read(t, "logtail-cgnat-collision-android.txt")
		selfIs(t, s, probes.ReasonTailnetRangeCollision, "rmnet_data2", "100.95.x.y/29")
	})
	t.Run("logtail-ipsec-cgnat-android", func(t *testing.T) {
		// A second VPN's interface holds an address in the range: name
		// it.
		_, s := read(t, "logtail-ipsec-cgnat-android.txt")
		v := selfIs(t, s, probes.ReasonTailnetRangeCollision, "ipsec8")
		if strings.Contains(string(v.Fix), "rmnet") || strings.Contains(string(v.Fix), "wlan0") {
			t.Errorf("fix names an interface outside the range: %q", v.Fix)
		}
	})
	t.Run("derp-region-eof-headscale", func(t *testing.T) {
		// The only, self-hosted region cannot be reached: cut at the far
		// end, not necessarily this host's outbound 443.
		_, s := read(t, "derp-region-eof-headscale.txt")
		v := selfIs(t, s, probes.ReasonDERPUnreachable, "self-hosted", "900", "load balancer")
		if strings.Contains(string(v.Fix), "allow outbound TCP 443") {
			t.Errorf("fix blames this host's outbound 443: %q", v.Fix)
		}
	})
	t.Run("derp-via-http-proxy", func(t *testing.T) {
		// The proxy answered (200); TLS behind it is not DERP's: the
		// pre-1.100 port bug, fixed by NO_PROXY or 1.100.
		_, s := read(t, "derp-via-http-proxy.txt")
		v := selfIs(t, s, probes.ReasonDERPUnreachable, "example.com:443", "1.100", "NO_PROXY")
		if strings.Contains(string(v.Fix), "let it CONNECT") {
			t.Errorf("fix says the proxy refused the CONNECT it made: %q", v.Fix)
		}
		if s.self.Evidence == nil || s.self.Evidence.ProxyError != "" {
			t.Errorf("a 200 CONNECT read as a proxy error: %+v", s.self.Evidence)
		}
	})
	t.Run("bugreport-mapping-flaps", func(t *testing.T) {
		// The mapping flaps: never an easy NAT from the last line; IPv6
		// is suggested.
		_, s := read(t, "bugreport-mapping-flaps.txt")
		selfIs(t, s, probes.ReasonSelfNetcheckFlaps, "IPv6")
	})
	t.Run("status-curly-quotes-tor", func(t *testing.T) {
		// Relayed through DERP region tor; typographic quotes read as
		// quotes; no NAT cause from this text.
		_, s := read(t, "status-curly-quotes-tor.txt")
		if len(s.peers) != 1 {
			t.Fatalf("%d peers, want the one the line shows", len(s.peers))
		}
		p := s.peers[0]
		if p.Path.Kind != probes.PathDERP || p.Path.DERPCode != "tor" || p.OS != "linux" {
			t.Errorf("peer %+v, want a linux peer relayed through tor", p.Path)
		}
		if slices.Contains(natReasons, p.Verdict.Reason) {
			t.Errorf("verdict %s: the text cannot show a NAT cause", p.Verdict.Reason)
		}
	})
	t.Run("portmap-upnp-side-router", func(t *testing.T) {
		// A side router answered UPnP: never read as a port mapped.
		_, s := read(t, "portmap-upnp-side-router.txt")
		if n := s.self.NAT; n != nil && n.HavePortMap {
			t.Errorf("NAT %+v: a side router's UPnP answer read as a mapping", n)
		}
	})
	t.Run("app-log-one-region-netcheck", func(t *testing.T) {
		// One STUN region cannot tell a mapping that varies: unknown,
		// not easy.
		_, s := read(t, "app-log-one-region-netcheck.txt")
		if n := s.self.NAT; n != nil && n.MappingVariesByDestIP != nil && !*n.MappingVariesByDestIP {
			t.Errorf("NAT %+v: easy NAT from one region", n)
		}
	})
}

// probesSnapshot is what the field checks read of a diagnosis.
type probesSnapshot struct {
	self    probes.Self
	peers   []probes.Peer
	regions map[int]probes.Region
}
