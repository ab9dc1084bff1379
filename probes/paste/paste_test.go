package paste

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// pasteNow is the clock the paste tests give Parse (the samples are of
// 2026-11-30 around noon UTC).
var pasteNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func readPaste(t testing.TB, names ...string) []Raw {
	t.Helper()
	var out []Raw
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", "paste", n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Raw{Name: n, Data: b})
	}
	return out
}

// parseAndDiagnose parses names and diagnoses the result.
func parseAndDiagnose(t *testing.T, names ...string) (*snapshot.File, *join.Snapshot) {
	t.Helper()
	f, err := Parse(readPaste(t, names...), pasteNow)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := roundTrip(t, f).Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return f, ls
}

func peerNamed(t *testing.T, ls *join.Snapshot, name string) probes.Peer {
	t.Helper()
	for _, p := range ls.Peers {
		if string(p.Name) == name {
			return p
		}
	}
	t.Fatalf("no peer %q in %v", name, pathsOf(ls))
	return probes.Peer{}
}

func checkState(v probes.Verdict, field string) probes.CheckState {
	for _, c := range v.Checks {
		if string(c.Field) == field {
			return c.Mark()
		}
	}
	return ""
}

func TestParseStatusText(t *testing.T) {
	f, ls := parseAndDiagnose(t, "status.txt")
	if !f.Taken.Equal(pasteNow) || !strings.Contains(f.TakenFrom, "no time") {
		t.Errorf("taken %v (%q): status text states no time, so the clock's", f.Taken, f.TakenFrom)
	}
	if ls.Self.Name != "laptop" || ls.Self.TailscaleIPs[0] != netip.MustParseAddr("100.64.0.1") || ls.Self.NAT != nil {
		t.Errorf("self = %+v, want laptop 100.64.0.1 with unknown NAT", ls.Self)
	}
	if len(ls.Peers) != 6 {
		t.Fatalf("%d peers, want 6: %s", len(ls.Peers), pathsOf(ls))
	}
	type row struct {
		Kind  probes.PathKind
		Text  string
		OS    string
		Tx    int64
		Relay string
	}
	want := map[string]row{
		"nas":        {probes.PathDirect, "active; direct 203.0.113.5:41641", "linux", 1048576, ""},
		"cores3":     {probes.PathDERP, `active; relay "nyc"`, "freertos", 52000, "nyc"},
		"printer-pi": {probes.PathIdle, "idle", "linux", 4096, ""},
		"old-phone":  {probes.PathOffline, "offline, last seen 3h ago", "android", 0, ""},
		"my tv":      {probes.PathIdle, "-", "", 0, ""},
		"v6only":     {probes.PathOffline, `active; relay "fra"; offline, last seen 2d ago`, "linux", 100, "fra"},
	}
	for name, w := range want {
		p := peerNamed(t, ls, name)
		got := row{p.Path.Kind, string(p.Path.Text), string(p.OS), p.TxBytes, string(p.HomeDERPCode)}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if p.EndpointsKnown {
			t.Errorf("%s: endpoints known from status text, which has none", name)
		}
	}
	cores3 := peerNamed(t, ls, "cores3")
	for _, field := range []string{"WhoIs.Node.Endpoints", "Status.LastHandshake", "NetInfo.MappingVariesByDestIP"} {
		if st := checkState(cores3.Verdict, field); st != probes.CheckUnknown {
			t.Errorf("cores3 %s is %q, want unknown (the text does not show it)", field, st)
		}
	}
	if cores3.Verdict.Reason != probes.ReasonUnexplained {
		t.Errorf("cores3 reason %s, want unexplained (nothing known explains it)", cores3.Verdict.Reason)
	}
	if v6 := peerNamed(t, ls, "v6only"); v6.TailscaleIPs[0] != netip.MustParseAddr("fd7a:115c:a1e0::7") {
		t.Errorf("v6only address %v", v6.TailscaleIPs)
	}
	if want := []safetext.Text{"Some peers are advertising routes but --accept-routes is false"}; !cmp.Equal(ls.Self.Health, want) {
		t.Errorf("health %q, want %q", ls.Self.Health, want)
	}
}

func TestParseNetcheck(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		file    string
		at      time.Time
		nat     probes.NATInfo
		home    string
		latency map[string]time.Duration // by region code ("" code: "#id")
	}{
		{"netcheck.txt", time.Date(2026, 11, 30, 11, 59, 58, 123456789, time.UTC),
			// The CLI's own netcheck (cmd/tailscale/cli/netcheck.go,
			// netcheck.Client.Standalone on an OS-assigned port): its
			// facts are marked FromCLI, and the regions it reached counted.
			// Its "Nearest DERP" is no home: the CLI keeps no report
			// history, so it skips tailscaled's stickiness.
			probes.NATInfo{WorkingUDP: &yes, WorkingIPv6: &no, MappingVariesByDestIP: &yes, UPnP: &no, PMP: &no, PCP: &no, FromCLI: true, STUNRegions: 2},
			"", map[string]time.Duration{"nyc": 12300 * time.Microsecond, "fra": 85100 * time.Microsecond}},
		{"netcheck.json", time.Date(2026, 11, 30, 11, 59, 58, 5e8, time.UTC),
			// UPnP answered; that is not a mapping (issue 17): unknown.
			probes.NATInfo{WorkingUDP: &yes, WorkingIPv6: &no, MappingVariesByDestIP: &no, UPnP: &yes, PMP: &no, PCP: &no, PortMapUnknown: true, FromCLI: true, STUNRegions: 2},
			"", map[string]time.Duration{"#1": 12300 * time.Microsecond, "#4": 85100 * time.Microsecond}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, ls := parseAndDiagnose(t, tt.file)
			if !f.Taken.Equal(tt.at) || f.Netcheck == nil || !f.Netcheck.At.Equal(tt.at) {
				t.Errorf("taken %v, netcheck %+v; want both %v", f.Taken, f.Netcheck, tt.at)
			}
			nat := ls.Self.NAT
			if nat == nil {
				t.Fatal("no NAT facts")
			}
			lat := map[string]time.Duration{}
			for id, d := range nat.DERPLatency {
				k := ls.Regions[id].Code
				if k == "" {
					k = safetext.New("#" + strconv.Itoa(id))
				}
				lat[string(k)] = d
			}
			if diff := cmp.Diff(tt.latency, lat); diff != "" {
				t.Errorf("latencies (-want +got):\n%s", diff)
			}
			got := *nat
			got.DERPLatency = nil
			if diff := cmp.Diff(tt.nat, got); diff != "" {
				t.Errorf("NAT (-want +got):\n%s", diff)
			}
			if ls.Self.DERPLatencyFrom != "netcheck" {
				t.Errorf("latencies from %q, want netcheck (dated by the report)", ls.Self.DERPLatencyFrom)
			}
			if string(ls.Self.HomeDERPCode) != tt.home || (tt.home == "" && ls.Self.HomeDERP != 0) {
				t.Errorf("home %q, want %q", ls.Self.HomeDERPCode, tt.home)
			}
		})
	}
}

// TestParseStatusJSONAndLog: an older tailscale's status JSON with the
// daemon's journal: our endpoints, NAT facts and home DERP come from the
// log, health errors later cleared are dropped, and a direct path the log
// shows for a peer now relayed makes it lost-direct.
func TestParseStatusJSONAndLog(t *testing.T) {
	f, ls := parseAndDiagnose(t, "status-old.json", "tailscaled-journal.log")
	if want := time.Date(2026, 11, 30, 11, 59, 59, 0, time.UTC); !f.Taken.Equal(want) {
		t.Errorf("taken %v, want %v (nas's LastWrite)", f.Taken, want)
	}
	self := ls.Self
	wantEps := []netip.AddrPort{netip.MustParseAddrPort("198.51.100.10:41641"), netip.MustParseAddrPort("192.168.1.20:41641")}
	if !cmp.Equal(self.Endpoints, wantEps, cmpOpts...) {
		t.Errorf("endpoints %v, want %v", self.Endpoints, wantEps)
	}
	if self.NAT == nil || self.NAT.MappingVariesByDestIP == nil || !*self.NAT.MappingVariesByDestIP || self.NAT.HavePortMap ||
		self.NAT.UPnP == nil || *self.NAT.UPnP {
		t.Errorf("NAT %+v, want hard, no port mapping (portmap= is all three no)", self.NAT)
	}
	if self.HomeDERP != 1 || self.HomeDERPCode != "nyc" {
		t.Errorf("home %d %q, want 1 nyc", self.HomeDERP, self.HomeDERPCode)
	}
	joined := strings.Join(safetext.Strings(self.Health), "|")
	if !strings.Contains(joined, "An update from version 1.38.4") || strings.Contains(joined, "could not connect to any relay") {
		t.Errorf("health %q: want the update message, not the relay one cleared by ok", self.Health)
	}
	nas := peerNamed(t, ls, "nas")
	if nas.LastDirectAddr != netip.MustParseAddrPort("203.0.113.5:41641") || !nas.LastDirect.Equal(time.Date(2026, 11, 30, 11, 55, 30, 0, time.UTC)) {
		t.Errorf("nas last direct %v %v", nas.LastDirect, nas.LastDirectAddr)
	}
	// The status's health says tailscaled cannot reach its home region
	// (noDERPConnection is raised for the home region only), through
	// which nas answers: that holds too, beside the cause, with other
	// regions left.
	if nas.Verdict.Reason != probes.ReasonLocalHardNAT || !cmp.Equal(nas.Verdict.Also, []probes.ReasonID{probes.ReasonLostDirect, probes.ReasonDERPUnreachable}) {
		t.Errorf("nas %s %v, want local-hard-nat also lost-direct, derp-unreachable", nas.Verdict.Reason, nas.Verdict.Also)
	}
	if nas.HandshakeUnknown || checkState(nas.Verdict, "Status.LastHandshake") != probes.CheckOK {
		t.Error("status JSON shows handshakes: the check must read them")
	}
	// The journal's wgengine line is tailscaled's (its identifier says
	// so): recognised, though nothing in it is read.
	if len(f.Ignored) != 0 {
		t.Errorf("ignored %+v, want none: every line is tailscaled's", f.Ignored)
	}
	if note := f.Inputs[len(f.Inputs)-1].Note; !strings.Contains(note, "other tailscaled lines ×1") {
		t.Errorf("log note %q, want the wgengine line counted as another tailscaled line", note)
	}
}

// TestParsePing: pings to a peer of the pasted status become its ping
// run (as of the snapshot's time) and latency. Pongs only via DERP after
// "direct connection not established" are disco-unanswered as a live run
// is (the CLI's pings went to every endpoint the daemon knows, magicsock
// endpoint.discoPing), with endpoints that stay unknown and a fix that
// says the peer may advertise none.
func TestParsePing(t *testing.T) {
	_, ls := parseAndDiagnose(t, "status.txt", "ping.txt")
	c := peerNamed(t, ls, "cores3")
	if c.PingRun == nil || c.PingRun.Tries != 5 || c.PingRun.Pongs != 4 || c.PingRun.Direct || c.PingRun.Via != "DERP(nyc)" {
		t.Errorf("ping run %+v, want 5 tries, 4 pongs via DERP(nyc)", c.PingRun)
	}
	if c.Latency != 79*time.Millisecond {
		t.Errorf("latency %v, want the last pong's 79ms", c.Latency)
	}
	if c.Verdict.Reason != probes.ReasonDiscoUnanswered || !strings.Contains(string(c.Verdict.Fix), "no-endpoints") ||
		checkState(c.Verdict, "WhoIs.Node.Endpoints") != probes.CheckUnknown {
		t.Errorf("%s (fix %q, endpoints %s), want disco-unanswered with the endpoints unknown and named in the fix",
			c.Verdict.Reason, c.Verdict.Fix, checkState(c.Verdict, "WhoIs.Node.Endpoints"))
	}
	// Ping output stands on its own: its target is a peer, on the path
	// of its last pong.
	_, ls = parseAndDiagnose(t, "ping.txt")
	if len(ls.Peers) != 1 {
		t.Fatalf("ping alone: %d peers, want 1: %s", len(ls.Peers), pathsOf(ls))
	}
	p := ls.Peers[0]
	if p.Name != "cores3" || p.TailscaleIPs[0] != netip.MustParseAddr("100.64.0.3") || p.Path.Kind != probes.PathDERP || p.Path.DERPCode != "nyc" ||
		p.PingRun == nil || p.PingRun.Tries != 5 || p.Latency != 79*time.Millisecond {
		t.Errorf("ping-only peer %+v (ping run %+v)", p, p.PingRun)
	}
	if ls.Self.Name != "" || len(ls.Self.TailscaleIPs) != 0 {
		t.Errorf("self %+v: ping output does not name us", ls.Self)
	}
}

// TestParseTruncatedAndMixed: a status JSON cut short is ignored line by
// line while the netcheck after it is still read; CRLF and LF agree.
func TestParseTruncatedAndMixed(t *testing.T) {
	st := readPaste(t, "status-old.json")[0].Data
	nc := readPaste(t, "netcheck.txt")[0].Data
	mixed := append(append(append([]byte{}, st[:len(st)/2]...), '\n'), nc...)
	f, err := Parse([]Raw{{Name: "mixed.txt", Data: mixed}}, pasteNow)
	if err != nil {
		t.Fatal(err)
	}
	// The JSON's first half is read as a fragment (our own entry, whole);
	// the object cut in the middle and the rest are ignored.
	if len(f.Inputs) != 2 || f.Inputs[0].Kind != KindStatusFragment || f.Inputs[1].Kind != KindNetcheckText || len(f.Ignored) < 10 {
		t.Errorf("inputs %+v, %d ignored; want the JSON's whole entries as a fragment, the netcheck, and the cut lines ignored", f.Inputs, len(f.Ignored))
	}
	crlf, err := Parse([]Raw{{Name: "mixed.txt", Data: bytes.ReplaceAll(mixed, []byte("\n"), []byte("\r\n"))}}, pasteNow)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	snapshot.Write(&a, f)
	snapshot.Write(&b, crlf)
	if diff := cmp.Diff(a.String(), b.String()); diff != "" {
		t.Errorf("CRLF differs from LF (-LF +CRLF):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []Raw
		want error
		text string
	}{
		{"chatter", []Raw{{"a.txt", []byte("hello\n")}}, snapshot.ErrNotSnapshot, `a.txt:1: "hello"`},
		{"two snapshots", []Raw{{"a", []byte(`{"format":"tailpath-snapshot","version":1,"status":{}}`)}, {"b", []byte(`{"format":"tailpath-snapshot","version":1,"status":{}}`)}}, nil, "several saved snapshots"},
		{"snapshot and text", []Raw{{"a", []byte(`{"format":"tailpath-snapshot","version":1,"status":{}}`)}, readPaste(t, "ping.txt")[0]}, nil, "together"},
		{"bad status JSON", []Raw{{"s", []byte(`{"BackendState":"Running","Self":7}`)}}, snapshot.ErrCorrupt, "s:1"},
		{"bad netcheck JSON", []Raw{{"n", []byte(`{"UDP":"yes","PreferredDERP":1}`)}}, snapshot.ErrCorrupt, "netcheck"},
		{"too large", []Raw{{"big", make([]byte, snapshot.MaxSize+1)}}, snapshot.ErrTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in, pasteNow)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %v, want %v containing %q", err, tt.want, tt.text)
			}
		})
	}
}

func TestParsePeerLine(t *testing.T) {
	tests := []struct {
		line string
		want peerLine
		ok   bool
	}{
		{"100.64.0.2  nas  alice@  linux  active; direct 203.0.113.5:41641, tx 1 rx 2",
			peerLine{ip: netip.MustParseAddr("100.64.0.2"), name: "nas", dnsName: true, owner: "alice@", os: "linux", status: "active; direct 203.0.113.5:41641, tx 1 rx 2"}, true},
		{`100.64.0.6  ("my tv")  tagged-devices    -`,
			peerLine{ip: netip.MustParseAddr("100.64.0.6"), name: "my tv", owner: "tagged-devices", status: "-"}, true},
		{`100.64.0.7  xn--bcher-kva (bücher)  -  macOS  idle; offers exit node`,
			peerLine{ip: netip.MustParseAddr("100.64.0.7"), name: "xn--bcher-kva", dnsName: true, owner: "-", os: "macOS", status: "idle; offers exit node"}, true},
		{"100.64.0.8  exit  bob@  linux  active; exit node; relay \"fra\"; offline, last seen 5m ago",
			peerLine{ip: netip.MustParseAddr("100.64.0.8"), name: "exit", dnsName: true, owner: "bob@", os: "linux", status: "active; exit node; relay \"fra\"; offline, last seen 5m ago"}, true},
		{"100.64.0.9  pr  -  linux  active; peer-relay 198.51.100.77:7777:vni:12", peerLine{ip: netip.MustParseAddr("100.64.0.9"), name: "pr", dnsName: true, owner: "-", os: "linux", status: "active; peer-relay 198.51.100.77:7777:vni:12"}, true},
		{"100.64.0.1 is local Tailscale IP", peerLine{}, false},
		{"10.0.0.1  router  -  linux  running", peerLine{}, false},
		{`100.64.0.6  ("unterminated  x  -`, peerLine{}, false},
	}
	for _, tt := range tests {
		got, ok := parsePeerLine(tt.line)
		got.col = statusCol{}
		if ok != tt.ok || !cmp.Equal(got, tt.want, cmp.AllowUnexported(peerLine{}, statusCol{}), cmpOpts[0]) {
			t.Errorf("parsePeerLine(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
	// The path words become the PeerStatus tailscale status printed them from.
	pl, _ := parsePeerLine(tests[3].line)
	ps := pl.peerStatus("t", pasteNow)
	if !ps.Active || !ps.ExitNode || ps.Relay != "fra" || ps.Online || !ps.LastSeen.Equal(pasteNow.Add(-5*time.Minute)) {
		t.Errorf("peer status %+v", ps)
	}
	pl, _ = parsePeerLine(tests[4].line)
	if ps := pl.peerStatus("t", pasteNow); ps.PeerRelay != "198.51.100.77:7777:vni:12" || !ps.Active {
		t.Errorf("peer relay: %+v", ps)
	}
}

func TestParseNetcheckLogPortmap(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		portmap        string
		upnp, pmp, pcp *bool
	}{
		{"portmap=", &no, &no, &no},
		{"portmap=UMC", &yes, &yes, &yes},
		{"portmap=M", &no, &yes, &no},
		{"portmap=U_", &yes, nil, nil},
		{"portmap=?", nil, nil, nil},
		{"", nil, nil, nil},
	}
	for _, tt := range tests {
		n := parseNetcheckLog("udp=true " + tt.portmap + " derp=2 derpdist=2v4:40ms,2v6:30ms,9v4:bogus,x")
		if !cmp.Equal([]*bool{n.upnp, n.pmp, n.pcp}, []*bool{tt.upnp, tt.pmp, tt.pcp}) {
			t.Errorf("%q: upnp/pmp/pcp = %v %v %v", tt.portmap, n.upnp, n.pmp, n.pcp)
		}
		if n.preferred != 2 || n.latency[2] != 30*time.Millisecond || len(n.latency) != 1 {
			t.Errorf("%q: derp %d, latency %v; want 2, best of v4/v6 30ms", tt.portmap, n.preferred, n.latency)
		}
	}
}

// TestPastedPortMap: a port-mapping service that answered is not a
// mapping held. Only NetInfo states HavePortMap (tailcfg NetInfo
// .portMapSummary prints "active-" exactly when it is set), so a pasted
// NetInfo with "active-" is a mapping after File.Diagnose too, NetInfo
// without it is none, and netcheck reports (`portmap=UM`, `PortMapping:
// UPnP`) leave it unknown unless no service answered at all.
func TestPastedPortMap(t *testing.T) {
	const netinfo = "Nov 30 11:59:00 host tailscaled[901]: control: NetInfo: NetInfo{varies=true hairpin= ipv6=false ipv6os=true udp=true icmpv4=false derp=#1 portmap=%s link=\"\" firewallmode=\"nft-default\"}\n"
	const report = "Nov 30 11:59:00 host tailscaled[901]: netcheck: report: udp=true v6=false v6os=true mapvarydest=true portmap=%s v4a=198.51.100.10:41641 derp=1 derpdist=1v4:12ms\n"
	tests := []struct {
		name, line    string
		have, unknown bool
	}{
		{"NetInfo active-UM", fmt.Sprintf(netinfo, "active-UM"), true, false},
		{"NetInfo UM", fmt.Sprintf(netinfo, "UM"), false, false},
		{"NetInfo ?", fmt.Sprintf(netinfo, "?"), false, false},
		{"NetInfo cut by a pager", "Nov 30 11:59:00 host tailscaled[901]: control: NetInfo: NetInfo{varies=true hairpin= ipv6=false ipv6os=true udp=true icmpv4=false derp=#1 portmap=acti>\n", false, true},
		{"report UM", fmt.Sprintf(report, "UM"), false, true},
		{"report, nothing answered", fmt.Sprintf(report, ""), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]Raw{{Name: "log", Data: []byte(tt.line)}}, pasteNow)
			if err != nil {
				t.Fatal(err)
			}
			ls, err := roundTrip(t, f).Diagnose(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			n := ls.Self.NAT
			if n == nil {
				t.Fatal("no NAT facts")
			}
			if n.HavePortMap != tt.have || n.PortMapUnknown != tt.unknown {
				t.Errorf("HavePortMap %v unknown %v, want %v unknown %v", n.HavePortMap, n.PortMapUnknown, tt.have, tt.unknown)
			}
		})
	}
}

// fuzzSeeds adds every pasted sample, and pieces of them, to f.
func fuzzSeeds(f *testing.F) {
	m, _ := filepath.Glob(filepath.Join("testdata", "paste", "*"))
	c, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	for _, p := range append(m, c...) {
		b, _ := os.ReadFile(p)
		f.Add(b)
		for _, line := range strings.Split(string(b), "\n") {
			f.Add([]byte(line))
		}
	}
}

// FuzzParse: the detector and every parser behind it never panic, and
// what they accept diagnoses and redacts without panicking.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte(`{"format":"tailpath-snapshot","version":1,"taken":"2026-11-30T12:00:00Z","status":{"Self":{"TailscaleIPs":["100.64.0.1"]},"Peer":{}}}`))
	f.Add([]byte("{\n\"BackendState\":\"Running\",\"Peer\":{\"nodekey:2222222222222222222222222222222222222222222222222222222222222222\":{\"TailscaleIPs\":[\"100.64.0.2\"],\"Active\":true}}}\nReport:\n\t* UDP: true\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse([]Raw{{Name: "fuzz", Data: data}}, pasteNow)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !errors.Is(err, snapshot.ErrCorrupt) {
				t.Errorf("multi-line error: %q", err)
			}
			return
		}
		ctx := context.Background()
		if _, err := file.Diagnose(ctx); err != nil {
			return
		}
		if red, err := snapshot.Redact(file); err == nil {
			red.Diagnose(ctx)
		}
	})
}

// FuzzPeerLine: one status text line never panics the line parser.
func FuzzPeerLine(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if pl, ok := parsePeerLine(string(data)); ok {
			pl.peerStatus("fuzz", pasteNow)
		}
	})
}

// FuzzLogLine: one tailscaled log line never panics the log reader.
func FuzzLogLine(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := newPaste(pasteNow)
		p.logLine("fuzz", 1, strings.TrimSpace(string(data)))
		p.pingLine("fuzz", 1, strings.TrimSpace(string(data)))
		p.netcheckLine(&blockState{nc: &netcheckFacts{}}, strings.TrimSpace(string(data)))
	})
}

// TestParseStatusHeader: `tailscale status --header`'s two lines are
// recognised, not listed as ignored.
func TestParseStatusHeader(t *testing.T) {
	in := "IP          Hostname  Owner   OS     Status\n--          --------  -----   --     ------\n100.64.0.1  laptop    alice@  linux  -\n100.64.0.2  nas       alice@  linux  idle\n"
	f, err := Parse([]Raw{{Name: "h.txt", Data: []byte(in)}}, pasteNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Ignored) != 0 || len(f.Status.Peer) != 1 {
		t.Errorf("ignored %+v, %d peers; want none ignored, 1 peer", f.Ignored, len(f.Status.Peer))
	}
}

// TestParseNetcheckPortMapNotChecked: a netcheck that did not check port
// mapping leaves it unknown, so a hard NAT here is shown but not blamed.
func TestParseNetcheckPortMapNotChecked(t *testing.T) {
	nc := strings.Replace(string(readPaste(t, "netcheck.txt")[0].Data), "* PortMapping: ", "* PortMapping: not checked", 1)
	st := string(readPaste(t, "status.txt")[0].Data)
	f, err := Parse([]Raw{{Name: "t", Data: []byte(st + nc)}}, pasteNow)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := peerNamed(t, ls, "cores3")
	if c.Verdict.Reason == probes.ReasonLocalHardNAT || checkState(c.Verdict, "NetInfo.HavePortMap") != probes.CheckUnknown {
		t.Errorf("reason %s, HavePortMap %s; want no local-hard-nat and an unknown port mapping", c.Verdict.Reason, checkState(c.Verdict, "NetInfo.HavePortMap"))
	}
}
