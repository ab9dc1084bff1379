//go:build !windows

package main

// Helpers for the tests that run tailpath serve in this process and
// scrape it (serve_pty_test.go, serve_integration_test.go).

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// serving is a `tailpath serve` run in this process (through run).
type serving struct {
	base   string // http://127.0.0.1:PORT
	stderr *syncBuffer
	cancel context.CancelFunc
	done   chan int
}

// startServe runs `tailpath serve --listen 127.0.0.1:0 args…` until the
// test ends and returns it once it listens.
func startServe(t *testing.T, stdin io.Reader, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{stderr: &syncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() {
		s.done <- dispatch(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), cli.IO{Stdin: stdin, Stdout: io.Discard, Stderr: s.stderr})
	}()
	t.Cleanup(func() { s.stop(t) })
	addr := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	deadline := time.Now().Add(time.Minute)
	for {
		if m := addr.FindStringSubmatch(s.stderr.String()); m != nil {
			s.base = m[1]
			return s
		}
		select {
		case code := <-s.done:
			t.Fatalf("serve exited %d before listening:\n%s", code, s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never said where it listens:\n%s", s.stderr.String())
		}
	}
}

// stop ends serve (as SIGTERM does) and checks it exits 0.
func (s *serving) stop(t *testing.T) {
	s.cancel()
	select {
	case code, ok := <-s.done:
		if ok && code != cli.ExitOK {
			t.Errorf("serve exited %d:\n%s", code, s.stderr.String())
		}
		close(s.done)
	case <-time.After(time.Minute):
		t.Errorf("serve did not stop within a minute of its context ending")
	}
}

// get fetches path from serve and returns the status code and body.
func (s *serving) get(t *testing.T, path string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

// scrape fetches /metrics (text format) and parses it.
func (s *serving) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := s.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams
}

// value is the value of the series of name whose labels include
// labels ("name", "value", …); ok false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (v float64, ok bool) {
	mf := fams[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// waitScrape scrapes until cond holds, failing after a minute; it returns the
// scrape that satisfied it.
func (s *serving) waitScrape(t *testing.T, what string, cond func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		fams := s.scrape(t)
		if cond(fams) {
			return fams
		}
		if time.Now().After(deadline) {
			_, body := s.get(t, "/metrics")
			t.Fatalf("timed out waiting for %s; last scrape (tailpath_ lines):\n%s\nserve's stderr:\n%s", what, tailpathLines(body), s.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tailpathLines keeps the tailpath_ series of a scrape, for messages.
func tailpathLines(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "tailpath_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// is reports whether the series name{labels} has value want.
func is(fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) bool {
	v, ok := value(fams, name, labels...)
	return ok && v == want
}

// writeFile writes a test file, failing t on error.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshotReasons reads body as a snapshot file (the format of status
// --save), diagnoses it as status --from does, and returns every peer's
// reason by name.
func snapshotReasons(t *testing.T, body string) map[string]probes.ReasonID {
	t.Helper()
	f, err := snapshot.Decode([]byte(body))
	if err != nil {
		t.Fatalf("/snapshot.json is not a snapshot: %v\n%.2000s", err, body)
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		t.Fatalf("diagnosing /snapshot.json: %v", err)
	}
	got := map[string]probes.ReasonID{}
	for _, p := range ls.Peers {
		got[string(p.Name)] = p.Verdict.Reason
	}
	return got
}
