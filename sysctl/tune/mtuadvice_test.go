package tune

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
)

// mtuAdvice finds a tunnel MTU in advice: TS_DEBUG_MTU=N, "mtu N" (as in
// ip link set … mtu N), "MTU of N", "MTU to N".
var mtuAdvice = regexp.MustCompile(`(?i)(?:ts_debug_mtu\s*=\s*|\bmtu\s+(?:of\s+|to\s+)?)(\d+)`)

// checkMTUAdvice fails when s names an MTU below 1280: below IPv6's minimum
// Linux takes IPv6 off the interface, and Tailscale does not support it.
func checkMTUAdvice(t *testing.T, where, s string) int {
	t.Helper()
	n := 0
	for _, m := range mtuAdvice.FindAllStringSubmatch(s, -1) {
		n++
		if v, _ := strconv.Atoi(m[1]); v < MinTunMTU {
			t.Errorf("%s advises MTU %d (%q) in:\n%s", where, v, m[0], s)
		}
	}
	return n
}

// TestNoMTUAdviceBelow1280 goes over every fix string tailpath can print
// about MTU (the --mtu-probe verdicts for every path size from 0 to 9000
// bytes and tunnel MTUs from 1200 to 9000, the per-connection MTU fix,
// the report's summary and recommendation, the userspace fixes) and the
// fixes in docs/tuning.md: none names a tunnel MTU below 1280.
func TestNoMTUAdviceBelow1280(t *testing.T) {
	named := 0
	for _, tun := range []int{1200, 1280, 1400, 1420, 1500, 9000} {
		for wire := 0; wire <= 9000; wire++ {
			r := MTUProbe{LargestWire: wire, Capped: wire == 9000}
			firstBad := 0
			if wire < 9000 {
				firstBad = max(wire+1, 576)
			}
			r.judge(tun, firstBad)
			s := r.Fix
			if c := r.Clamp; c != nil {
				s += "\n" + strings.Join(append(c.NFT, c.IPTables...), "\n")
				if c.MSS4 != wire-40 || c.MSS6 != wire-60 {
					t.Fatalf("clamp %+v for %d bytes", c, wire)
				}
			}
			named += checkMTUAdvice(t, "mtu-probe fix (tun "+strconv.Itoa(tun)+", path "+strconv.Itoa(wire)+")", s)
			if wire < SupportedWire && (!r.Trouble || !r.BelowSupported || !strings.Contains(r.Verdict, "below what Tailscale supports")) {
				t.Fatalf("path %d: %+v", wire, r)
			}
		}
	}
	// A whole probe over a path of every size around the limit, as the
	// command runs it.
	for wire := 1200; wire <= 1500; wire++ {
		r, err := ProbeMTU(context.Background(), "nas", pathPing(wire, false), MTUProbeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.LargestWire != wire && wire < 1360 {
			t.Fatalf("path %d measured as %d", wire, r.LargestWire)
		}
		named += checkMTUAdvice(t, "mtu-probe "+strconv.Itoa(wire), r.Fix)
	}
	// Per connection: the MTU verdict's fix, with and without TCP's own
	// probing, whatever tailscale0's MTU.
	info := &sockdiag.TCPInfo{CAState: 4, Retransmits: 3, Backoff: 3, Unacked: ptr(uint32(11)), SndMSS: ptr(uint32(1228)), PMTU: ptr(uint32(1280))}
	for _, probing := range []bool{false, true} {
		for _, link := range []uint32{0, 1200, 1280, 1500} {
			v := sockdiag.Classify(sockdiag.Conn{Info: info}, sockdiag.Limits{MTUProbing: probing, LinkMTU: link})
			if v.Kind != sockdiag.VerdictMTU {
				t.Fatalf("verdict %+v, want MTU trouble", v)
			}
			named += checkMTUAdvice(t, "connection fix", v.Fix)
			if !strings.Contains(v.Fix, "do not lower the tunnel MTU below 1280") {
				t.Errorf("fix %q", v.Fix)
			}
		}
	}
	// The report: its summary line and the recommendation's reasons.
	for _, probing := range []int64{0, 1} {
		rep := Report{Settings: sysctl.Settings{MTUProbing: probing},
			Conns: []sockdiag.Conn{{Info: info, Verdict: sockdiag.Classify(sockdiag.Conn{Info: info}, sockdiag.Limits{})}}}
		named += checkMTUAdvice(t, "report verdict", rep.Verdict())
	}
	rec, err := sysctl.Recommend(sysctl.Settings{Raw: map[string]string{sysctl.KeyMTUProbing: "0"}}, sysctl.Target{Bandwidth: 1e9, RTT: 20 * time.Millisecond, MTUTrouble: 1}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.Changes {
		named += checkMTUAdvice(t, "change "+c.Key, c.Why)
	}
	for _, p := range []sysctl.Platform{{Kind: sysctl.PlatformDSM}, {}} {
		named += checkMTUAdvice(t, "userspace fix", strings.Join(tunFix(p), "\n"))
	}
	// The documentation of those fixes.
	b, err := os.ReadFile("../../docs/tuning.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		named += checkMTUAdvice(t, "docs/tuning.md:"+strconv.Itoa(i+1), line)
	}
	if named == 0 {
		t.Fatal("no string named an MTU: the pattern finds nothing")
	}
	t.Logf("%d MTUs named, none below %d", named, MinTunMTU)
}
