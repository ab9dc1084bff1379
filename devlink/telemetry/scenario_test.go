package telemetry

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScenarioRoundTrip parses every frame the C encoder wrote into the
// committed scenario capture (firmware/testdata/scenario.log, regenerated
// and checked by firmware's own test), and checks Append reproduces each
// byte for byte, sequence numbers run without gaps within a boot, and the
// CoreS3 story is in the data.
func TestScenarioRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../../firmware/testdata/scenario.log")
	if err != nil {
		t.Fatalf("read scenario: %v", err)
	}
	var (
		frames, logLines int
		lastSeq          uint32
		boots            int
		maxProbes        uint32
		fetch            []Fetch
		firstDirect      = map[int]uint32{} // boot → uptime ms of first direct P frame for peer 2
		homes            = map[int]string{}
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		if Index(line) != 0 {
			if Index(line) > 0 {
				t.Errorf("frame not at line start: %q", line)
			}
			logLines++
			continue
		}
		f, err := Parse(line)
		if err != nil {
			t.Fatalf("Parse(%q): %v", line, err)
		}
		b, err := f.Append(nil)
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		if diff := cmp.Diff(string(line), string(b)); diff != "" {
			t.Fatalf("round trip (-c +go):\n%s", diff)
		}
		frames++
		if f.Seq == 1 {
			boots++
		} else if f.Seq != lastSeq+1 {
			t.Errorf("seq %d after %d", f.Seq, lastSeq)
		}
		lastSeq = f.Seq
		switch f.Kind {
		case KindDisco:
			if boots == 1 && f.Disco.ProbesUsed > maxProbes {
				maxProbes = f.Disco.ProbesUsed
			}
		case KindFetch:
			fetch = append(fetch, f.Fetch)
		case KindPeer:
			if f.Peer.ID == 2 && f.Peer.Path.Kind == PathDirect && firstDirect[boots] == 0 {
				firstDirect[boots] = uint32(f.Uptime.Milliseconds())
			}
		case KindNet:
			if f.Has("derp") {
				homes[boots] = f.Net.HomeDERPBy.String()
			}
		}
	}
	if boots != 2 || frames < 200 || logLines < 100 {
		t.Fatalf("boots=%d frames=%d log lines=%d, want 2 boots and a full capture", boots, frames, logLines)
	}
	if maxProbes != 64 {
		t.Errorf("boot 1 probe table peak = %d, want 64 (full)", maxProbes)
	}
	if d := firstDirect[1]; d < 34000 || d > 36000 {
		t.Errorf("boot 1 first direct P frame at %d ms, want ~34-35 s", d)
	}
	if diff := cmp.Diff(map[int]string{1: "lowest-id", 2: "latency"}, homes); diff != "" {
		t.Errorf("home DERP choice per boot (-want +got):\n%s", diff)
	}
	var derpRates, directRates []uint64
	for _, x := range fetch {
		if x.Via.Kind == PathDERP {
			derpRates = append(derpRates, x.KiBpsTenths)
		} else {
			directRates = append(directRates, x.KiBpsTenths)
		}
	}
	if len(derpRates) == 0 || len(directRates) == 0 || derpRates[0] != 470 || directRates[0] != 1870 {
		t.Errorf("fetch rates DERP %v direct %v (tenths of KiB/s), want 470 and 1870", derpRates, directRates)
	}
}
