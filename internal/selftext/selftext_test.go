package selftext

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes"
)

func rowsOf(secs []Section) map[string]string {
	m := map[string]string{}
	for _, s := range secs {
		for _, r := range s.Rows {
			m[s.Title+"/"+strings.TrimSpace(r.Label)] += string(r.Text)
		}
	}
	return m
}

// TestUnknownSaysUnknown: a node that has reported nothing (no netcheck,
// no version, no counters, no view) reads "unknown" in every part, never
// a guess, and names no known bug.
func TestUnknownSaysUnknown(t *testing.T) {
	rows := rowsOf(Sections(Input{Self: &probes.Self{Name: "n"}, Now: time.Unix(0, 0)}))
	for key, want := range map[string]string{
		"NAT/NAT":             "unknown",
		"DERP/home":           "unknown",
		"Traffic/by path":     "unknown",
		"Health/UDP receive":  "unknown",
		"Versions/tailscaled": "unknown",
	} {
		if !strings.HasPrefix(rows[key], want) {
			t.Errorf("%s = %q, want it to start %q", key, rows[key], want)
		}
	}
	if _, ok := rows["Versions/known bugs"]; ok {
		t.Errorf("an unknown version names known bugs: %q", rows["Versions/known bugs"])
	}
}

// TestNATWords: tailscaled's NetInfo as words: a hard NAT, port mapping
// services that answered without a mapping held, the public addresses
// (not the private or CGNAT ones), and the CLI's caveat.
func TestNATWords(t *testing.T) {
	yes, no := true, false
	self := &probes.Self{NAT: &probes.NATInfo{WorkingUDP: &yes, MappingVariesByDestIP: &yes, UPnP: &yes, PMP: &no, WorkingIPv6: &yes},
		View: &probes.SelfView{Caveat: "these NAT facts are `tailscale netcheck`'s"}}
	self.Endpoints = parseAPs(t, "192.168.1.2:41641", "100.100.1.1:41641", "203.0.113.9:1234", "[2001:db8::1]:41641")
	rows := rowsOf(Sections(Input{Self: self}))
	for key, want := range map[string]string{
		"NAT/mapping":  "varies by destination: yes (hard NAT)",
		"NAT/port map": "none held (answered: UPnP yes, NAT-PMP no, PCP unknown)",
		"NAT/public":   "IPv4 203.0.113.9 · IPv6 2001:db8::1",
		"NAT/caveat":   "these NAT facts are `tailscale netcheck`'s",
		"NAT/UDP":      "works (STUN answered)",
	} {
		if rows[key] != want {
			t.Errorf("%s = %q, want %q", key, rows[key], want)
		}
	}
}

func parseAPs(t *testing.T, ss ...string) []netip.AddrPort {
	t.Helper()
	var out []netip.AddrPort
	for _, s := range ss {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ap)
	}
	return out
}
