package snapshot

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/internal/safetext"
)

// cleanTree applies safetext.Clean to every string and key of a decoded
// JSON tree: what sanitizeJSON must give when it cuts nothing.
func cleanTree(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[safetext.Clean(k)] = cleanTree(e)
		}
		return out
	case []any:
		for i := range v {
			v[i] = cleanTree(v[i])
		}
		return v
	case string:
		return safetext.Clean(v)
	}
	return v
}

// hasControl reports a string or key of a decoded tree that could move
// the cursor or start an escape sequence.
func hasControl(v any) string {
	bad := func(s string) bool {
		return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if bad(k) {
				return k
			}
			if s := hasControl(e); s != "" {
				return s
			}
		}
	case []any:
		for _, e := range v {
			if s := hasControl(e); s != "" {
				return s
			}
		}
	case string:
		if bad(v) {
			return v
		}
	}
	return ""
}

func TestSanitizeJSON(t *testing.T) {
	many := func(n int, open, close string, elem func(int) string) string {
		var b strings.Builder
		b.WriteString(open)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(elem(i))
		}
		return b.String() + close
	}
	for _, tt := range []struct {
		name, in, want string
		cuts           []int
	}{
		{"plain", `{"a":"b","c":[1,2,"x"]}`, `{"a":"b","c":[1,2,"x"]}`, nil},
		{"escapes", `{"t":"\u001b]52;c;Y3VybA==\u0007ok\u009b31m","k\u001b[2J":1}`, `{"t":"ok31m","k":1}`, nil}, // a C1 CSI is dropped; its parameters are plain text
		{"raw UTF-8 C1 and bidi", "{\"t\":\"a\u202eb\u0085c\"}", `{"t":"abc"}`, nil},
		{"tab and newline", `{"t":"a\tb\nc"}`, `{"t":"a bc"}`, nil},
		{"quotes and brackets kept", `{"t":"say \"[{,}]\" ok"}`, `{"t":"say \"[{,}]\" ok"}`, nil},
		{"array cut", many(maxElems+5, "[", "]", func(i int) string { return fmt.Sprint(i) }),
			many(maxElems, "[", "]", func(i int) string { return fmt.Sprint(i) }), []int{maxElems + 5}},
		{"object cut, nested", `{"x":` + many(maxElems+1, "{", "}", func(i int) string { return fmt.Sprintf(`"k%d":[%d,{"y":"\u001b"}]`, i, i) }) + `,"z":1}`,
			`{"x":` + many(maxElems, "{", "}", func(i int) string { return fmt.Sprintf(`"k%d":[%d,{"y":""}]`, i, i) }) + `,"z":1}`, []int{maxElems + 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, cuts := sanitizeJSON([]byte(tt.in))
			if string(got) != tt.want {
				t.Errorf("sanitizeJSON = %.200q…, want %.200q…", got, tt.want)
			}
			if diff := cmp.Diff(tt.cuts, cuts); diff != "" {
				t.Errorf("cuts (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzSanitizeJSON: whatever the input, valid JSON stays valid, no string
// or key of the result can reach a terminal raw, and without cuts the
// result is the input with every string cleaned.
func FuzzSanitizeJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `["\u001b[31m",1,{"x":null}]`, `{"k\u009b":"\ud800"}`, "\"\xff\xfe\"", `[[],{},""]`, `{"a":"\\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, cuts := sanitizeJSON(in)
		if !json.Valid(in) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("valid %q became invalid %q", in, out)
		}
		var got, want any
		json.Unmarshal(out, &got)
		if s := hasControl(got); s != "" {
			t.Fatalf("%q left %q", in, s)
		}
		if len(cuts) == 0 {
			json.Unmarshal(in, &want)
			if diff := cmp.Diff(cleanTree(want), got); diff != "" {
				t.Fatalf("%q (-cleaned +got):\n%s", in, diff)
			}
		}
	})
}
