//go:build !windows

package main

// The command-level benchmarks of docs/perf.md's "As fast as the CLI"
// (issue 31): `tailpath status --json` against `tailscale status --json`
// (built from the pinned module) at 4 and 1,000 peers, the fake LocalAPI
// answering as tailscaled v1.102 and as v1.104, in a process of its own;
// and `tailpath version` against `tailscale version`. Each is a test that
// skips unless TAILPATH_BENCH=1, and asserts nothing about time: it logs
// interleaved medians and their ratio. Not on Windows (tailscale and
// tailpath reach a LocalAPI there by named pipe, not by the fake's unix
// socket).
//
//	TAILPATH_BENCH=1 go test -run 'TestStatusBench|TestVersionBench' -v -count=1 .

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
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

// run1 is one run of a command: its wall time and CPU (user+system).
// (Not its peak RSS: a child of a Go process is started with
// CLONE_VFORK|CLONE_VM, and the kernel counts the parent's resident set,
// the test's, into the child's ru_maxrss at its exec.)
type run1 struct {
	wall, cpu time.Duration
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
	return run1{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

func median[T int64 | float64 | time.Duration](xs []T) T {
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

// benchCmd is one command compareCommands times: a binary, as copies of
// it used in turn round by round (benchCopies), and its arguments.
type benchCmd struct {
	bins []string
	args []string
}

// String names the command by its first copy.
func (c benchCmd) String() string { return strings.Join(append([]string{c.bins[0]}, c.args...), " ") }

// compareCommands runs each of cmds n times, interleaved (one of each per
// round, in an order shuffled per round, after one warm-up of each copy),
// and logs each one's median wall time and CPU, their ratios to the last
// command's (the reference), and the median of the ratios within each
// round (less moved by the machine's load drifting over the run). The
// order is shuffled because a command run right after another finds the
// daemon, the page cache and the CPUs as that one left them; the seed is
// fixed, so every run uses the same orders. Round r runs copy r mod k of
// each binary: on this machine two copies of the same bytes, each written
// and read the same way, start up to 4% apart for the whole of a run
// (where the page cache happened to put each; docs/perf.md, round 9), so
// one copy per binary would carry that into the ratio.
func compareCommands(ctx context.Context, t *testing.T, label string, n int, cmds []benchCmd) {
	t.Helper()
	for _, c := range cmds {
		for _, bin := range c.bins {
			timeCommand(ctx, t, bin, c.args...)
		}
	}
	rng := rand.New(rand.NewPCG(31, uint64(len(cmds))))
	runs := make([][]run1, len(cmds))
	for r := range n {
		for _, i := range rng.Perm(len(cmds)) {
			c := cmds[i]
			runs[i] = append(runs[i], timeCommand(ctx, t, c.bins[r%len(c.bins)], c.args...))
		}
	}
	ref := runs[len(runs)-1]
	refWall, refCPU := medianOf(ref, func(r run1) time.Duration { return r.wall }), medianOf(ref, func(r run1) time.Duration { return r.cpu })
	for i, rs := range runs {
		wall, cpu := medianOf(rs, func(r run1) time.Duration { return r.wall }), medianOf(rs, func(r run1) time.Duration { return r.cpu })
		paired := make([]float64, len(rs))
		for k := range rs {
			paired[k] = float64(rs[k].wall) / float64(ref[k].wall)
		}
		t.Logf("BENCH %s n=%d copies=%d load %s: %s: wall %v (%.2fx; per round %.3fx), CPU %v (%.2fx)",
			label, n, len(cmds[i].bins), loadAvg(), cmds[i], wall.Round(10*time.Microsecond), float64(wall)/float64(refWall),
			median(paired), cpu.Round(10*time.Microsecond), float64(cpu)/float64(refCPU))
	}
}

// medianOf is the median of f over rs.
func medianOf(rs []run1, f func(run1) time.Duration) time.Duration {
	xs := make([]time.Duration, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return median(xs)
}

// TestStatusBench (TAILPATH_BENCH=1) times `tailpath status --json`
// against `tailscale status --json` at 4 and 1,000 peers (TAILPATH_BENCH_PEERS,
// comma-separated), the fake LocalAPI in its own process answering as
// tailscaled v1.102 and v1.104 (TAILPATH_BENCH_DAEMONS), interleaved,
// TAILPATH_BENCH_N rounds (default 30), each on one of
// TAILPATH_BENCH_COPIES copies of every binary in turn (default 4).
// TAILPATH_BENCH_ALSO=bin1,bin2 times other tailpath builds in the same
// rounds.
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
	bins := installedCopies(t, benchCopies(), append([]string{tailscale, tailpath}, benchAlso()...)...)
	tailscales, tailpaths := bins[0], bins[1:]
	for _, n := range peers {
		for _, d := range daemons {
			sock := startFakeProcess(t, n, d)
			var cmds []benchCmd
			for _, copies := range tailpaths {
				cmds = append(cmds, benchCmd{copies, []string{"status", "--json", "--socket", sock}})
			}
			cmds = append(cmds, benchCmd{tailscales, []string{"--socket", sock, "status", "--json"}})
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
	for _, bin := range []string{tailpath, tailscale} {
		if st, err := os.Stat(bin); err == nil {
			t.Logf("%s: %.1f MB", bin, float64(st.Size())/1e6)
		}
	}
	bins := installedCopies(t, benchCopies(), tailpath, tailscale)
	compareCommands(ctx, t, "version", benchRuns(), []benchCmd{{bins[0], []string{"version"}}, {bins[1], []string{"version"}}})
}
