//go:build demo

package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/devlink/telemetry"
	"github.com/tailpath/tailpath/firmware"
	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/controlapi"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
	"tailscale.com/tailcfg"
)

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

// DemoSources are the demo's sources over a started lab: its observer as
// the tailscaled, the lab's control API (each node's own NetInfo) as the
// peers' side of each path, the bundled firmware's scenario as the board,
// and the seed NAS in a sandbox as the host's tuning (demoTuning). The
// demo's dashboard and `demo --serve` run them. ctx bounds the board's
// replay.
func DemoSources(ctx context.Context, l *lab.Lab, interval time.Duration) (Sources, error) {
	api, err := controlapi.NewControlAPI(l.ControlAPIConfig())
	if err != nil {
		return Sources{}, err
	}
	c, err := demoTuning(l)
	if err != nil {
		return Sources{}, err
	}
	return Sources{
		ControlAPI: api,
		Client:     l.Observer(),
		Socket:     l.ObserverSocket(),
		Interval:   interval,
		Device:     demoBoard(ctx, l, demoReplaySpeed),
		Tuning:     c,
	}, nil
}

// ServeDemo serves the demo's sources (DemoSources: the lab's observer,
// the replayed board, the sandbox tuning, the lab's control API) as
// tailpath serve does, until ctx ends.
func ServeDemo(ctx context.Context, srcs Sources, addr string, stderr io.Writer) error {
	s := &Serve{Sources: srcs, PingEvery: time.Minute, Log: stderr}
	s.Snapshot = s.SnapshotFile
	ln, err := Listen(addr, "--serve", stderr)
	if err != nil {
		return err
	}
	return s.Run(ctx, ln)
}

// demoTuning is the seed NAS (DSM on Linux 4.4, no BBR, 20 ms to its
// peer), its tailnet connections replayed from recorded tcp_info, in a
// sandbox copy in the lab's directory that apply and revert really write.
func demoTuning(l *lab.Lab) (*tune.Control, error) {
	dir := filepath.Join(l.Dir(), "tuning-sandbox")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("demo: tuning sandbox: %w", err)
	}
	c, err := tune.SeedNASControl(dir)
	if err != nil {
		return nil, fmt.Errorf("demo: tuning sandbox: %w", err)
	}
	return &c, nil
}

// DemoStatus is the demo's view once, headless (demo --status): the
// observer's snapshot with the lab's control-API facts of each peer,
// linked to the simulated board as it stands while it is relayed (its
// scenario up to the moment its path goes direct), and the lab's
// DERP-only node relayed alike: what the dashboard shows in the replay's
// first half minute. One snapshot, so rates read 0 and each peer's one
// path change is its path now.
func DemoStatus(ctx context.Context, l *lab.Lab) (*join.Snapshot, error) {
	snap, err := tailscaled.Gather(ctx, l.Observer(), nil)
	if err != nil {
		return nil, err
	}
	if api, err := controlapi.NewControlAPI(l.ControlAPIConfig()); err == nil {
		facts, err := api.Fetch(ctx)
		st := probes.APIStatus{State: "ok"}
		if err != nil {
			st = probes.APIStatus{State: "error", Err: safetext.Of(err)}
		} else {
			st.At = facts.At
		}
		probes.ApplyPeerFacts(snap, facts, st)
	}
	scenario := DemoScenario(l)
	if i, ok := firstDirect(boardPathSwitches(scenario, l.ObserverIP())); ok {
		scenario = scenario[:i]
	}
	var lines strings.Builder
	for _, sl := range scenario {
		lines.WriteString(sl.Text + "\n")
	}
	var joiner join.Joiner
	joiner.SetDevice(ReadBoard(ctx, "-", 0, 0, strings.NewReader(lines.String())))
	return joiner.SetSnapshot(snap), nil
}

// demoBoard is the simulated board, replayed at speed× the board's pace.
// The lab's DERP-only node stands for it and follows its path to the
// observer: direct when the board's is, relayed when the board's is
// (lab.SetDERPOnly), so Peers agrees with Device.
func demoBoard(ctx context.Context, l *lab.Lab, speed float64) *devlink.Source {
	lines := DemoScenario(l)
	switches := boardPathSwitches(lines, l.ObserverIP())
	follow := func(i int) {
		if derpOnly, ok := switches[i]; ok {
			l.SetDERPOnly(derpOnly) // fails only when the lab is closing
		}
	}
	return &devlink.Source{Replay: pacedReplay(ctx, lines, speed, follow)}
}

// boardPathSwitches replays lines into a board state and returns, by line
// index, where the board's own path to the peer at ip changes between
// relayed and direct: true where it turns relayed (DERP only), false
// where it turns direct. The board starts relayed (lab-derp starts DERP
// only), so the first switch is to direct.
func boardPathSwitches(lines []firmware.ScenarioLine, ip netip.Addr) map[int]bool {
	out := map[int]bool{}
	st := devlink.NewState()
	var sp devlink.Splitter
	direct := false
	for i, l := range lines {
		sp.Feed([]byte(l.Text+"\n"), func(ln *devlink.Line) { st.ApplyLine(ln, time.Time{}, nil) })
		now := false
		for _, p := range st.Peers {
			if p.IP == ip && p.Path.Kind == telemetry.PathDirect {
				now = true
			}
		}
		if now != direct {
			direct = now
			out[i] = !now
		}
	}
	return out
}

// firstDirect is the index of the first switch to direct.
func firstDirect(switches map[int]bool) (int, bool) {
	first, ok := 0, false
	for i, derpOnly := range switches {
		if !derpOnly && (!ok || i < first) {
			first, ok = i, true
		}
	}
	return first, ok
}

// DemoScenario is the simulated CoreS3: the bundled firmware's scenario
// capture with its tailnet addresses moved onto the lab's. The board is the
// lab's DERP-only node (the embedded client that never advertised an
// endpoint), and the peer it downloads from is the observer.
func DemoScenario(l *lab.Lab) []firmware.ScenarioLine {
	m := map[string]string{}
	for _, p := range l.Peers() {
		switch p.Name {
		case lab.DERPName:
			m[scenarioBoardIP] = p.TailscaleIP.String()
		case lab.DirectName:
			m[scenarioPeer3IP] = p.TailscaleIP.String()
		}
	}
	m[scenarioPeer2IP] = l.ObserverIP().String()
	lines := relabelScenario(firmware.ScenarioLines(), m)
	// The recording's DERP regions become the lab's, by what each is in
	// the story: 1, the board's home by lowest id, is lab1 (the lab's home
	// too); 7, the nearest and its home after the fixes, is lab2, a relay;
	// 4, measured once, is lab3. So no screen mixes the two worlds.
	return relabelRegions(lines, scenarioRegions, derpHosts(l.DERPMap()))
}

// scenarioRegions maps the firmware scenario's DERP region ids onto the
// lab's (lab.DefaultRegions).
var scenarioRegions = map[uint16]uint16{1: 901, 4: 903, 7: 902}

// derpHosts is each region's first DERP node as host:port.
func derpHosts(dm *tailcfg.DERPMap) map[uint16]string {
	out := map[uint16]string{}
	if dm == nil {
		return out
	}
	for id, r := range dm.Regions {
		if len(r.Nodes) > 0 {
			n := r.Nodes[0]
			port := n.DERPPort
			if port == 0 {
				port = 443
			}
			out[uint16(id)] = net.JoinHostPort(n.HostName, strconv.Itoa(port))
		}
	}
	return out
}

// Where the scenario's log lines name a DERP region: "region 7",
// "derp=1", "home 1 (", the region's server "derp1.tailscale.com:443",
// and the ESP32 port's DERP pseudo-address "2803037f:7" (127.3.3.40, its
// port the region id).
var regionRefs = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(region |derp=|home |2803037f:)(\d+)\b|derp(\d+)\.tailscale\.com:443`)
})

// relabelRegions replaces the DERP region ids of lines by regions (and a
// region's server name by hosts' host:port). Telemetry frames are decoded,
// their region fields changed, and written again (valid checksums).
func relabelRegions(lines []firmware.ScenarioLine, regions map[uint16]uint16, hosts map[uint16]string) []firmware.ScenarioLine {
	mapID := func(id uint16) uint16 {
		if to, ok := regions[id]; ok {
			return to
		}
		return id
	}
	mapPath := func(p telemetry.Path) telemetry.Path {
		if p.Kind == telemetry.PathDERP {
			p.Region = mapID(p.Region)
		}
		return p
	}
	out := make([]firmware.ScenarioLine, len(lines))
	for i, l := range lines {
		text := l.Text
		if at := telemetry.Index([]byte(text)); at >= 0 {
			if f, err := telemetry.Parse([]byte(text[at:])); err == nil {
				f.Net.HomeDERP, f.Net.Nearest = mapID(f.Net.HomeDERP), mapID(f.Net.Nearest)
				f.Peer.Path, f.Peer.Handshake = mapPath(f.Peer.Path), mapPath(f.Peer.Handshake)
				f.Fetch.Via = mapPath(f.Fetch.Via)
				f.Relay.Region = mapID(f.Relay.Region)
				if b, err := f.Append([]byte(text[:at])); err == nil {
					text = string(b)
				}
			}
		} else {
			text = regionRefs().ReplaceAllStringFunc(text, func(ref string) string {
				sub := regionRefs().FindStringSubmatch(ref)
				if sub[3] != "" { // a server name
					id, _ := strconv.Atoi(sub[3])
					if h, ok := hosts[mapID(uint16(id))]; ok {
						return h
					}
					return ref
				}
				id, err := strconv.Atoi(sub[2])
				if err != nil || id > 0xffff {
					return ref
				}
				return sub[1] + strconv.Itoa(int(mapID(uint16(id))))
			})
		}
		out[i] = firmware.ScenarioLine{At: l.At, Text: text}
	}
	return out
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
// give, sped up by speed, so a replayed board looks live; after line i is
// written it calls onLine(i) when onLine is set. It ends when the lines do
// or ctx ends.
func pacedReplay(ctx context.Context, lines []firmware.ScenarioLine, speed float64, onLine func(i int)) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		defer pw.Close()
		start := time.Now()
		for i, l := range lines {
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
			if onLine != nil {
				onLine(i)
			}
		}
	}()
	return pr
}
