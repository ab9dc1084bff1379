package paste

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes"
)

// TestPastedVerdicts: what pasted text cannot show is unknown, never a
// confident verdict (issue 17). Each input is in testdata/verdicts/, with
// documentation addresses.
func TestPastedVerdicts(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		file    string
		peer    string
		want    probes.ReasonID
		notWant []probes.ReasonID
		unknown string // a check that must read unknown
		summary string
		// self is this node's verdict wanted ("-" for none, "" not
		// checked).
		self probes.ReasonID
	}{
		// Item 6, its diagnosis half: tx > 0 with rx 0 means nothing ever
		// answered (WireGuard's receive counter counts handshake replies
		// too), whatever the NAT: never a NAT verdict.
		{file: "rx-zero.txt", peer: "nas", want: probes.ReasonNoHandshake,
			notWant: []probes.ReasonID{probes.ReasonLocalHardNAT}, summary: "nothing ever answered (rx 0)"},
		// Item 7: an empty Relay is exempted by a recent handshake
		// (magicsock endpoint.send falls back to the region the peer last
		// wrote from), which pasted text cannot show: unknown.
		{file: "relay-empty.txt", peer: "nas", want: probes.ReasonUnexplained,
			notWant: []probes.ReasonID{probes.ReasonNoHomeDERP}, unknown: "Status.Relay"},

		// The review of the reason catalogue against v1.102.5, on the
		// corpus's pastes (their sources in corpusSources).
		// 2: a (portmap) endpoint that is private: the router that mapped
		// sits behind another NAT (upnp.go selectBestService
		// "ext-private"), never its firewall.
		{file: "../corpus/log-portmap-double-nat.txt", peer: "backup", want: probes.ReasonLocalDoubleNAT,
			notWant: []probes.ReasonID{probes.ReasonLocalPortMapBlocked}},
		{file: "../corpus/log-portmap-double-nat-easy.txt", peer: "backup", want: probes.ReasonUnexplained,
			notWant: []probes.ReasonID{probes.ReasonLocalPortMapBlocked, probes.ReasonLocalDoubleNAT}},
		// 3: the CLI's netcheck measures a socket of its own; on Windows
		// only a static-port rule for tailscaled's 41641 would make the
		// two differ, so its hard NAT is probably tailscaled's (issue 29).
		{file: "../corpus/netcheck-cli-hard.txt", peer: "media", want: probes.ReasonLocalHardNAT,
			summary: "hard NAT here (probably: the tailscale CLI measured it from its own port), no port mapping; the peer's end unknown"},
		// 6: a STUN endpoint after "UDP is blocked".
		{file: "../corpus/log-udp-blocked-then-stun.txt", peer: "pi", want: probes.ReasonUnexplained,
			notWant: []probes.ReasonID{probes.ReasonLocalUDPBlocked}, unknown: "Log.Netcheck", self: "-"},
		// 7: "derp-9 connected" after the failure.
		{file: "../corpus/log-derp-failed-then-connected.txt", peer: "pi", want: probes.ReasonUnexplained,
			notWant: []probes.ReasonID{probes.ReasonDERPUnreachable}, self: "-"},
		// 8: a UPnP answer from another device beside a mapping held.
		{file: "../corpus/log-upnp-not-gateway-mapped.txt", self: "-"},
		// 9: two EOFs a day apart, a netmap received after each.
		{file: "../corpus/log-control-eof-apart.txt", self: "-"},
		// 10: a TSMP run that got no reply names no path.
		{file: "../corpus/ping-tsmp-no-reply.txt", peer: "printer", want: probes.ReasonPathUnknown, unknown: "Path",
			summary: "path not shown; the TSMP or ICMP ping got no reply"},
		// 11: ReceiveIPv6 alone.
		{file: "../corpus/status-health-receive-ipv6.txt", peer: "nas", want: probes.ReasonDirect, self: probes.ReasonSelfUDPReceiveStopped},
		// 15: one region in the report.
		{file: "../corpus/log-netcheck-one-region.txt", peer: "cam", want: probes.ReasonUnexplained, unknown: "NetInfo.MappingVariesByDestIP"},
		// 17: --self=false on the prompt: the first line is a peer.
		{file: "../corpus/status-self-false-prompt.txt", peer: "doorbell", want: probes.ReasonIdle},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "verdicts", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse([]Raw{{Name: tt.file, Data: b}}, now)
			if err != nil {
				t.Fatal(err)
			}
			ls, err := f.Diagnose(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			switch sv := ls.Self.Verdict; {
			case tt.self == "-" && sv != nil:
				t.Errorf("self verdict %s, want none; checks %+v", sv.Reason, sv.Checks)
			case tt.self != "" && tt.self != "-" && (sv == nil || sv.Reason != tt.self):
				t.Errorf("self verdict %+v, want %s", sv, tt.self)
			}
			if tt.peer == "" {
				return
			}
			var p *probes.Peer
			for i := range ls.Peers {
				if string(ls.Peers[i].Name) == tt.peer {
					p = &ls.Peers[i]
				}
			}
			if p == nil {
				t.Fatalf("no peer %s in %+v", tt.peer, ls.Peers)
			}
			v := p.Verdict
			if v.Reason != tt.want {
				t.Errorf("reason %s, want %s; checks %+v", v.Reason, tt.want, v.Checks)
			}
			for _, r := range tt.notWant {
				if v.Reason == r {
					t.Errorf("reason %s, which pasted text cannot support", r)
				}
			}
			if tt.summary != "" && string(v.Summary) != tt.summary {
				t.Errorf("summary %q, want %q", v.Summary, tt.summary)
			}
			if tt.unknown != "" {
				found := false
				for _, c := range v.Checks {
					if string(c.Field) == tt.unknown && c.Mark() == probes.CheckUnknown {
						found = true
					}
				}
				if !found {
					t.Errorf("%s is not an unknown check: %+v", tt.unknown, v.Checks)
				}
			}
		})
	}
}
