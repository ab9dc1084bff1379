//go:build !windows

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/cli"
)

// TestServeForeignHost is the DNS rebinding attack: a page whose name now
// resolves to 127.0.0.1 asks serve with its own name as Host. serve
// answers 421 and serves nothing; with its own address it answers.
func TestServeForeignHost(t *testing.T) {
	lapi := statusFixture(t, "direct") // tailscaled, which registered no forwarded flow
	s := startServe(t, nil, "--no-tuning", "--socket", lapi.Socket)
	get := func(path, host string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, path := range []string{"/metrics", "/snapshot.json", "/healthz", "/"} {
		if code, body := get(path, "rebind.attacker.example:9473"); code != http.StatusMisdirectedRequest || strings.Contains(body, "tailpath_") {
			t.Errorf("GET %s, Host rebind.attacker.example: %d %q; want 421", path, code, body)
		}
	}
	if code, body := get("/metrics", ""); code != http.StatusOK {
		t.Errorf("GET /metrics by address: %d %q", code, body)
	}
	if code, _ := get("/healthz", "localhost:9473"); code != http.StatusOK {
		t.Errorf("GET /healthz, Host localhost: %d", code)
	}
}

// TestServeNoSnapshot: --no-snapshot turns /snapshot.json off.
func TestServeNoSnapshot(t *testing.T) {
	lapi := statusFixture(t, "direct")
	s := startServe(t, nil, "--no-tuning", "--no-snapshot", "--socket", lapi.Socket)
	if code, body := s.get(t, "/snapshot.json"); code != http.StatusNotFound || !strings.Contains(body, "--no-snapshot") {
		t.Errorf("GET /snapshot.json with --no-snapshot: %d %q", code, body)
	}
}

// nonLoopbackIPv4 is an IPv4 address of this machine that is not
// loopback, or "" when it has none.
func nonLoopbackIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestServeTokenPrometheus: serve on an address that is neither loopback
// nor the tailnet refuses callers without the --token-file token (401)
// and answers a real Prometheus scraping with the docs' authorization
// setting (docs/metrics.md), whose job is up while a job without it is
// down.
func TestServeTokenPrometheus(t *testing.T) {
	ip := nonLoopbackIPv4()
	if ip == "" {
		t.Skip("skipping: this machine has no address but loopback to listen on")
	}
	dir := t.TempDir()
	const token = "tp-test-token-0123456789"
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- dispatch(ctx, []string{"serve", "--listen", ip + ":0", "--token-file", tokenFile, "--no-tuning", "--socket", filepath.Join(dir, "none.sock")},
			cli.IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr})
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d:\n%s", code, stderr.String())
		}
	}()
	var target string
	re := regexp.MustCompile(`listening on http://(\S+:\d+)`)
	eventually(t, time.Minute, "serve to listen", func() (bool, string) {
		m := re.FindStringSubmatch(stderr.String())
		if m != nil {
			target = m[1]
		}
		return m != nil, stderr.String()
	})
	for _, tt := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer nope", 401}, {"Bearer " + token, 200}} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+target+"/metrics", nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("GET /metrics from %s with %q: %d %q, want %d", ip, tt.auth, res.StatusCode, b, tt.want)
		}
	}
	p := startPrometheusScraping(t, fmt.Sprintf(`
  - job_name: with-token
    authorization:
      type: Bearer
      credentials_file: %q
    static_configs:
      - targets: [%q]
  - job_name: without-token
    static_configs:
      - targets: [%q]
`, tokenFile, target, target))
	eventually(t, 2*time.Minute, "the token job up and the other down", func() (bool, string) {
		with, err1 := p.query(`up{job="with-token"}`)
		without, err2 := p.query(`up{job="without-token"}`)
		if err1 != nil || err2 != nil || len(with) != 1 || len(without) != 1 {
			return false, fmt.Sprint(with, without, err1, err2)
		}
		return with[0].Value[1] == "1" && without[0].Value[1] == "0", fmt.Sprint(with, without)
	})
}

// TestMetricsDocScrapeConfigs: every Prometheus configuration
// docs/metrics.md shows (one per way of reaching serve) passes promtool
// check config.
func TestMetricsDocScrapeConfigs(t *testing.T) {
	bin := promtool(t)
	doc := readFile(t, metricsDoc)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(doc, -1)
	rules, _ := filepath.Abs(rulesFile)
	cred := filepath.Join(t.TempDir(), "token")
	os.WriteFile(cred, []byte("x\n"), 0o600)
	n := 0
	for _, b := range blocks {
		if !strings.Contains(b[1], "scrape_configs:") {
			continue
		}
		n++
		cfg := strings.ReplaceAll(b[1], "tailpath-alerts.yml", rules)
		cfg = regexp.MustCompile(`credentials_file: \S+`).ReplaceAllString(cfg, "credentials_file: "+cred)
		path := filepath.Join(t.TempDir(), "prometheus.yml")
		writeFile(t, path, cfg)
		if out, err := exec.Command(bin, "check", "config", path).CombinedOutput(); err != nil {
			t.Errorf("promtool check config on docs/metrics.md's\n%s\n%v: %s", b[1], err, out)
		}
	}
	if n < 4 {
		t.Errorf("docs/metrics.md shows %d Prometheus configurations; want the fleet one and one per way of reaching serve", n)
	}
}

// TestServeWithoutTailscaled: a serve that never reached tailscaled (a
// wrong --socket, a socket not shared with a container whose tailscaled
// forwards tailnet connections to loopback) cannot tell a loopback
// caller from a peer, so it serves neither /metrics nor /snapshot.json
// (503, saying why), only /healthz, which says tailscaled is down.
func TestServeWithoutTailscaled(t *testing.T) {
	s := startServe(t, nil, "--no-tuning", "--socket", filepath.Join(t.TempDir(), "none.sock"))
	for _, path := range []string{"/metrics", "/snapshot.json"} {
		if code, body := s.get(t, path); code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot tell whether this loopback caller") || strings.Contains(body, "tailpath_") {
			t.Errorf("GET %s: %d %q; want 503 saying why", path, code, body)
		}
	}
	if code, body := s.get(t, "/healthz"); code != http.StatusOK || !strings.Contains(body, `"tailscaled":"down"`) {
		t.Errorf("GET /healthz: %d %q", code, body)
	}
}
