package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/probes/probestest"
)

// runStatusCmd runs `tailpath status args…` through run and returns the exit
// code, stdout and stderr.
func runStatusCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := dispatch(context.Background(), append([]string{"status"}, args...), cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut})
	return code, out.String(), errOut.String()
}

func statusFixture(t *testing.T, name string) *probestest.Server {
	t.Helper()
	fix, err := probestest.LoadFixture(filepath.Join("probes", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return probestest.New(t, fix)
}

func TestStatusErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "tailscaled.sock")
	forbidden := statusFixture(t, "direct")
	forbidden.SetForbidden("status", true)
	malformed := statusFixture(t, "direct")
	malformed.SetStatusBody([]byte(`{"BackendState":"Running","Self":{"TailscaleIPs":[42]}`))
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string // stderr must start with this
		contains string
	}{
		{"no tailscaled", []string{"--socket", missing}, 1,
			"tailpath: failed to connect to local tailscaled (socket " + missing + "); is it running?", "--socket"},
		{"permission denied", []string{"--socket", forbidden.Socket}, 1,
			"tailpath: tailscaled refused the request (permission denied", "--operator=$USER"},
		{"malformed reply", []string{"--socket", malformed.Socket, "--json"}, 1,
			"tailpath: tailscaled (socket " + malformed.Socket + ") sent a reply tailpath could not parse", ""},
		{"bad flag", []string{"--nope"}, 2, "tailpath: status: flag provided but not defined: -nope\nrun 'tailpath status -h' for usage\n", ""},
		{"stray argument", []string{"peer1"}, 2, `tailpath: status: unexpected argument "peer1"`, "\nrun 'tailpath status -h' for usage\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runStatusCmd(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d", code, tt.wantCode)
			}
			if !strings.HasPrefix(stderr, tt.want) || !strings.Contains(stderr, tt.contains) {
				t.Errorf("stderr = %q\nwant prefix %q containing %q", stderr, tt.want, tt.contains)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stderr has a stack trace: %s", stderr)
			}
			// One line, and for a usage error a second naming -h.
			lines := 1
			if strings.Contains(tt.want+tt.contains, "-h' for usage") {
				lines = 2
			}
			if n := strings.Count(stderr, "\n"); n != lines {
				t.Errorf("stderr is %d lines, want %d: %q", n, lines, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want empty", stdout)
			}
		})
	}
}

func TestStatusTable(t *testing.T) {
	srv := statusFixture(t, "no-endpoints")
	code, stdout, stderr := runStatusCmd(t, "--socket", srv.Socket)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	want := []string{
		`self: laptop (linux) 100.64.0.1; home DERP "nyc"; UDP ok, easy NAT`,
		// The Self tab's rows (internal/selftext), before the peers.
		"self  NAT       UDP          works (STUN answered)",
		"self            mapping      varies by destination: no (easy NAT)",
		"self            port map     none held (answered: UPnP no, NAT-PMP no, PCP no)",
		"self            public       IPv4 198.51.100.10 · IPv6 none (no IPv6)",
		"self  DERP      home         home nyc (12 ms) is the nearest region",
		"self            nyc          12 ms  home, best, 1 peer relayed",
		"self            fra          85 ms  far",
		"self            tok          160 ms  far",
		"self            sfo          70 ms  far",
		"self  Traffic   by path      traffic by path unknown: this tailscaled serves no /localapi/v0/usermetrics (it predates them); it serves no /localapi/v0/metrics",
		"self  Health    UDP receive  ok: netcheck's STUN replies came back (no peer is direct now to prove it for peers' packets)",
		"self            warnings     none from tailscaled",
		"self  Versions  tailscaled   1.102.5",
		"self            known bugs   none known for this version (open bugs, which every version has, are named only when their symptom shows)",
		`NAME    OS        PATH                 LATENCY  HOME DERP  TX/RX            REASON`,
		`cores3  freertos  active; relay "nyc"  -        "nyc"      50.8KiB/30.3KiB  no-endpoints: peer advertises no UDP endpoints`,
		// Said once, as TAILSCALE_API_KEY is unset (TestMain clears it).
		`# the peers' own NAT, UDP and port mapping are unknown: a read-only Tailscale API key (TAILSCALE_API_KEY, scope devices:core:read) would fill them`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestStatusEscapesStripped(t *testing.T) {
	srv := statusFixture(t, "escape-name")
	for _, args := range [][]string{{"--socket", srv.Socket}, {"--socket", srv.Socket, "--json"}} {
		code, stdout, stderr := runStatusCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		if strings.ContainsAny(stdout, "\x1b\x07") || strings.Contains(stdout, `\u001b`) || strings.Contains(stdout, `\u0007`) {
			t.Errorf("%v: output carries escapes: %q", args, stdout)
		}
		if !strings.Contains(stdout, "evil") {
			t.Errorf("%v: peer name missing: %q", args, stdout)
		}
	}
}

func TestStatusJSON(t *testing.T) {
	srv := statusFixture(t, "both-hard-nat")
	code, stdout, stderr := runStatusCmd(t, "--socket", srv.Socket, "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got struct {
		BackendState string `json:"backend_state"`
		Self         struct {
			Name     string `json:"name"`
			HomeDERP int    `json:"home_derp"`
			NAT      struct {
				MappingVariesByDestIP *bool `json:"mapping_varies_by_dest_ip"`
			} `json:"nat"`
		} `json:"self"`
		Peers []struct {
			Name string `json:"name"`
			Path struct {
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"path"`
			Endpoints []string `json:"endpoints"`
			Verdict   struct {
				Reason string   `json:"reason"`
				Also   []string `json:"also"`
				Fix    string   `json:"fix"`
			} `json:"verdict"`
		} `json:"peers"`
		Regions []struct {
			ID   int    `json:"id"`
			Code string `json:"code"`
		} `json:"derp_regions"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout)
	}
	if got.BackendState != "Running" || got.Self.Name != "laptop" || got.Self.HomeDERP != 1 ||
		got.Self.NAT.MappingVariesByDestIP == nil || !*got.Self.NAT.MappingVariesByDestIP {
		t.Errorf("self = %+v, state %q", got.Self, got.BackendState)
	}
	if len(got.Peers) != 1 {
		t.Fatalf("peers = %+v", got.Peers)
	}
	p := got.Peers[0]
	if p.Name != "office-pc" || p.Path.Kind != "relay" || p.Path.Text != `active; relay "fra"` ||
		p.Verdict.Reason != "both-hard-nat" || p.Verdict.Fix == "" ||
		!cmp.Equal(p.Endpoints, []string{"203.0.113.31:62011", "10.9.0.14:41641"}) {
		t.Errorf("peer = %+v", p)
	}
	if len(got.Regions) != 4 || got.Regions[0].ID != 1 || got.Regions[3].Code != "sfo" {
		t.Errorf("regions = %+v", got.Regions)
	}
}

// TestStatusLinksBoardCapture: status --port - reads a board's console
// capture from stdin and links it to the peer it is (here the fixture's
// relayed cores3 at 100.64.0.2): the board's evidence is in "board", its
// Device.* checks and reason in that peer's verdict, in the table too. A
// capture without the board's identity links nothing and says why.
func TestStatusLinksBoardCapture(t *testing.T) {
	srv := statusFixture(t, "no-endpoints")
	net := telemetry.Frame{Kind: telemetry.KindNet, Seq: 5, Uptime: 5400 * time.Millisecond, Net: telemetry.Net{
		IP: netip.MustParseAddr("100.64.0.2"), Host: "cores3", Endpoints: 0, HomeDERP: 1, HomeDERPBy: "lowest-id"}}
	for _, k := range []string{"seq", "up", "ip", "host", "eps", "derp", "derpby"} {
		net.SetHas(k, true)
	}
	frame, err := net.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	capture := "I (312) wifi:connected with lab-ap\r\n" + string(frame) + "\r\n"
	status := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := dispatch(context.Background(), append([]string{"status", "--socket", srv.Socket, "--port", "-"}, args...),
			cli.IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
		return code, out.String(), errb.String()
	}

	code, stdout, stderr := status(capture, "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got struct {
		Peers []struct {
			ID      string `json:"id"`
			Verdict struct {
				Reason string `json:"reason"`
				Checks []struct{ Field, Value string }
			} `json:"verdict"`
		} `json:"peers"`
		Board *struct {
			PeerID   string `json:"peer_id"`
			Evidence struct {
				TailnetIP string `json:"tailnet_ip"`
				Endpoints int    `json:"endpoints"`
			} `json:"evidence"`
		} `json:"board"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout)
	}
	if got.Board == nil || got.Board.PeerID != "n2CNTRL" || got.Board.Evidence.TailnetIP != "100.64.0.2" || got.Board.Evidence.Endpoints != 0 {
		t.Fatalf("board = %+v", got.Board)
	}
	if v := got.Peers[0].Verdict; v.Reason != "device-no-public-endpoint" || !strings.Contains(fmt.Sprint(v.Checks), "Device.Endpoints 0") {
		t.Errorf("the board's peer's verdict = %+v", v)
	}

	code, stdout, _ = status(capture)
	if code != 0 || !strings.Contains(stdout, "\nboard: cores3 ") || !strings.Contains(stdout, "device-no-public-endpoint: board advertised no endpoint") {
		t.Errorf("table: exit %d\n%s", code, stdout)
	}

	code, stdout, stderr = status("I (1) app: no telemetry here\r\n", "--json")
	if code != 0 || !strings.Contains(stderr, "tailpath: warning: --port -: the board did not name its tailnet address or host name (it sent no N telemetry frame)") {
		t.Errorf("capture without identity: exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(stdout, `"peer_id"`) || strings.Contains(stdout, "Device.") {
		t.Errorf("a board without identity was linked:\n%s", stdout)
	}

	// A board that names itself but is in no peer's netmap entry: said so.
	other := net
	other.Net.IP, other.Net.Host = netip.MustParseAddr("100.64.0.9"), "bench-s3"
	frame9, err := other.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--json"}, nil} {
		code, stdout, stderr = status(string(frame9)+"\r\n", args...)
		if code != 0 || !strings.Contains(stderr, "tailpath: warning: --port -: the board (100.64.0.9, host bench-s3) is not in this netmap") {
			t.Errorf("%v: board not in the netmap: exit %d, stderr %q", args, code, stderr)
		}
		if strings.Contains(stdout, `"peer_id"`) || strings.Contains(stdout, "Device.") || strings.Contains(stdout, "\nboard: ") {
			t.Errorf("%v: a board in no peer was linked:\n%s", args, stdout)
		}
	}
}
