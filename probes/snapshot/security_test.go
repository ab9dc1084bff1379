package snapshot

import (
	"os"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/probes"
)

// readTestdata reads a saved snapshot from testdata.
func readTestdata(t *testing.T, name string) *File {
	t.Helper()
	fh, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := Read(fh)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRedactDropsAPIErrorBodies: what a control API server said in an
// error (which may echo the request's credentials) is left out of a
// redacted snapshot; tailpath's own words for the status stay.
func TestRedactDropsAPIErrorBodies(t *testing.T) {
	const body = "request rejected: Authorization: Basic dHNrZXktYXBpLWtFQ0hPLWVjaG9lY2hvOg=="
	for _, tt := range []struct{ err, want string }{
		{"control API: 500 Internal Server Error: the API is failing; retrying later (" + body + ")", "control API: 500 Internal Server Error: the API is failing; retrying later"},
		{"control API: 418 I'm a teapot (" + body + ")", "control API: 418 I'm a teapot"},
		{"control API: cannot reach it (" + body + ")", "control API: cannot reach it"},
		{"control API: the device list did not parse: " + body, "control API: the device list did not parse"},
		{"something else entirely: " + body, "control API: failed (the details are left out of a redacted snapshot)"},
	} {
		f := readTestdata(t, "both-hard-nat.json")
		f.ControlAPI = &ControlAPI{Status: probes.APIStatus{State: "error", Err: tt.err}}
		red, err := Redact(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := red.ControlAPI.Status.Err; got != tt.want {
			t.Errorf("redacted error of %q = %q, want %q", tt.err, got, tt.want)
		}
		var b strings.Builder
		Write(&b, red)
		if strings.Contains(b.String(), "dHNrZXkt") {
			t.Errorf("the echoed key survives in the redacted file")
		}
	}
}
