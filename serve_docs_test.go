package main

// Tests of what docs/ ships for tailpath serve: the alerting rules (with
// promtool and their unit tests) and the systemd unit. That the
// dashboard, the rules and docs/metrics.md name only the metric families
// tailpath exports is internal/metrics' TestDocsNameRealMetrics.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

const (
	rulesFile     = "docs/prometheus/tailpath-alerts.yml"
	rulesTestFile = "docs/prometheus/tailpath-alerts.test.yml"
	dashboardFile = "docs/grafana/tailpath.json"
	metricsDoc    = "docs/metrics.md"
	unitFile      = "docs/systemd/tailpath-serve.service"
)

var promtoolOnce struct {
	sync.Once
	path string
	err  error
}

// promtool returns the path of promtool (Debian's prometheus package,
// installed by .ci/run), skipping t when it is absent.
func promtool(t *testing.T) string {
	t.Helper()
	promtoolOnce.Do(func() { promtoolOnce.path, promtoolOnce.err = exec.LookPath("promtool") })
	if promtoolOnce.err != nil {
		t.Skipf("skipping: promtool is not installed (apt-get install prometheus; .ci/run does): %v", promtoolOnce.err)
	}
	return promtoolOnce.path
}

// checkMetricsWithPromtool runs `promtool check metrics` on a scrape in
// the text format and fails t on any complaint, lint problems included.
func checkMetricsWithPromtool(t *testing.T, body string) {
	t.Helper()
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestAlertRules checks the alerting rules with promtool and runs their
// unit tests, which make every alert fire (and not fire) on series shaped
// like tailpath serve's.
func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTestFile}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Every alert has a unit test.
	rules, tests := readFile(t, rulesFile), readFile(t, rulesTestFile)
	for _, m := range regexp.MustCompile(`(?m)^\s*- alert: (\w+)`).FindAllStringSubmatch(rules, -1) {
		if !strings.Contains(tests, "alertname: "+m[1]+"\n") {
			t.Errorf("alert %s has no test in %s", m[1], rulesTestFile)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dashboardExprs returns every PromQL expression of the Grafana dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(readFile(t, dashboardFile)), &doc); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if e, ok := v["expr"].(string); ok {
				exprs = append(exprs, e)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	return exprs
}

// TestSystemdUnit: docs/systemd/tailpath-serve.service passes
// systemd-analyze verify without a complaint (with ExecStart pointed at a
// binary that exists here).
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skipf("skipping: systemd-analyze is not installed: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(readFile(t, unitFile), "/usr/local/bin/tailpath", exe)
	// The unit as shipped, and as its comment says to change it for the
	// control API.
	const cred = "#LoadCredential=tailscale-api-key:/etc/tailpath/api-key"
	if !strings.Contains(unit, cred) {
		t.Fatalf("%s lacks %q, which its comment names", unitFile, cred)
	}
	keyFile := filepath.Join(t.TempDir(), "api-key")
	if err := os.WriteFile(keyFile, []byte("tskey-api-x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withAPI := strings.Replace(unit, cred, "LoadCredential=tailscale-api-key:"+keyFile, 1)
	withAPI = strings.Replace(withAPI, "serve --listen 127.0.0.1:9473", "serve --listen 127.0.0.1:9473 --api-key-file ${CREDENTIALS_DIRECTORY}/tailscale-api-key", 1)
	for name, text := range map[string]string{"as shipped": unit, "with the API key": withAPI} {
		path := filepath.Join(t.TempDir(), "tailpath-serve.service")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "verify", path).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify %s (%s): %v\n%s", unitFile, name, err, out)
		}
	}
}
