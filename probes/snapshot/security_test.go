package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/link"
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

// TestReadCapsLists: a snapshot listing more peers, warnings and path
// changes than a reader keeps is read within bounds, each cut said in a
// warning (which the diagnosis carries), never silently.
func TestReadCapsLists(t *testing.T) {
	raw, err := os.ReadFile("testdata/both-hard-nat.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	st := doc["status"].(map[string]any)
	peers := st["Peer"].(map[string]any)
	for i := range MaxPeers + 10 {
		k := fmt.Sprintf("nodekey:%064x", 0x1000+i)
		peers[k] = map[string]any{"ID": fmt.Sprintf("nX%06dCNTRL", i), "PublicKey": k, "HostName": fmt.Sprintf("h%d", i),
			"TailscaleIPs": []string{fmt.Sprintf("100.%d.%d.%d", 65+i>>16, i>>8&255, i&255)}}
	}
	var warnings []string
	for i := range 5000 {
		warnings = append(warnings, fmt.Sprintf("warning %d", i))
	}
	doc["warnings"] = warnings
	var changes []any
	for i := range 40 {
		changes = append(changes, map[string]any{"time": fmt.Sprintf("2026-11-30T11:%02d:00Z", i), "text": "idle", "kind": "idle"})
	}
	doc["path_changes"] = map[string]any{"n2CNTRL": changes}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Status.Peer); n != MaxPeers {
		t.Errorf("%d peers read, want %d", n, MaxPeers)
	}
	if n := len(f.PathChanges["n2CNTRL"]); n != link.HistoryLen {
		t.Errorf("%d path changes read, want %d", n, link.HistoryLen)
	}
	ls, err := f.Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(ls.Warnings, "\n")
	for _, want := range []string{
		fmt.Sprintf("this snapshot lists %d peers; only the first %d are read", MaxPeers+11, MaxPeers),
		fmt.Sprintf("this snapshot lists 5000 warnings; only the first %d are read", MaxWarnings),
		fmt.Sprintf("1 peers list more than %d path changes", link.HistoryLen),
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q", want)
		}
	}
	if n := len(ls.Warnings); n > MaxWarnings+10 {
		t.Errorf("%d warnings after the cap", n)
	}
}
