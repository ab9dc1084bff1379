//go:build !windows

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	dto "github.com/prometheus/client_model/go"

	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// boardFrames are the telemetry lines of a CoreS3 that is the fixture's
// peer cores3 (100.64.0.2): no endpoint advertised, its DISCO probe table
// full, 96 KiB of heap free.
func boardFrames(t *testing.T) []byte {
	t.Helper()
	frames := []telemetry.Frame{
		{Kind: telemetry.KindNet, Net: telemetry.Net{IP: netip.MustParseAddr("100.64.0.2"), Host: "cores3", Endpoints: 0}},
		{Kind: telemetry.KindDisco, Disco: telemetry.Disco{ProbesUsed: 64, ProbesCap: 64, ProbesDropped: 5, ProbesReaped: 2}},
		{Kind: telemetry.KindStatus, Status: telemetry.Status{HeapFree: 98304, HeapMinFree: 65536, HeapLargest: 45056}},
	}
	keys := map[telemetry.Kind][]string{
		telemetry.KindNet:    {"ip", "host", "eps"},
		telemetry.KindDisco:  {"pu", "pcap", "pdrop", "preap"},
		telemetry.KindStatus: {"hif", "hmin", "hlb"},
	}
	var out []byte
	for i, f := range frames {
		f.Seq, f.Uptime = uint32(i+1), time.Duration(i+1)*time.Second
		for _, k := range append([]string{"seq", "up"}, keys[f.Kind]...) {
			f.SetHas(k, true)
		}
		b, err := f.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, b...), '\r', '\n')
	}
	return out
}

// plugBoard opens a pseudo-terminal, points port (a symlink) at it and
// writes frames to it every 200 ms until unplug is called, which closes
// it as an unplugged USB board disappears.
func plugBoard(t *testing.T, port string, frames []byte) (unplug func()) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	os.Remove(port + ".new")
	if err := os.Symlink(tty.Name(), port+".new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(port+".new", port); err != nil {
		t.Fatal(err)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				ptmx.Write(frames)
			}
		}
	}()
	once := false
	unplug = func() {
		if once {
			return
		}
		once = true
		close(stop)
		<-stopped
		ptmx.Close()
		tty.Close()
	}
	t.Cleanup(unplug)
	return unplug
}

// TestServeKeepsServing runs tailpath serve against a LocalAPI fixture
// (the peer cores3 relayed, advertising no endpoints), a board on a
// pseudo-terminal plugged in after serve started, and the seed NAS's
// tuning in a sandbox; then unplugs the board, stops and restarts the
// LocalAPI and plugs the board back in: /metrics answers throughout, says
// what is down, and comes back; the scrape passes promtool's checks.
func TestServeKeepsServing(t *testing.T) {
	dir := t.TempDir()
	port := filepath.Join(dir, "ttyBOARD")
	root := filepath.Join(dir, "nas")
	if _, err := tune.SeedNAS(root); err != nil {
		t.Fatal(err)
	}
	fake := statusFixture(t, "no-endpoints")
	s := startServe(t, strings.NewReader(""), "--socket", fake.Socket, "--port", port, "--root", root,
		"--rtt", "20ms", "--bandwidth", "350Mbit", "--interval", "200ms", "--ping-every", "0")

	// Not plugged in yet: serve keeps trying.
	s.waitScrape(t, "tailscaled up, no board yet", func(f map[string]*dto.MetricFamily) bool {
		return is(f, 1, "tailpath_tailscaled_up") && is(f, 0, "tailpath_board_up")
	})
	unplug := plugBoard(t, port, boardFrames(t))

	board := []string{"id", "n2CNTRL", "peer", "cores3"}
	fams := s.waitScrape(t, "tailscaled, the board and the tuning up", func(f map[string]*dto.MetricFamily) bool {
		return is(f, 1, "tailpath_tailscaled_up") && is(f, 1, "tailpath_board_up") && is(f, 1, "tailpath_tuning_up") &&
			is(f, 64, "tailpath_board_probe_table_used") && is(f, 1, "tailpath_peer_path_info", append(board, "reason", "device-no-public-endpoint")...)
	})
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"tailpath_board_probe_table_capacity", nil, 64},
		{"tailpath_board_probes_dropped_total", nil, 5},
		{"tailpath_board_heap_free_bytes", nil, 98304},
		{"tailpath_board_heap_min_free_bytes", nil, 65536},
		{"tailpath_board_info", []string{"host", "cores3", "id", "n2CNTRL"}, 1},
		{"tailpath_peer_path_info", append(board, "path", "derp"), 1},
		{"tailpath_tuning_buffer_max_bytes", []string{"buffer", "tcp_rmem"}, 6291456},
		{"tailpath_tuning_bdp_bytes", nil, 875000},
		{"tailpath_tuning_target_rtt_seconds", []string{"source", "given"}, 0.02},
		{"tailpath_tuning_bbr_available", nil, 0},
	} {
		if v, ok := value(fams, c.name, c.labels...); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	_, body := s.get(t, "/metrics")
	checkMetricsWithPromtool(t, body)
	if code, om := s.get(t, "/metrics", "Accept", "application/openmetrics-text;version=1.0.0"); code != http.StatusOK || !strings.HasSuffix(om, "# EOF\n") ||
		!strings.Contains(om, "# TYPE tailpath_board_boots counter\n") {
		t.Errorf("/metrics as OpenMetrics: %d, no # EOF or counter family:\n%s", code, tailpathLines(om))
	}
	// /snapshot.json is a snapshot another machine can diagnose, the
	// board's evidence included.
	if code, js := s.get(t, "/snapshot.json"); code != http.StatusOK {
		t.Errorf("/snapshot.json: %d\n%s", code, js)
	} else if got := snapshotReasons(t, js)["cores3"]; got != probes.ReasonDeviceNoPublicEndpoint {
		t.Errorf("/snapshot.json diagnosed: the board's peer is %q, want %q", got, probes.ReasonDeviceNoPublicEndpoint)
	}
	// Another machine reads it over HTTP: status --from URL.
	if code, out, errOut := runStatusCmd(t, "--from", s.base+"/snapshot.json"); code != 0 ||
		!regexp.MustCompile(`(?m)^cores3 .*device-no-public-endpoint`).MatchString(out) {
		t.Errorf("status --from %s/snapshot.json: exit %d\n%s\n%s", s.base, code, out, errOut)
	}
	if code, _, errOut := runStatusCmd(t, "--from", s.base+"/nothing-here"); code == 0 || !strings.Contains(errOut, "404 Not Found") {
		t.Errorf("status --from a URL that is not there: exit %d, stderr %q", code, errOut)
	}

	// Unplugged: the board's live gauges go, what spans boots stays.
	unplug()
	fams = s.waitScrape(t, "the board down", func(f map[string]*dto.MetricFamily) bool { return is(f, 0, "tailpath_board_up") })
	if _, ok := value(fams, "tailpath_board_heap_free_bytes"); ok {
		t.Errorf("heap still reported with the board unplugged")
	}
	if !is(fams, 1, "tailpath_tailscaled_up") || !is(fams, 1, "tailpath_board_info", "host", "cores3") {
		t.Errorf("tailscaled or the board's identity lost with the board unplugged:\n%s", s.stderr.String())
	}
	if code, h := s.get(t, "/healthz"); code != http.StatusOK || !strings.Contains(h, `"board":"down"`) {
		t.Errorf("/healthz with the board unplugged: %d %s", code, h)
	}

	// tailscaled stops: its series go, up says 0, snapshot.json says why.
	fake.Stop()
	fams = s.waitScrape(t, "tailscaled down", func(f map[string]*dto.MetricFamily) bool { return is(f, 0, "tailpath_tailscaled_up") })
	if _, ok := value(fams, "tailpath_peer_path_info"); ok {
		t.Errorf("peers still reported while tailscaled is down")
	}
	if code, js := s.get(t, "/snapshot.json"); code != http.StatusServiceUnavailable || !strings.Contains(js, "failed to connect to local tailscaled") {
		t.Errorf("/snapshot.json while tailscaled is down: %d %s", code, js)
	}
	if code, h := s.get(t, "/healthz"); code != http.StatusOK || !strings.Contains(h, `"tailscaled":"down"`) {
		t.Errorf("/healthz while tailscaled is down: %d %s", code, h)
	}

	// Both come back.
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	plugBoard(t, port, boardFrames(t))
	s.waitScrape(t, "tailscaled and the board back", func(f map[string]*dto.MetricFamily) bool {
		return is(f, 1, "tailpath_tailscaled_up") && is(f, 1, "tailpath_board_up") && is(f, 64, "tailpath_board_probe_table_used") &&
			is(f, 1, "tailpath_peer_path_info", append(board, "reason", "device-no-public-endpoint")...)
	})
	log := s.stderr.String()
	for _, want := range []string{"tailscaled down: failed to connect to local tailscaled", "tailscaled up",
		"board down: serial port not found: " + port, "trying again every", "board up on " + port} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log lacks %q:\n%s", want, log)
		}
	}
}

// TestServePeerSide: with a read-only API key, serve reads the peers' own
// side from the control API in the background: the relayed peer's reason
// becomes the one resting on its end, tailpath_control_api_up is 1, and
// no endpoint serves the key.
func TestServePeerSide(t *testing.T) {
	_, url := apiServer(t)
	t.Setenv("TAILSCALE_API_KEY", testKey)
	t.Setenv("TAILSCALE_BASE_URL", url)
	lapi := statusFixture(t, "unexplained") // nas: relayed; locally nothing explains it
	s := startServe(t, strings.NewReader(""), "--socket", lapi.Socket, "--interval", "200ms", "--no-tuning", "--ping-every", "0")
	s.waitScrape(t, "the peer's side from the control API", func(f map[string]*dto.MetricFamily) bool {
		return is(f, 1, "tailpath_control_api_up") && is(f, 1, "tailpath_peer_path_info", "peer", "nas", "path", "derp", "reason", "hard-and-filtering-nat")
	})
	_, metricsBody := s.get(t, "/metrics")
	_, snap := s.get(t, "/snapshot.json")
	_, health := s.get(t, "/healthz")
	noKey(t, "serve", metricsBody, snap, health, s.stderr.String())
	if got := snapshotReasons(t, snap)["nas"]; got != probes.ReasonHardAndFilteringNAT {
		t.Errorf("/snapshot.json diagnosed: nas is %q, want %q (the control API's facts carried in the snapshot)", got, probes.ReasonHardAndFilteringNAT)
	}
}

// TestServeBoardCapture: the bundled firmware's recorded console stream
// (two boots of the CoreS3 case), replayed into serve from stdin, leaves
// exactly the board's own counts in the metrics, and a replay's end reads
// as the port closed.
func TestServeBoardCapture(t *testing.T) {
	capture, err := os.ReadFile(filepath.Join("firmware", "testdata", "scenario.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := app.ReadBoard(context.Background(), "-", 0, 0, bytes.NewReader(capture))
	if want.Boots < 2 || want.Frames == 0 {
		t.Fatalf("the scenario capture reads as %d boots, %d frames", want.Boots, want.Frames)
	}
	lapi := statusFixture(t, "direct")
	s := startServe(t, bytes.NewReader(capture), "--socket", lapi.Socket, "--port", "-", "--no-tuning", "--ping-every", "0")
	fams := s.waitScrape(t, "the replay's end", func(f map[string]*dto.MetricFamily) bool {
		return is(f, 0, "tailpath_board_up") && is(f, float64(want.Boots), "tailpath_board_boots_total")
	})
	if !is(fams, float64(want.Crashes), "tailpath_board_crashes_total") {
		t.Errorf("crashes: want %d", want.Crashes)
	}
	if !is(fams, 1, "tailpath_board_info", "host", want.Hostname.String()) {
		t.Errorf("board info: want host %q", want.Hostname)
	}
	if v, ok := value(fams, "tailpath_board_last_telemetry_timestamp_seconds"); !ok || time.Since(time.Unix(int64(v), 0)) > time.Minute {
		t.Errorf("last telemetry at %v (present %v), want moments ago", v, ok)
	}
	if !strings.Contains(s.stderr.String(), "board down: replay ended") {
		t.Errorf("serve's log does not say the replay ended:\n%s", s.stderr.String())
	}
}
