package safetext

import "testing"

func TestClean(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "nas-01", "nas-01"},
		{"csi colour", "\x1b[31mred\x1b[0m", "red"},
		{"osc title", "a\x1b]0;pwned\x07b", "ab"},
		{"clear screen", "x\x1b[2Jy", "xy"},
		{"bell and backspace", "a\x07\x08b", "ab"},
		{"newline", "a\nb\r", "ab"},
		{"tab", "a\tb", "a b"},
		{"c1 csi", "a\u009b31mb", "a31mb"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
		{"rtl override", "abc\u202etxt.exe", "abctxt.exe"},
		{"unicode kept", "héllo→世界", "héllo→世界"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in); got != tt.want {
				t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"nas", "\x1b[31mx", "\x1b]0;t\x07", "\xff\xfe", "a\u009bb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Clean(s)
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("Clean(%q) = %q keeps control %U", s, out, r)
			}
		}
	})
}

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"longer text", 6, "longer…"},
		{"héllo", 2, "h…"}, // é is two bytes: not split
		{"世界", 4, "世…"},
		{"世界", 2, "…"},
		{"", 0, ""},
	} {
		if got := Cut(tt.in, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// FuzzIsPlain holds the eight-bytes-at-a-time isPlain to the byte loop.
func FuzzIsPlain(f *testing.F) {
	for _, s := range []string{"", "nas-01", "0123456789abcdef~", "0123456\x7f", "abcdefg\x1f", "\x20\x20\x20\x20\x20\x20\x20\x20", "~~~~~~~~\x80", "héllo wörld", "        \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := true
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] >= 0x7f {
				want = false
			}
		}
		if got := isPlain(s); got != want {
			t.Errorf("isPlain(%q) = %v, want %v", s, got, want)
		}
	})
}

func BenchmarkNewPlain(b *testing.B) {
	s := "a private address on none of this host's networks, inside 192.168.1.0/24, which the router advertises"
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = New(s)
	}
}
