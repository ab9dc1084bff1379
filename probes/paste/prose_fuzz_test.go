package paste

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tailpath/tailpath/probes/snapshot"
)

// proseHedges are sentences that hold a known field in its own shape but
// state nothing: a question, a supposition, a quote of what someone
// thought. Spliced into any input they must change no verdict and give
// no prose input.
var proseHedges = []string{
	"I thought UDP: false meant it was blocked?",
	"If MappingVariesByDestIP: true, does that mean hard NAT?",
	"Should I expect UDP: true here?",
	"What does PortMapping: UPnP mean in the report?",
	"UDP: true would be nice, honestly",
	"Someone said MappingVariesByDestIP: true means a hard NAT",
	"Does `IPv6: no` matter for this?",
	"I wonder whether RouteAll: true is set on the router",
	"maybe UDP: false is the problem",
	"We assumed MappingVariesByDestIP: false but who knows",
}

// proseStated are the same fields stated, as people write them around
// the CLI's output: each must be read (not ignored) wherever it lands.
var proseStated = []string{
	"- UDP: true",
	"* MappingVariesByDestIP: true",
	"UDP: false",
	"`MappingVariesByDestIP: true`",
	"**UDP**: false",
	"| UDP | false |",
	"Netcheck says UDP: true and IPv6: no.",
	"1. PortMapping: UPnP",
	"+ IPv4: yes, 203.0.113.9:41641",
}

// proseWrap puts a sentence in Markdown as posters do.
func proseWrap(s string, how uint8) []string {
	switch how % 6 {
	case 1:
		return []string{"> " + s}
	case 2:
		return []string{"- " + s}
	case 3:
		return []string{"**" + s + "**"}
	case 4:
		return []string{"", s, ""}
	case 5:
		return []string{"_" + s + "_"}
	}
	return []string{s}
}

// corpusInputs are the corpus pastes that are UTF-8 text (prose spliced
// into UTF-16 or binary is no longer either), sorted.
func corpusInputs(tb testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no corpus: %v", err)
	}
	slices.Sort(files)
	var out []string
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		if utf8.Valid(b) && !bytes.ContainsRune(b, 0) {
			out = append(out, p)
		}
	}
	return out
}

// verdictsOf is every verdict the input gives, one line each.
func verdictsOf(tb testing.TB, data []byte) ([]string, *snapshot.File) {
	f, err := Parse([]Raw{{Name: "in", Data: data}}, pasteNow)
	if err != nil {
		// The error quotes the first line, which a splice may change.
		return []string{"error"}, nil
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	if sv := ls.Self.Verdict; sv != nil {
		out = append(out, fmt.Sprintf("self %s %v", sv.Reason, sv.Also))
	}
	for _, p := range ls.Peers {
		out = append(out, fmt.Sprintf("%s %s %v", p.Name, p.Verdict.Reason, p.Verdict.Also))
	}
	return out, f
}

// spliceProse puts lines into data before its line at (0-based, taken
// modulo the places between inputs: the start, the end and each blank
// line), and returns the text and the 1-based number of the first line
// put in.
func spliceProse(data []byte, at uint8, lines []string) (string, int) {
	src := strings.Split(strings.TrimRight(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n"), "\n")
	places := []int{0, len(src)}
	for i, l := range src {
		if strings.TrimSpace(l) == "" {
			places = append(places, i+1)
		}
	}
	pos := places[int(at)%len(places)]
	out := append(append(append([]string{}, src[:pos]...), lines...), src[pos:]...)
	first := pos + 1
	for _, l := range lines {
		if l != "" {
			break
		}
		first++
	}
	return strings.Join(out, "\n") + "\n", first
}

// FuzzProse splices prose into the corpus: a hedged sentence that only
// looks like a field changes no verdict and is no input, and a stated
// field in Markdown is read wherever it stands between inputs.
func FuzzProse(f *testing.F) {
	files := corpusInputs(f)
	for i := range 24 {
		f.Add(uint8(i*7), uint8(i), uint8(i), uint8(i*3), false)
		f.Add(uint8(i*5+1), uint8(i), uint8(i+2), uint8(i*3+1), true)
	}
	data := make([][]byte, len(files))
	for i, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		data[i] = b
	}
	f.Fuzz(func(t *testing.T, which, sentence, wrap, at uint8, stated bool) {
		in := data[int(which)%len(data)]
		if stated {
			s := proseStated[int(sentence)%len(proseStated)]
			text, no := spliceProse(in, at, proseWrap(s, wrap))
			file, err := Parse([]Raw{{Name: "in", Data: []byte(text)}}, pasteNow)
			if err != nil {
				return // a file no reader takes stays one (binary, UTF-16)
			}
			for _, ig := range file.Ignored {
				if ig.Line == no {
					t.Fatalf("stated field %q ignored at line %d\ninput:\n%s", s, no, text)
				}
			}
			return
		}
		s := proseHedges[int(sentence)%len(proseHedges)]
		want, _ := verdictsOf(t, in)
		text, no := spliceProse(in, at, proseWrap(s, wrap))
		got, file := verdictsOf(t, []byte(text))
		if !slices.Equal(got, want) {
			t.Fatalf("hedge %q changed the verdicts:\n got %q\nwant %q\ninput:\n%s", s, got, want, text)
		}
		if file == nil {
			return
		}
		for _, in := range file.Inputs {
			if in.Kind == KindProse && in.First <= no && no <= in.Last {
				t.Fatalf("hedge %q read as prose at line %d\ninput:\n%s", s, no, text)
			}
		}
	})
}

// TestProseEverySentence runs every hedge and stated field once in each
// corpus input at its start (FuzzProse's seeds are a sample).
func TestProseEverySentence(t *testing.T) {
	files := corpusInputs(t)
	for i, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := verdictsOf(t, data)
		for j, s := range proseHedges {
			text, _ := spliceProse(data, 0, proseWrap(s, uint8(i+j)))
			if got, _ := verdictsOf(t, []byte(text)); !slices.Equal(got, want) {
				t.Errorf("%s: hedge %q changed the verdicts: got %q, want %q", filepath.Base(p), s, got, want)
			}
		}
		for j, s := range proseStated {
			text, no := spliceProse(data, 1, proseWrap(s, uint8(i+j)))
			file, err := Parse([]Raw{{Name: "in", Data: []byte(text)}}, pasteNow)
			if err != nil {
				continue
			}
			for _, ig := range file.Ignored {
				if ig.Line == no {
					t.Errorf("%s: stated field %q ignored at line %d", filepath.Base(p), s, no)
				}
			}
		}
	}
}
