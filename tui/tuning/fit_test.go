package tuning

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// userspaceRoot is the repo's DSM 7.2 root whose tailscaled runs in
// userspace networking (read only here).
const userspaceRoot = "../../sysctl/testdata/roots/dsm-7.2-userspace"

// paneCases are the reports the width tests lay out: the sample host, the
// demo's seed NAS, the userspace NAS, and connections whose remotes are
// the longest there are (IPv6 with a five-digit port).
func paneCases(t *testing.T) map[string]testHost {
	t.Helper()
	sample, _ := fixture(t, true)
	seed, err := seedNAS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	seed.Now, seed.Inputs.Crypto = sample.Now, fixedCrypto
	userspace := testHost{Control: tune.Control{Inputs: tune.Inputs{Host: sysctl.AtRoot(userspaceRoot), Sandbox: true, Bandwidth: 1e9, RTT: 2 * time.Millisecond,
		BandwidthSource: "flag --bandwidth", RTTSource: "flag --rtt", Crypto: fixedCrypto}, StatePath: sample.StatePath}, root: true, Now: sample.Now}
	long, _ := fixture(t, true)
	conns := long.Inputs.Conns
	long.Inputs.Conns = func(ctx context.Context) ([]sockdiag.Conn, error) {
		cs, err := conns(ctx)
		for i := range cs {
			cs[i].Remote = netip.MustParseAddrPort("[fd7a:115c:a1e0:ab12:4843:cd96:6258:b240]:44512")
		}
		return cs, err
	}
	long.Inputs.Bandwidth, long.Inputs.BandwidthSource = 0, ""
	return map[string]testHost{"sample": sample, "seed NAS": seed, "userspace NAS": userspace, "long remotes": long}
}

// TestPaneFitsWidth: at 79, 80 and 81 columns every line the pane
// lays out fits, so the viewport never breaks a table's header or a value
// across lines: tables shorten, drop or move columns, prose is wrapped
// at words by the pane itself.
func TestPaneFitsWidth(t *testing.T) {
	for name, o := range paneCases(t) {
		for _, w := range []int{79, 80, 81} {
			p := New(o.options())
			p.SetSize(w, 200)
			p.Update(gather(t, o))
			for i, l := range p.render() {
				if lw := ansi.StringWidth(l); lw > w {
					t.Errorf("%s at %d columns: line %d is %d wide: %q", name, w, i, lw, ansi.Strip(l))
				}
			}
			v := tuitest.Unstyled(p.View())
			for _, want := range []string{"key", "current", "recommended"} {
				if !strings.Contains(v, want) {
					t.Errorf("%s at %d columns: no %q header", name, w, want)
				}
			}
		}
	}
}

// TestTuningGolden80x24: the demo's seed NAS in the Tuning pane at 80×24,
// then the userspace NAS whole at 80 columns (its verdict first).
func TestTuningGolden80x24(t *testing.T) {
	cases := paneCases(t)
	for _, tt := range []struct {
		name string
		h    int
	}{{"seed NAS", 24}, {"userspace NAS", 60}} {
		t.Run(strings.ReplaceAll(tt.name, " ", "-"), func(t *testing.T) {
			o := cases[tt.name]
			tm := teatest.NewTestModel(t, tuitest.Host{Pane: New(o.options())}, teatest.WithInitialTermSize(80, tt.h))
			tm.Send(gather(t, o))
			tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
			final := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(tuitest.Host)
			teatest.RequireEqualOutput(t, []byte(tuitest.Unstyled(final.View().Content)))
		})
	}
}
