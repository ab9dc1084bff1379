package tui

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/sysctltest"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/sysctl/tune/tunetest"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/device"
	"github.com/tailpath/tailpath/tui/logpane"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/tuning"
)

// boardEvent is a CoreS3 as devlink reports it: the peer "cores3" of
// peerstest (100.64.0.3) with its telemetry (0 endpoints advertised, a
// full DISCO probe table, a stalled control stream) and a few console
// lines, among them a panic.
func boardEvent(t testing.TB) devlink.Event {
	t.Helper()
	var lines []string
	frame := func(f telemetry.Frame, keys ...string) {
		for _, k := range keys {
			f.SetHas(k, true)
		}
		b, err := f.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	lines = append(lines,
		"I (312) wifi:connected with lab-ap, aid = 1, channel 6, BW20, bssid = 02:00:00:00:00:01",
		"I (1204) esp_netif_handlers: sta ip: 192.168.1.50, mask: 255.255.255.0, gw: 192.168.1.1",
		"I (2210) tailscale: logged in as cores3.example.ts.net (100.64.0.3)",
		"W (5400) tailscale: no UDP endpoint advertised yet; talking through DERP",
	)
	frame(telemetry.Frame{Kind: telemetry.KindNet, Seq: 5, Uptime: 5400 * time.Millisecond, Net: telemetry.Net{
		IP: netip.MustParseAddr("100.64.0.3"), Host: "cores3", Endpoints: 0, HomeDERP: 1, HomeDERPBy: "lowest-id",
		HomeLatency: 182 * time.Millisecond, Nearest: 7, NearestLatency: 24 * time.Millisecond,
	}}, "seq", "up", "ip", "host", "eps", "derp", "derpby", "derpms", "near", "nearms")
	frame(telemetry.Frame{Kind: telemetry.KindDisco, Seq: 6, Uptime: 100400 * time.Millisecond, Disco: telemetry.Disco{
		ProbesUsed: 64, ProbesCap: 64, ProbesDropped: 10, PingsSent: 84, PongsRecv: 20, CallMeMaybeIn: 1, CallMeMaybeOut: 1,
		H2Received: 65535, H2WindowReturned: 0, H2WindowOpen: 0,
	}}, "seq", "up", "pu", "pcap", "pdrop", "preap", "ping", "pong", "cmmi", "cmmo", "h2rx", "h2wu", "h2win")
	frame(telemetry.Frame{Kind: telemetry.KindStatus, Seq: 7, Uptime: 100500 * time.Millisecond, Status: telemetry.Status{
		Reset: "poweron", RSSI: -61, HeapFree: 131072, HeapMinFree: 127000, HeapLargest: 69632, PSRAMFree: 8 << 20,
	}}, "seq", "up", "rst", "rssi", "wdis", "hif", "hmin", "hlb", "psf", "bad")
	lines = append(lines,
		"E (101000) tailscale: DISCO probe table full (64/64): dropping ping to 203.0.113.10:41641",
		"Guru Meditation Error: Core  0 panic'ed (LoadProhibited). Exception was unhandled.",
		"Backtrace: 0x4008a000:0x3ffb5a10 0x400d1000:0x3ffb5a30",
	)
	st := devlink.NewState()
	var ev devlink.Event
	for _, s := range lines {
		var l devlink.Line
		devlink.ParseLine([]byte(s+"\r\n"), &l)
		st.ApplyLine(&l, peerstest.Time, nil)
		l.Display = l.DisplayText()
		ev.Lines = append(ev.Lines, l.Clone())
	}
	st.ApplyLink(devlink.LinkStatus{Port: "/dev/ttyACM0", Up: true, At: peerstest.Time})
	ev.State = st.Clone()
	return ev
}

// tuningOptions is the Tuning pane over a sandbox copy of a sample
// /proc/sys, with two tailnet TCP connections.
func tuningOptions(t testing.TB) tuning.Options {
	t.Helper()
	dir := t.TempDir()
	h, _, err := sysctltest.NewSandbox(dir, sysctl.AtRoot(filepath.Join(dir, "none")))
	if err != nil {
		t.Fatal(err)
	}
	rtt := 18 * time.Millisecond
	info := &sockdiag.TCPInfo{Len: 232, RTT: &rtt, RTTVar: new(rtt / 10), SndCwnd: new(uint32(40)),
		Retrans: new(uint32(0)), TotalRetrans: new(uint32(2)), DeliveryRate: new(uint64(1_375_000)),
		BusyTime: new(time.Second), SndbufLimited: new(time.Duration(0)), RwndLimited: new(time.Duration(0)),
		BytesSent: new(uint64(50 << 20)), BytesRetrans: new(uint64(0))}
	c := tune.Control{
		Inputs: tune.Inputs{Host: h, Sandbox: true, Bandwidth: 400e6, RTT: 20 * time.Millisecond,
			BandwidthSource: "demo: the NAS case", RTTSource: "demo: the NAS case",
			Crypto: tunetest.FixedCrypto(tune.CryptoMeasure{GOARCH: "amd64", Cores: 4, Packet: tune.CryptoPacket, OneCore: 2.4e9, AllCores: 8.8e9}),
			Conns: func(context.Context) ([]sockdiag.Conn, error) {
				return []sockdiag.Conn{{Remote: netip.MustParseAddrPort("100.64.0.2:445"), State: "ESTABLISHED", CC: "cubic", Info: info, Verdict: sockdiag.Classify(sockdiag.Conn{Info: info, CC: "cubic"}, sockdiag.Limits{})}}, nil
			},
			Link: func(string) (sockdiag.Link, error) {
				return sockdiag.Link{Name: "tailscale0", MTU: 1280, Qdisc: "fq_codel", Up: true}, nil
			},
		},
		StatePath: filepath.Join(dir, "state.json"),
	}
	// As internal/dashboard's TuningOptions hands them, but not root.
	return tuning.Options{Read: c.Read, Apply: c.Apply, Revert: c.Revert, Sandbox: c.Inputs.Sandbox,
		BBR: c.Inputs.BBR, StateFile: c.StateFile(), Now: peerstest.Now}
}

// TestGolden80x24 draws every pane at 80×24, a typical SSH session on a
// NAS, with a board linked to its peer, and compares each pane's part of
// the screen (Model.Body: the lines between the tab bar and the help) with
// testdata/TestGolden80x24/*.golden (go generate ./..., or go test ./tui/
// -run TestGolden80x24 -update). Names win over decorations: the board's
// row keeps its name. The tab bar and the help around them are in one
// golden of the whole screen, TestGoldenScreen's.
func TestGolden80x24(t *testing.T) { goldenEveryTab(t, 80, 24) }

// TestGoldenAround80: the same panes one column either side of 80
// (testdata/TestGoldenAround80/<width>/*.golden), where footers and
// tables change how they shorten: nothing may be cut that fits.
func TestGoldenAround80(t *testing.T) {
	for _, w := range []int{79, 81} {
		t.Run(fmt.Sprint(w), func(t *testing.T) { goldenEveryTab(t, w, 24) })
	}
}

// TestGoldenScreen is the one golden of a whole screen
// (testdata/TestGoldenScreen.golden): the Peers tab at 80×24 with every
// pane, its tab bar, the pane and the help line. Adding a tab rewrites
// this golden and no pane's.
func TestGoldenScreen(t *testing.T) {
	view := screen(everyTab(t, 80, 24))
	checkScreen(t, "screen", view, 80, 24)
	checkFooter(t, view)
	for _, want := range []string{"[1 Peers]", " 2 Detail ", " 3 Device ", " 4 Log ", " 5 Tuning ", " 6 Self "} {
		if !strings.Contains(view, want) {
			t.Errorf("the tab bar lacks %q:\n%s", want, view)
		}
	}
	teatest.RequireEqualOutput(t, []byte(view))
}

// requirePaneGolden compares the focused pane's part of m's frame
// (Model.Body, unstyled) with the test's golden: pane-sized, so a new tab
// or a changed tab bar rewrites none of them. It checks that part is the
// pane's size inside the frame: w wide at most and as tall as the frame
// gives the pane.
func requirePaneGolden(t *testing.T, m Model) {
	t.Helper()
	body := unstyled(m.Body())
	checkScreen(t, "pane", body, m.width, m.contentH)
	teatest.RequireEqualOutput(t, []byte(body))
}

// everyTab is the dashboard at w×h with every pane (Device, Log and
// Tuning after Peers and Detail, Self last), a board linked to its peer
// and the Tuning pane's report, on the Peers tab.
func everyTab(t *testing.T, w, h int) Model {
	st := common.DefaultStyles()
	to := tuningOptions(t)
	report := tuning.ReportMsg(to.Read(context.Background()))
	if report.Err != nil {
		t.Fatal(report.Err)
	}
	report.Report.Time = peerstest.Time
	ev := boardEvent(t)
	var joiner join.Joiner
	snap := peerstest.Snapshot()
	joiner.SetSnapshot(&snap)
	linked, _ := joiner.SetDevice(&ev.State)
	opts := testOptions()
	opts.Ping = func(probes.Peer, probes.PingKind) tea.Cmd { return nil }
	opts.RefreshPeerSide = func() tea.Cmd { return nil } // r, as in the demo
	opts.Panes = []common.Pane{device.New(st, peerstest.Now), logpane.New(st, 0), tuning.New(to)}
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: w, Height: h}, linked, ev, report)
	return m
}

// goldenEveryTab draws every tab at w×h and compares each pane's part of
// the screen with its golden.
func goldenEveryTab(t *testing.T, w, h int) {
	m := everyTab(t, w, h)
	for _, tt := range []struct {
		name string
		keys []tea.Msg
	}{
		{"peers", nil},
		{"detail", keys("enter")},
		{"device", keys("3")},
		{"log", keys("4")},
		{"tuning", keys("5")},
		{"log-help", keys("4", "?")}, // the filter's example (last: ? stays on)
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := step(t, m, tt.keys...)
			view := screen(m)
			checkScreen(t, tt.name, view, w, h)
			if tt.name == "log-help" {
				if !strings.Contains(view, "wifi:W *:I") {
					t.Errorf("the Log help shows no filter example:\n%s", view)
				}
			} else {
				checkFooter(t, view)
			}
			requirePaneGolden(t, m)
			if tt.name == "peers" && !strings.Contains(view, "cores3") {
				t.Errorf("the board's row lost its name:\n%s", view)
			}
		})
	}
}

// checkFooter: the last line (the key help) ends with the two keys every
// screen must show, whole, or says nothing cut: a line that ends in "…"
// has lost keys that a shorter wording would have kept.
func checkFooter(t *testing.T, view string) {
	t.Helper()
	lines := strings.Split(view, "\n")
	foot := strings.TrimRight(lines[len(lines)-1], " ")
	if !strings.HasSuffix(foot, "? help • q quit") {
		t.Errorf("footer %q does not end with \"? help • q quit\"", foot)
	}
}

// TestFooterEveryWidth: at every width from 60 to 130 columns each tab's
// key line fits and ends with "? help • q quit" (a pane key that does not
// fit is dropped whole, never cut, and never pushes the global keys out).
func TestFooterEveryWidth(t *testing.T) {
	ev := boardEvent(t)
	var joiner join.Joiner
	snap := peerstest.Snapshot()
	joiner.SetSnapshot(&snap)
	linked, _ := joiner.SetDevice(&ev.State)
	st := common.DefaultStyles()
	opts := testOptions()
	opts.Ping = func(probes.Peer, probes.PingKind) tea.Cmd { return nil }
	opts.RefreshPeerSide = func() tea.Cmd { return nil }
	opts.Panes = []common.Pane{device.New(st, peerstest.Now), logpane.New(st, 0)}
	m, _ := step(t, New(opts), tea.WindowSizeMsg{Width: 80, Height: 24}, linked, ev)
	for w := 60; w <= 130; w++ {
		for _, tab := range []string{"1", "enter", "3", "4"} {
			m, _ := step(t, m, tea.WindowSizeMsg{Width: w, Height: 24}, keyMsg(tab))
			view := screen(m)
			lines := strings.Split(view, "\n")
			foot := lines[len(lines)-1]
			if got := ansi.StringWidth(foot); got > w {
				t.Errorf("%d columns, tab %s: footer %d wide: %q", w, tab, got, foot)
			}
			if !strings.HasSuffix(strings.TrimRight(foot, " "), "? help • q quit") {
				t.Errorf("%d columns, tab %s: footer %q lost the global keys", w, tab, foot)
			}
		}
	}
}
