package devlink

import (
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/devlink/telemetry"
)

// TestNamedKeysAreTableKeys: every key ApplyFrame says it folds is a field
// of the telemetry table (a renamed or dropped field must leave named too).
func TestNamedKeysAreTableKeys(t *testing.T) {
	for k, keys := range named {
		table := telemetry.Keys(k)
		if table == nil {
			t.Errorf("named lists kind %s, which the telemetry table has not", k)
		}
		for _, key := range strings.Fields(keys) {
			if !slices.Contains(table, key) {
				t.Errorf("named lists %s %q, which is not a field of the table", k, key)
			}
		}
	}
}

// TestExtraFollowsTheTable: a table field State has no named field for is
// kept as its wire text, per kind for S/N/D/R, per peer for P, per fetch for
// F; the next frame of the kind replaces it, a new boot clears it, and a
// Clone does not share the map.
func TestExtraFollowsTheTable(t *testing.T) {
	// As if these fields had just been added to the table: drop them from
	// named.
	trimmed := map[telemetry.Kind]string{}
	for k, keys := range named {
		trimmed[k] = keys
	}
	for k, drop := range map[telemetry.Kind]string{telemetry.KindStatus: "bad", telemetry.KindDisco: "ping",
		telemetry.KindPeer: "lat", telemetry.KindFetch: "status"} {
		trimmed[k] = strings.Replace(trimmed[k], " "+drop, "", 1)
	}
	saved := unnamed
	unnamed = unnamedKeys(trimmed)
	t.Cleanup(func() { unnamed = saved })

	s := NewState()
	at := time.Unix(100, 0)
	apply := func(line string) {
		t.Helper()
		f, err := telemetry.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		s.ApplyFrame(&f, at)
	}
	apply("@TP2 S seq=41 up=34012 rst=poweron rssi=-61 wdis=0 hif=131072 hmin=127488 hlb=69632 psf=8157184 bad=0 *D918667C")
	apply("@TP2 D seq=43 up=34012 pu=12 pcap=64 pdrop=0 preap=30 ping=42 pong=1 cmmi=1 cmmo=3 h2rx=48213 h2wu=32768 h2win=49407 *B82BBCB2")
	apply("@TP2 P seq=44 up=34012 peer=2 pip=100.64.0.2 path=203.0.113.7:41641 hs=derp:1 hsup=31870 lat=21 *2AAF24CA")
	apply("@TP2 F seq=45 up=45210 n=2 bytes=393216 ms=2053 kibs=187.0 status=200 via=203.0.113.7:41641 *08357D24")
	want := map[telemetry.Kind][]telemetry.Field{
		telemetry.KindStatus: {{Key: "bad", Value: "0"}},
		telemetry.KindDisco:  {{Key: "ping", Value: "42"}},
	}
	if diff := cmp.Diff(want, s.Extra); diff != "" {
		t.Errorf("Extra (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]telemetry.Field{{Key: "lat", Value: "21"}}, s.Peers[2].Extra); diff != "" {
		t.Errorf("peer 2 Extra (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]telemetry.Field{{Key: "status", Value: "200"}}, s.Fetches[0].Extra); diff != "" {
		t.Errorf("fetch Extra (-want +got):\n%s", diff)
	}
	// Named fields still fold as before.
	if s.HeapFree != 131072 || s.Peers[2].Latency != 21*time.Millisecond || s.ProbesUsed != 12 {
		t.Errorf("named fields: heap %d, latency %v, probes %d", s.HeapFree, s.Peers[2].Latency, s.ProbesUsed)
	}

	c := s.Clone()
	// An S frame without bad replaces the kind's Extra; a D frame without
	// ping drops it.
	apply("@TP2 S seq=46 up=50000 rst=poweron bad=3 *" + crcOf("@TP2 S seq=46 up=50000 rst=poweron bad=3"))
	apply("@TP2 D seq=47 up=50000 pu=1 *" + crcOf("@TP2 D seq=47 up=50000 pu=1"))
	want = map[telemetry.Kind][]telemetry.Field{telemetry.KindStatus: {{Key: "bad", Value: "3"}}}
	if diff := cmp.Diff(want, s.Extra); diff != "" {
		t.Errorf("Extra after newer frames (-want +got):\n%s", diff)
	}
	if got := c.Extra[telemetry.KindDisco]; len(got) != 1 {
		t.Errorf("the clone's Extra changed with the state: %v", c.Extra)
	}

	var l Line
	ParseLine([]byte("ESP-ROM:esp32s3-20210327"), &l)
	s.ApplyLine(&l, at, nil)
	if len(s.Extra) != 0 || s.Peers[2].Extra != nil || s.Fetches[0].Extra == nil {
		t.Errorf("after a new boot: Extra %v, peer %v, fetch %v; want the boot's cleared, the fetch's kept",
			s.Extra, s.Peers[2].Extra, s.Fetches[0].Extra)
	}
}

// crcOf is the checksum a frame body needs.
func crcOf(body string) string { return fmt.Sprintf("%08X", crc32.ChecksumIEEE([]byte(body))) }
