package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/internal/cli"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/probestest"
	"github.com/tailpath/tailpath/probes/tailscaled"
	"github.com/tailpath/tailpath/sysctl/tune"
	"github.com/tailpath/tailpath/sysctl/tune/tunetest"
)

var updateTune = flag.Bool("update-tune", false, "rewrite testdata/tune/*.golden")

// goldenCrypto stands in for the crypto measurement in the goldens: the
// roots are other machines, so what this one measures is only shown, and
// no golden may depend on its speed.
var goldenCrypto = tunetest.FixedCrypto(tune.CryptoMeasure{GOARCH: "amd64", Cores: 4, Packet: tune.CryptoPacket, OneCore: 2.4e9, AllCores: 8.8e9})

// TestTuneRootsLimitFirst: issue 35's fake roots through `tailpath tune
// --root` (sysctl/testdata/roots/README.md says what each holds). On each
// the first line names the real limit (the CPU, the kernel, an offload,
// forwarding or the path) with its evidence and fix, and no change is
// prescribed: the buffers are not what limits there. The whole output is
// a golden (-update-tune rewrites them). The relayed peer's path comes
// from a fake LocalAPI (probes/testdata/local-hard-nat.json: the Home
// Assistant add-on case, relayed behind a NAT without port mapping)
// through --socket, gathered and diagnosed by the real tailscaled.Gather.
func TestTuneRootsLimitFirst(t *testing.T) {
	fix, err := probestest.LoadFixture(filepath.Join("probes", "testdata", "local-hard-nat.json"))
	if err != nil {
		t.Fatal(err)
	}
	fake := probestest.New(t, fix)
	d := &tuneDaemon{
		peerRTT: func(context.Context, string, string) (time.Duration, error) {
			return 0, errors.New("no RTT in this test")
		},
		tun: func(ctx context.Context, socket string) (bool, error) { return app.DaemonTUN(socket)(ctx) },
		prefs: func(ctx context.Context, socket string) (tune.DaemonPrefs, error) {
			return app.DaemonPrefs(socket)(ctx)
		},
		// Without this host's interfaces and firewall (probes/hostnet),
		// which the live command adds: the verdict must not depend on the
		// machine the test runs on.
		path: func(ctx context.Context, socket, peer string) (tune.PeerPath, error) {
			snap, err := tailscaled.Gather(ctx, tailscaled.NewClient(socket), nil)
			if err != nil {
				return tune.PeerPath{}, err
			}
			return app.PeerPathOf(join.Of(snap).Snapshot, peer) // judged, as TunePeerPath does
		},
		crypto: goldenCrypto,
	}
	tests := []struct {
		root  string
		args  []string
		limit string // the first line's start
	}{
		{"pi3-raspbian-32bit", nil, "Limit: cpu: this CPU can encrypt about 704 Mbit/s"},
		{"openwrt-24.10-mips74kc", nil, "Limit: cpu: this CPU can encrypt at most about 72 Mbit/s"},
		{"exit-node-debian10-4.19", nil, "Limit: forwarding: this box is an exit node"},
		{"unraid-6.12.12-6.1.103", nil, "Limit: kernel: kernel 6.1.103-Unraid has a known regression (virtio-net-hdr-gso-einval)"},
		{"unifi-ucgmax-bridge-tso", []string{"--observed", "0.5Mbit"}, "Limit: offload: br0, a bridge in the forwarded path, has TSO on"},
		{"haos-13-relayed", []string{"--socket", fake.Socket}, `Limit: path: homeserver is relayed through DERP (active; relay "nyc")`},
	}
	for _, tt := range tests {
		t.Run(tt.root, func(t *testing.T) {
			root := filepath.Join("sysctl", "testdata", "roots", tt.root)
			var out, errb bytes.Buffer
			args := append([]string{"--root", root}, tt.args...)
			code := (&cli.Program{IsInput: isInputError}).Exec(context.Background(), newTuneCommand(d), args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			got := strings.ReplaceAll(out.String(), fake.Socket, "<socket>")
			first, _, _ := strings.Cut(got, "\n")
			if !strings.HasPrefix(first, tt.limit) {
				t.Errorf("first line %q, want it to start %q", first, tt.limit)
			}
			for _, want := range []string{"  evidence: ", "  fix 1. ", "No changes needed."} {
				if !strings.Contains(got, want) {
					t.Errorf("output lacks %q:\n%s", want, got)
				}
			}
			golden := filepath.Join("testdata", "tune", tt.root+".golden")
			if *updateTune {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test . -run TestTuneRootsLimitFirst -update-tune writes it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}
