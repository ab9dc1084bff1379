package controlapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

// FuzzScrubEchoedKey feeds encodings of a known key, echoed by a
// misconfigured API server in its error, through the client: neither the
// error (a warning on screen) nor its JSON as --save keeps it may hold a
// readable piece of the key.
func FuzzScrubEchoedKey(f *testing.F) {
	for form := range uint8(probestest.EchoForms) {
		for _, pre := range []string{"", "x", "xy", "GET /api/v2 HTTP/1.1\r\n"} {
			f.Add(form, uint16(17), pre)
		}
	}
	var mu sync.Mutex
	echo := ""
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, _ := json.Marshal(map[string]string{"message": "request rejected: " + echo + " (check the key)"})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write(body)
	}))
	f.Cleanup(hs.Close)
	api, err := NewControlAPI(APIConfig{APIKey: NewAPISecret(probestest.EchoKey), BaseURL: hs.URL})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, form uint8, cut uint16, pre string) {
		e := probestest.EchoForm(form, cut, pre)
		if _, ok := probestest.KeyIn(e); !ok {
			t.Fatalf("the detector cannot read the key in its own echo %q", e)
		}
		mu.Lock()
		echo = e
		mu.Unlock()
		_, err := api.Fetch(context.Background())
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		saved, _ := json.Marshal(probes.APIStatus{State: "error", Err: safetext.New(msg)})
		for what, out := range map[string]string{"the warning": msg, "--save": string(saved)} {
			if p, ok := probestest.KeyIn(out); ok {
				t.Errorf("echo %q: %s holds %q of the key: %q", e, what, p, out)
			}
		}
		if !strings.Contains(msg, "500 Internal Server Error") {
			t.Errorf("echo %q: the error lost its status: %q", e, msg)
		}
	})
}

// TestScrubKeepsOtherText: scrubbing takes only the key's pieces; the
// words around them stay.
func TestScrubKeepsOtherText(t *testing.T) {
	sc := newSecretScrubber(probestest.EchoKey)
	for in, want := range map[string]string{
		"rejected: " + probestest.EchoKey + " is revoked":                    "rejected: [redacted] is revoked",
		"rejected: " + strings.ToUpper(probestest.EchoSecret[:12]) + "… end": "rejected: [redacted]… end",
		"nothing secret here, tskey-ish words":                               "nothing secret here, tskey-ish words",
		fmt.Sprintf("hex %x.", probestest.EchoKey):                           "hex [redacted].",
	} {
		if got := sc.scrub(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}
