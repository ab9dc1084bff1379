package probes

import (
	"strings"
	"testing"
)

// FuzzFillOnce holds fillOnce, the one-pass fill, to what fillEach's
// replacements one after another give, whenever it answers.
func FuzzFillOnce(f *testing.F) {
	for _, r := range rules {
		for _, w := range append([]Wording{r.Wording}, variantsOf(r)...) {
			for _, s := range []string{w.Summary, w.Fix} {
				f.Add(s, "nas", "{region}", `"tok"`, "{why}", "it {broke}")
			}
		}
	}
	f.Add("a {peer}{x} {x}{y}", "p{x}", "{x}", "{y}", "{y}", "z")
	f.Add("{{peer}} {x}", "p", "{x}", "1", "{x}", "2")
	f.Add("} {x", "p", "{x}", "1", "x", "2")
	f.Fuzz(func(t *testing.T, s, peer, k1, v1, k2, v2 string) {
		vars := []string{k1, v1, k2, v2}
		got, ok := fillOnce(s, peer, vars)
		if !ok {
			return
		}
		if want := fillEach(s, peer, vars); got != want {
			t.Errorf("fillOnce(%q, %q, %q) = %q, replacements in turn give %q", s, peer, vars, got, want)
		}
	})
}

// TestFillOnceAnswers: the table's texts with ordinary values are filled
// in one pass, and the cases it must leave to fillEach are left.
func TestFillOnceAnswers(t *testing.T) {
	for _, r := range rules {
		for _, w := range append([]Wording{r.Wording}, variantsOf(r)...) {
			for _, s := range []string{w.Summary, w.Fix} {
				if !strings.Contains(s, "{") {
					continue
				}
				if _, ok := fillOnce(s, "nas", []string{"{region}", `"tok"`}); !ok {
					t.Errorf("%s: fillOnce declines %q", r.ID, s)
				}
			}
		}
	}
	for _, c := range []struct{ s, peer, k, v string }{
		{"{peer} at {x}", "a{x}", "{x}", "1"}, // a name that holds a key
		{"{peer} at {x}", "p", "{x}", "{y}"},  // a value that does
		{"{{peer}}", "p", "{x}", "1"},         // a key inside braces
		{"a } {x}", "p", "{x}", "1"},          // a stray brace
		{"{x}", "p", "x", "1"},                // a var whose key is no key
	} {
		if got, ok := fillOnce(c.s, c.peer, []string{c.k, c.v}); ok {
			t.Errorf("fillOnce(%q, %q, %q, %q) = %q, want it left to fillEach", c.s, c.peer, c.k, c.v, got)
		}
	}
}

// variantsOf are r's variant wordings.
func variantsOf(r Rule) []Wording {
	var ws []Wording
	for _, w := range r.Variants {
		ws = append(ws, w)
	}
	return ws
}
