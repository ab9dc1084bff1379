//go:build !windows

package main

// End-to-end tests of tailpath serve with real parts: the lab tailnet, a
// real Prometheus server (Debian's prometheus package, installed by
// .ci/run) scraping it, and a real tailscaled restarted under it. They
// skip under -short.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/tailpath/tailpath/internal/labtest"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// promServer is a Prometheus server started by a test.
type promServer struct {
	base    string // http://127.0.0.1:PORT
	logPath string
}

// startPrometheus runs Prometheus on a free loopback port with its storage
// in a temp dir, scraping target (host:port) every second as job
// "tailpath" and evaluating docs/prometheus's rules every second. It is
// stopped when the test ends. The test skips when prometheus is absent.
func startPrometheus(t *testing.T, target string) *promServer {
	t.Helper()
	return startPrometheusScraping(t, fmt.Sprintf(`
  - job_name: tailpath
    static_configs:
      - targets: [%q]
`, target))
}

// startPrometheusScraping is startPrometheus with scrapeConfigs (YAML list
// items) as its scrape_configs.
func startPrometheusScraping(t *testing.T, scrapeConfigs string) *promServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skipf("skipping: the prometheus server is not installed (apt-get install prometheus; .ci/run does): %v", err)
	}
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:%s`, rules, scrapeConfigs)
	writeFile(t, filepath.Join(dir, "prometheus.yml"), config)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &promServer{base: "http://" + addr, logPath: filepath.Join(dir, "prometheus.log")}
	logf, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(p.logPath)
			t.Logf("prometheus log:\n%s", b)
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(p.base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-done:
			b, _ := os.ReadFile(p.logPath)
			t.Fatalf("prometheus exited:\n%s", b)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 2 minutes")
		}
	}
}

// promSample is one series of a query's result.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query runs an instant PromQL query through Prometheus's HTTP API; a
// query Prometheus refuses is returned as an error.
func (p *promServer) query(expr string) ([]promSample, error) {
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%s: %v", expr, err)
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("%s: %s", expr, out.Error)
	}
	return out.Data.Result, nil
}

// api GETs a Prometheus API path and decodes its data into v.
func (p *promServer) api(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get(p.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "success" {
		t.Fatalf("%s: %v %s", path, err, out.Status)
	}
	if err := json.Unmarshal(out.Data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// eventually polls cond every 250 ms for up to limit, failing with what.
func eventually(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last: %s", limit, what, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestServeLabPrometheus runs tailpath serve against the lab tailnet and
// a real Prometheus scraping it every second with tailpath's alerting
// rules loaded. Through Prometheus's HTTP API, PromQL says the DERP-only
// lab peer is relayed with its reason and the direct peer is direct; the
// relay alert is pending for that peer; every expression of the Grafana
// dashboard runs; the scrape passes promtool check metrics.
func TestServeLabPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: starts the lab tailnet and a Prometheus server; run without -short")
	}
	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skipf("skipping: the prometheus server is not installed (apt-get install prometheus; .ci/run does): %v", err)
	}
	l := startTestLab(t)
	s := startServe(t, strings.NewReader(""), "--socket", l.ObserverSocket(), "--interval", "500ms", "--ping-every", "1m")
	s.waitScrape(t, "the lab's peers", func(f map[string]*dto.MetricFamily) bool {
		return is(f, 1, "tailpath_peer_path_info", "peer", lab.DERPName, "path", "derp")
	})
	_, body := s.get(t, "/metrics")
	checkMetricsWithPromtool(t, body)

	p := startPrometheus(t, strings.TrimPrefix(s.base, "http://"))

	path := func(peer string) (ok bool, state string) {
		res, err := p.query(fmt.Sprintf(`tailpath_peer_path_info{job="tailpath", peer=%q}`, peer))
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 {
			return false, fmt.Sprintf("%d series for %s: %v", len(res), peer, res)
		}
		return true, res[0].Metric["path"] + " " + res[0].Metric["reason"] + " " + res[0].Metric["region"]
	}
	eventually(t, 2*time.Minute, "Prometheus to have both lab peers' paths", func() (bool, string) {
		okD, d := path(lab.DERPName)
		okR, r := path(lab.DirectName)
		return okD && okR, d + " / " + r
	})
	if _, got := path(lab.DERPName); !strings.HasPrefix(got, "derp no-endpoints ") {
		t.Errorf("PromQL: %s is %q, want relayed (derp) with reason no-endpoints", lab.DERPName, got)
	}
	if _, got := path(lab.DirectName); got != "direct direct " {
		t.Errorf("PromQL: %s is %q, want direct", lab.DirectName, got)
	}
	relayed, err := p.query(`count by (reason) (tailpath_peer_path_info{path="derp"})`)
	if err != nil || len(relayed) != 1 || relayed[0].Metric["reason"] != "no-endpoints" || relayed[0].Value[1] != "1" {
		t.Errorf("relayed peers by reason: %v %v, want one no-endpoints", relayed, err)
	}
	eventually(t, 2*time.Minute, "a ping latency for the direct peer", func() (bool, string) {
		res, err := p.query(fmt.Sprintf(`tailpath_peer_ping_latency_seconds{peer=%q} > 0`, lab.DirectName))
		return err == nil && len(res) == 1, fmt.Sprint(res, err)
	})
	// /snapshot.json carries serve's own pings, as status --save would.
	eventually(t, time.Minute, "the direct peer's ping latency in /snapshot.json", func() (bool, string) {
		_, body := s.get(t, "/snapshot.json")
		f, err := snapshot.Decode([]byte(body))
		if err != nil {
			return false, err.Error()
		}
		ls, err := f.Diagnose(context.Background())
		if err != nil {
			return false, err.Error()
		}
		for _, p := range ls.Peers {
			if p.Name == lab.DirectName {
				return p.Latency > 0, fmt.Sprintf("latency %v", p.Latency)
			}
		}
		return false, "no " + lab.DirectName
	})

	// The target is scraped as OpenMetrics or text and up.
	var targets struct {
		ActiveTargets []struct {
			Health    string `json:"health"`
			LastError string `json:"lastError"`
		} `json:"activeTargets"`
	}
	p.api(t, "/api/v1/targets", &targets)
	if len(targets.ActiveTargets) != 1 || targets.ActiveTargets[0].Health != "up" {
		t.Errorf("targets: %+v", targets.ActiveTargets)
	}

	// The rules load and evaluate; the relay alert waits out its 15
	// minutes for the DERP-only peer, and for it only.
	eventually(t, 2*time.Minute, "the relay alert pending for "+lab.DERPName, func() (bool, string) {
		var alerts struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		}
		p.api(t, "/api/v1/alerts", &alerts)
		var relay []string
		for _, a := range alerts.Alerts {
			if a.Labels["alertname"] == "TailpathPeerRelayed" {
				relay = append(relay, a.Labels["peer"]+" "+a.Labels["reason"]+" "+a.State)
			}
		}
		return len(relay) == 1 && relay[0] == lab.DERPName+" no-endpoints pending", fmt.Sprint(relay)
	})
	var rules struct {
		Groups []struct {
			Rules []struct {
				Name      string `json:"name"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"rules"`
		} `json:"groups"`
	}
	p.api(t, "/api/v1/rules", &rules)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Health != "ok" {
				t.Errorf("rule %s: health %q %s", r.Name, r.Health, r.LastError)
			}
		}
	}
	if want := strings.Count(readFile(t, rulesFile), "- alert: "); n != want {
		t.Errorf("Prometheus loaded %d rules, want the %d of tailpath-alerts.yml", n, want)
	}

	// Every panel's query runs; those about the tailnet return data.
	for _, expr := range dashboardExprs(t) {
		q := strings.ReplaceAll(expr, "$instance", ".*")
		res, err := p.query(q)
		if err != nil {
			t.Errorf("dashboard query refused: %v", err)
			continue
		}
		if strings.Contains(q, "tailpath_peers{") && len(res) == 0 {
			t.Errorf("dashboard query %s returned nothing", q)
		}
	}
}

// TestServeRealTailscaledRestart runs tailpath serve against a real
// tailscaled (built from the pinned module, joined to the lab), stops the
// daemon and starts it again on the same socket and state: /metrics keeps
// answering, says tailscaled is down meanwhile, and has the peers again
// after the restart, without serve being restarted.
func TestServeRealTailscaledRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds tailscaled and joins it to the lab tailnet; run without -short")
	}
	tailscaled, tailscale := buildTailscale(t)
	l := startTestLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sockDir, err := os.MkdirTemp("", "tp-serve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "ts.sock")
	stateDir := t.TempDir()
	env := labtest.DaemonEnv(l)
	d := startTailscaled(t, tailscaled, stateDir, sock, env)
	up := exec.CommandContext(ctx, tailscale, "--socket", sock, "up", "--login-server", l.ControlURL, "--hostname", "serve-ts", "--reset")
	up.Env = append(os.Environ(), env...)
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("tailscale up: %v\n%s\ntailscaled log tail:\n%s", err, out, d.tail(30))
	}

	s := startServe(t, strings.NewReader(""), "--socket", sock, "--interval", "300ms", "--no-tuning", "--ping-every", "0")
	peers := func(f map[string]*dto.MetricFamily) float64 {
		var n float64
		for _, w := range []string{"direct", "peer-relay", "derp", "idle", "offline"} {
			v, _ := value(f, "tailpath_peers", "path", w)
			n += v
		}
		return n
	}
	s.waitScrape(t, "the real tailscaled's 5 lab peers", func(f map[string]*dto.MetricFamily) bool {
		return is(f, 1, "tailpath_tailscaled_up") && peers(f) == 5 && is(f, 1, "tailpath_tailscaled_state_info", "state", "Running")
	})

	d.stop()
	f := s.waitScrape(t, "tailscaled down", func(f map[string]*dto.MetricFamily) bool { return is(f, 0, "tailpath_tailscaled_up") })
	if _, ok := value(f, "tailpath_peer_path_info"); ok {
		t.Errorf("peers still reported with tailscaled stopped")
	}
	if _, ok := value(f, "tailpath_snapshot_timestamp_seconds"); !ok {
		t.Errorf("the last snapshot's time is gone with tailscaled stopped")
	}
	if code, h := s.get(t, "/healthz"); code != http.StatusOK || !strings.Contains(h, `"tailscaled":"down"`) || !strings.Contains(h, sock) {
		t.Errorf("/healthz with tailscaled stopped: %d %s", code, h)
	}

	d2 := startTailscaled(t, tailscaled, stateDir, sock, env)
	s.waitScrape(t, "tailscaled and its peers back", func(f map[string]*dto.MetricFamily) bool {
		return is(f, 1, "tailpath_tailscaled_up") && peers(f) == 5
	})
	log := s.stderr.String()
	if strings.Count(log, "tailpath serve: tailscaled up") != 2 || !strings.Contains(log, "tailscaled down: failed to connect to local tailscaled") {
		t.Errorf("serve's log does not show tailscaled going and coming back:\n%s\ntailscaled log tail:\n%s", log, d2.tail(10))
	}
}
