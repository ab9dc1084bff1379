package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tailpath/tailpath/probes/probestest"
)

// TestStatusScrubsEchoedKey: a misconfigured control API server echoes
// the request's key in its error, in every form probestest.EchoForm
// gives (hex, no prefix, any case, cut by "…", base64 of a header line
// holding it); `tailpath status --save` shows the error as a warning and
// keeps it in the unredacted snapshot. No piece of the key is readable in
// either (probestest.KeyIn decodes hex and base64 to look).
func TestStatusScrubsEchoedKey(t *testing.T) {
	var mu sync.Mutex
	echo := ""
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, _ := json.Marshal(map[string]string{"message": "request rejected: " + echo})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write(body)
	}))
	defer hs.Close()
	t.Setenv("TAILSCALE_API_KEY", probestest.EchoKey)
	t.Setenv("TAILSCALE_BASE_URL", hs.URL)
	lapi := statusFixture(t, "unexplained")
	for form := range uint8(probestest.EchoForms) {
		for _, pre := range []string{"", "x", "xy"} {
			e := probestest.EchoForm(form, 13, pre)
			mu.Lock()
			echo = e
			mu.Unlock()
			save := filepath.Join(t.TempDir(), "snap.json")
			code, out, errOut := runStatusCmd(t, "--socket", lapi.Socket, "--save", save)
			saved, err := os.ReadFile(save)
			if code != 0 || err != nil {
				t.Fatalf("echo %q: exit %d, %v\n%s", e, code, err, errOut)
			}
			if !strings.Contains(string(saved), "500 Internal Server Error") || !strings.Contains(out+errOut, "control API") {
				t.Fatalf("echo %q: the API's error is not in the warnings and the snapshot:\n%s\n%s", e, errOut, saved)
			}
			for what, o := range map[string]string{"the output": out + errOut, "the saved snapshot": string(saved)} {
				if p, ok := probestest.KeyIn(o); ok {
					t.Errorf("echo %q: %s holds %q of the key", e, what, p)
				}
			}
		}
	}
}
