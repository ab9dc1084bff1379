package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/netip"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/probestest"
	"github.com/tailpath/tailpath/probes/tailscaled"
)

// referenceStatusJSON is status --json as encoding/json writes it.
func referenceStatusJSON(t testing.TB, out Document) []byte {
	t.Helper()
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// checkStatusJSON fails t when Encode's bytes are not
// encoding/json's, showing where they part.
func checkStatusJSON(t *testing.T, name string, out Document) {
	t.Helper()
	want := referenceStatusJSON(t, out)
	var got bytes.Buffer
	if err := Encode(&got, out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if bytes.Equal(got.Bytes(), want) {
		return
	}
	g, w := got.Bytes(), want
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	from := max(i-300, 0)
	t.Errorf("%s: status --json differs from encoding/json at byte %d of %d:\n--- got\n%s\n--- want\n%s",
		name, i, len(w), g[from:min(i+200, len(g))], w[from:min(i+200, len(w))])
}

// filler sets every exported field it reaches to a value that is not
// zero, so a field the writer leaves out shows.
type filler struct {
	n     int
	depth int
}

// awkward are strings that need escaping, or carry what encoding/json
// rewrites.
var awkward = []string{
	"plain",
	`quote " backslash \ <tag> & amp`,
	"ctrl \x00\x01\b\f\n\r\t\x1f\x7f",
	"js \u2028 \u2029 é ✓ 🙂",
	"invalid \xff\xfe utf-8 \xe2\x82",
}

// floats cover encoding/json's two float forms and their boundary.
var floats = []float64{12.5, 1e-7, 1e21, 123456789.123, 0.000001, 999999999999999999999, -3.25e-9}

func (f *filler) fill(v reflect.Value) {
	f.n++
	n := f.n
	switch x := v.Addr().Interface().(type) {
	case *time.Time:
		*x = time.Date(2026, 11, 30, 12, n%60, 7, n*1000+1, time.FixedZone("", (n%5-2)*5400))
		return
	case *netip.Addr:
		*x = []netip.Addr{netip.MustParseAddr("100.64.0.7"), netip.MustParseAddr("fd7a:115c:a1e0::7"), netip.MustParseAddr("fe80::1%en<0>")}[n%3]
		return
	case *netip.AddrPort:
		*x = []netip.AddrPort{netip.MustParseAddrPort("203.0.113.7:41641"), netip.MustParseAddrPort("[2001:db8::7]:3478"), netip.MustParseAddrPort("[fe80::1%eth0]:1")}[n%3]
		return
	case *time.Duration:
		*x = time.Duration(n) * 1234567
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(awkward[n%len(awkward)])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n%100 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n%100 + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(floats[n%len(floats)])
	case reflect.Pointer:
		if f.depth > 3 {
			return
		}
		f.depth++
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem())
		v.Set(p)
		f.depth--
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i))
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 3 {
			k := reflect.New(v.Type().Key()).Elem()
			if k.Kind() == reflect.Int {
				// 1, 10, 2: sorted as strings, not numbers.
				k.SetInt([]int64{1, 10, 2}[m.Len()])
			} else {
				f.fill(k)
			}
			e := reflect.New(v.Type().Elem()).Elem()
			f.fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	}
}

// TestStatusJSONWriterMatchesEncodingJSON: status --json writes exactly
// what json.MarshalIndent did: every field of every type set (escapes,
// both float forms, zones, nested peer sides), every field zero, nil
// slices, and real snapshots.
func TestStatusJSONWriterMatchesEncodingJSON(t *testing.T) {
	var full Document
	(&filler{}).fill(reflect.ValueOf(&full).Elem())
	if full.Peers[0].PeerSide.Other == nil || full.Peers[0].PingRun == nil || full.Peers[0].LastChange == nil {
		t.Fatal("the filler left per-peer pointers nil")
	}
	checkStatusJSON(t, "every field set", full)

	var zero Document
	checkStatusJSON(t, "zero", zero)
	zero.Peers = []Peer{{}, {Peer: &probes.Peer{}}, {Peer: &probes.Peer{Verdict: probes.Verdict{Checks: []probes.Check{}}, NAT: &probes.NATInfo{}, PeerSide: &probes.PeerSide{}}, PathChanges: []join.PathChange{}}}
	checkStatusJSON(t, "zero peers", zero)

	s := manySnapshot(t, 200)
	checkStatusJSON(t, "ManyPeers(200)", Of(s))

	fixtures, err := filepath.Glob(filepath.Join("..", "..", "probes", "testdata", "*.json"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("fixtures: %v %v", fixtures, err)
	}
	for _, name := range fixtures {
		fix, err := probestest.LoadFixture(name)
		if err != nil {
			t.Fatal(err)
		}
		srv := probestest.New(t, fix)
		snap, err := tailscaled.Gather(context.Background(), tailscaled.NewClient(srv.Socket), nil)
		if err != nil {
			t.Fatal(err)
		}
		var l join.Joiner
		checkStatusJSON(t, name, Of(l.SetSnapshot(snap)))
	}
}

// TestStatusJSONWriterErrors: values encoding/json refuses are errors
// here too.
func TestStatusJSONWriterErrors(t *testing.T) {
	for name, p := range map[string]probes.Peer{
		"NaN rate":      {TxRate: math.NaN()},
		"infinite rate": {RxRate: math.Inf(1)},
		"year 10000":    {LastSeen: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"zone 24h away": {LastSeen: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))},
	} {
		out := Document{Peers: []Peer{{Peer: &p}}}
		if _, err := json.Marshal(out); err == nil {
			t.Errorf("%s: encoding/json accepts it", name)
		}
		if err := Encode(io.Discard, out); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzStatusJSONString: any string is escaped as encoding/json escapes it.
func FuzzStatusJSONString(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var e jsonIndenter
		e.str(s)
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.b, want) {
			t.Errorf("%q: got %s, want %s", s, e.b, want)
		}
	})
}

// FuzzStatusJSONFloat: any finite float is written as encoding/json
// writes it.
func FuzzStatusJSONFloat(f *testing.F) {
	for _, v := range floats {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		var e jsonIndenter
		e.float(v)
		want, _ := json.Marshal(v)
		if !bytes.Equal(e.b, want) {
			t.Errorf("%v: got %s, want %s", v, e.b, want)
		}
	})
}

// manySnapshot is a gathered ManyPeers(n) snapshot as status prints it.
func manySnapshot(tb testing.TB, n int) *join.Snapshot {
	tb.Helper()
	srv := probestest.New(tb, probestest.ManyPeers(n))
	snap, err := tailscaled.Gather(context.Background(), tailscaled.NewClient(srv.Socket), nil)
	if err != nil {
		tb.Fatal(err)
	}
	var l join.Joiner
	return l.SetSnapshot(snap)
}

// BenchmarkStatusJSON1000 writes a 1,000-peer snapshot as status --json
// does (fast), and as it did before (json.Marshal, then jsontext's
// Indent): docs/perf.md, issue 8.
func BenchmarkStatusJSON1000(b *testing.B) {
	s := manySnapshot(b, 1000)
	out := Of(s)
	size := int64(len(referenceStatusJSON(b, out)))
	for _, tc := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"fast", func(w io.Writer) error { return Encode(w, out) }},
		{"marshal-indent", func(w io.Writer) error {
			b, err := json.Marshal(out)
			if err != nil {
				return err
			}
			v := jsontext.Value(b)
			if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
				return err
			}
			_, err = w.Write(append(v, '\n'))
			return err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if err := tc.write(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(b)
	return len(b), nil
}

// TestStatusJSONWriterStops: a failing writer, or a value refused after
// many chunks, ends the writing with that error (and without hanging).
func TestStatusJSONWriterStops(t *testing.T) {
	out := Of(manySnapshot(t, 1000))
	want := referenceStatusJSON(t, out)
	if len(want) < 8*flushSize {
		t.Fatalf("%d bytes, want several chunks", len(want))
	}
	for _, n := range []int{0, 100, flushSize + 1, 5 * flushSize} {
		if err := Encode(&failingWriter{n: n}, out); err == nil || err.Error() != "disk full" {
			t.Errorf("writer failing after %d bytes: %v, want its error", n, err)
		}
	}
	// A document of a few peers is laid out inline, in one chunk.
	small := Of(manySnapshot(t, 4))
	if len(small.Peers) > inlinePeers {
		t.Fatalf("%d peers, want at most %d", len(small.Peers), inlinePeers)
	}
	if err := Encode(&failingWriter{n: 10}, small); err == nil || err.Error() != "disk full" {
		t.Errorf("4 peers, writer failing after 10 bytes: %v, want its error", err)
	}
	out.Peers[len(out.Peers)-1].TxRate = math.NaN()
	var got bytes.Buffer
	if err := Encode(&got, out); err == nil {
		t.Error("NaN in the last peer: no error")
	}
	if got.Len() >= len(want) || !bytes.HasPrefix(want, got.Bytes()) {
		t.Errorf("NaN in the last peer: wrote %d bytes, want a prefix of the %d it would have", got.Len(), len(want))
	}
}
