package app

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/firmware"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/link"
	"github.com/tailpath/tailpath/tui/tuning"
)

// DemoTitle is the demo dashboard's title.
const DemoTitle = "tailpath demo (lab tailnet on 127.0.0.1)"

// demoReplaySpeed is how much faster than the board the demo replays the
// firmware scenario (about two minutes of the CoreS3 case at 1×).
const demoReplaySpeed = 1.0

// Tailnet addresses in the firmware scenario capture: the board itself and
// its two peers (peer 2 serves the file it downloads).
const (
	scenarioBoardIP = "100.64.0.9"
	scenarioPeer2IP = "100.64.0.2"
	scenarioPeer3IP = "100.64.0.3"
)

// Demo returns the demo's dashboard over a started lab: its observer as the
// tailscaled, the lab's control API (each node's own NetInfo) as the peers'
// side of each path, the bundled firmware's scenario as the board (Device
// and Log panes), and a sandbox copy of this host's /proc/sys as the
// Tuning pane's host. ctx bounds the replay.
func Demo(ctx context.Context, l *lab.Lab, interval time.Duration) (*Dashboard, error) {
	api, err := probes.NewControlAPI(l.ControlAPIConfig())
	if err != nil {
		return nil, err
	}
	d := &Dashboard{
		ControlAPI: api,
		Client:     l.Observer(),
		Socket:     l.ObserverSocket(),
		Interval:   interval,
		Title:      DemoTitle,
		Device:     &devlink.Source{Replay: pacedReplay(ctx, DemoScenario(ctx, l), demoReplaySpeed)},
	}
	opts, err := demoTuning(l)
	if err != nil {
		return nil, err
	}
	d.Tuning = &opts
	return d, nil
}

// DemoStatus is the demo's view once, headless (demo --status): the
// observer's snapshot with the lab's control-API facts of each peer,
// linked to the simulated board as it stands after its whole scenario,
// which is what the dashboard shows once the replay has ended. One
// snapshot, so rates read 0 and each peer's one path change is its path
// now.
func DemoStatus(ctx context.Context, l *lab.Lab) (*link.Snapshot, error) {
	snap, err := probes.Gather(ctx, l.Observer(), nil)
	if err != nil {
		return nil, err
	}
	if api, err := probes.NewControlAPI(l.ControlAPIConfig()); err == nil {
		facts, err := api.Fetch(ctx)
		st := probes.APIStatus{State: "ok"}
		if err != nil {
			st = probes.APIStatus{State: "error", Err: err.Error()}
		} else {
			st.At = facts.At
		}
		probes.ApplyPeerFacts(snap, facts, st)
	}
	var lines strings.Builder
	for _, sl := range DemoScenario(ctx, l) {
		lines.WriteString(sl.Text + "\n")
	}
	var linker link.Linker
	linker.SetDevice(ReadBoard(ctx, "-", 0, 0, strings.NewReader(lines.String())))
	return linker.SetSnapshot(snap), nil
}

// DemoScenario is the simulated CoreS3: the bundled firmware's scenario
// capture with its tailnet addresses moved onto the lab's. The board is the
// lab's DERP-only node (the embedded client that never advertised an
// endpoint), and the peer it downloads from is the observer.
func DemoScenario(ctx context.Context, l *lab.Lab) []firmware.ScenarioLine {
	m := map[string]string{}
	for _, p := range l.Peers() {
		switch p.Name {
		case lab.DERPName:
			m[scenarioBoardIP] = p.TailscaleIP.String()
		case lab.DirectName:
			m[scenarioPeer3IP] = p.TailscaleIP.String()
		}
	}
	if st, err := l.Observer().Status(ctx); err == nil && len(st.TailscaleIPs) > 0 {
		m[scenarioPeer2IP] = st.TailscaleIPs[0].String()
	}
	return relabelScenario(firmware.ScenarioLines(), m)
}

// demoTuning is the seed NAS (DSM on Linux 4.4, no BBR, 20 ms to its
// peer), its tailnet connections replayed from recorded tcp_info, in a
// sandbox copy in the lab's directory that apply and revert really write.
func demoTuning(l *lab.Lab) (tuning.Options, error) {
	dir := filepath.Join(l.Dir(), "tuning-sandbox")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return tuning.Options{}, fmt.Errorf("demo: tuning sandbox: %w", err)
	}
	opts, err := tuning.SeedNAS(dir)
	if err != nil {
		return tuning.Options{}, fmt.Errorf("demo: tuning sandbox: %w", err)
	}
	return opts, nil
}

// relabelScenario replaces whole tailnet addresses in the capture (from →
// to, all at once, so a replacement is never replaced again). Telemetry
// frames are decoded, their addresses changed, and written again with
// telemetry's own encoder, so each keeps a valid checksum.
func relabelScenario(lines []firmware.ScenarioLine, m map[string]string) []firmware.ScenarioLine {
	var pairs []string
	for from, to := range m {
		pairs = append(pairs, from, to)
	}
	r := strings.NewReplacer(pairs...)
	out := make([]firmware.ScenarioLine, len(lines))
	for i, l := range lines {
		out[i] = firmware.ScenarioLine{At: l.At, Text: relabelLine(l.Text, r)}
	}
	return out
}

// relabelLine is one line of relabelScenario.
func relabelLine(text string, r *strings.Replacer) string {
	replaced := r.Replace(text)
	at := telemetry.Index([]byte(text))
	if at < 0 || replaced == text {
		return replaced
	}
	f, err := telemetry.Parse([]byte(text[at:]))
	if err != nil {
		// Not a frame tailpath reads (the capture's deliberate corruptions):
		// left exactly as the board wrote it.
		return text
	}
	f.Net.IP = relabelAddr(f.Net.IP, r)
	f.Peer.IP = relabelAddr(f.Peer.IP, r)
	b, err := f.Append([]byte(r.Replace(text[:at])))
	if err != nil {
		return text
	}
	return string(b)
}

// relabelAddr is ip with r applied to its text; an invalid ip (absent
// field) stays invalid.
func relabelAddr(ip netip.Addr, r *strings.Replacer) netip.Addr {
	if !ip.IsValid() {
		return ip
	}
	if to, err := netip.ParseAddr(r.Replace(ip.String())); err == nil {
		return to
	}
	return ip
}

// pacedReplay returns a reader that yields lines at the pace their At times
// give, sped up by speed, so a replayed board looks live. It ends when the
// lines do or ctx ends.
func pacedReplay(ctx context.Context, lines []firmware.ScenarioLine, speed float64) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		defer pw.Close()
		start := time.Now()
		for _, l := range lines {
			due := start.Add(time.Duration(float64(l.At) / speed))
			if wait := time.Until(due); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
			if _, err := io.WriteString(pw, l.Text+"\n"); err != nil {
				return
			}
		}
	}()
	return pr
}
