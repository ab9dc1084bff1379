//go:build !windows

package main

// The command-level benchmarks of docs/perf.md's "As fast as the CLI"
// (issue 31): `tailpath status --json` against `tailscale status --json`
// (built from the pinned module) at 4 and 1,000 peers, the fake LocalAPI
// answering as tailscaled v1.102 and as v1.104, in a process of its own;
// and `tailpath version` against `tailscale version`. Each is a test that
// skips unless TAILPATH_BENCH=1, and asserts nothing about time: it logs
// interleaved medians and their ratio. Not on Windows (peak RSS comes
// from getrusage).
//
//	TAILPATH_BENCH=1 go test -run 'TestStatusBench|TestVersionBench' -v -count=1 .

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tailpath/tailpath/probes/probestest"
)

// fakeProcessEnv set to "<peers>,<daemon>" makes TestFakeLocalAPIProcess
// serve probestest.ManyPeers(peers) as that daemon version, print its
// socket on stdout and serve until stdin closes: the fake LocalAPI as a
// process of its own, as tailscaled is, so its CPU is not the test's.
const fakeProcessEnv = "TAILPATH_TEST_FAKE_LOCALAPI"

// TestFakeLocalAPIProcess is not a test: it is the fake LocalAPI's
// process (startFakeProcess), and skips otherwise.
func TestFakeLocalAPIProcess(t *testing.T) {
	spec := os.Getenv(fakeProcessEnv)
	if spec == "" {
		t.Skip("skipping: the fake LocalAPI's process for the benchmarks (" + fakeProcessEnv + ")")
	}
	n, daemon, _ := strings.Cut(spec, ",")
	peers, err := strconv.Atoi(n)
	if err != nil {
		t.Fatalf("%s=%q: %v", fakeProcessEnv, spec, err)
	}
	fix := probestest.ManyPeers(peers)
	fix.Daemon = daemon
	srv := probestest.New(t, fix)
	fmt.Println("SOCKET", srv.Socket)
	io.Copy(io.Discard, os.Stdin)
}

// startFakeProcess runs the fake LocalAPI of n peers as daemon (a
// probestest.Daemon* version) in a child process and returns its socket;
// the process ends with t.
func startFakeProcess(t *testing.T, n int, daemon string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeLocalAPIProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), fakeProcessEnv+"="+strconv.Itoa(n)+","+daemon)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sock, ok := strings.CutPrefix(sc.Text(), "SOCKET "); ok {
			go io.Copy(io.Discard, stdout)
			return sock
		}
	}
	t.Fatalf("the fake LocalAPI process printed no socket: %v", sc.Err())
	return ""
}

// run1 is one run of a command: its wall time, CPU (user+system) and
// peak RSS.
type run1 struct {
	wall, cpu time.Duration
	rssKiB    int64
}

// timeCommand runs name args once and measures it.
func timeCommand(ctx context.Context, t *testing.T, name string, args ...string) run1 {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	r := run1{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rssKiB = int64(ru.Maxrss) // KiB on Linux
	}
	return r
}

func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// loadAvg is /proc/loadavg's first three fields ("" elsewhere).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// compareCommands runs each of cmds n times, interleaved (one of each per
// round, after one warm-up each), and logs each one's median wall time,
// CPU and peak RSS, and its ratio to the last (the reference).
func compareCommands(ctx context.Context, t *testing.T, label string, n int, cmds [][]string) {
	t.Helper()
	for _, c := range cmds {
		timeCommand(ctx, t, c[0], c[1:]...)
	}
	runs := make([][]run1, len(cmds))
	for range n {
		for i, c := range cmds {
			runs[i] = append(runs[i], timeCommand(ctx, t, c[0], c[1:]...))
		}
	}
	type med struct {
		wall, cpu time.Duration
		rss       int64
	}
	meds := make([]med, len(cmds))
	for i, rs := range runs {
		var wall, cpu []time.Duration
		var rss []int64
		for _, r := range rs {
			wall, cpu, rss = append(wall, r.wall), append(cpu, r.cpu), append(rss, r.rssKiB)
		}
		meds[i] = med{median(wall), median(cpu), median(rss)}
	}
	ref := meds[len(meds)-1]
	for i, m := range meds {
		t.Logf("BENCH %s n=%d load %s: %s: wall %v (%.2fx), CPU %v (%.2fx), peak RSS %.1f MiB",
			label, n, loadAvg(), strings.Join(cmds[i], " "), m.wall.Round(10*time.Microsecond), float64(m.wall)/float64(ref.wall),
			m.cpu.Round(10*time.Microsecond), float64(m.cpu)/float64(ref.cpu), float64(m.rss)/1024)
	}
}

// TestStatusBench (TAILPATH_BENCH=1) times `tailpath status --json`
// against `tailscale status --json` at 4 and 1,000 peers (TAILPATH_BENCH_PEERS,
// comma-separated), the fake LocalAPI in its own process answering as
// tailscaled v1.102 and v1.104 (TAILPATH_BENCH_DAEMONS), interleaved,
// TAILPATH_BENCH_N rounds (default 30). TAILPATH_BENCH_ALSO=bin1,bin2 times
// other tailpath builds in the same rounds.
func TestStatusBench(t *testing.T) {
	if os.Getenv("TAILPATH_BENCH") == "" {
		t.Skip("skipping: a benchmark; set TAILPATH_BENCH=1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	_, tailscale := buildTailscale(t)
	tailpath := buildTailpath(ctx, t)
	peers := []int{4, 1000}
	if v := os.Getenv("TAILPATH_BENCH_PEERS"); v != "" {
		peers = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("TAILPATH_BENCH_PEERS: %v", err)
			}
			peers = append(peers, n)
		}
	}
	daemons := []string{probestest.Daemon102, probestest.Daemon104}
	if v := os.Getenv("TAILPATH_BENCH_DAEMONS"); v != "" {
		daemons = strings.Split(v, ",")
	}
	bins := installed(t, append([]string{tailscale, tailpath}, benchAlso()...)...)
	tailscale, tailpath, also := bins[0], bins[1], bins[2:]
	for _, n := range peers {
		for _, d := range daemons {
			sock := startFakeProcess(t, n, d)
			var cmds [][]string
			for _, bin := range append([]string{tailpath}, also...) {
				cmds = append(cmds, []string{bin, "status", "--json", "--socket", sock})
			}
			cmds = append(cmds, []string{tailscale, "--socket", sock, "status", "--json"})
			compareCommands(ctx, t, fmt.Sprintf("status peers=%d daemon=%s", n, d), benchRuns(), cmds)
		}
	}
}

// TestVersionBench (TAILPATH_BENCH=1) times `tailpath version` against
// `tailscale version`: process start-up, interleaved.
func TestVersionBench(t *testing.T) {
	if os.Getenv("TAILPATH_BENCH") == "" {
		t.Skip("skipping: a benchmark; set TAILPATH_BENCH=1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	_, tailscale := buildTailscale(t)
	tailpath := buildTailpath(ctx, t)
	bins := installed(t, tailpath, tailscale)
	tailpath, tailscale = bins[0], bins[1]
	for _, bin := range []string{tailpath, tailscale} {
		if st, err := os.Stat(bin); err == nil {
			t.Logf("%s: %.1f MB", bin, float64(st.Size())/1e6)
		}
	}
	compareCommands(ctx, t, "version", benchRuns(), [][]string{{tailpath, "version"}, {tailscale, "version"}})
}
