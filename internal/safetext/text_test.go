package safetext

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestTextCleans(t *testing.T) {
	const hostile = "nas\x1b]52;c;cGF5bG9hZA==\x07-01\x1b[2J\n"
	if got := New(hostile); got != "nas-01" {
		t.Errorf("New = %q, want %q", got, "nas-01")
	}
	if got := Format("peer %s: %v", hostile, errors.New("a\x07b")); got != "peer nas-01: ab" {
		t.Errorf("Format = %q", got)
	}
	if got := Of(errors.New("dial \x1b[31m/dev/ttyACM0")); got != "dial /dev/ttyACM0" {
		t.Errorf("Of = %q", got)
	}
	if Of(nil) != "" {
		t.Error("Of(nil) is not empty")
	}
	var v struct {
		Name  Text            `json:"name"`
		Names []Text          `json:"names"`
		ByID  map[string]Text `json:"by_id"`
	}
	in := `{"name":"a\u001b[2Jb","names":["c\u0007d"],"by_id":{"x":"e\u009bf"}}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v.Name != "ab" || v.Names[0] != "cd" || v.ByID["x"] != "ef" {
		t.Errorf("decoded %+v: escapes kept", v)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"ab","names":["cd"],"by_id":{"x":"ef"}}`; string(out) != want {
		t.Errorf("encoded %s, want %s", out, want)
	}
	if got := New("héllo wörld").Cut(3); got != "hé…" {
		t.Errorf("Cut = %q", got)
	}
}
