package sysctl

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseState: any bytes give a State or ErrCorruptState, never a panic,
// and a parsed State survives a write/read round trip unchanged.
func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"version": 1, "saved": "2026-11-30T05:48:49Z", "keys": [{"key": "net.ipv4.tcp_rmem", "old": "4096 87380 6291456", "new": "4096 87380 16777216"}], "persisted": "/etc/sysctl.d/99-tailpath.conf"}`))
	f.Add([]byte(`{"version": 1, "keys": [{"key": "net.core.rmem_max", "old": "212992", "new": "16777216"}]}`))
	f.Add([]byte(`{"version": 2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseState(b, "fuzz")
		if err != nil {
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseState(out, "fuzz")
		if err != nil {
			t.Fatalf("round trip rejected: %v\n%s", err, out)
		}
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

// FuzzParseTriple: never panics; an accepted triple is ordered and prints
// back to itself.
func FuzzParseTriple(f *testing.F) {
	for _, s := range []string{"4096 131072 50000000", "4096\t87380\t6291456\n", "1 2", "9 1 5", "-1 0 x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseTriple(s)
		if err != nil {
			return
		}
		if !(0 < tr.Min && tr.Min <= tr.Default && tr.Default <= tr.Max) {
			t.Fatalf("accepted unordered %v", tr)
		}
		if again, err := ParseTriple(tr.String()); err != nil || again != tr {
			t.Fatalf("round trip %v → %q → %v, %v", tr, tr.String(), again, err)
		}
	})
}

// FuzzNormalize: Normalize leaves one space between words and none at
// either end, even where a word cleans to nothing ("1 \x7f" once gave
// "1 "), is idempotent, and a value ValidateValue accepts makes an Unraid
// go-file block (what --persist writes) that validBlock, revert's check,
// accepts too.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"1 \x7f", "\x1b[31m 4096\t131072 50000000", "bbr", "4096 \u200b 87380 6291456", " 1 ", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n := Normalize(v)
		if n != strings.Join(strings.Fields(n), " ") {
			t.Fatalf("Normalize(%q) = %q: stray spaces", v, n)
		}
		if again := Normalize(n); again != n {
			t.Fatalf("Normalize(%q) = %q, but Normalize(%q) = %q", v, n, n, again)
		}
		for _, k := range Managed {
			if ValidateValue(k, v, nil) != nil {
				continue
			}
			plan := Host{Root: "/r"}.PlanPersist(Platform{Kind: PlatformUnraid}, []Change{{Key: k, New: v}}, nil)
			if err := validBlock(plan.Text); err != nil {
				t.Fatalf("%s=%q: the block --persist writes fails its own check: %v\n%s", k, v, err, plan.Text)
			}
		}
	})
}
