package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// What docs/ ships for tailpath serve, from the repository's root.
var (
	rulesFile     = filepath.Join("..", "..", "docs", "prometheus", "tailpath-alerts.yml")
	dashboardFile = filepath.Join("..", "..", "docs", "grafana", "tailpath.json")
	metricsDoc    = filepath.Join("..", "..", "docs", "metrics.md")
)

var metricName = regexp.MustCompile(`\btailpath_[a-z0-9_]+`)

// TestDocsNameRealMetrics: the Grafana dashboard, the alerting rules and
// docs/metrics.md name only metrics tailpath exports (the families
// table), and docs/metrics.md describes every one with its type.
func TestDocsNameRealMetrics(t *testing.T) {
	known := map[string]Family{}
	for _, f := range families {
		known[f.Name] = f
	}
	sources := map[string]string{}
	for _, file := range []string{dashboardFile, rulesFile, metricsDoc} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sources[file] = string(b)
	}
	if n := strings.Count(sources[dashboardFile], `"expr"`); n < 20 {
		t.Fatalf("%s: only %d expressions", dashboardFile, n)
	}
	for file, text := range sources {
		for _, name := range metricName.FindAllString(text, -1) {
			if _, ok := known[name]; !ok {
				t.Errorf("%s names %s, which tailpath does not export", file, name)
			}
		}
	}
	doc := sources[metricsDoc]
	for name, f := range known {
		// docs/metrics.md has a table row per family: | `name` | type | labels | meaning |
		row := regexp.MustCompile("(?m)^\\| `" + name + "` \\| (gauge|counter) \\|")
		m := row.FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("%s has no row for %s", metricsDoc, name)
			continue
		}
		if want := strings.ToLower(f.Type.String()); m[1] != want {
			t.Errorf("%s says %s is a %s; it is a %s", metricsDoc, name, m[1], want)
		}
	}
}
