package probes

import "testing"

// TestClientVersion: a version string that names no release (what a
// binary built with go run or go test reports) is unknown, not a version
// to judge; real ones pass, sanitised.
func TestClientVersion(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1.102.5-ERR-BuildInfo", ""},
		{"1.102.5-t0123456789-gabcdef", "1.102.5-t0123456789-gabcdef"},
		{"1.86.2", "1.86.2"},
		{"1.90.0-dev20251001-t1234", "1.90.0-dev20251001-t1234"},
		{"1.80.0\x1b[2J", "1.80.0"},
		{"", ""},
	} {
		if got := ClientVersion(tc.in); got != tc.want {
			t.Errorf("ClientVersion(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Unknown, it is judged by the capability version alone, if at all.
	if _, ok := ClientVersionAtLeast(ClientVersion("1.102.5-ERR-BuildInfo"), 1, 86); ok {
		t.Error("a go-run build's version was judged as a version")
	}
}
