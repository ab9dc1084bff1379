package tune

import (
	"context"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/tailpath/tailpath/sysctl"
	"github.com/tailpath/tailpath/sysctl/sockdiag"
)

// seedNAS is the seed case's NAS and its recorded connections (see
// seednas/README.md).
//
//go:embed seednas/root seednas/conns
var seedNAS embed.FS

// Seed NAS figures, from the case tailpath began with.
const (
	// SeedRTT is the tailnet RTT between the NAS and its peer.
	SeedRTT = 20 * time.Millisecond
	// SeedBandwidth is what UDP through the same tunnel reached, bits/s:
	// the rate TCP should reach once buffers allow it.
	SeedBandwidth = 350e6
	// seedAppliedWmem is the tcp_wmem max from which the replay shows the
	// connection recorded after applying.
	seedAppliedWmem = 16 << 20
)

// SeedNAS writes the seed case's NAS (Synology DSM 7.1.1 on Linux
// 4.4.302+, no BBR, tcp_wmem max 16 KiB) under dir, which becomes its "/",
// and returns Inputs for it: SeedBandwidth at SeedRTT, a tailscale0 of MTU
// 1280, and its tailnet connections replayed from samples recorded on a
// real kernel (6.18) through a 1280-MTU tunnel at 20 ms RTT. They keep the
// full tcp_info so the pane shows delivery rates and limited time, which
// a 4.4 kernel would not send (its shorter form gives the same verdicts;
// see sockdiag's TestRecordedTunnelVerdicts). The upload shows the sample recorded before applying
// until the copy's tcp_wmem max reaches 16 MiB, the one recorded after
// from then on; a second connection shows an MTU black hole, which no
// sysctl fixes. Errors: writing dir, or a broken embedded sample.
func SeedNAS(dir string) (Inputs, error) {
	err := fs.WalkDir(seedNAS, "seednas/root", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		to := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "seednas/root")))
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := seedNAS.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		return Inputs{}, fmt.Errorf("seed NAS: %w", err)
	}
	load := func(name string) (sockdiag.Conn, error) {
		b, err := seedNAS.ReadFile(path.Join("seednas/conns", name+".hex"))
		if err != nil {
			return sockdiag.Conn{}, err
		}
		raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil {
			return sockdiag.Conn{}, fmt.Errorf("seed NAS sample %s: %w", name, err)
		}
		c, err := sockdiag.ParseMessage(raw)
		if err != nil {
			return sockdiag.Conn{}, fmt.Errorf("seed NAS sample %s: %w", name, err)
		}
		return c, nil
	}
	samples := map[string]sockdiag.Conn{}
	for _, n := range []string{"seed-nas-before", "seed-nas-after", "tunnel-blackhole"} {
		c, err := load(n)
		if err != nil {
			return Inputs{}, err
		}
		samples[n] = c
	}
	h := sysctl.AtRoot(dir)
	return Inputs{
		Host: h, Sandbox: true,
		Bandwidth: SeedBandwidth, BandwidthSource: "demo: the seed NAS, UDP through the same tunnel",
		RTT: SeedRTT, RTTSource: "demo: the seed NAS",
		Conns: func(context.Context) ([]sockdiag.Conn, error) {
			upload := samples["seed-nas-before"]
			if s, err := h.Read(); err == nil && s.TCPWmem.Max >= seedAppliedWmem {
				upload = samples["seed-nas-after"]
			}
			return []sockdiag.Conn{upload, samples["tunnel-blackhole"]}, nil
		},
		Link: func(name string) (sockdiag.Link, error) {
			return sockdiag.Link{Name: name, MTU: 1280, Qdisc: "pfifo_fast", Up: true}, nil
		},
	}, nil
}
