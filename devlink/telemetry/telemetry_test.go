package telemetry

import (
	"bufio"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/safetext"
)

const vectorFile = "../../firmware/testdata/vectors.txt"

// vector is one section of firmware/testdata/vectors.txt.
type vector struct {
	section string // frame, parse, reject
	name    string
	line    string
	kind    string
	err     string
	values  map[string]string // wire key → wire text
}

func readVectors(t testing.TB) []vector {
	t.Helper()
	fh, err := os.Open(vectorFile)
	if err != nil {
		t.Fatalf("open vectors: %v", err)
	}
	defer fh.Close()
	var out []vector
	var cur *vector
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "["):
			sec, name, ok := strings.Cut(strings.Trim(l, "[]"), " ")
			if !ok {
				t.Fatalf("%s:%d: bad section %q", vectorFile, n, l)
			}
			out = append(out, vector{section: sec, name: name, values: map[string]string{}})
			cur = &out[len(out)-1]
		default:
			k, v, ok := strings.Cut(l, " = ")
			if !ok || cur == nil {
				// "line = " with an empty value has no trailing space after '='.
				if strings.HasPrefix(l, "line =") && cur != nil {
					cur.line = strings.TrimPrefix(strings.TrimPrefix(l, "line ="), " ")
					continue
				}
				t.Fatalf("%s:%d: bad line %q", vectorFile, n, l)
			}
			switch k {
			case "line":
				cur.line = v
			case "kind":
				cur.kind = v
			case "error":
				cur.err = v
			default:
				cur.values[k] = v
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d vectors read", len(out))
	}
	return out
}

// valuesOf renders the decoded frame as wire key → text. It reads the tp
// tags and the Go fields by reflection, apart from fields_gen.go and
// Append, so the vectors check the decoder on its own.
func valuesOf(f *Frame) map[string]string {
	m := map[string]string{}
	rf := reflect.ValueOf(f).Elem()
	put := func(sf reflect.StructField, v reflect.Value) {
		key, opt, _ := strings.Cut(sf.Tag.Get("tp"), ",")
		if !f.Has(key) {
			return
		}
		switch x := v.Interface().(type) {
		case time.Duration:
			m[key] = fmt.Sprint(x.Milliseconds())
		case Path:
			switch x.Kind {
			case PathDirect:
				m[key] = fmt.Sprintf("%s:%d", x.Addr.Addr(), x.Addr.Port())
			case PathDERP:
				m[key] = fmt.Sprintf("derp:%d", x.Region)
			default:
				m[key] = "none"
			}
		case bool:
			m[key] = map[bool]string{false: "0", true: "1"}[x]
		case uint64:
			if opt != "tenths" {
				panic(sf.Name + ": uint64 without tenths")
			}
			m[key] = fmt.Sprintf("%d.%d", x/10, x%10)
		default: // integers, netip.Addr, safetext.Text
			m[key] = fmt.Sprint(x)
		}
	}
	for i := 0; i < rf.NumField(); i++ {
		sf := rf.Type().Field(i)
		tag := sf.Tag.Get("tp")
		switch {
		case tag == "":
		case tag == f.Kind.String():
			kv := rf.Field(i)
			for j := 0; j < kv.NumField(); j++ {
				put(kv.Type().Field(j), kv.Field(j))
			}
		case len(tag) > 1 || tag[0] < 'A' || tag[0] > 'Z':
			put(sf, rf.Field(i)) // seq, up
		}
	}
	return m
}

var errByName = map[string]error{
	"checksum": ErrChecksum, "version": ErrVersion, "toolong": ErrTooLong, "syntax": ErrSyntax,
	"field": ErrField, "missing": ErrMissing, "kind": ErrUnknownKind, "notframe": ErrNotFrame,
}

func TestVectors(t *testing.T) {
	for _, v := range readVectors(t) {
		t.Run(v.section+"/"+v.name, func(t *testing.T) {
			f, err := Parse([]byte(v.line))
			switch v.section {
			case "frame", "parse":
				if err != nil {
					t.Fatalf("Parse(%q): %v", v.line, err)
				}
				if got := f.Kind.String(); got != v.kind {
					t.Errorf("kind = %q, want %q", got, v.kind)
				}
				if diff := cmp.Diff(v.values, valuesOf(&f)); diff != "" {
					t.Errorf("decoded values (-want +got):\n%s", diff)
				}
				if v.section == "frame" {
					b, err := f.Append(nil)
					if err != nil {
						t.Fatalf("Append: %v", err)
					}
					if diff := cmp.Diff(v.line, string(b)); diff != "" {
						t.Errorf("Append (-want +got):\n%s", diff)
					}
				}
			case "reject":
				want, ok := errByName[v.err]
				if !ok {
					t.Fatalf("vector names unknown error %q", v.err)
				}
				if !errors.Is(err, want) {
					t.Fatalf("Parse(%q) error = %v, want %v", v.line, err, want)
				}
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Errorf("error %T is not *ParseError", err)
				}
				wantCorrupt := v.err != "notframe" && v.err != "version" && v.err != "kind"
				if IsCorrupt(err) != wantCorrupt {
					t.Errorf("IsCorrupt(%v) = %v, want %v", err, IsCorrupt(err), wantCorrupt)
				}
			default:
				t.Fatalf("unknown section %q", v.section)
			}
		})
	}
}

func TestLineEndingsAndIndex(t *testing.T) {
	const frame = "@TP1 S seq=41 up=34012 rst=poweron rssi=-61 wdis=0 hif=131072 hmin=127488 hlb=69632 psf=8157184 bad=0 *6656D985"
	for _, end := range []string{"", "\n", "\r\n", "\r", "\r\r\n"} {
		f, err := Parse([]byte(frame + end))
		if err != nil || f.Seq != 41 || f.Status.RSSI != -61 {
			t.Errorf("Parse with ending %q: %+v, %v", end, f, err)
		}
	}
	tests := []struct {
		line string
		want int
	}{
		{frame, 0},
		{"ESP-ROM:esp32s3-20210327" + frame, 24},
		{"@TPx @TP1 S", 5},
		{"I (1) x: no frame @TP", -1},
		{"", -1},
	}
	for _, tc := range tests {
		if got := Index([]byte(tc.line)); got != tc.want {
			t.Errorf("Index(%q) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

func TestAppendRejects(t *testing.T) {
	f := Frame{Kind: KindNet}
	f.SetHas("seq", true)
	f.SetHas("up", true)
	f.SetHas("host", true)
	f.Net.Host = "has space"
	if _, err := f.Append(nil); err == nil {
		t.Error("Append accepted a host name with a space")
	}
	f.Net.Host = safetext.New(strings.Repeat("h", 300))
	if _, err := f.Append(nil); err == nil {
		t.Error("Append accepted a frame over MaxFrameLen")
	}
	if _, err := (&Frame{Kind: 'Q'}).Append(nil); err == nil {
		t.Error("Append accepted an unknown kind")
	}
}

// FuzzParse checks Parse never panics, that every accepted frame round-trips
// through Append to a frame that parses to the same values, and that the
// errors are always *ParseError.
func FuzzParse(f *testing.F) {
	for _, v := range readVectors(f) {
		f.Add([]byte(v.line))
	}
	f.Add([]byte("@TP1 S seq=1 up=2 *00000000"))
	f.Add([]byte("@TP999999999999 S"))
	f.Fuzz(func(t *testing.T, line []byte) {
		fr, err := Parse(line)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not *ParseError", err, err)
			}
			return
		}
		b, err := fr.Append(nil)
		if err != nil {
			t.Fatalf("Append of parsed %q: %v", line, err)
		}
		fr2, err := Parse(b)
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", b, line, err)
		}
		if diff := cmp.Diff(valuesOf(&fr), valuesOf(&fr2)); diff != "" {
			t.Fatalf("round trip changed values (-first +second):\n%s", diff)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	lines := [][]byte{
		[]byte("@TP1 S seq=41 up=34012 rst=poweron rssi=-61 wdis=0 hif=131072 hmin=127488 hlb=69632 psf=8157184 bad=0 *6656D985"),
		[]byte("@TP1 N seq=42 up=34012 ip=100.64.0.9 host=cores3 eps=1 derp=1 derpby=lowest-id derpms=182 near=7 nearms=24 *CC2F830C"),
		[]byte("@TP1 D seq=43 up=34012 pu=12 pcap=64 pdrop=0 preap=30 ping=42 pong=1 cmmi=1 cmmo=3 h2rx=48213 h2wu=32768 h2win=49407 *B9A2C5E4"),
		[]byte("@TP1 P seq=44 up=34012 peer=2 pip=100.64.0.2 path=203.0.113.7:41641 hs=derp:1 hsup=31870 lat=21 *1A814199"),
		[]byte("@TP1 F seq=45 up=45210 n=2 bytes=393216 ms=2053 kibs=187.0 status=200 via=203.0.113.7:41641 *F07AA50F"),
	}
	var n int
	for _, l := range lines {
		n += len(l)
	}
	b.SetBytes(int64(n / len(lines)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseNotFrame(b *testing.B) {
	line := []byte("I (34012) ts_disco: Pong recv from 203.0.113.7:41641 → peer 2 direct")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(line); !errors.Is(err, ErrNotFrame) {
			b.Fatal(err)
		}
	}
}

// docTypes is the type column docs/telemetry.md gives each Go type.
var docTypes = map[reflect.Type]string{
	reflect.TypeFor[uint32]():        "u32",
	reflect.TypeFor[time.Duration](): "u32", // milliseconds
	reflect.TypeFor[int32]():         "i32",
	reflect.TypeFor[uint16]():        "u16",
	reflect.TypeFor[netip.Addr]():    "IPv4",
	reflect.TypeFor[safetext.Text](): "word",
	reflect.TypeFor[Path]():          "addr",
	reflect.TypeFor[uint64]():        "fixed", // tenths
	reflect.TypeFor[bool]():          "0/1",
}

// docFields reads docs/telemetry.md's field tables: kind letter ("" for
// "Fields in every frame") → "key type" rows in order.
func docFields(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/telemetry.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	section := "-"
	row := regexp.MustCompile("^\\| `([a-z0-9]+)` \\| ([^|]+?) \\|")
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "### Fields in every frame"):
			section = ""
		case strings.HasPrefix(l, "### `"):
			section = strings.TrimPrefix(l, "### `")[:1]
		case strings.HasPrefix(l, "#"):
			section = "-"
		}
		if m := row.FindStringSubmatch(l); m != nil && section != "-" {
			out[section] = append(out[section], m[1]+" "+m[2])
		}
	}
	return out
}

// TestDocNamesEveryField holds docs/telemetry.md to the Go table: each
// kind's section lists exactly its fields, in wire order, with the type
// its Go field has.
func TestDocNamesEveryField(t *testing.T) {
	want := map[string][]string{}
	rf := reflect.TypeFor[Frame]()
	for i := 0; i < rf.NumField(); i++ {
		sf := rf.Field(i)
		tag := sf.Tag.Get("tp")
		switch {
		case tag == "":
		case len(tag) == 1 && tag[0] >= 'A' && tag[0] <= 'Z':
			for j := 0; j < sf.Type.NumField(); j++ {
				f := sf.Type.Field(j)
				key, _, _ := strings.Cut(f.Tag.Get("tp"), ",")
				want[tag] = append(want[tag], key+" "+docTypes[f.Type])
			}
		default:
			want[""] = append(want[""], tag+" "+docTypes[sf.Type])
		}
	}
	if len(want) != 7 {
		t.Fatalf("Frame has %d tagged groups, want seq/up and 6 kinds", len(want))
	}
	if diff := cmp.Diff(want, docFields(t)); diff != "" {
		t.Errorf("docs/telemetry.md field tables (-Go table +doc):\n%s", diff)
	}
}

// TestParseDoesNotAllocate keeps the decode off the heap: a frame without
// words costs no allocation (the field lookup returns pointers into the
// caller's Frame).
func TestParseDoesNotAllocate(t *testing.T) {
	line := []byte("@TP2 D seq=43 up=34012 pu=12 pcap=64 pdrop=0 preap=30 ping=42 pong=1 cmmi=1 cmmo=3 h2rx=48213 h2wu=32768 h2win=49407 *B82BBCB2")
	if n := testing.AllocsPerRun(100, func() {
		if _, err := Parse(line); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Parse allocates %v times per frame, want 0", n)
	}
}

// TestValue checks Value gives each present field's wire text, the text
// the vectors hold, and nothing for an absent or unknown key.
func TestValue(t *testing.T) {
	for _, v := range readVectors(t) {
		if v.section != "frame" {
			continue
		}
		f, err := Parse([]byte(v.line))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, k := range Keys(f.Kind) {
			if val, ok := f.Value(k); ok {
				got[k] = val.String()
			}
		}
		if diff := cmp.Diff(v.values, got); diff != "" {
			t.Errorf("%s: Value (-want +got):\n%s", v.name, diff)
		}
		if _, ok := f.Value("nosuchkey"); ok {
			t.Errorf("%s: Value of an unknown key", v.name)
		}
	}
}
