package firmware

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFieldTableMatchesDoc holds the C side's field table (the
// TP_<KIND>_FIELDS entries in tp_frame.h, printed by `make -C host fields`)
// to docs/telemetry.md: the same kinds, keys in the same order, the same
// wire types. devlink/telemetry's TestDocNamesEveryField holds the Go table
// to the same doc, so the two sides cannot drift apart.
func TestFieldTableMatchesDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the C build in -short mode")
	}
	for _, tool := range []string{"make", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: install build-essential to check the C field table", tool)
		}
	}
	cmd := exec.Command("make", "-s", "-C", "host", "fields")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("make -C host fields: %v\n%s", err, errOut.String())
	}
	got := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		w := strings.Fields(l)
		if len(w)%2 != 1 || len(w[0]) != 1 {
			t.Fatalf("bad line from the field table: %q", l)
		}
		for i := 1; i < len(w); i += 2 {
			got[w[0]] = append(got[w[0]], w[i]+" "+w[i+1])
		}
	}
	if diff := cmp.Diff(docFields(t), got); diff != "" {
		t.Errorf("C field table against docs/telemetry.md (-doc +C):\n%s", diff)
	}
}

// docFields reads docs/telemetry.md's per-kind field tables: kind letter →
// "key type" rows in order.
func docFields(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../docs/telemetry.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	section := ""
	row := regexp.MustCompile("^\\| `([a-z0-9]+)` \\| ([^|]+?) \\|")
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "### `"):
			section = strings.TrimPrefix(l, "### `")[:1]
		case strings.HasPrefix(l, "#"):
			section = ""
		}
		if m := row.FindStringSubmatch(l); m != nil && section != "" {
			out[section] = append(out[section], m[1]+" "+m[2])
		}
	}
	if len(out) < 6 {
		t.Fatalf("docs/telemetry.md: %d kind tables, want 6", len(out))
	}
	return out
}
